"""The warm worker: imports the scientific stack once, then forks a fresh,
confined child per job, so isolation costs a fork instead of an interpreter
start. It never runs untrusted code itself, and it never reads a request
either: each request is read and served by a fresh fork of the worker, so
every job starts from the same pristine state, holding no trace of an earlier
job (its code, its inputs, or the reference outputs it returned), and no job
can influence another.

Protocol on stdin/stdout: one JSON request per line
`{"job", "policy", "hidden"}`, one JSON reply per line.
"""

from __future__ import annotations

import collections  # noqa: F401
import functools  # noqa: F401
import gc
import itertools  # noqa: F401
import json

# Warm imports: what every task and attempt imports, loaded before fork so
# that children share the pages and never re-import. scipy comes as a preload
# for jobs that name it (`pool.warm_modules`).
import math  # noqa: F401
import os
import select
import shutil
import signal
import sys
import tempfile
import time
import typing  # noqa: F401
from typing import Any

import numpy  # noqa: F401
import numpy.fft  # noqa: F401
import numpy.linalg  # noqa: F401
import numpy.ma  # noqa: F401
import numpy.polynomial  # noqa: F401 - Gauss points: leggauss
import numpy.random  # noqa: F401 - every job seeds it
import numpy.testing  # noqa: F401 - assert_allclose in generated tests (100 ms to import in each job)
import pytest  # noqa: F401

from fembench_agents.scoring.sandbox import (  # noqa: F401 - with what they import
    confine,
    describe,
    fresh_view,
    implementation_host,
    runner,
)
from fembench_agents.scoring.sandbox import pairs as pair_jobs
from fembench_agents.scoring.sandbox.implementation import close_all_but

STDERR_TAIL = 8192


def _job_process(
    request: dict[str, Any],
    namespaces: confine.Namespaces,
    exposed: list[str],
    env: dict[str, str],
    pipes: dict[str, int],
    keep: set[int],
    scratch: str,
) -> None:
    """The job process B (PID 1 of the job's PID namespace): confines itself,
    then runs the job."""
    try:
        os.setsid()  # with basic isolation, the job is its process group, killed as one
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)  # the worker's request and reply pipes are not the job's
        os.dup2(devnull, 1)
        confine.set_parent_death_signal(signal.SIGKILL)
        os.dup2(pipes["err_w"], 2)
        close_all_but(keep)
        policy = request["policy"]
        level, detail = confine.confine(policy, namespaces, request.get("hidden", []), exposed, env, scratch)
        out = runner.FrameWriter(pipes["result_w"])
        out.emit({"event": "isolation", "level": level, "detail": detail})
        if bool(request.get("require_namespaces", True)) and level != "namespaced":
            os._exit(0)  # never run the job weaker than asked: the parent reports the refusal
        runner.run_job(request["job"], out, policy, namespaced=level == "namespaced")
    except BaseException as exc:  # the job itself reports its errors; this is our own failure
        try:
            os.write(2, f"sandbox child error: {type(exc).__name__}: {exc}\n".encode())
        except OSError:
            pass
        os._exit(70)
    os._exit(0)


def _open_private(spec: Any) -> dict[str, Any]:
    path = str(spec.get("file", "")) if isinstance(spec, dict) else ""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        fd = -1
    try:
        os.unlink(path)
    except OSError:
        pass
    key = spec.get("key") if isinstance(spec, dict) else None
    return {"fd": fd, "key": key if isinstance(key, str) else ""}


def _output_cap(request: dict[str, Any]) -> int:
    """A tests job reports each pair's output (`pairs.pair_output_cap` each) and
    the tail of its stderr as strings of a frame of its own, written by the
    job's coordinator, never by a test: room for the largest such frame, whatever
    the pair wrote (JSON writes a byte as at most six: `\\u0001`, or `\\ufffd`
    for one that is not UTF-8), so a pair's output is cut at its own share only."""
    cap = int(request["policy"]["max_output_bytes"])
    job = request["job"]
    if job.get("kind") != "tests":
        return cap
    count = len(job.get("pairs", ()))
    return count * (6 * (pair_jobs.pair_output_cap(cap, count) + pair_jobs.STDERR_TAIL) + 1024)


def serve(
    request: dict[str, Any], exposed: list[str], env: dict[str, str], root: str, host: int | None = None
) -> dict[str, Any]:
    """Runs in a fresh fork of the worker, which it may change at will: it
    enters the job's namespaces itself (`confine.enter_namespaces`), forks
    the job process B, then collects what B wrote under the job's limits.
    A tests job's B gets the worker's implementation host (`host`)."""
    policy, job = request["policy"], request["job"]
    result_r, result_w = os.pipe()
    err_r, err_w = os.pipe()
    scratch = tempfile.mkdtemp(dir=root)
    keep = {result_w}
    if job.get("kind") == "tests":
        # The implementations of a tests job: open their files for the
        # processes that will run them, and unlink them so that no other
        # process of the job can (see `pairs`).
        job["implementations"] = [_open_private(spec) for spec in job["implementations"]]
        keep.update(spec["fd"] for spec in job["implementations"] if spec["fd"] >= 0)
        if host is not None:
            job["host"] = {"fd": host, "hidden": list(request.get("hidden", []))}
            keep.add(host)
    start = time.perf_counter()
    namespaces = confine.enter_namespaces()
    confine.join_new_session_keyring()
    pid = os.fork()
    if pid == 0:
        os.close(result_r)
        os.close(err_r)
        _job_process(request, namespaces, exposed, env, {"result_w": result_w, "err_w": err_w}, keep, scratch)
    for fd in (result_w, err_w, *(fd for fd in keep if fd != result_w)):
        os.close(fd)
    reply = _collect(pid, result_r, err_r, start + policy["wall_seconds"], _output_cap(request))
    shutil.rmtree(scratch, ignore_errors=True)
    return {**reply, "wall_seconds": time.perf_counter() - start}


def _collect(pid: int, result_r: int, err_r: int, deadline: float, cap: int) -> dict[str, Any]:
    """The job's limits: B is killed at `deadline` and its result channel cut
    past `cap` bytes; what is left in the pipes once B has ended is read for
    a second more. Ends what is left of the job, and says how it ended."""
    pidfd = os.pidfd_open(pid)
    result, err = bytearray(), bytearray()
    buffers = {result_r: result, err_r: err}
    open_fds = set(buffers)
    timed_out = truncated = exited = False
    drain_until: float | None = None
    while open_fds and not truncated:
        now = time.perf_counter()
        if not exited and now >= deadline:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            exited, drain_until = True, now + 1.0
        if drain_until is not None and now >= drain_until:
            break
        until = drain_until if drain_until is not None else deadline
        ready, _, _ = select.select([*open_fds, *(() if exited else (pidfd,))], [], [], max(0.0, until - now))
        if pidfd in ready:
            # B has ended (and with it, namespaced, every process of the job): the pipes hold what is left.
            exited, drain_until = True, time.perf_counter() + 1.0
        for fd in ready:
            if fd == pidfd:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.discard(fd)
                continue
            buf = buffers[fd]
            buf.extend(chunk)
            if fd == err_r and len(buf) > 4 * STDERR_TAIL:
                del buf[: len(buf) - STDERR_TAIL]
            if fd == result_r and len(buf) > cap:
                truncated = True
    try:  # whatever is left of the job's process group (basic isolation has no PID namespace)
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _, status = os.waitpid(pid, 0)
    os.close(pidfd)
    for fd in buffers:
        os.close(fd)
    if truncated:
        del result[cap:]
    return {
        "frames_text": result.decode("utf-8", "replace"),
        "truncated": truncated,
        "timed_out": timed_out,
        "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "stderr": err[-STDERR_TAIL:].decode("utf-8", "replace"),
    }


def _read_request(fd: int) -> bytes | None:
    """One request line. The parent sends the next request only after the
    reply to this one, so reading in chunks never takes part of another."""
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None
        data.extend(chunk)
    return bytes(data)


def _serve_one(exposed: list[str], env: dict[str, str], root: str, host: int | None) -> int:
    """In a fresh fork of the worker: read, serve and answer one request."""
    line = _read_request(0)
    if line is None:
        return 1
    reply = (json.dumps(serve(json.loads(line), exposed, env, root, host)) + "\n").encode()
    view = memoryview(reply)
    while view:
        view = view[os.write(1, view) :]
    return 0


def _warm_up() -> None:
    """First calls that initialise something lazily (LAPACK, pytest's comparison
    helpers, the codec), made once here instead of in every job: every job
    starts from this same state, and none touches a random generator."""
    a = numpy.array([[4.0, 1.0], [1.0, 3.0]])
    numpy.linalg.solve(a, numpy.ones(2))
    numpy.linalg.inv(a)
    numpy.linalg.det(a)
    numpy.linalg.eigh(a)
    numpy.linalg.eig(a)
    numpy.linalg.norm(a)
    numpy.linalg.lstsq(a, numpy.ones(2), rcond=None)
    numpy.polynomial.legendre.leggauss(3)
    numpy.testing.assert_allclose(a, a)
    numpy.allclose(a, a)
    assert a == pytest.approx(a)
    with pytest.raises(ValueError):
        raise ValueError
    repr(a)
    json.dumps(runner.codec.to_data([a, 1.0, (2, 3)]))


def _settle() -> None:
    """Make every fork of this process cheap. Fork copies the page-table
    entries of the process's own memory, and a child pays again for each
    page it writes: the collector is told to leave what is here alone (a
    child's collections would otherwise write to every inherited object),
    and the heap goes on huge pages where the kernel allows (one entry per
    2 MB instead of 512)."""
    gc.collect()
    gc.freeze()
    confine.use_huge_pages()


def prepare(preload: list[str]) -> None:
    """The worker's state before it hides anything (`fresh_probe` measures it too)."""
    import importlib

    for name in preload:
        importlib.import_module(name)  # before fork, as the warm imports above
    _warm_up()


def _read_view(path: str) -> fresh_view.FreshView:
    """The fresh view the parent measured for this preload (`pool`), from a file only this worker reads."""
    if not path:
        return fresh_view.FreshView()
    try:
        with open(path) as fh:
            return fresh_view.FreshView.from_data(json.load(fh))
    finally:
        os.unlink(path)


def main(preload: list[str] | None = None, view_file: str = "") -> None:
    view = _read_view(view_file)
    prepare(list(preload or ()))
    # Hidden here, once, not in each job: every job inherits it with its fork, and the pages that
    # hiding writes are written in the worker only (in a job, each would be a copy-on-write fault).
    fresh_view.hide(view)
    _settle()
    exposed = confine.python_paths()
    env = dict(os.environ)
    root = tempfile.mkdtemp(prefix="fembench-zygote-")
    os.chmod(root, 0o711)
    sys.stdout.flush()
    host = implementation_host.start(exposed, env, root)  # a fork of this state, as every job is
    try:
        while True:
            pid = os.fork()
            if pid == 0:
                code = 70
                try:
                    code = _serve_one(exposed, env, root, host[0])
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                break  # end of input, or a failure: the parent restarts a worker and retries
    finally:
        implementation_host.stop(host)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

"""The warm worker: imports the scientific stack once, then forks a fresh,
confined process per job (B, PID 1 of a PID namespace of the job's,
`job_namespaces`), so isolation costs a fork instead of an interpreter start.
It never runs untrusted code itself, and it holds no byte of a job: B reads
its own request from the worker's input, and what B writes reaches the parent
through the worker with splice(2), counted and never read (`job_stream`).
So every job starts from the same pristine state, holding no trace of an
earlier job (its code, its inputs, or the reference outputs it returned), and
no job can influence another.

Protocol on stdin/stdout (`job_stream`): per job, its terms (wall clock and
output limit) and one JSON request line `{"job", "policy", "hidden"}`; back,
the job's records, the worker's end-of-job record last.
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
import shutil
import signal
import sys
import tempfile
import time
import typing  # noqa: F401
from dataclasses import dataclass
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
    job_namespaces,
    job_stream,
    linux_calls,
    mount_layouts,
    runner,
)
from fembench_agents.scoring.sandbox.implementation import close_all_but


@dataclass(frozen=True)
class _Worker:
    """What the worker gives every job: the paths its interpreter needs, its
    environment, its implementation host, and what it prepared once."""

    exposed: list[str]
    env: dict[str, str]
    host: int | None
    pid_namespaces: job_namespaces.JobPidNamespaces
    layouts: mount_layouts.MountLayouts
    own_network: bool


def _job_process(namespaces: confine.Namespaces, worker: _Worker, fds: dict[str, int], scratch: str) -> None:
    """The job process B, PID 1 of the job's PID namespace: reads its request
    from the worker's input (the worker never does), enters the job's other
    namespaces, confines itself, then runs the job. A tests job's B gets the
    worker's implementation host; `fds["layout"]` is the job's laid-out
    filesystem (`mount_layouts`), or -1."""
    host = worker.host
    try:
        line = _read_request(0)
        if line is None:
            raise EOFError("no request after the job's terms")
        request = json.loads(line)
        os.setsid()  # with basic isolation, the job is its process group, killed as one
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)  # the worker's request and reply pipes are not the job's
        os.dup2(devnull, 1)
        linux_calls.set_parent_death_signal(signal.SIGKILL)
        os.dup2(fds["err_w"], 2)
        job, keep = request["job"], {fds["result_w"], fds["layout"]}
        if job.get("kind") == "tests":
            # The implementations of a tests job: open their files for the
            # processes that will run them, and unlink them so that no other
            # process of the job can (see `pairs`).
            job["implementations"] = [_open_private(spec) for spec in job["implementations"]]
            keep.update(spec["fd"] for spec in job["implementations"] if spec["fd"] >= 0)
            if host is not None:
                job["host"] = {"fd": host, "hidden": list(request.get("hidden", []))}
                keep.add(host)
        close_all_but(keep)
        namespaces = job_namespaces.enter_job_namespaces(namespaces, new_network=not worker.own_network)
        policy, hidden = request["policy"], request.get("hidden", [])
        level, detail = confine.confine(policy, namespaces, hidden, worker.exposed, worker.env, scratch, fds["layout"])
        out = runner.FrameWriter(fds["result_w"])
        out.emit({"event": "isolation", "level": level, "detail": detail})
        if bool(request.get("require_namespaces", True)) and level != "namespaced":
            os._exit(0)  # never run the job weaker than asked: the parent reports the refusal
        runner.run_job(job, out, policy, namespaced=level == "namespaced")
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


def serve(terms: job_stream.JobTerms, worker: _Worker, root: str) -> None:
    """In the worker, one job: forks the job process B as PID 1 of a new PID
    namespace, then moves what B writes to the parent under the job's
    `terms` (`job_stream.relay`), and answers with how the job ended."""
    result_r, result_w = os.pipe()
    err_r, err_w = os.pipe()
    scratch = tempfile.mkdtemp(dir=root)
    layout = worker.layouts.for_hidden(terms.hidden)
    start = time.perf_counter()
    namespaces = worker.pid_namespaces.before_fork()
    pid = os.fork()
    if pid == 0:
        os.close(result_r)
        os.close(err_r)
        _job_process(namespaces, worker, {"result_w": result_w, "err_w": err_w, "layout": layout}, scratch)
    worker.pid_namespaces.after_fork()
    os.close(result_w)
    os.close(err_w)
    job_stream.relay(pid, (result_r, err_r), start, terms, 1)
    _remove(scratch)


def _remove(scratch: str) -> None:
    """The scratch directory of a job that had no mount namespace (basic
    isolation): removed by a child, so that not even the names of what the
    job left pass through the worker's memory."""
    try:
        os.rmdir(scratch)
        return
    except OSError:
        pass
    pid = os.fork()
    if pid == 0:
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(0)
    os.waitpid(pid, 0)


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
    linux_calls.use_huge_pages()


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
    namespaces = job_namespaces.enter_worker_namespaces()  # before anything is forked
    view = _read_view(view_file)
    replies = os.dup(1)
    os.dup2(2, 1)  # what a library prints as it loads (UCX's warnings) is not a reply
    prepare(list(preload or ()))
    os.dup2(replies, 1)
    os.close(replies)
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
    worker = _Worker(
        exposed,
        env,
        host[0],
        job_namespaces.JobPidNamespaces(namespaces),
        mount_layouts.MountLayouts(namespaces, exposed),
        job_namespaces.own_network(namespaces),
    )
    try:
        while (terms := job_stream.read_terms(0)) is not None:
            serve(terms, worker, root)
    finally:
        implementation_host.stop(host)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

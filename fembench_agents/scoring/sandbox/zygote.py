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
import itertools  # noqa: F401
import json

# Warm imports: everything a task or an attempt may plausibly import, loaded
# before fork so that children share the pages and never re-import.
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
import numpy.linalg  # noqa: F401
import pytest  # noqa: F401
import scipy  # noqa: F401
import scipy.integrate  # noqa: F401
import scipy.linalg  # noqa: F401
import scipy.sparse  # noqa: F401
import scipy.sparse.linalg  # noqa: F401
import scipy.special  # noqa: F401

from fembench_agents.scoring.sandbox import confine, describe, runner  # noqa: F401 - with what they import

STDERR_TAIL = 8192


def _child(
    job: dict,
    policy: dict,
    hidden: list[str],
    exposed: list[str],
    env: dict[str, str],
    pipes: dict[str, int],
    scratch: str,
    require_namespaces: bool,
) -> None:
    """Runs in the trusted intermediate process A: creates namespaces, forks the
    job process B, enforces the wall clock on it, reports B's fate."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    namespaces = confine.enter_namespaces()
    confine.join_new_session_keyring()
    keep = {pipes["result_w"]}
    implementation = job.get("implementation")
    if isinstance(implementation, dict) and "file" in implementation:
        # A test job's implementation: open its file for the process that will
        # run it, and unlink it so that no other process of the job can.
        path = str(implementation["file"])
        try:
            job["implementation"] = {"fd": os.open(path, os.O_RDONLY)}
            keep.add(job["implementation"]["fd"])
        except OSError:
            job["implementation"] = {"fd": -1}
        try:
            os.unlink(path)
        except OSError:
            pass
    pid = os.fork()
    if pid == 0:
        try:
            os.close(pipes["status_w"])
            confine.set_parent_death_signal(signal.SIGKILL)
            os.dup2(pipes["err_w"], 2)
            for fd in range(3, 1024):
                if fd not in keep:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            level, detail = confine.confine(policy, namespaces, hidden, exposed, env, scratch)
            out = runner.FrameWriter(pipes["result_w"])
            out.emit({"event": "isolation", "level": level, "detail": detail})
            if require_namespaces and level != "namespaced":
                os._exit(0)  # never run the job weaker than asked: the parent reports the refusal
            runner.run_job(job, out)
        except BaseException as exc:  # the job itself reports its errors; this is our own failure
            try:
                os.write(2, f"sandbox child error: {type(exc).__name__}: {exc}\n".encode())
            except OSError:
                pass
            os._exit(70)
        os._exit(0)
    os.close(pipes["result_w"])
    os.close(pipes["err_w"])
    timed_out = False
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([pidfd], [], [], policy["wall_seconds"])
    if not ready:
        timed_out = True
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    report = {
        "timed_out": timed_out,
        "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
    }
    os.write(pipes["status_w"], json.dumps(report).encode())
    os._exit(0)


def serve(request: dict[str, Any], exposed: list[str], env: dict[str, str], root: str) -> dict[str, Any]:
    policy = request["policy"]
    result_r, result_w = os.pipe()
    err_r, err_w = os.pipe()
    status_r, status_w = os.pipe()
    scratch = tempfile.mkdtemp(dir=root)
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            for fd in (result_r, err_r, status_r):
                os.close(fd)
            _child(
                request["job"],
                policy,
                request.get("hidden", []),
                exposed,
                env,
                {"result_w": result_w, "err_w": err_w, "status_w": status_w},
                scratch,
                bool(request.get("require_namespaces", True)),
            )
        finally:
            os._exit(71)
    for fd in (result_w, err_w, status_w):
        os.close(fd)
    result, err, status = bytearray(), bytearray(), bytearray()
    buffers = {result_r: result, err_r: err, status_r: status}
    open_fds = set(buffers)
    truncated = False
    deadline = start + policy["wall_seconds"] + 5.0
    while open_fds:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            break
        ready, _, _ = select.select(list(open_fds), [], [], remaining)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.discard(fd)
                continue
            buf = buffers[fd]
            buf.extend(chunk)
            if fd == err_r and len(buf) > 4 * STDERR_TAIL:
                del buf[: len(buf) - STDERR_TAIL]
            if fd == result_r and len(buf) > policy["max_output_bytes"]:
                truncated = True
                open_fds.clear()
                break
        if status_r not in open_fds and result_r in open_fds:
            # A has reported; give the pipes a moment to drain, no more.
            deadline = min(deadline, time.perf_counter() + 1.0)
    try:  # whatever is left of the job's process group (basic isolation has no PID namespace)
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    os.waitpid(pid, 0)
    for fd in buffers:
        os.close(fd)
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        report = json.loads(status.decode() or "{}")
    except ValueError:
        report = {}
    if truncated:
        del result[policy["max_output_bytes"] :]
    return {
        "frames_text": result.decode("utf-8", "replace"),
        "truncated": truncated,
        "timed_out": bool(report["timed_out"]) if "timed_out" in report else not truncated,
        "exit_code": report.get("exit_code"),
        "signal": report.get("signal"),
        "stderr": err[-STDERR_TAIL:].decode("utf-8", "replace"),
        "wall_seconds": time.perf_counter() - start,
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


def _serve_one(exposed: list[str], env: dict[str, str], root: str) -> int:
    """In a fresh fork of the worker: read, serve and answer one request."""
    line = _read_request(0)
    if line is None:
        return 1
    reply = (json.dumps(serve(json.loads(line), exposed, env, root)) + "\n").encode()
    view = memoryview(reply)
    while view:
        view = view[os.write(1, view) :]
    return 0


def main(preload: list[str] | None = None) -> None:
    import importlib

    for name in preload or ():
        importlib.import_module(name)  # before fork, as the warm imports above
    exposed = confine.python_paths()
    env = dict(os.environ)
    root = tempfile.mkdtemp(prefix="fembench-zygote-")
    os.chmod(root, 0o711)
    sys.stdout.flush()
    try:
        while True:
            pid = os.fork()
            if pid == 0:
                code = 70
                try:
                    code = _serve_one(exposed, env, root)
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                break  # end of input, or a failure: the parent restarts a worker and retries
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

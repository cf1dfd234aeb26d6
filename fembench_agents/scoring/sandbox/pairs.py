"""Test-suite jobs: every (test, implementation) pair of one attempt's tests in
one sandbox job, each pair in fresh processes of its own.

The job process B runs no untrusted code here: it is the coordinator of the
pairs. For each pair it forks a process P that enters namespaces of its own
(user, mount with a fresh scratch, IPC; `confine.enter_pair_namespaces`),
drops every capability and runs the test against the implementation served
by P's child C (`proxy.run_test`). P reports on a pipe of its own; when P ends
(or its time is up) B kills every other process of the job (B is PID 1 of the
job's PID namespace) and reaps them, so the next pair starts from the state
the first one did: no process, file, IPC object or key of an earlier pair is
left. B reports each pair as one frame on the job's channel, with P's frames
as text: a pair can write only to its own pipe, so it can speak for no other
pair. B keeps the implementations' files open and reads none of them: each P
closes all but its own before anything of the attempt runs, and hands that
one to C. B is undumpable (no pair can ptrace it or read its memory) and, as
the init of its PID namespace, gets no signal a pair sends it.
"""

from __future__ import annotations

import ctypes
import os
import select
import shutil
import signal
import stat
import time
from typing import Any

from fembench_agents.scoring.sandbox import confine, linux_calls
from fembench_agents.scoring.sandbox.host_client import HostClient
from fembench_agents.scoring.sandbox.implementation import (
    TEST_FILE,
    FrameWriter,
    close_all_but,
    compile_sources,
    seed_default_rng,
)
from fembench_agents.scoring.sandbox.proxy import run_test

STDERR_TAIL = 8192
_MB = 1 << 20


def pair_output_cap(job_cap: int, pairs: int) -> int:
    """Each pair's share of the job's output limit, at least 1 MB."""
    return max(_MB, job_cap // max(1, pairs))


def job_output_cap(job: dict[str, Any], cap: int) -> int:
    """A tests job reports each pair's output (`pair_output_cap` each) and
    the tail of its stderr as strings of a frame of its own, written by the
    job's coordinator, never by a test: room for the largest such frame, whatever
    the pair wrote (JSON writes a byte as at most six: `\\u0001`, or `\\ufffd`
    for one that is not UTF-8), so a pair's output is cut at its own share only.
    Any other job gets `cap`."""
    if job.get("kind") != "tests":
        return cap
    count = len(job.get("pairs", ()))
    return count * (6 * (pair_output_cap(cap, count) + STDERR_TAIL) + 1024)


def run_pairs(job: dict[str, Any], out: FrameWriter, policy: dict[str, Any], namespaced: bool) -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # the init of a PID namespace then ignores it from a pair
    linux_calls.set_dumpable(False)
    files = [int(spec.get("fd", -1)) for spec in job["implementations"]]
    keys = [str(spec.get("key") or "") for spec in job["implementations"]]
    host = _host(job.get("host"), policy, namespaced)
    pairs = [(str(pair["test"]), int(pair["implementation"])) for pair in job["pairs"]]
    compiled = _compiled(job["test"])
    for index, (name, which) in enumerate(pairs):
        spec = {"test": {**job["test"], "name": name, "compiled": compiled}, "implementation": {"fd": files[which]}}
        served = (host, keys[which])
        out.emit({"event": "pair", "index": index, **_run_pair(spec, job, policy, namespaced, served)})
    if host is not None:
        host.close()
    for fd in files:
        if fd >= 0:
            os.close(fd)


def _compiled(test: dict[str, Any]) -> Any:
    """The test source compiled once for all its pairs (compiling runs none of it), or None: a
    source that does not compile, or warns when compiled, is compiled again by each pair, which
    reports the error or the warning as its own."""
    import warnings

    try:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            compiled = compile_sources(list(test.get("preamble", ())), str(test["code"]), TEST_FILE)
    except Exception:  # noqa: BLE001 - the pair's own compilation reports it
        return None
    return None if warned else compiled


def _host(given: Any, policy: dict[str, Any], namespaced: bool) -> HostClient | None:
    """The worker's implementation host (`implementation_host`), where the job has one: its servers
    confine themselves with namespaces, so a job that has none runs every implementation itself."""
    if not isinstance(given, dict) or not isinstance(given.get("fd"), int):
        return None
    if not namespaced:
        os.close(given["fd"])
        return None
    return HostClient(given["fd"], list(given.get("hidden", [])), policy)


def _run_pair(
    spec: dict[str, Any],
    job: dict[str, Any],
    policy: dict[str, Any],
    namespaced: bool,
    served: tuple[HostClient | None, str] = (None, ""),
) -> dict[str, Any]:
    result_r, result_w = os.pipe()
    err_r, err_w = os.pipe()
    cap = pair_output_cap(int(policy["max_output_bytes"]), len(job["pairs"]))
    seconds = float(job["pair_seconds"])
    host, key = served
    server = host.session(key, spec["implementation"]["fd"], err_w, seconds) if host is not None else None
    if server is not None:  # the implementation's server, through one end of a socket; its file stays here
        spec["implementation"] = {"socket": server}
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            job.clear()  # this process's copy: the test finds nothing of the other pairs
            os.dup2(err_w, 2)
            # not the job's channel, the other implementations, B's ends: its own pipes and implementation only
            close_all_but({result_w, *spec["implementation"].values()})
            if namespaced:
                confine.enter_pair_namespaces(os.getcwd(), int(policy["scratch_mb"]))
            os.setsid()  # with basic isolation, the pair is its process group, killed as one
            seed_default_rng()
            run_test(spec, FrameWriter(result_w))
            code = 0
        except BaseException as exc:  # our own failure; the test reports its errors as frames
            try:
                os.write(2, f"sandbox pair error: {type(exc).__name__}: {exc}\n".encode())
            except OSError:
                pass
        finally:
            os._exit(code)
    os.close(result_w)
    os.close(err_w)
    if server is not None:
        os.close(server)
    return _collect(pid, result_r, err_r, start, seconds, cap, namespaced)


def _collect(
    pid: int, result_r: int, err_r: int, start: float, seconds: float, cap: int, namespaced: bool
) -> dict[str, Any]:
    pidfd = os.pidfd_open(pid)
    result, err = bytearray(), bytearray()
    open_fds = {result_r, err_r}

    def pump(fds: list[int]) -> bool:
        """Reads what is there; True when the results went over their cap."""
        for fd in fds:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.discard(fd)
            elif fd == err_r:
                err.extend(chunk)
                del err[: max(0, len(err) - STDERR_TAIL)]
            else:
                result.extend(chunk)
        return len(result) > cap

    timed_out = truncated = exited = False
    deadline = start + seconds
    while not (exited or truncated):
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([pidfd, *open_fds], [], [], remaining)
        exited = pidfd in ready
        truncated = pump([fd for fd in ready if fd != pidfd])
    if not exited:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.close(pidfd)
    _end_the_pair(pid, namespaced)
    _clear_leftovers()
    drain_until = time.perf_counter() + 1.0  # every writer is gone: what is left is in the pipes
    while open_fds and not truncated and time.perf_counter() < drain_until:
        ready, _, _ = select.select(list(open_fds), [], [], max(0.0, drain_until - time.perf_counter()))
        truncated = pump(ready)
    os.close(result_r)
    os.close(err_r)
    return {
        "frames": bytes(result[:cap]).decode("utf-8", "replace"),
        "stderr": err.decode("utf-8", "replace"),
        "timed_out": timed_out,
        "truncated": truncated,
        "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "seconds": time.perf_counter() - start,
    }


def _end_the_pair(pid: int, namespaced: bool) -> None:
    """Kill and reap every process the pair left. In the job's PID namespace,
    where this process is init, that is every other process; with basic
    isolation, the pair's process group."""
    try:
        if namespaced:
            os.kill(-1, signal.SIGKILL)
        else:
            os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


_IPC_RMID = 0
_LIBC = ctypes.CDLL(None, use_errno=True)  # once, in the worker, not after every pair
_SYSV = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))


def _clear_leftovers() -> None:
    """What a pair could leave where the next one would find it, had it not
    had namespaces of its own (a kernel that refuses it a user namespace):
    files in the job's scratch (this process's working directory) and
    System V IPC objects of the job's IPC namespace. With its own
    namespaces, there is nothing here to clear."""
    scratch = os.getcwd()
    for name in os.listdir(scratch):
        path = os.path.join(scratch, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, onexc=_writable_and_retry)
        else:
            os.unlink(path)
    for table, remove in _SYSV:
        try:
            with open(f"/proc/sysvipc/{table}") as fh:
                ids = [int(line.split()[1]) for line in fh.readlines()[1:] if line.split()]
        except OSError:
            continue
        for ipc_id in ids:
            getattr(_LIBC, remove)(ipc_id, *((0,) if table == "sem" else ()), _IPC_RMID, None)


def _writable_and_retry(function: object, path: str, exc: BaseException) -> None:
    os.chmod(os.path.dirname(path), stat.S_IRWXU)
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, stat.S_IRWXU)
        shutil.rmtree(path, onexc=_writable_and_retry)
    else:
        os.unlink(path)

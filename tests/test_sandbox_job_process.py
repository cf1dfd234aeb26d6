"""A job's process B is forked by the warm worker itself, with no serving
process between them, as PID 1 of a PID namespace made for that job
(`job_namespaces`); the worker holds none of a job's bytes (B reads its own
request, and its output is moved with splice, never read) and frames what B
writes itself, so that a job cannot forge the worker's end-of-job record
(`job_stream`)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy
from fembench_agents.scoring.sandbox.confine import filesystem_plan
from fembench_agents.scoring.sandbox.job_stream import END, FRAMES, HEAD


@pytest.fixture
def one_worker() -> Iterator[Sandbox]:
    with Sandbox(workers=1) as sandbox:
        sandbox.require_isolation()  # the worker is started, with its implementation host
        yield sandbox


def _call(code: str, *args: Any) -> dict[str, Any]:
    return {"kind": "call", "implementation": {"code": code, "function": "f", "preamble": []}, "inputs": [list(args)]}


def _children() -> dict[int, int]:
    """pid -> parent pid of every process on the machine."""
    found = {}
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit():
                stat = Path(f"/proc/{entry}/stat").read_text()
                found[int(entry)] = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError):
            continue
    return found


def _pool_processes() -> set[int]:
    """This test's sandbox worker and every process below it."""
    parents = _children()
    found = {p for p, parent in parents.items() if parent == os.getpid() and "zygote" in _cmdline(p)}
    grew = True
    while grew:
        below = {p for p, parent in parents.items() if parent in found} - found
        found |= below
        grew = bool(below)
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _namespace(pid: int, kind: str) -> str:
    return os.readlink(f"/proc/{pid}/ns/{kind}")


def _while_running(sandbox: Sandbox, job: dict[str, Any], look: Any) -> tuple[Any, Any]:
    """Runs `job` in a thread and calls `look()` once its process has had time to start."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(sandbox.run(job, SandboxPolicy(wall_seconds=30.0))))
    thread.start()
    time.sleep(1.0)
    seen = look()
    thread.join()
    return result[0], seen


SLEEPS = "import time\ndef f(x):\n    time.sleep(2.5)\n    return x\n"


def test_the_worker_forks_each_jobs_process_itself_in_a_new_pid_namespace(one_worker: Sandbox) -> None:
    before = _pool_processes()
    seen = []
    held = []
    for n in (1, 2):

        def look() -> tuple[int, int]:
            [job] = _pool_processes() - before  # one process for the job: no serving fork beside it
            parent = _children()[job]
            held.append(os.open(f"/proc/{job}/ns/pid", os.O_RDONLY))  # its namespace outlives it, for the next
            return job, parent

        result, (job, parent) = _while_running(one_worker, _call(SLEEPS, n), look)
        assert [f["value"] for f in result.events("input")] == [n]
        assert parent in before  # the worker that was there before any job
        seen.append((job, parent))
        assert _namespace(parent, "pid_for_children") == _namespace(parent, "pid")  # the worker is back in its own
    (first, worker), (second, same_worker) = seen
    assert same_worker == worker and second != first
    namespaces = {os.fstat(fd).st_ino for fd in held}
    assert len(namespaces) == 2 and os.stat(f"/proc/{worker}/ns/pid").st_ino not in namespaces
    for fd in held:
        os.close(fd)


LEAVES = """
import os, time
def f(x):
    if os.fork() == 0:
        os.setsid()
        time.sleep(30)
        os._exit(0)
    return [os.getpid(), sorted(int(p) for p in os.listdir('/proc') if p.isdigit())]
"""


def test_each_job_is_pid_1_of_a_namespace_where_no_earlier_job_left_a_process(one_worker: Sandbox) -> None:
    for _ in range(3):
        result = one_worker.run(_call(LEAVES, 0), SandboxPolicy(wall_seconds=30.0))
        [frame] = result.events("input")
        assert frame["value"] == [1, [1, 2]]  # the job and the process it left, and no other


FORGES = f"""
import json, os, stat

def f(x):
    body = json.dumps({{"truncated": True, "timed_out": True, "exit_code": 3, "signal": None,
                       "wall_seconds": 99.0}}).encode()
    end = {END!r} + len(body).to_bytes(8, "big") + body
    frames = {FRAMES!r} + (14).to_bytes(8, "big") + b'{{"event": "x"}}'
    for fd in range(0, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) or fd in (1, 2):
                os.write(fd, frames + end + b"\\n")
        except OSError:
            pass
    return x
"""


def test_a_job_cannot_forge_the_end_of_job_record(one_worker: Sandbox) -> None:
    assert HEAD.size == 9  # the forgery above writes the stream's own record heads
    result = one_worker.run(_call(FORGES, 5), SandboxPolicy(wall_seconds=30.0))
    assert (result.timed_out, result.truncated, result.exit_code, result.signal) == (False, False, 0, None)
    assert result.wall_seconds < 30.0
    assert [f["value"] for f in result.events("input")] == [5]
    assert result.events("x") == []
    assert result.malformed_frames == 1  # the forged records, arrived as one line of the job's own frames
    assert "exit_code" in result.stderr  # its stderr holds them as text


MARKS = """
# request-mark-{tag}
def f(x):
    return "output-mark-" + "{tag}"
"""


def test_the_worker_holds_none_of_a_jobs_bytes(one_worker: Sandbox) -> None:
    tag = os.urandom(8).hex()
    before = _pool_processes()
    result = one_worker.run(_call(MARKS.format(tag=tag), 0), SandboxPolicy(wall_seconds=30.0))
    assert [f["value"] for f in result.events("input")] == [f"output-mark-{tag}"]
    wanted = [f"request-mark-{tag}".encode(), f"output-mark-{tag}".encode()]
    kept = before & _pool_processes()
    assert kept
    for pid in kept:  # the worker, and its implementation host's processes
        assert not [w for w in wanted if w in _memory(pid)], _cmdline(pid)


def _memory(pid: int) -> bytes:
    chunks = []
    mem = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    try:
        for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
            span, perms = line.split()[:2]
            if not perms.startswith("r"):
                continue
            start, end = (int(v, 16) for v in span.split("-"))
            try:
                chunks.append(os.pread(mem, end - start, start))
            except OSError:
                continue
    finally:
        os.close(mem)
    return b"".join(chunks)


LISTENS = """
import os, socket, time
def f(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\\0" + name)
    s.listen()
    if os.fork() == 0:  # keeps the socket after the job's own process ends
        os.setsid()
        time.sleep(30)
        os._exit(0)
    return sorted(n for _, n in socket.if_nameindex())
"""

REACHES = """
import socket
def f(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\\0" + name)
    except OSError as exc:
        return type(exc).__name__
    return "connected"
"""


def test_nothing_a_job_leaves_in_the_workers_network_namespace_reaches_the_next_job(one_worker: Sandbox) -> None:
    """The jobs of a worker share its network namespace (made once, `job_namespaces.own_network`): a
    socket one job leaves listening closes with the job's processes, before the next job starts."""
    name = "fembench-left-" + os.urandom(4).hex()
    left = one_worker.run(_call(LISTENS, name), SandboxPolicy(wall_seconds=30.0))
    assert [f["value"] for f in left.events("input")] == [["lo"]]
    later = one_worker.run(_call(REACHES, name), SandboxPolicy(wall_seconds=30.0))
    assert [f["value"] for f in later.events("input")] == ["ConnectionRefusedError"]
    same = one_worker.run(_call(LISTENS.replace("os.fork() == 0", "False"), name), SandboxPolicy(wall_seconds=30.0))
    assert [f["value"] for f in same.events("input")] == [["lo"]]  # the name is free again


def test_jobs_share_a_laid_out_filesystem_only_where_it_would_be_the_same(tmp_path: Path) -> None:
    """A worker lays out a job's filesystem once per plan (`mount_layouts`): the directories it covers
    and the exposures it binds back. A task directory inside a hidden one changes neither; a hidden
    path inside an exposure keeps that exposure out, so it is another filesystem."""
    checkout, lib = tmp_path / "checkout", tmp_path / "checkout" / "venv" / "lib"
    lib.mkdir(parents=True)
    (checkout / "tasks").mkdir()
    venv, missing = str(checkout / "venv"), str(tmp_path / "missing")
    plan = filesystem_plan([str(checkout), missing], [venv, missing])
    assert plan == ((str(checkout),), (venv,))
    assert filesystem_plan([str(checkout / "tasks"), str(checkout)], [venv]) == plan
    assert filesystem_plan([str(checkout), str(lib)], [venv]) == ((str(checkout),), ())


HOLDS = """
import os
def f(x):
    kinds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed by now
            continue
        kinds.append("pipe" if target.startswith("pipe:") else target)
    return sorted(kinds)
"""


def test_a_job_holds_only_its_own_pipes(one_worker: Sandbox) -> None:
    """Nothing the worker holds for itself or prepared for its jobs (its own PID namespace, the
    filesystem's layout, its reply stream) reaches a job's code: /dev/null on stdin and stdout, its
    stderr and its result channel."""
    for _ in range(2):
        result = one_worker.run(_call(HOLDS, 0), SandboxPolicy(wall_seconds=30.0))
        assert [f["value"] for f in result.events("input")] == [["/dev/null", "/dev/null", "pipe", "pipe"]]

"""The implementations a generated test runs against are served by a
long-lived server per implementation (`sandbox/implementation_host.py`),
pair after pair, instead of a fresh process per pair. These tests pin what
that must not change: a test that leaves something in a shared server (by
arguments a stateful implementation keeps, by crashing it, by leaving it
hanging) changes no later pair's verdict, of the same job or of another; a
server is reused only while nothing of it changed.

The implementation here keeps what it is told to and adds how many things it
keeps to every answer, so a note that survived would show in the next pair's
answer; told so, it gives its process id, crashes or hangs."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import time
from typing import Any, cast

import pytest

from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import JobResult, implementation_host
from fembench_agents.scoring.sandbox.implementation_host import MAX_SERVERS
from fembench_agents.suite.model import Task

STATEFUL = {
    "function": "scale_vector",
    "module_source": """
import os, signal
import numpy as np

KEPT = []

def scale_vector(x, factor):
    if factor == "pid":
        return os.getpid()
    if factor == "keep":
        KEPT.append(factor)
        return len(KEPT)
    if factor == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    while factor == "hang":
        pass
    return factor * np.asarray(x, dtype=float) + len(KEPT)
""",
}

TESTS = """
import threading, time

def test_pid(fcn):
    raise AssertionError(str(fcn(None, "pid")))

def test_answers_as_fresh(fcn):
    assert fcn(np.array([1.0, 2.0]), 3.0).tolist() == [3.0, 6.0]

def test_leaves_a_note(fcn):
    assert fcn(None, "keep") == 1  # the first note this process was given
    assert fcn(np.array([1.0, 2.0]), 3.0).tolist() == [4.0, 7.0]  # and it shows, within the pair

def test_crashes_it(fcn):
    fcn(None, "crash")

def test_leaves_it_hanging(fcn):
    threading.Thread(target=fcn, args=(None, "hang"), daemon=True).start()
    time.sleep(0.2)  # the call is in the implementation's process when this pair ends
"""

PREAMBLE = ["import numpy as np\nimport pytest"]


def run(evaluator: Evaluator, task: Task, tests: list[str]) -> list[JobResult]:
    return evaluator.scorer_for("code").run_pairs(
        task, {"preamble": PREAMBLE, "code": TESTS}, [dict(STATEFUL)], [(name, 0) for name in tests]
    )


def outcome(result: JobResult) -> tuple[Any, ...]:
    frames = result.events("test")
    return (frames[0]["status"] if frames else None, result.exit_code, result.signal)


def told(result: JobResult) -> int:
    """The number the pair's test failed with (a process id, an implementation's number)."""
    (frame,) = result.events("test")
    return int(frame["message"])


@pytest.fixture(scope="module")
def task(load: Any) -> Task:
    return load("scale_vector_CC0_H0_T0")  # its own implementations are not used here


def test_an_unchanged_server_serves_pair_after_pair_and_a_changed_one_is_replaced(
    evaluator: Evaluator, task: Task
) -> None:
    results = run(evaluator, task, ["test_pid", "test_answers_as_fresh", "test_pid", "test_leaves_a_note", "test_pid"])
    assert [outcome(r) for r in results] == [
        ("failed", 0, None),
        ("passed", 0, None),
        ("failed", 0, None),
        ("passed", 0, None),
        ("failed", 0, None),
    ]
    first, again, after_note = told(results[0]), told(results[2]), told(results[4])
    assert first == again and after_note != first


@pytest.mark.parametrize("jobs", [1, 2], ids=["same job", "next job"])
def test_a_note_left_in_a_shared_implementation_reaches_no_later_pair(
    evaluator: Evaluator, task: Task, jobs: int
) -> None:
    order = ["test_leaves_a_note", "test_answers_as_fresh", "test_leaves_a_note", "test_answers_as_fresh"]
    results = run(evaluator, task, order) if jobs == 1 else [r for name in order for r in run(evaluator, task, [name])]
    assert [outcome(r) for r in results] == [("passed", 0, None)] * 4


def test_a_test_that_crashes_a_shared_implementation_changes_no_later_pair(evaluator: Evaluator, task: Task) -> None:
    # the crashing pair ends as the implementation's process did, as when it was the test's own child
    results = run(evaluator, task, ["test_crashes_it", "test_answers_as_fresh", "test_crashes_it", "test_pid"])
    assert [outcome(r) for r in results] == [
        (None, None, 9),
        ("passed", 0, None),
        (None, None, 9),
        ("failed", 0, None),
    ]


def test_a_test_that_leaves_a_shared_implementation_hanging_changes_no_later_pair(
    evaluator: Evaluator, task: Task
) -> None:
    results = run(evaluator, task, ["test_pid", "test_leaves_it_hanging", "test_answers_as_fresh", "test_pid"])
    assert [outcome(r) for r in results] == [
        ("failed", 0, None),
        ("passed", 0, None),
        ("passed", 0, None),
        ("failed", 0, None),
    ]
    assert told(results[3]) != told(results[0])  # the hanging server was replaced, not waited for


def test_past_its_limit_a_worker_ends_its_least_recently_used_server(evaluator: Evaluator, task: Task) -> None:
    count = MAX_SERVERS + 2
    implementations = [
        {
            "function": "scale_vector",
            "module_source": f"import os\ndef scale_vector(x, n):\n    return {i} if n else os.getpid()\n",
        }
        for i in range(count)
    ]
    code = "def test_pid(fcn):\n    raise AssertionError(str(fcn(None, 0)))\n\ndef test_which(fcn):\n    raise AssertionError(str(fcn(None, 1)))\n"
    pairs = [("test_pid", 0), *(("test_which", i) for i in range(count)), ("test_pid", 0)]
    results = evaluator.scorer_for("code").run_pairs(task, {"preamble": [], "code": code}, implementations, pairs)
    assert [told(r) for r in results[1:-1]] == list(range(count))  # each answered as its own implementation
    assert told(results[-1]) != told(results[0])  # the first, least recently used, was ended to make room


def test_a_pair_whose_test_never_calls_leaves_the_server_in_service(evaluator: Evaluator, task: Task) -> None:
    # Nothing of the implementation ran and nothing of the test was read: the server is not checked, and it stays.
    code = TESTS + "\ndef test_never_calls(fcn):\n    assert callable(fcn)\n"
    pairs = [("test_pid", 0), ("test_never_calls", 0), ("test_never_calls", 0), ("test_pid", 0)]
    results = evaluator.scorer_for("code").run_pairs(
        task, {"preamble": PREAMBLE, "code": code}, [dict(STATEFUL)], pairs
    )
    assert [outcome(r) for r in results] == [
        ("failed", 0, None),
        ("passed", 0, None),
        ("passed", 0, None),
        ("failed", 0, None),
    ]
    assert told(results[3]) == told(results[0])


def test_a_server_started_in_a_round_is_not_taken_for_the_one_that_ended_in_it() -> None:
    # One `select` round of the host finds a job's request and the end of the server it would use. Serving
    # the request reaps that server and starts another, whose process descriptor takes the ended one's
    # number (the kernel gives the lowest free one); the round's next event, that number's "ended", is the
    # old server's: the host must not wait for the new one to end, nor drop it.
    listener, _worker = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    host = implementation_host._Host(listener, cast(Any, None), [], {}, "/")
    job_end, coordinator = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    job = implementation_host._Job(job_end, {"hidden": []})
    host.jobs[job_end.fileno()] = job
    ended, ended_control = _process(exit_at_once=True), socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    old = implementation_host._Server(ended, os.pidfd_open(ended), ended_control[0], idle=False)
    host.servers[("key", job.confinement)] = old
    select.select([old.pidfd], [], [], 10.0)
    old_pidfd = old.pidfd
    new_control = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    started = _process(exit_at_once=False)

    def start(_job: Any, _fd: int) -> implementation_host._Server:
        pidfd = os.pidfd_open(started)
        os.dup2(pidfd, old_pidfd)  # closed when the old server was reaped
        os.close(pidfd)
        return implementation_host._Server(started, old_pidfd, new_control[0])

    host._start = start  # type: ignore[method-assign]
    with open(os.devnull) as implementation, open(os.devnull, "w") as stderr:
        request = json.dumps({"key": "key", "cpu_seconds": 1}).encode()
        socket.send_fds(coordinator, [request], [implementation.fileno(), stderr.fileno()])
    watched = host._watched()
    try:
        assert host._dispatch(sorted([job_end.fileno(), old_pidfd]), watched) is True
        assert os.waitpid(started, os.WNOHANG) == (0, 0)  # still running: not waited for
        assert list(host.servers.values()) == [host.servers[("key", job.confinement)]]
        assert host.servers[("key", job.confinement)].pid == started
        message, fds, _, _ = socket.recv_fds(coordinator, 1024, 1)
        assert message == b'{"session": true}' and len(fds) == 1
    finally:
        os.kill(started, signal.SIGKILL)
        os.waitpid(started, 0)


def _process(exit_at_once: bool) -> int:
    pid = os.fork()
    if pid == 0:
        if not exit_at_once:
            time.sleep(5)
        os._exit(0)
    return pid

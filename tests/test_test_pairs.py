"""All (test, implementation) pairs of one test-suite attempt run in one
sandbox job, each pair in fresh processes of its own (`sandbox/pairs.py`).
These tests pin what that must not change: no pair finds anything an earlier
pair of the same job left behind, no pair can speak for another, and each
pair has its own clock. The jobs are run directly (an attempt that imports
os or ctypes stops at the imports stage before any job).

The scale task's pairs run in this order: test_scales_values against the
reference, then against fail_adds; test_negative_factor_raises against the
reference, then against fail_no_check. Each attack below is a test that
passes at once when it finds a note from an earlier pair, so a note that
survived would make the failure pairs pass (not detected).

Within a pair, the generated test and the implementation it checks run in
processes apart (`sandbox/proxy.py`): the test gets a proxy `fcn`, and nothing
of the implementation (its helpers, globals, code or source, hidden from the
solver on T3 tasks) can be reached from the test's process, however the test
looks for it (the second half of this file)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import tempfile
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SCALE_INPUTS, scale_source, write_module
from numpy.exceptions import AxisError

from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy, jobs
from fembench_agents.scoring.sandbox.implementation import MESSAGE_LIMIT
from fembench_agents.scoring.sandbox.pairs import pair_output_cap
from fembench_agents.scoring.sandbox.proxy import _exception_reply, _rebuild_exception, _recv, _send
from fembench_agents.suite.loader import load_task
from fembench_agents.suite.model import Task
from fembench_agents.suite.scoring import FunctionScorer, FunctionScoringConfig

MB = 1 << 20

HONEST = {
    "test_scales_values": "assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])",
    "test_negative_factor_raises": "with pytest.raises(ValueError):\n        fcn(np.array([1.0]), -1.0)",
}

NOTES = {
    "scratch file": (
        "import os, tempfile",
        "os.path.exists('note') or os.path.exists(os.path.join(tempfile.gettempdir(), 'note2'))",
        "open('note', 'w').write('x'); open(os.path.join(tempfile.gettempdir(), 'note2'), 'w').write('x')",
    ),
    "System V shared memory": (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)",
        "libc.shmget(0x5EED, 4096, 0) >= 0",
        "libc.shmget(0x5EED, 4096, 0o1666)",
    ),
    "key in a keyring": (
        # add_key(2) and keyctl(2) KEYCTL_SEARCH on x86_64, in the user and the session keyring
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)",
        "any(libc.syscall(250, 10, ring, b'user', b'fembench-note', 0) >= 0 for ring in (-4, -3))",
        "[libc.syscall(248, b'user', b'fembench-note', b'x', 1, ring) for ring in (-4, -3)]",
    ),
    "process left running": (
        "import os, socket, time",
        "_connects()",
        "_serve_forever()",
    ),
}

HELPERS = """
def _connects():
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("\\0fembench-note")
        return True
    except OSError:
        return False

def _serve_forever():
    if os.fork() == 0:
        os.setsid()
        s = socket.socket(socket.AF_UNIX)
        s.bind("\\0fembench-note")
        s.listen(8)
        while True:
            time.sleep(1)
    time.sleep(0.3)  # the listener is up before this pair ends
"""


def leaving_notes(imports: str, found: str, leave: str) -> str:
    tests = "".join(
        f"\n\ndef {name}(fcn):\n    found = {found}\n    {leave}\n    if found:\n        return\n    {body}\n"
        for name, body in HONEST.items()
    )
    return f"import numpy as np\nimport pytest\n{imports}\n{HELPERS}{tests}"


PAIRS = [
    ("test_scales_values", 0),
    ("test_scales_values", 1),
    ("test_negative_factor_raises", 0),
    ("test_negative_factor_raises", 2),
]


def pair_verdicts(scorer: FunctionScorer, task: Task, code: str) -> list[bool]:
    """Whether each test passed, against the reference, fail_adds, the reference, fail_no_check."""
    implementations = [
        FunctionScorer.task_implementation(task, n) for n in ("scale_vector", "fail_adds", "fail_no_check")
    ]
    results = scorer.run_pairs(task, {"preamble": [], "code": code}, implementations, PAIRS)
    return [scorer.test_passed(r) for r in results]


NOBODY = 65534

HONEST_VERDICTS = [True, False, True, False]  # each test passes the reference and catches its failure


@pytest.mark.parametrize("note", list(NOTES))
def test_no_pair_finds_what_an_earlier_pair_of_the_job_left(evaluator: Evaluator, scale_task: Task, note: str) -> None:
    assert pair_verdicts(evaluator.scorer_for("code"), scale_task, leaving_notes(*NOTES[note])) == HONEST_VERDICTS


def test_the_notes_are_found_where_they_are_left(evaluator: Evaluator, scale_task: Task) -> None:
    # the attacks work: within one pair, each note left is found again
    checks = "\n".join(
        f"def test_{i}(fcn):\n    {leave}\n    assert {found}, {name!r}\n"
        for i, (name, (_, found, leave)) in enumerate(NOTES.items())
    )
    imports = "\n".join(dict.fromkeys(imports for imports, _, _ in NOTES.values()))
    source = f"import numpy as np\nimport pytest\n{imports}\n{HELPERS}\n{checks}"
    spec = {"preamble": [], "code": source}
    names = [f"test_{i}" for i in range(len(NOTES))]
    results = evaluator.scorer_for("code").run_pairs(
        scale_task, spec, [FunctionScorer.task_implementation(scale_task, "scale_vector")], [(n, 0) for n in names]
    )
    assert [r.events("test")[0]["status"] for r in results] == ["passed"] * len(NOTES)


FORGERY = """
import json, os, stat

def _forge():
    frames = [
        {"event": "pair", "index": i, "frames": json.dumps({"event": "test", "status": "passed", "seconds": 0.0}),
         "stderr": "", "timed_out": False, "truncated": False, "exit_code": 0, "signal": None, "seconds": 0.0}
        for i in range(4)
    ]
    data = "".join(json.dumps(f) + "\\n" for f in frames).encode()
    for fd in range(1024):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):  # pipes: the channel to its own implementation stays intact
                os.write(fd, data)
        except OSError:
            pass

def test_scales_values(fcn):
    _forge()
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])

def test_negative_factor_raises(fcn):
    _forge()
    with pytest.raises(ValueError):
        fcn(np.array([1.0]), -1.0)
"""


def test_a_pair_cannot_speak_for_another(evaluator: Evaluator, scale_task: Task) -> None:
    # every pair writes, on every pipe it has, the job's frames saying that all four
    # pairs passed; had one reached the job's channel, the failures would pass
    assert (
        pair_verdicts(evaluator.scorer_for("code"), scale_task, "import numpy as np\nimport pytest\n" + FORGERY)
        == HONEST_VERDICTS
    )


HANGS_ON_WRONG = """
import numpy as np
import pytest

def test_scales_values(fcn):
    if not np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0]):
        while True:
            pass

def test_negative_factor_raises(fcn):
    with pytest.raises(ValueError):
        fcn(np.array([1.0]), -1.0)
"""


def test_each_pair_has_its_own_clock(sandbox: Sandbox, scale_task: Task) -> None:
    scorer = FunctionScorer(sandbox, FunctionScoringConfig(test_seconds=1.5))
    spec = {"preamble": [], "code": HANGS_ON_WRONG}
    implementations = [FunctionScorer.task_implementation(scale_task, n) for n in ("scale_vector", "fail_adds")]
    pairs = [("test_scales_values", 0), ("test_scales_values", 1), ("test_negative_factor_raises", 0)]
    results = scorer.run_pairs(scale_task, spec, implementations, pairs)
    assert [r.timed_out for r in results] == [False, True, False]
    assert [(r.exit_code, r.signal) for r in results] == [(0, None), (None, 9), (0, None)]  # killed at its limit
    assert [[f["status"] for f in r.events("test")] for r in results] == [["passed"], [], ["passed"]]
    assert 1.5 <= results[1].wall_seconds < 3.0  # its limit, then killed; the next pair starts afresh
    assert pair_verdicts(scorer, scale_task, HANGS_ON_WRONG) == HONEST_VERDICTS  # one that never ends fails


STDERR_AND_BROKEN_PIPE = """
import os, sys
import numpy as np

def test_scales_values(fcn):
    print("scaled in the test", file=sys.stderr, flush=True)
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])

def test_negative_factor_raises(fcn):
    fcn(np.array([1.0]), 2.0)
    os.closerange(3, 1024)  # its results pipe too: the pair cannot report, and its coordinator says why
"""


def test_each_pair_reports_its_exit_and_its_own_stderr(sandbox: Sandbox, scale_task: Task) -> None:
    job: jobs.TestsJob = {
        "kind": "tests",
        "test": {"preamble": [], "code": STDERR_AND_BROKEN_PIPE},
        "implementations": [FunctionScorer.task_implementation(scale_task, "scale_vector")],
        "pairs": [
            {"test": "test_scales_values", "implementation": 0},
            {"test": "test_negative_factor_raises", "implementation": 0},
        ],
        "pair_seconds": 5.0,
    }
    result = sandbox.run(job, SandboxPolicy(wall_seconds=20.0))
    # the job itself ends cleanly, whatever its pairs did, and writes nothing to its own stderr
    assert (result.exit_code, result.signal, result.stderr, result.timed_out) == (0, None, "", False)
    passed, broken = result.pair(0), result.pair(1)
    assert [f["status"] for f in passed.events("test")] == ["passed"]
    assert passed.stderr == "scaled in the test\n"  # the test's stderr is its pair's, not the job's
    assert (passed.exit_code, passed.signal, passed.timed_out, passed.truncated) == (0, None, False, False)
    assert passed.wall_seconds < 1.0  # read to the end as soon as its pipes close, not after the second of drain
    assert broken.frames == [] and broken.malformed_frames == 0
    assert broken.stderr == "sandbox pair error: OSError: [Errno 9] Bad file descriptor\n"
    assert (broken.exit_code, broken.signal, broken.timed_out, broken.truncated) == (70, None, False, False)
    assert not FunctionScorer.test_passed(broken)


LOUD_AND_LONG = """
import os, sys, time

def test_scales_values(fcn):
    sys.stderr.write("".join(f"line {i:010d}\\n" for i in range(8192)))  # 128 KB, two pipes' worth
    sys.stderr.flush()
    assert fcn([1.0], 2.0).tolist() == [2.0]

def test_negative_factor_raises(fcn):
    for _ in range(12):  # 1.2 s of work, saying so every 0.1 s
        time.sleep(0.1)
        os.write(2, b"tick\\n")
    with pytest.raises(ValueError):
        fcn([1.0], -1.0)
"""


def test_a_pair_that_writes_while_it_works_keeps_its_tail_and_its_full_time(sandbox: Sandbox, scale_task: Task) -> None:
    scorer = FunctionScorer(sandbox, FunctionScoringConfig(test_seconds=2.0))
    spec = {"preamble": ["import numpy as np\nimport pytest"], "code": LOUD_AND_LONG}
    implementations = [FunctionScorer.task_implementation(scale_task, "scale_vector")]
    loud, long = scorer.run_pairs(
        scale_task, spec, implementations, [("test_scales_values", 0), ("test_negative_factor_raises", 0)]
    )
    # more than a pipe holds: read while the test runs, and only the last 8192 bytes (512 lines) kept
    assert [f["status"] for f in loud.events("test")] == ["passed"] and not loud.timed_out
    assert loud.stderr == "".join(f"line {i:010d}\n" for i in range(7680, 8192))
    # its 2 s run from the pair's start, however often it wakes its coordinator
    assert [f["status"] for f in long.events("test")] == ["passed"] and not long.timed_out
    assert long.stderr == "tick\n" * 12
    assert 1.2 <= long.wall_seconds < 2.0


def _writing_test(body: str) -> str:
    """A test that writes on its pair's pipes itself (`body`, with `results` its results pipe), then ends
    its process without a frame of its own."""
    return f"""
import os, stat

def test_scales_values(fcn):
    results = next(fd for fd in range(3, 256) if _is_pipe(fd) and fd != 2)
{textwrap.indent(textwrap.dedent(body), "    ")}
    os._exit(0)

def _write(fd, data):
    while data:
        data = data[os.write(fd, data):]

def _is_pipe(fd):
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False
"""


def _pairs_job(code: str, scale_task: Task, pairs: int) -> jobs.TestsJob:
    return {
        "kind": "tests",
        "test": {"preamble": [], "code": code},
        "implementations": [FunctionScorer.task_implementation(scale_task, "scale_vector")],
        "pairs": [{"test": "test_scales_values", "implementation": 0}] * pairs,
        "pair_seconds": 5.0,
    }


def _exact_output(size: int) -> str:
    """`size` bytes of frames (1 KB lines, then a part of one)."""
    return _writing_test(
        f"""
        line = b'{{"event": "note", "pad": "' + b"x" * 995 + b'"}}\\n'
        assert len(line) == 1024
        _write(results, (line * ({size} // 1024 + 1))[:{size}])
        """
    )


@pytest.mark.parametrize(
    ("size", "pairs", "job_limit", "notes", "truncated"),
    [
        (MB, 1, MB, 1024, False),  # one pair: all of 1 MB
        (MB + 1, 1, MB, 1024, True),
        (2 * MB, 2, 4 * MB, 2048, False),  # two pairs: half of 4 MB each
        (2 * MB + 1, 2, 4 * MB, 2048, True),
    ],
)
def test_a_pair_may_write_up_to_its_share_of_the_output_limit(
    sandbox: Sandbox, scale_task: Task, size: int, pairs: int, job_limit: int, notes: int, truncated: bool
) -> None:
    job = _pairs_job(_exact_output(size), scale_task, pairs)
    result = sandbox.run(job, SandboxPolicy(wall_seconds=20.0, max_output_bytes=job_limit))
    for index in range(pairs):
        pair = result.pair(index)
        assert (pair.truncated, pair.malformed_frames) == (truncated, 0)
        if not truncated:  # one cut at its limit may be killed before it ends by itself
            assert (pair.exit_code, pair.signal) == (0, None)
        assert len(pair.events("note")) == notes  # past the limit, the output is cut at it: the extra byte is gone


ESCAPED_OUTPUT = _writing_test(
    """
    line = b'{"event": "note", "pad": "x' + b'\\\\"' * 497 + b'"}\\n'  # 994 of its 1024 bytes escape to 2
    assert len(line) == 1024
    _write(results, line * 1024)
    """
)


def test_every_pair_of_a_job_may_fill_its_share_with_output_that_escapes_to_twice_its_size(
    sandbox: Sandbox, scale_task: Task
) -> None:
    """The job's own limit leaves room for each pair's share, escaped inside the pair's frame."""
    result = sandbox.run(
        _pairs_job(ESCAPED_OUTPUT, scale_task, 3), SandboxPolicy(wall_seconds=30.0, max_output_bytes=MB)
    )
    assert (result.truncated, result.malformed_frames, result.exit_code) == (False, 0, 0)
    for index in range(3):
        pair = result.pair(index)
        assert (pair.truncated, pair.malformed_frames, len(pair.events("note"))) == (False, 0, 1024)
        assert pair.events("note")[0]["pad"] == "x" + '"' * 497


CONTROL_OUTPUT = _writing_test(
    """
    _write(results, b"\\x01" * 2**20)  # each byte is written as \\u0001
    _write(2, b"\\x01" * 9000)
    """
)


def test_a_pair_filling_its_share_with_bytes_json_writes_as_six_leaves_the_next_pair_its_own(
    sandbox: Sandbox, scale_task: Task
) -> None:
    result = sandbox.run(
        _pairs_job(CONTROL_OUTPUT, scale_task, 2), SandboxPolicy(wall_seconds=30.0, max_output_bytes=MB)
    )
    assert (result.truncated, result.malformed_frames, result.exit_code) == (False, 0, 0)
    for index in range(2):
        pair = result.pair(index)
        assert (pair.truncated, pair.malformed_frames, pair.exit_code, pair.frames) == (False, 1, 0, [])
        assert pair.stderr == "\x01" * 8192


NOT_UTF8 = """
import os, stat

def test_scales_values(fcn):
    results = next(fd for fd in range(3, 256) if _is_pipe(fd))
    os.write(results, b"\\xff\\xfe not a frame\\n")
    os.write(2, b"\\xff\\xfe not text\\n")

def _is_pipe(fd):
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False
"""


def test_bytes_that_are_not_utf8_are_replaced_in_a_pairs_output(evaluator: Evaluator, scale_task: Task) -> None:
    implementation = FunctionScorer.task_implementation(scale_task, "scale_vector")
    (result,) = evaluator.scorer_for("code").run_pairs(
        scale_task, {"preamble": [], "code": NOT_UTF8}, [implementation], [("test_scales_values", 0)]
    )
    assert [f["status"] for f in result.events("test")] == ["passed"]
    assert result.malformed_frames == 1  # the line "\ufffd\ufffd not a frame"
    assert result.stderr == "\ufffd\ufffd not text\n"


HELD_FILES = """
import fcntl, os, stat

def test_scales_values(fcn):
    modes = {os.O_RDONLY: "r", os.O_WRONLY: "w", os.O_RDWR: "rw"}
    held = []
    for fd in range(1024):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        kind = "pipe" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode) else os.readlink(
            f"/proc/self/fd/{fd}"
        )
        held.append((kind, modes[fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE]))
    assert sorted(held) == [("/dev/null", "rw"), ("/dev/null", "rw"), ("pipe", "w"), ("pipe", "w"), ("socket", "rw")], held
"""


def test_a_test_holds_only_its_own_pipes_and_its_implementations_socket(evaluator: Evaluator, scale_task: Task) -> None:
    # stdin and stdout on /dev/null; the write ends of its stderr and its results; the socket to the
    # process serving its implementation. Nothing else of the job: no read end of any pipe (not even
    # its own results'), not the job's channel, no implementation's file.
    implementations = [FunctionScorer.task_implementation(scale_task, n) for n in ("scale_vector", "fail_adds")]
    spec = {"preamble": [], "code": HELD_FILES}
    results = evaluator.scorer_for("code").run_pairs(
        scale_task, spec, implementations, [("test_scales_values", 1), ("test_scales_values", 0)]
    )
    for result in results:
        assert [(f["status"], f.get("message")) for f in result.events("test")] == [("passed", None)]


@pytest.mark.parametrize(
    ("job_cap", "pairs", "cap"),
    [
        (8 * MB, 0, 8 * MB),  # no pair: the whole limit, as for one
        (8 * MB, 1, 8 * MB),
        (8 * MB, 3, 2796202),  # 8388608 / 3, rounded down
        (8 * MB, 4, 2 * MB),
        (8 * MB, 16, MB),  # at least 1 MB each
        (MB + 1, 1, MB + 1),
        (MB - 1, 1, MB),
    ],
)
def test_each_pair_gets_its_share_of_the_output_limit(job_cap: int, pairs: int, cap: int) -> None:
    assert pair_output_cap(job_cap, pairs) == cap


FORKS_TEN = """
import os, time

def test_scales_values(fcn):
    for _ in range(10):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
"""


def test_the_processes_a_pair_left_are_reaped_before_the_next_pair(evaluator: Evaluator, scale_task: Task) -> None:
    # 10 pairs of 12 processes each (the test's, its implementation's, 10 left running) under a limit of 64
    # processes: only when each pair's processes are killed and reaped can the next pair fork its own
    implementation = FunctionScorer.task_implementation(scale_task, "scale_vector")
    results = evaluator.scorer_for("code").run_pairs(
        scale_task, {"preamble": [], "code": FORKS_TEN}, [implementation], [("test_scales_values", 0)] * 10
    )
    assert [[f["status"] for f in r.events("test")] for r in results] == [["passed"]] * 10
    assert [(r.exit_code, r.stderr) for r in results] == [(0, "")] * 10


LEAVES_ALL_IT_CAN = """
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
KEYS = {"shm": 0x5EED, "msg": 0x5EEE, "sem": 0x5EEF}

def _ipc(create):
    flags = 0o1666 if create else 0
    return [libc.shmget(KEYS["shm"], 4096, flags), libc.msgget(KEYS["msg"], flags), libc.semget(KEYS["sem"], 1, flags)]

def test_scales_values(fcn):
    assert _private() == [0, 0, 0]  # the first of each kind: the keyed ones below are not id 0
    for what in ("mem", "environ", "fd/0"):  # the coordinator, of this user, holds every implementation's file
        try:
            open(f"/proc/{os.getppid()}/{what}", "rb")
            raise AssertionError(f"read the coordinator's {what}")
        except PermissionError:
            pass
    open("note", "w").write("x")
    os.makedirs("tree/locked")
    open("tree/locked/leaf", "w").write("x")
    os.chmod("tree/locked", 0o500)
    os.chmod("tree", 0o500)
    os.makedirs("hidden/deeper")  # directories that cannot be listed, one inside the other
    open("hidden/deeper/leaf", "w").write("x")
    os.chmod("hidden/deeper", 0)
    os.chmod("hidden", 0)
    os.symlink("tree", "link")
    assert min(_ipc(create=True)) >= 0
    parent = os.getpid()
    if os.fork() == 0:  # stays in the pair's process group
        time.sleep(3)
        os._exit(0)
    if os.fork() == 0:  # its own session: outlives the pair, its pipes open
        os.setsid()
        while os.getppid() == parent:
            time.sleep(0.01)
        time.sleep(0.85)
        os.write(2, b"late")  # within the drain's second, which it does not lengthen
        time.sleep(2.15)
        os._exit(0)

def _private():
    return [libc.shmget(0, 4096, 0o1600), libc.msgget(0, 0o1600), libc.semget(0, 1, 0o1600)]

def _left():
    return [len(open(f"/proc/sysvipc/{kind}").readlines()) - 1 for kind in ("shm", "msg", "sem")]

def test_negative_factor_raises(fcn):
    assert (sorted(os.listdir(".")), _ipc(create=False), _left()) == ([], [-1, -1, -1], [0, 0, 0])
"""


def _basic_pairs(
    scratch: Path, implementation: dict[str, Any] | None, code: str, tests: list[str]
) -> list[dict[str, Any]]:
    """`pairs.run_pairs` as a job process of an ordinary user (uid 65534) runs it with basic isolation
    (pairs without namespaces of their own, the coordinator clearing after each), in a fork with its own
    IPC namespace and `scratch` as the job's scratch; the pair frames it wrote. No implementation: the
    sandbox's worker could not open its file (`zygote._open_private`)."""
    from fembench_agents.scoring.sandbox import linux_calls, pairs
    from fembench_agents.scoring.sandbox.implementation import FrameWriter

    spec = scratch.parent / "implementation.json"
    spec.write_text(json.dumps(implementation))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code_ = 1
        try:
            os.close(read)
            os.unshare(linux_calls.CLONE_NEWIPC)  # its SysV objects are the ones the coordinator removes
            os.chdir(scratch)
            implementations = [{"fd": os.open(spec, os.O_RDONLY) if implementation else -1} for _ in tests]
            # only an ordinary user gets basic isolation: root's files and processes are open to root
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            job = {
                "test": {"preamble": ["import numpy as np\nimport pytest"], "code": code},
                "implementations": implementations,
                "pairs": [{"test": name, "implementation": i} for i, name in enumerate(tests)],
                "pair_seconds": 5.0,
            }
            pairs.run_pairs(job, FrameWriter(write), {"max_output_bytes": MB, "scratch_mb": 16}, namespaced=False)
            code_ = 0
        finally:
            os._exit(code_)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        text = fh.read().decode()
    assert os.waitpid(pid, 0)[1] == 0
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.skipif(os.geteuid() != 0, reason="an IPC namespace of its own needs root")
def test_with_basic_isolation_the_coordinator_clears_what_a_pair_left(scale_task: Task) -> None:
    """Without namespaces for its pairs, the job's coordinator is closed to them (its memory,
    environment and files), kills the pair's process group, removes the files (read-only
    directories too, and ones that cannot be listed) and System V objects it left (all of them),
    and reads its pipes for a second more, no longer, while a process that left the group still
    holds them."""
    home = Path(tempfile.mkdtemp(prefix="basic-"))  # under /tmp: the user reaches the scratch by its full path
    home.chmod(0o755)
    scratch = home / "scratch"
    scratch.mkdir()
    os.chown(scratch, NOBODY, NOBODY)
    try:
        implementation = FunctionScorer.task_implementation(scale_task, "scale_vector")
        left, finds = _basic_pairs(scratch, implementation, LEAVES_ALL_IT_CAN, list(HONEST))
        statuses = [(p["index"], json.loads(p["frames"])["status"]) for p in (left, finds)]
        assert statuses == [(0, "passed"), (1, "passed")], [p["frames"] for p in (left, finds)]
        assert (left["exit_code"], left["timed_out"]) == (0, False)
        # the drain's second, from the pair's end, then no longer: a write late in it does not lengthen it
        # (the late writer holds the pipes until 3 s; the bound leaves room for a loaded machine's delay)
        assert 1.0 <= left["seconds"] < 2.5
        assert list(scratch.iterdir()) == []
    finally:
        shutil.rmtree(home)


@pytest.mark.skipif(os.geteuid() != 0, reason="an IPC namespace of its own needs root")
def test_with_basic_isolation_an_implementation_whose_file_could_not_be_opened_fails_to_build(scale_task: Task) -> None:
    home = Path(tempfile.mkdtemp(prefix="basic-"))
    home.chmod(0o755)
    scratch = home / "scratch"
    scratch.mkdir()
    os.chown(scratch, NOBODY, NOBODY)
    try:
        (pair,) = _basic_pairs(
            scratch, None, "def test_scales_values(fcn):\n    fcn(1.0, 2.0)\n", ["test_scales_values"]
        )
    finally:
        shutil.rmtree(home)
    assert (pair["exit_code"], pair["signal"], pair["stderr"]) == (0, None, "")
    assert json.loads(pair["frames"]) == {
        "event": "build_error",
        "side": "implementation",
        "error_type": "OSError",
        "message": "the implementation file could not be opened",
        "traceback": [],
        "error_mro": ["OSError", "Exception", "BaseException", "object"],
    }


# ----- the test apart from its implementation: the proxy ------------------------------------------------------------

MARKER = "SECRET_" + "MARKER_7f3a"
HIDDEN = f'''

SECRET_TABLE = "{MARKER} table"


def _secret_multiply(x, factor):
    """{MARKER} helper."""
    tag = "{MARKER} constant"
    if factor < 0:
        raise ValueError("factor must be non-negative")
    return factor * np.asarray(x, dtype=float) if tag else None


class MeshError(ValueError):
    pass


def scale_vector(x, factor):
    """Return factor * x as a float array, through a hidden helper."""
    if isinstance(factor, str):
        raise MeshError("a custom ValueError")
    if factor == 13:
        np.linalg.inv(np.zeros((2, 2)))
    if factor == 14:
        x[0] = 99.0
    if factor == 15:
        np.sum(np.zeros(2), axis=3)
    return _secret_multiply(x, factor)


def test_scales_values(fcn):'''

PREAMBLE = ["import numpy as np\nimport pytest"]

# Each attack returns what it found of the implementation; the test fails
# (raising with the findings) when it found anything.
PROBE = """
import gc, inspect, sys, types
HEAD, TAIL = "SECRET_", "MARKER_7f3a"  # never joined: the marker itself must not be in this process

def _has(value):
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not isinstance(value, str):
        return False
    i = value.find(TAIL)
    while i >= 0:
        if value[max(0, i - len(HEAD)):i] == HEAD:
            return True
        i = value.find(TAIL, i + 1)
    return False

def _names(obj):
    return getattr(obj, "__name__", None) in ("_secret_multiply", "MeshError") or \\
        getattr(getattr(obj, "__code__", None), "co_filename", None) == "<task>"

def _globals(fcn):
    g = fcn.__globals__
    return [f"globals:{k}" for k, v in g.items() if k in ("_secret_multiply", "SECRET_TABLE") or _has(v) or _names(v)]

def _consts(fcn):
    found = []
    todo = [fcn.__code__]
    while todo:
        code = todo.pop()
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                todo.append(c)
            elif _has(c):
                found.append("co_consts")
        if code.co_filename == "<task>" or "_secret_multiply" in code.co_names:
            found.append("code")
    for cell in fcn.__closure__ or ():
        contents = cell.cell_contents
        for v in [contents, *getattr(contents, "__dict__", {}).values()]:
            if _has(v) or _names(v):
                found.append("closure")
    return found

def _gc():
    found = []
    for obj in gc.get_objects():
        if _names(obj):
            found.append(f"gc:{getattr(obj, '__name__', type(obj).__name__)}")
        elif isinstance(obj, dict):
            if any(_has(v) or _has(k) for k, v in list(obj.items())):
                found.append("gc:dict")
            if "module_source" in obj:
                found.append("gc:spec")
        elif isinstance(obj, (list, tuple)) and any(_has(v) for v in obj):
            found.append("gc:sequence")
    return found

def _stack():
    found = []
    for info in inspect.stack(context=0):
        for k, v in info.frame.f_locals.items():
            if _has(v) or _names(v):
                found.append(f"stack:{k}")
            if isinstance(v, dict) and ("implementation" in v or "module_source" in v):
                found.append(f"stack:{k}:spec")
    return found

def _modules():
    found = []
    for mod in list(sys.modules.values()):
        for k, v in list(getattr(mod, "__dict__", {}).items()):
            if _has(v) or _names(v):
                found.append(f"module:{k}")
    import linecache
    found += ["linecache" for lines in list(linecache.cache.values()) if any(_has(l) for l in lines[2])]
    return found

def test_scales_values(fcn):
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])  # the implementation is reachable...
    found = ATTACK
    assert not found, found  # ...but nothing of it is
"""

# Freed memory too: the implementation's source never passes through the test's
# process (the job request does not carry it), so not even a stale copy is left.
MEMORY = """
import ctypes
def _count(blob, head, tail):
    n, i = 0, blob.find(tail)
    while i >= 0:
        if blob[max(0, i - len(head)):i] == head:
            n += 1
        i = blob.find(tail, i + 1)
    return n
def _memory():
    hits = []
    for line in open("/proc/self/maps").read().splitlines():
        parts = line.split()
        if "r" not in parts[1] or (len(parts) > 5 and parts[5].startswith("[v")):
            continue
        a, b = (int(v, 16) for v in parts[0].split("-"))
        if b - a > 1 << 28:
            continue
        try:
            blob = ctypes.string_at(a, b - a)
        except Exception:
            continue
        for head, tail in ((b"SECRET_", b"MARKER_7f3a"), (b"_secret_", b"multiply(")):
            hits += [f"memory:{line}"] * _count(blob, head, tail)
        del blob
    return hits
"""

ATTACKS = {
    "globals": "_globals(fcn)",
    "code": "_consts(fcn)",
    "gc": "_gc()",
    "stack": "_stack()",
    "modules": "_modules()",
    "memory": "_memory()",
    "all": "_globals(fcn) + _consts(fcn) + _gc() + _stack() + _modules()",
}


@pytest.fixture(scope="module")
def hidden_task(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Task:
    source = scale_source("hidden_scale_CC0_H0_T3", inputs=SCALE_INPUTS)
    source = source.replace(
        source[source.index("\n\ndef scale_vector") : source.index('    """Check that every')], HIDDEN + "\n"
    )
    path = write_module(tmp_path_factory.mktemp("isolation"), "hidden_scale_CC0_H0_T3.py", source)
    return load_task(path, sandbox)


def run(evaluator: Evaluator, task: Task, code: str, impl: str | None = None) -> dict[str, Any]:
    implementation = FunctionScorer.task_implementation(task, impl or task.main_name)
    result = evaluator.scorer_for("code").run_pairs(
        task, {"preamble": PREAMBLE, "code": code}, [implementation], [("test_scales_values", 0)]
    )[0]
    frames = result.events("test") or result.events("build_error")
    assert frames, result
    return frames[0]


def test_the_hidden_task_is_valid(evaluator: Evaluator, hidden_task: Task) -> None:
    source = FunctionScorer.task_implementation(hidden_task, hidden_task.main_name)["module_source"]
    assert "_secret_multiply" in source and MARKER in source  # what the attacks look for is there
    suite = evaluator.score(hidden_task, "tests", "\n\n".join(t.source for t in hidden_task.tests))
    assert suite.passed, suite.tests


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_generated_test_finds_nothing_of_the_implementation(
    evaluator: Evaluator, hidden_task: Task, attack: str
) -> None:
    frame = run(evaluator, hidden_task, PROBE.replace("ATTACK", ATTACKS[attack]) + MEMORY)
    assert frame.get("status") == "passed", frame


def test_the_proxy_looks_like_a_function(evaluator: Evaluator, hidden_task: Task) -> None:
    code = """
def test_scales_values(fcn):
    assert fcn.__name__ == "scale_vector" and fcn.__qualname__ == "scale_vector"
    assert fcn.__doc__ is None and fcn.__defaults__ is None
    assert sorted(fcn.__globals__) == ["__builtins__", "__name__"] and fcn.__module__ == "__task__"
    fcn.__globals__.clear()  # touches nothing the job needs
    assert fcn(x=[1.0, 2.0], factor=2) .tolist() == [2.0, 4.0]
"""
    assert run(evaluator, hidden_task, code).get("status") == "passed"


def test_exceptions_cross_with_their_type(evaluator: Evaluator, hidden_task: Task) -> None:
    code = """
def test_scales_values(fcn):
    with pytest.raises(ValueError, match="non-negative"):
        fcn(np.array([1.0]), -1.0)
    with pytest.raises(np.linalg.LinAlgError):
        fcn(np.array([1.0]), 13)
    with pytest.raises(np.exceptions.AxisError) as info:  # numpy's own, as the implementation's process found them
        fcn(np.array([1.0]), 15)
    assert type(info.value) is np.exceptions.AxisError, type(info.value).__mro__
    with pytest.raises(ValueError) as info:  # a custom subclass keeps its name and nearest known base
        fcn(np.array([1.0]), "x")
    assert type(info.value).__name__ == "MeshError" and "custom" in str(info.value)
    with pytest.raises(TypeError):  # wrong arity, raised by the implementation
        fcn(np.array([1.0]))
"""
    frame = run(evaluator, hidden_task, code)
    assert frame.get("status") == "passed", frame.get("message")


def test_arguments_must_be_plain_data_and_are_copied(evaluator: Evaluator, hidden_task: Task) -> None:
    # Functions cross as callbacks (tests/test_module_inputs.py); objects do not.
    code = """
def test_scales_values(fcn):
    for bad in (object(), type("L", (list,), {})()):
        with pytest.raises(TypeError) as info:
            fcn(bad, 1.0)
        assert str(info.value) == (
            "fcn accepts plain data and functions only (numpy arrays, numbers, strings, lists, tuples, dicts, "
            "sets, functions)"
        ), str(info.value)
    # a call written on the socket by hand (the test's process holds its end) that the implementation's process
    # cannot decode, a set as a dict key: it says so, and goes on serving
    import json
    channel = fcn.__closure__[0].cell_contents
    body = json.dumps({"args": {"__tuple__": [{"__dict__": [[{"__set__": [1]}, 2.0]]}]}, "kwargs": {"__dict__": []}})
    channel._sock.sendall(len(body).to_bytes(8, "big") + body.encode())
    reply = channel.receive()
    assert reply == {
        "error": {"mro": [["builtins", c.__name__] for c in TypeError.__mro__], "message": "malformed call: TypeError"}
    }, reply
    x = np.array([1.0, 2.0])
    out = fcn(x, 14)  # the implementation sets x[0] = 99 on its own copy
    assert x.tolist() == [1.0, 2.0] and out.tolist() == [1386.0, 28.0]
"""
    frame = run(evaluator, hidden_task, code)
    assert frame.get("status") == "passed", frame.get("message")


# How C ends, what the generated test did to B's signals first, and how B (the test job) then ends:
# as C did, as if the implementation had run in B itself, never as an exception the test could catch.
CRASHES = {
    "killed": ("os.kill(os.getpid(), signal.SIGKILL)", "pass", (None, signal.SIGKILL)),
    # B puts back the default action of a signal the test ignored, then ends by it
    "terminated": ("os.kill(os.getpid(), signal.SIGTERM)", "signal.signal(signal.SIGTERM, signal.SIG_IGN)", (None, 15)),
    # a signal the test blocked stays pending: B exits with 128 + its number, as a shell reports it
    "blocked": ("os.kill(os.getpid(), signal.SIGTERM)", "signal.pthread_sigmask(signal.SIG_BLOCK, {15})", (143, None)),
    "exited": ("os._exit(3)", "pass", (3, None)),
    # B's end of the socket closes before C ends: B waits for C's end, and ends as it did
    "closed first": ("os.closerange(3, 1024); import time; time.sleep(0.3); os._exit(5)", "pass", (5, None)),
    # C's own failure (its socket closed under it, it cannot answer): B ends with C's code, 70
    "failed": ("os.closerange(3, 1024)", "pass", (70, None)),
    # children reaped behind B's back (SIGCHLD ignored): C's status is lost, B ends with 70
    "unreaped": ("os._exit(3)", "signal.signal(signal.SIGCHLD, signal.SIG_IGN)", (70, None)),
}


def test_a_crash_of_the_implementation_ends_the_test_job(evaluator: Evaluator, hidden_task: Task) -> None:
    """An implementation that takes its process down ends the job as before:
    not as an exception a test could catch."""
    names = list(CRASHES)
    code = "import signal\n" + "".join(
        f"""
def test_{name.replace(" ", "_")}(fcn):
    {setup}
    try:
        fcn(np.array([1.0]), 2.0)
    except BaseException:
        pass
"""
        for name, (_, setup, _) in CRASHES.items()
    )
    modules = []
    for crash, _, _ in CRASHES.values():
        module = FunctionScorer.task_implementation(hidden_task, hidden_task.main_name)
        module["module_source"] = module["module_source"].replace(
            "def scale_vector(x, factor):", f"def scale_vector(x, factor):\n    import os, signal; {crash}", 1
        )
        modules.append(module)
    pairs = [(f"test_{name.replace(' ', '_')}", i) for i, name in enumerate(names)]
    results = evaluator.scorer_for("code").run_pairs(hidden_task, {"preamble": PREAMBLE, "code": code}, modules, pairs)
    assert [r.events("test") for r in results] == [[]] * len(names)
    assert [r.stderr for r in results] == [""] * len(names)
    assert {n: (r.exit_code, r.signal) for n, r in zip(names, results, strict=True)} == {
        n: ended for n, (_, _, ended) in CRASHES.items()
    }


CALLING_BACK = """
import numpy as np

def scale_vector(x, factor):
    if not callable(factor):
        return factor * np.asarray(x, dtype=float)
    got = factor(np.asarray(x) * 2, 3, scale=0.5)
    try:
        factor("fail", 0, scale=1.0)
    except ZeroDivisionError as exc:
        return {"got": got, "caught": (type(exc).__name__, str(exc))}
"""


def assert_passes(
    evaluator: Evaluator, task: Task, code: str, implementation: dict[str, Any], preamble: list[str] | None = PREAMBLE
) -> None:
    """`code`'s test_scales_values passes against `implementation` (None: a suite sent without a preamble)."""
    source: Any = {"code": code} if preamble is None else {"preamble": preamble, "code": code}
    (result,) = evaluator.scorer_for("code").run_pairs(task, source, [implementation], [("test_scales_values", 0)])
    assert [f.get("status") for f in result.events("test")] == ["passed"], [f.get("message") for f in result.frames]


def test_functions_passed_by_the_test_run_in_the_test(evaluator: Evaluator, hidden_task: Task) -> None:
    # arguments, keyword arguments, the value and the exception of a function passed to fcn all cross; a
    # function passed to fcn cannot call fcn, and fcn is usable again after that
    code = """
def test_scales_values(fcn):
    calls = []
    def f(v, n, scale=1.0):
        calls.append((type(v).__name__, v.tolist() if isinstance(v, np.ndarray) else v, n, scale))
        if isinstance(v, str):
            raise ZeroDivisionError("raised in the test")
        return (float(v.sum()) * n * scale, "ok")
    out = fcn(np.array([1.0, 2.0]), f)
    assert out == {"got": (9.0, "ok"), "caught": ("ZeroDivisionError", "raised in the test")}, out
    assert calls == [("ndarray", [2.0, 4.0], 3, 0.5), ("str", "fail", 0, 1.0)], calls
    with pytest.raises(RuntimeError) as info:
        fcn(np.array([1.0]), factor=lambda v, n, scale: fcn(v, 2.0))
    assert type(info.value) is RuntimeError, type(info.value)
    assert str(info.value) == "fcn cannot be called from inside a function passed to fcn", str(info.value)
    assert fcn(np.array([1.0, 2.0]), 3.0).tolist() == [3.0, 6.0]
"""
    assert_passes(evaluator, hidden_task, code, {"function": "scale_vector", "module_source": CALLING_BACK})


def test_tests_without_a_preamble_run_on_their_own_imports(evaluator: Evaluator, hidden_task: Task) -> None:
    code = "import numpy\n\ndef test_scales_values(fcn):\n    assert fcn(numpy.array([1.0]), 2.0).tolist() == [2.0]\n"
    implementation = FunctionScorer.task_implementation(hidden_task, hidden_task.main_name)
    assert_passes(evaluator, hidden_task, code, implementation, preamble=None)


def test_sets_of_frozensets_and_frozenset_keys_cross_to_the_implementation_and_back(
    evaluator: Evaluator, hidden_task: Task
) -> None:
    code = """
def test_scales_values(fcn):
    edges = {frozenset({0, 1}), frozenset({1, 2})}
    lengths = {frozenset({0, 1}): 1.0, frozenset({1, 2}): 2.5}
    got = fcn(edges, factor=lengths)
    assert got == [edges, lengths, ["frozenset", "frozenset"]], got
    assert [type(k).__name__ for k in got[1]] == ["frozenset", "frozenset"]
"""
    implementation = {
        "function": "scale_vector",
        "module_source": "def scale_vector(x, factor):\n    return [x, factor, [type(e).__name__ for e in x]]\n",
    }
    assert_passes(evaluator, hidden_task, code, implementation)


def test_an_exception_of_any_class_crosses_from_a_function_passed_to_fcn(
    evaluator: Evaluator, hidden_task: Task
) -> None:
    # the class is the test's own: its module may be anything, or fail to be read, and its name too
    code = """
class Unprintable:
    def __str__(self):
        raise RuntimeError("no")

class Hostile(ZeroDivisionError):
    pass

class Unreadable(type):
    def __getattribute__(cls, name):
        if name in type.__getattribute__(cls, "hidden"):
            raise RuntimeError("no")
        return type.__getattribute__(cls, name)

class Guarded(ZeroDivisionError, metaclass=Unreadable):
    hidden = ("__module__",)

class Nameless(ZeroDivisionError, metaclass=Unreadable):
    hidden = ("__module__", "__name__")

Hostile.__module__ = Unprintable()

def test_scales_values(fcn):
    for error, name in ((Hostile, "Hostile"), (Guarded, "Guarded"), (Nameless, "Exception")):
        def f(v, n, scale=1.0):
            if isinstance(v, str):
                raise error("raised in the test")
            return 2.0
        out = fcn(np.array([1.0]), f)
        assert out == {"got": 2.0, "caught": (name, "raised in the test")}, out
    assert fcn(np.array([1.0, 2.0]), 3.0).tolist() == [3.0, 6.0]
"""
    assert_passes(evaluator, hidden_task, code, {"function": "scale_vector", "module_source": CALLING_BACK})


@pytest.mark.parametrize(
    ("mro", "expected"),
    [
        ([["builtins", "ZeroDivisionError"], ["builtins", "ArithmeticError"]], ZeroDivisionError),
        ([["numpy.linalg", "LinAlgError"], ["builtins", "ValueError"]], np.linalg.LinAlgError),
        ([["numpy.exceptions", "AxisError"], ["builtins", "ValueError"], ["builtins", "IndexError"]], AxisError),
    ],
)
def test_a_builtin_or_numpy_exception_is_raised_as_itself(mro: list[list[str]], expected: type) -> None:
    exc = _rebuild_exception({"mro": mro, "message": "boom"})
    assert type(exc) is expected and str(exc) == "boom"


@pytest.mark.parametrize(
    ("mro", "base"),
    [
        ([["__task__", "Custom"], ["builtins", "Exception"], ["builtins", "BaseException"]], RuntimeError),
        ([["__task__", "Mine"], ["builtins", "KeyError"], ["builtins", "LookupError"]], KeyError),
        ([["__task__", "Deep"], ["__task__", "Mine"], ["builtins", "KeyError"], ["builtins", "LookupError"]], KeyError),
        # a numpy name that is none of numpy's public exceptions
        (
            [
                ["numpy._core._exceptions", "_UFuncNoLoopError"],
                ["numpy._core._exceptions", "UFuncTypeError"],
                ["builtins", "TypeError"],
                ["builtins", "Exception"],
            ],
            TypeError,
        ),
        # a C extension's exception made without a module is reported in builtins: by a name builtins lacks, or
        # the name of a builtin that is no exception
        ([["builtins", "int"], ["builtins", "ValueError"]], ValueError),
        ([["builtins", "ExtensionError"], ["builtins", "Exception"]], RuntimeError),
        # builtin bases that take more than a message: a RuntimeError of the same name
        ([["builtins", "UnicodeDecodeError"], ["builtins", "UnicodeError"], ["builtins", "ValueError"]], RuntimeError),
        ([["__task__", "BadBytes"], ["builtins", "UnicodeDecodeError"], ["builtins", "ValueError"]], RuntimeError),
    ],
)
def test_any_other_exception_is_a_new_type_of_its_name_module_and_nearest_known_base(
    mro: list[list[str]], base: type
) -> None:
    exc = _rebuild_exception({"mro": mro, "message": "boom"})
    assert (type(exc).__name__, type(exc).__module__, type(exc).__bases__, exc.args) == (
        mro[0][1],
        mro[0][0],
        (base,),
        ("boom",),
    )


def test_an_exception_with_nothing_said_of_it_is_a_runtime_error() -> None:
    for error in ({}, {"mro": []}):
        exc = _rebuild_exception(error)
        assert (type(exc).__name__, type(exc).__module__, type(exc).__bases__, str(exc)) == (
            "Exception",
            "",
            (RuntimeError,),
            "",
        )


class _TaskError(KeyError):
    pass


class _Unprintable(ValueError):
    def __str__(self) -> str:
        raise RuntimeError("no")


def test_an_exception_crosses_with_its_type_name_module_and_message() -> None:
    # what one process sends (`_exception_reply`) and the other raises (`_rebuild_exception`)
    def crossed(exc: BaseException) -> BaseException:
        return _rebuild_exception(json.loads(json.dumps(_exception_reply(exc)))["error"])

    exc = crossed(ZeroDivisionError("division by zero"))
    assert type(exc) is ZeroDivisionError and str(exc) == "division by zero"
    exc = crossed(np.linalg.LinAlgError("Singular matrix"))
    assert type(exc) is np.linalg.LinAlgError and str(exc) == "Singular matrix"
    exc = crossed(_TaskError("k"))
    assert (type(exc).__name__, type(exc).__module__, type(exc).__bases__, exc.args) == (
        "_TaskError",
        __name__,
        (KeyError,),
        ("'k'",),  # the message as str() wrote it
    )
    exc = crossed(_Unprintable("x"))
    assert (type(exc).__name__, type(exc).__bases__) == ("_Unprintable", (ValueError,))
    assert exc.args == ("<unprintable message>",)
    exc = crossed(ValueError("v" * (MESSAGE_LIMIT + 10)))
    # Cut in the middle, both ends kept (scoring/error_text.py): 610 characters to 599.
    assert type(exc) is ValueError and str(exc) == "v" * 287 + " … [36 characters cut] … " + "v" * 287


def socket_pair() -> tuple[socket.socket, socket.socket]:
    """Connected sockets whose reads give up after 10 s: a message that never comes fails the test."""
    a, b = socket.socketpair()
    a.settimeout(10.0)
    b.settimeout(10.0)
    return a, b


def test_messages_cross_whole_and_a_cut_stream_ends_them() -> None:
    # the test's and the implementation's processes speak in length-prefixed JSON messages
    a, b = socket_pair()
    with a, b:
        big = {"value": ["x" * (3 << 20), 1.5, None]}  # more than one read
        sender = threading.Thread(target=_send, args=(a, big))
        sender.start()
        assert _recv(b) == big
        sender.join()
        a.sendall((10).to_bytes(8, "big") + b'{"val')  # cut inside a message
        a.shutdown(socket.SHUT_WR)
        assert _recv(b) is None
    a, b = socket_pair()
    with a, b:
        a.sendall(b"\0\0\0")  # cut inside a length
        a.shutdown(socket.SHUT_WR)
        assert _recv(b) is None


@pytest.mark.parametrize(("size", "refused"), [(1 << 31, False), ((1 << 31) + 1, True)])
def test_a_message_over_2_gib_is_refused(size: int, refused: bool) -> None:
    a, b = socket_pair()
    with a, b:
        a.sendall(size.to_bytes(8, "big"))
        a.shutdown(socket.SHUT_WR)
        if refused:
            with pytest.raises(ValueError) as info:
                _recv(b)
            assert str(info.value) == "message too large"
        else:
            assert _recv(b) is None  # read as announced, and the stream ended first


def test_what_each_pair_reports(evaluator: Evaluator, hidden_task: Task) -> None:
    """A pair's one frame: the test passed or failed (with its time and error), or the implementation or the
    test could not be built (which side, and the error)."""
    code = """
def test_passes(fcn):
    assert __name__ == "__tests__"
    assert fcn(np.array([1.0]), 2.0).tolist() == [2.0]

def test_fails(fcn):
    assert fcn(np.array([1.0]), 2.0).tolist() == [3.0], "not three"
"""
    good = FunctionScorer.task_implementation(hidden_task, hidden_task.main_name)
    broken = {"function": "scale_vector", "module_source": "def scale_vector(x, factor):\n    return (\n"}
    pairs = [("test_passes", 0), ("test_fails", 0), ("test_passes", 1), ("test_missing", 0)]
    results = evaluator.scorer_for("code").run_pairs(
        hidden_task, {"preamble": PREAMBLE, "code": code}, [good, broken], pairs
    )
    frames = [r.events("test") + r.events("build_error") for r in results]
    assert [len(f) for f in frames] == [1, 1, 1, 1], frames
    passed, failed, no_implementation, no_test = (f[0] for f in frames)
    assert (passed["status"], failed["status"]) == ("passed", "failed")
    assert 0.0 <= passed["seconds"] < 5.0 and 0.0 <= failed["seconds"] < 5.0, (passed, failed)
    assert (failed["error_type"], failed["message"]) == ("AssertionError", "not three")
    assert failed["traceback"] == [
        '<test>, line 7, in test_fails: assert fcn(np.array([1.0]), 2.0).tolist() == [3.0], "not three"'
    ]
    assert (no_implementation["side"], no_implementation["error_type"]) == ("implementation", "SyntaxError")
    assert [r.stderr for r in results] == ["", "", "", ""]
    assert (no_test["side"], no_test["error_type"], no_test["message"]) == ("test", "KeyError", "'test_missing'")


def test_the_implementation_process_cannot_be_read(evaluator: Evaluator, hidden_task: Task) -> None:
    # the implementation is served from namespaces of the worker's own (`implementation_host`), out of the test's
    # sight: the test sees its job's coordinator (PID 1, undumpable, never holding an implementation) and itself
    code = """
import os
def test_scales_values(fcn):
    fcn(np.array([1.0]), 2.0)
    me = str(os.getpid())
    seen = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    kids = [p for p in seen if open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1] == me]
    assert kids == [] and seen == [1, os.getpid()], seen
    with pytest.raises(PermissionError):
        open("/proc/1/mem", "rb")
"""
    frame = run(evaluator, hidden_task, code)
    assert frame.get("status") == "passed", frame

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
survived would make the failure pairs pass (not detected)."""

from __future__ import annotations

import pytest

from fembench_agents.scoring.evaluator import Evaluator, EvaluatorConfig
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.model import Task

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


def pair_verdicts(evaluator: Evaluator, task: Task, code: str) -> list[bool]:
    """Whether each test passed, against the reference, fail_adds, the reference, fail_no_check."""
    implementations = [Evaluator.task_implementation(task, n) for n in ("scale_vector", "fail_adds", "fail_no_check")]
    results = evaluator.run_pairs(task, {"preamble": [], "code": code}, implementations, PAIRS)
    return [evaluator.test_passed(r) for r in results]


HONEST_VERDICTS = [True, False, True, False]  # each test passes the reference and catches its failure


@pytest.mark.parametrize("note", list(NOTES))
def test_no_pair_finds_what_an_earlier_pair_of_the_job_left(evaluator: Evaluator, scale_task: Task, note: str) -> None:
    assert pair_verdicts(evaluator, scale_task, leaving_notes(*NOTES[note])) == HONEST_VERDICTS


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
    results = evaluator.run_pairs(
        scale_task, spec, [Evaluator.task_implementation(scale_task, "scale_vector")], [(n, 0) for n in names]
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
    assert pair_verdicts(evaluator, scale_task, "import numpy as np\nimport pytest\n" + FORGERY) == HONEST_VERDICTS


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
    evaluator = Evaluator(sandbox, EvaluatorConfig(test_seconds=1.5))
    spec = {"preamble": [], "code": HANGS_ON_WRONG}
    implementations = [Evaluator.task_implementation(scale_task, n) for n in ("scale_vector", "fail_adds")]
    pairs = [("test_scales_values", 0), ("test_scales_values", 1), ("test_negative_factor_raises", 0)]
    results = evaluator.run_pairs(scale_task, spec, implementations, pairs)
    assert [r.timed_out for r in results] == [False, True, False]
    assert [[f["status"] for f in r.events("test")] for r in results] == [["passed"], [], ["passed"]]
    assert 1.5 <= results[1].wall_seconds < 3.0  # its limit, then killed; the next pair starts afresh
    assert pair_verdicts(evaluator, scale_task, HANGS_ON_WRONG) == HONEST_VERDICTS  # one that never ends fails

"""Limits and budgets at their boundaries: the sandbox policy's checks and
derived CPU limit, the whitelisted environment, a job's wall clock and output
limit, and GEPA metric-call budgets computed by hand from DSPy's formula."""

from __future__ import annotations

import json
import os

import pytest

from fembench_agents.optimize.budget import Budget, dspy_auto_budget, resolve_budget
from fembench_agents.scoring import codec
from fembench_agents.scoring.job_results import ended_how
from fembench_agents.scoring.sandbox import JobResult, Sandbox
from fembench_agents.scoring.sandbox.policy import FIXED_ENV, SandboxPolicy, sandbox_env
from fembench_agents.scoring.sandbox.pool import WorkerPool

# ----------------------------------------------------------------- sandbox policy


def test_policy_bounds_and_messages() -> None:
    with pytest.raises(ValueError) as err:
        SandboxPolicy(wall_seconds=0)
    assert str(err.value) == "wall_seconds must be positive, got 0"
    with pytest.raises(ValueError) as err:
        SandboxPolicy(wall_seconds=-1.5)
    assert str(err.value) == "wall_seconds must be positive, got -1.5"
    with pytest.raises(ValueError) as err:
        SandboxPolicy(memory_mb=63)
    assert str(err.value) == "memory_mb must be at least 64, got 63"
    assert SandboxPolicy(wall_seconds=0.01, memory_mb=64).memory_mb == 64


@pytest.mark.parametrize(("wall", "cpu", "limit"), [(7.9, None, 9), (30.0, None, 32), (0.5, None, 2), (10.0, 3, 3)])
def test_cpu_limit_backs_up_the_wall_clock(wall: float, cpu: int | None, limit: int) -> None:
    assert SandboxPolicy(wall_seconds=wall, cpu_seconds=cpu).cpu_limit == limit


def test_the_local_pool_has_one_worker_per_cpu_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert (WorkerPool().size, WorkerPool(workers=5).size) == (3, 5)
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one
    assert WorkerPool().size == 1


def test_policy_as_sent_to_the_child() -> None:
    policy = SandboxPolicy(wall_seconds=12.5, memory_mb=512, hidden_paths=("/a", "/b"))
    assert policy.as_dict() == {
        "wall_seconds": 12.5,
        "cpu_seconds": 14,
        "memory_mb": 512,
        "max_output_bytes": 32 * 1024 * 1024,
        "max_processes": 64,
        "scratch_mb": 256,
        "hidden_paths": ["/a", "/b"],
    }


def test_the_environment_is_a_whitelist(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "HTTPS_PROXY", "PYTHONPATH"):
        monkeypatch.setenv(name, "secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("PATH", "/opt/bin")
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    for name in ("LC_ALL", "LC_CTYPE", "TZ", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        monkeypatch.delenv(name, raising=False)
    # mutmut's mutant selection passes through; under mutmut it is set already and must stay as it is
    mutant = os.environ.get("MUTANT_UNDER_TEST")
    if mutant is None:
        mutant = "m.x_f__mutmut_1"
        monkeypatch.setenv("MUTANT_UNDER_TEST", mutant)
    env = sandbox_env()
    assert env == {"LANG": "C.UTF-8", "PATH": "/opt/bin", "MUTANT_UNDER_TEST": mutant, **FIXED_ENV, "HOME": "/tmp"}
    assert env["OMP_NUM_THREADS"] == "1" and env["PYTHONHASHSEED"] == "0"
    monkeypatch.delenv("PATH")
    assert sandbox_env()["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    assert sandbox_env({"HOME": "/scratch", "X": "1"})["HOME"] == "/scratch"
    assert sandbox_env({"X": "1"})["X"] == "1"


def call_job(code: str, *inputs: object) -> dict[str, object]:
    """A job calling `f` of `code` on each input."""
    return {
        "kind": "call",
        "implementation": {"code": code, "function": "f", "preamble": []},
        "inputs": [[x] for x in inputs],
    }


# An attempt runs in the job's process: its result channel is the one pipe there besides stderr.
ON_THE_CHANNEL = """
import os, stat

def _channel():
    return next(fd for fd in range(3, 256) if _is_pipe(fd))

def _is_pipe(fd):
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False

def _frame(size):
    line = b'{"event": "note", "pad": "' + b"x" * (size - 29) + b'"}\\n'
    assert len(line) == size
    return line
"""


def test_a_job_is_killed_at_its_wall_clock_not_at_its_cpu_backstop(sandbox: Sandbox) -> None:
    """A sleeping job uses no CPU: only the wall clock ends it, and what it reported before stays."""
    code = "import time\ndef f(x):\n    if x:\n        time.sleep(120)\n    return x\n"
    result = sandbox.run(call_job(code, 0, 1), SandboxPolicy(wall_seconds=1.0, cpu_seconds=100))
    assert (result.timed_out, result.truncated, result.exit_code, result.signal) == (True, False, None, 9)
    assert [f.get("status") for f in result.events("input")] == ["ok"]
    assert 1.0 <= result.wall_seconds < 30.0  # killed at 1 s (100 s had it waited for the CPU limit)


def test_a_job_reporting_just_before_its_wall_clock_is_killed_at_it_not_later(sandbox: Sandbox) -> None:
    code = "import time\ndef f(x):\n    time.sleep(x)\n    return x\n"
    result = sandbox.run(call_job(code, 0, 1.8, 120), SandboxPolicy(wall_seconds=2.0))
    assert [f.get("status") for f in result.events("input")] == ["ok", "ok"] and result.timed_out
    assert 2.0 <= result.wall_seconds < 2.5  # its second report came ~0.2 s before the limit


def test_a_jobs_output_is_cut_at_its_limit_to_the_byte(sandbox: Sandbox) -> None:
    """The limit counts every byte on the job's result channel: the worker's isolation frame, then the
    attempt's, here one frame of exactly `size` bytes written by the attempt itself."""
    code = (
        ON_THE_CHANNEL + "\ndef f(size):\n    if size:\n        os.write(_channel(), _frame(size))\n    os._exit(0)\n"
    )

    def run(size: int, limit: int) -> JobResult:
        return sandbox.run(call_job(code, size), SandboxPolicy(wall_seconds=20.0, max_output_bytes=limit))

    quiet = run(0, 1 << 20)
    head = len(json.dumps({"event": "isolation", "level": quiet.isolation, "detail": quiet.isolation_detail})) + 1
    at_limit = run(4096, head + 4096)
    assert (at_limit.truncated, at_limit.exit_code, at_limit.malformed_frames) == (False, 0, 0)
    assert [len(f["pad"]) for f in at_limit.events("note")] == [4096 - 29]
    assert run(4097, head + 4096).truncated  # one byte over: its newline is cut
    over = run(4098, head + 4096)
    assert (over.truncated, over.events("note"), over.malformed_frames) == (True, [], 1)  # its frame is cut
    assert ended_how(over) == ("crashed", "the output was larger than the sandbox accepts")


def test_bytes_an_attempt_writes_on_the_result_channel_that_are_not_utf8_are_one_malformed_frame(
    sandbox: Sandbox,
) -> None:
    code = ON_THE_CHANNEL + '\ndef f(x):\n    os.write(_channel(), b"\\xff\\xfe{\\n")\n    return x\n'
    result = sandbox.run(call_job(code, 64), SandboxPolicy(wall_seconds=20.0))
    assert (result.malformed_frames, result.exit_code, [f["status"] for f in result.events("input")]) == (1, 0, ["ok"])


def test_a_job_writing_without_end_is_stopped_at_its_output_limit_not_at_its_wall_clock(sandbox: Sandbox) -> None:
    code = ON_THE_CHANNEL + "\ndef f(size):\n    while True:\n        os.write(_channel(), _frame(size))\n"
    result = sandbox.run(call_job(code, 1024), SandboxPolicy(wall_seconds=20.0, max_output_bytes=1 << 20))
    assert (result.truncated, result.timed_out, result.signal) == (True, False, 9)
    assert len(result.events("note")) == 1023  # 1 MB holds the isolation frame and 1023 of the 1 KB frames


@pytest.mark.parametrize("before", [2000, 40000])  # under and over the 32 KB past which the worker trims it
def test_a_job_keeps_the_last_8192_bytes_of_its_stderr(sandbox: Sandbox, before: int) -> None:
    code = 'import os\ndef f(x):\n    os.write(2, b"a" * x)\n    os.write(2, b"b" * 8000 + b"\\xff" + b"END")\n    return x\n'
    result = sandbox.run(call_job(code, before), SandboxPolicy(wall_seconds=20.0))
    assert [f["status"] for f in result.events("input")] == ["ok"]
    assert result.stderr == "a" * 188 + "b" * 8000 + "\ufffd" + "END"  # 188 + 8000 + 1 + 3 bytes; one not UTF-8


def test_a_test_pair_keeps_the_last_8192_bytes_of_its_stderr(sandbox: Sandbox) -> None:
    test = 'import os\ndef test_noisy(fcn):\n    os.write(2, b"a" * 20000 + b"b" * 8189 + b"END")\n'
    job = {
        "kind": "tests",
        "test": {"preamble": [], "code": test},
        "implementations": [{"function": "g", "preamble": [], "code": "def g(x):\n    return x\n"}],
        "pairs": [{"test": "test_noisy", "implementation": 0}],
        "pair_seconds": 10.0,
    }
    pair = sandbox.run(job, SandboxPolicy(wall_seconds=20.0)).pair(0)
    assert [f["status"] for f in pair.events("test")] == ["passed"]
    assert pair.stderr == "b" * 8189 + "END"


# ----------------------------------------------------------------- GEPA budgets

# DSPy auto_budget by hand, one component, V validation tasks:
#   N = int(max(4 log2 n, 1.5 n)); total = V + 5n + 35N + ((N + 1) // 5 + 1) V + (V if N < 5)


@pytest.mark.parametrize(
    ("n", "v", "calls"),
    [
        (6, 9, 416),  # N = 10: 9 + 30 + 350 + 3 * 9
        (12, 9, 735),  # N = 18: 9 + 60 + 630 + 4 * 9
        (18, 9, 1098),  # N = 27: 9 + 90 + 945 + 6 * 9
        (6, 4, 6 * 5 + 350 + 4 + 3 * 4),
        (3, 4, 4 + 15 + 6 * 35 + 2 * 4),  # N = int(6.34) = 6: no final pass
        (2, 4, 4 + 10 + 4 * 35 + (2 + 1) * 4),  # N = 4 < 5: a final full pass
        (1, 4, 4 + 5 + 1 * 35 + (1 + 1) * 4),  # N = int(1.5) = 1
    ],
)
def test_dspy_auto_budget_by_hand(n: int, v: int, calls: int) -> None:
    assert dspy_auto_budget(n, v) == calls


def test_dspy_auto_budget_options() -> None:
    # two components: N = int(max(8 log2 6, 9)) = 20 -> 9 + 30 + 700 + (21 // 5 + 1) * 9
    assert dspy_auto_budget(6, 9, num_components=2) == 784
    # minibatch 3, full pass every 2 trials: N = 10 -> 9 + 30 + 30 + (11 // 2 + 1) * 9
    assert dspy_auto_budget(6, 9, minibatch_size=3, full_eval_steps=2) == 123
    # a full pass every 10 trials: N = 10 is not fewer, so no final pass
    assert dspy_auto_budget(6, 9, full_eval_steps=10) == 9 + 30 + 350 + (11 // 10 + 1) * 9
    # a full pass every 20 trials: 10 < 20 adds the final pass
    assert dspy_auto_budget(6, 9, full_eval_steps=20) == 9 + 30 + 350 + (0 + 1 + 1) * 9


def test_presets_resolve_through_the_formula() -> None:
    assert resolve_budget(" Light ", 9) == Budget(
        name="light", max_metric_calls=416, valset_size=9, formula="dspy auto_budget(n=6, components=1, V=9)"
    )
    assert resolve_budget("medium", 9).max_metric_calls == 735
    assert resolve_budget("HEAVY", 9).max_metric_calls == 1098
    assert resolve_budget("light", 4).max_metric_calls == dspy_auto_budget(6, 4)


def test_integer_budgets_are_taken_verbatim() -> None:
    assert resolve_budget(25, 9) == Budget(name="custom", max_metric_calls=25, valset_size=9, formula="given")
    assert resolve_budget(" 1 ", 3).max_metric_calls == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (0, "budget must be a positive number of metric calls, got 0"),
        ("-4", "budget must be a positive number of metric calls, got -4"),
        ("lots", "budget must be light, medium, heavy or a positive integer, got 'lots'"),
        ("2.5", "budget must be light, medium, heavy or a positive integer, got '2.5'"),
    ],
)
def test_bad_budgets_are_named(spec: str | int, message: str) -> None:
    with pytest.raises(ValueError) as err:
        resolve_budget(spec, 9)
    assert str(err.value) == message


WRITES = """
import os

def f(mib):
    with open("written.bin", "wb") as fh:
        fh.write(b"x" * (mib << 20))
    return [os.getcwd(), os.path.getsize("written.bin")]
"""
PAIR_WRITES = WRITES.replace("def f(mib):", "def test_writes(fcn):\n    mib = fcn(0)").replace(
    "    return [", "    assert ["
)


def test_a_jobs_scratch_holds_scratch_mb_megabytes_and_a_test_pairs_too(sandbox: Sandbox) -> None:
    """The working directory of a job, and of each test pair, is a tmpfs of `scratch_mb` megabytes."""
    policy = SandboxPolicy(wall_seconds=20.0, scratch_mb=2)
    result = sandbox.run(call_job(WRITES, 1, 3), policy)
    assert result.isolation == "namespaced"
    fits, full = result.events("input")
    assert codec.from_data(fits["value"]) == ["/tmp/scratch", 1 << 20]
    assert (full["status"], full["error_type"], full["message"]) == (
        "error", "OSError", "[Errno 28] No space left on device"
    )  # fmt: skip
    pairs = {
        "kind": "tests",
        "test": {"preamble": [], "code": PAIR_WRITES},
        "implementations": [
            {"function": "g", "preamble": [], "code": f"def g(x):\n    return {mib}\n"} for mib in (1, 3)
        ],
        "pairs": [{"test": "test_writes", "implementation": i} for i in (0, 1)],
        "pair_seconds": 10.0,
    }
    ran = sandbox.run(pairs, policy)
    frames = [ran.pair(i).events("test")[0] for i in (0, 1)]
    assert [f["status"] for f in frames] == ["passed", "failed"]
    assert (frames[1]["error_type"], frames[1]["message"]) == ("OSError", "[Errno 28] No space left on device")


ALLOCATES = """
import numpy as np

def f(mb):
    return float(np.ones(mb * 131072).sum()) / 131072  # mb megabytes of float64, touched
"""


def test_a_job_may_use_memory_mb_on_top_of_what_its_worker_already_maps(sandbox: Sandbox) -> None:
    result = sandbox.run(call_job(ALLOCATES, 200, 400), SandboxPolicy(wall_seconds=20.0, memory_mb=300))
    fits, over = result.events("input")
    assert (fits["status"], codec.from_data(fits["value"])) == ("ok", 200.0)
    assert (over["status"], over["error_type"]) == ("error", "MemoryError")

"""The evaluator's verdicts at their boundaries, through the sandbox: which input
failed and how (an error, a timeout or a crash on the third or second of several
inputs), the reference's exceptions, the time limit growing with the number of
inputs, and test suites that catch some but not all of their expected failures.
Each verdict is checked as the user sees it: outcome fields and feedback text."""

from __future__ import annotations

import ast
import dataclasses
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest
from conftest import CORRECT_SCALE, FRAME_STACK, ROOT, scale_source, write_module

from fembench_agents.cases.problem import load_cases
from fembench_agents.cases.scorer import CaseScoringConfig
from fembench_agents.kinds import kind_for, kind_of_outcome, outcome_types, register_kind, tracks, unregister_kind
from fembench_agents.kinds.contract import LoadedProblems, ScoringOptions, SkippedTask
from fembench_agents.runs import run
from fembench_agents.runs.grid import PlannedRun, grid_selections, resolved_runs
from fembench_agents.runs.problems import load_problems, preload_for
from fembench_agents.runs.selection import resolve_selection, selector_items
from fembench_agents.scoring import codec
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import TemplateFeedback
from fembench_agents.scoring.outcomes import OutcomeBase
from fembench_agents.scoring.sandbox import JobResult, Sandbox
from fembench_agents.suite.loader import load_task, load_tasks
from fembench_agents.suite.model import SourceFunction, Task
from fembench_agents.suite.outcomes import FunctionOutcome
from fembench_agents.suite.outcomes import TestSuiteOutcome as SuiteOutcome
from fembench_agents.suite.paper import worst_error
from fembench_agents.suite.references import implementation_source, task_implementation
from fembench_agents.suite.scoring import FunctionScorer, FunctionScoringConfig, ReferenceFailure
from fembench_agents.suite.validation import ideal_answer

# factor 1, 2, 3, then -1 (the reference raises ValueError)
FOUR_INPUTS = """[
            [np.array([1.0, 2.0]), 1.0],
            [np.array([1.0, -1.0]), 2.0],
            [np.array([2.0, 4.0]), 3.0],
            [np.array([1.0]), -1.0],
        ]"""
MANY = 40
MANY_INPUTS = "[" + ", ".join(f"[np.array([{i}.0]), 1.0]" for i in range(MANY)) + "]"

TWO_FAILURES = '''
import numpy as np
import time


def scale_vector(x, factor):
    """Return factor * x as a float array."""
    return factor * np.asarray(x, dtype=float)


def test_scales_values(fcn):
    """Every entry is multiplied by the factor."""
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])


def test_zero_factor(fcn):
    """A zero factor gives zeros."""
    assert np.allclose(fcn(np.array([1.0, 2.0]), 0.0), [0.0, 0.0])


def fail_adds(x, factor):
    return np.asarray(x, dtype=float) + factor


def fail_squares(x, factor):
    return factor * np.asarray(x, dtype=float) ** 2


def fail_ones(x, factor):
    return np.ones(len(x))


def task_info():
    return {
        "task_id": "two_failures_CC0_H0_T0",
        "task_short_description": "scale a vector",
        "created_date": "2026-01-01",
        "created_by": "tests",
        "main_fcn": scale_vector,
        "required_imports": ["import numpy as np", "import pytest", "import time"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [[np.array([1.0, 2.0]), 3.0]],
        "test_cases": [
            {"test_code": test_scales_values, "expected_failures": [fail_adds, fail_squares]},
            {"test_code": test_zero_factor, "expected_failures": [fail_ones]},
        ],
    }
'''


@pytest.fixture(scope="module")
def rules_tasks(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Task]:
    d = tmp_path_factory.mktemp("rules_tasks")
    sources = {
        "four_inputs_CC0_H0_T0": scale_source(
            "four_inputs_CC0_H0_T0",
            imports=("import time", "import os", "import ctypes"),
            inputs=FOUR_INPUTS,
            extensions={"time_limit": "0.25"},
        ),
        "many_inputs_CC0_H0_T0": scale_source(
            "many_inputs_CC0_H0_T0",
            imports=("import time", "import os"),
            inputs=MANY_INPUTS,
            extensions={"time_limit": "0.25"},
        ),
        "two_failures_CC0_H0_T0": TWO_FAILURES,
    }
    return {tid: load_task(write_module(d, f"{tid}.py", src), sandbox) for tid, src in sources.items()}


@pytest.fixture(scope="module")
def quick_tests(sandbox: Sandbox) -> Iterator[Evaluator]:
    """An evaluator whose test jobs time out after 3 s."""
    ev = FunctionScorer(sandbox, FunctionScoringConfig(test_seconds=3.0))
    yield ev
    ev.close()


def attempt(*lines: str) -> str:
    body = "\n".join(f"    {line}" for line in lines)
    return (
        "import numpy as np\nimport time\nimport os\n\n\nclass NegativeFactor(ValueError):\n    pass\n\n\n"
        f"def scale_vector(x, factor):\n{body}\n"
    )


CHECK_SIGN = "if factor < 0:\n        raise ValueError('negative')"
RIGHT = "return factor * np.asarray(x, dtype=float)"


def statuses(outcome: FunctionOutcome) -> list[str]:
    return [r.status for r in outcome.inputs]


def stages(outcome: FunctionOutcome | SuiteOutcome) -> list[tuple[str, bool, str | None, str | None]]:
    return [(s.stage, s.passed, s.reason, s.detail) for s in outcome.stages]


FEEDBACK = TemplateFeedback()


# ----------------------------------------------------------------- function track


def test_a_correct_attempt_passes_every_stage(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    outcome = evaluator.score(rules_tasks["four_inputs_CC0_H0_T0"], "code", attempt(CHECK_SIGN, RIGHT))
    assert outcome.passed
    assert stages(outcome) == [
        ("parse", True, None, None),
        ("imports", True, None, None),
        ("execute", True, None, None),
        ("correct", True, None, None),
    ]
    assert statuses(outcome) == ["match"] * 4
    assert [r.index for r in outcome.inputs] == [0, 1, 2, 3]


def test_a_timeout_on_the_third_of_four_inputs(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    # 20 s is past the task's own limit (4 x 0.25 s + 5 s) but within the default's (4 x 10 s + 5 s):
    # a task's time_limit replaces the evaluator's call_seconds, it does not merely back it up
    outcome = evaluator.score(
        rules_tasks["four_inputs_CC0_H0_T0"],
        "code",
        attempt(CHECK_SIGN, "if factor == 3.0:\n        time.sleep(20)", RIGHT),
    )
    assert not outcome.passed
    assert statuses(outcome) == ["match", "match", "timeout", "not_run"]
    assert stages(outcome)[2:] == [
        ("execute", False, "timeout", "input 2: the code did not finish within the time limit")
    ]
    fb = FEEDBACK(outcome)
    assert (fb.score, fb.text) == (
        0.1,
        "Your previous function did not finish within the time limit on verification "
        "input 2. Look for an infinite loop or an algorithm far slower than needed, "
        "and return the complete corrected code.",
    )


def test_the_time_limit_grows_with_the_number_of_inputs(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    # 40 inputs of 0.2 s each: 8 s in all, within 40 x 0.25 s + 5 s = 15 s though past one call's 0.25 s + 5 s
    task = rules_tasks["many_inputs_CC0_H0_T0"]
    outcome = evaluator.score(task, "code", attempt("time.sleep(0.2)", RIGHT))
    assert outcome.passed, stages(outcome)
    assert statuses(outcome) == ["match"] * MANY
    # each input's own time is recorded: at least its 0.2 s sleep
    assert all(r.seconds is not None and 0.2 <= r.seconds < 60 for r in outcome.inputs)


def test_a_process_exit_on_the_second_input(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    outcome = evaluator.score(
        rules_tasks["four_inputs_CC0_H0_T0"],
        "code",
        attempt(CHECK_SIGN, "if factor == 2.0:\n        os._exit(3)", RIGHT),
    )
    assert statuses(outcome) == ["match", "crashed", "not_run", "not_run"]
    assert stages(outcome)[2:] == [
        ("execute", False, "crashed", "input 1: the process exited (code 3) before returning a result")
    ]
    assert FEEDBACK(outcome).text.startswith(
        "Your previous function stopped the process on verification input 1: the process exited (code 3) before "
        "returning a result. Check memory use"
    )


def test_a_kill_by_signal_on_the_first_input(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    outcome = evaluator.score(
        rules_tasks["four_inputs_CC0_H0_T0"], "code", "import ctypes\n" + attempt("ctypes.string_at(0)", RIGHT)
    )
    assert statuses(outcome) == ["crashed", "not_run", "not_run", "not_run"]
    assert stages(outcome)[2:] == [
        ("execute", False, "crashed", "input 0: the process was killed by signal 11 (memory or CPU limit, or a crash)")
    ]


def test_errors_on_some_inputs_name_the_first(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    outcome = evaluator.score(
        rules_tasks["four_inputs_CC0_H0_T0"],
        "code",
        attempt(
            CHECK_SIGN,
            "if factor == 1.0:\n        raise KeyError('first')",
            "if factor == 2.0:\n        return 0 * np.asarray(x, dtype=float)",
            "if factor == 3.0:\n        raise ZeroDivisionError('third')",
            RIGHT,
        ),
    )
    assert statuses(outcome) == ["error", "mismatch", "error", "match"]
    assert stages(outcome)[2:] == [("execute", False, "runtime_error", "input 0: KeyError: 'first'")]
    assert all(r.seconds is not None and r.seconds >= 0 for r in outcome.inputs)
    first, _, third, _ = outcome.inputs
    assert (first.error.type, first.error.message) == ("KeyError", "'first'")
    assert (third.error.type, third.error.message) == ("ZeroDivisionError", "third")
    assert any(
        line.startswith("<attempt>, line ") and "raise ZeroDivisionError('third')" in line
        for line in third.error.traceback
    )
    fb = FEEDBACK(outcome)
    assert fb.score == 0.1
    assert fb.text.startswith(
        "Your previous function raised an exception on verification input 0:\n"
        "    KeyError: 'first'\nTraceback (your code only):\n    <attempt>, line "
    )


@pytest.mark.parametrize(
    ("raising", "status", "mismatch", "error_type"),
    [
        ("raise NegativeFactor('no')", "match", None, None),  # a subclass of the documented exception
        ("raise ValueError('no')", "match", None, None),
        ("raise TypeError('no')", "mismatch", "wrong_exception", "TypeError"),
        ("raise Exception('no')", "mismatch", "wrong_exception", "Exception"),
        ("return np.zeros(1)", "mismatch", "expected_exception", None),
    ],
)
def test_where_the_reference_raises_the_attempt_must_raise_the_same_kind(
    evaluator: Evaluator,
    rules_tasks: dict[str, Task],
    raising: str,
    status: str,
    mismatch: str | None,
    error_type: str | None,
) -> None:
    outcome = evaluator.score(
        rules_tasks["four_inputs_CC0_H0_T0"], "code", attempt(f"if factor < 0:\n        {raising}", RIGHT)
    )
    assert statuses(outcome) == ["match", "match", "match", status]
    last = outcome.inputs[3]
    assert (last.mismatch, last.error.type if last.error else None) == (mismatch, error_type)
    assert last.seconds is not None
    assert outcome.passed is (status == "match")
    if status == "match":
        assert stages(outcome)[2:] == [("execute", True, None, None), ("correct", True, None, None)]
    else:
        assert stages(outcome)[2:] == [
            ("execute", True, None, None),
            ("correct", False, "wrong_output", "1 of 4 verification inputs differ"),
        ]
    if mismatch == "expected_exception":
        assert last.where == "an exception of type ValueError"


def test_wrong_values_on_some_inputs(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    outcome = evaluator.score(
        rules_tasks["four_inputs_CC0_H0_T0"],
        "code",
        attempt(
            CHECK_SIGN,
            "if factor == 2.0:\n        return [factor * np.asarray(x, dtype=float)]",
            "if factor == 3.0:\n        return factor * np.asarray(x, dtype=float) + 0.003",
            RIGHT,
        ),
    )
    assert statuses(outcome) == ["match", "mismatch", "mismatch", "match"]
    assert stages(outcome)[2:] == [
        ("execute", True, None, None),
        ("correct", False, "wrong_output", "2 of 4 verification inputs differ"),
    ]
    second, third = outcome.inputs[1:3]
    assert (second.mismatch, second.where) == ("type_mismatch", "output")
    assert (third.mismatch, third.where) == ("value_mismatch", "output")
    assert third.relative_error == pytest.approx(0.003 / 12.0)
    fb = FEEDBACK(outcome)
    assert fb.score == pytest.approx(0.2 + 0.6 * 2 / 4)
    assert fb.text.splitlines()[:3] == [
        "Your previous function ran but returned wrong results on 2 of 4 verification inputs:",
        "- input 1: a returned value has the wrong type (at output)",
        "- input 2: values differ, largest error about 1e-4 relative to the output scale (at output)",
    ]


def test_a_value_that_is_not_plain_data(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    outcome = evaluator.score(
        rules_tasks["four_inputs_CC0_H0_T0"],
        "code",
        attempt(CHECK_SIGN, "if factor == 3.0:\n        return len", RIGHT),
    )
    assert statuses(outcome) == ["match", "match", "mismatch", "match"]
    assert outcome.inputs[2].mismatch == "unsupported_output"


@pytest.mark.parametrize(
    ("module_line", "detail"),
    [
        ("X = 1 / 0", "ZeroDivisionError: division by zero"),
        ("Y = undefined_name", "NameError: name 'undefined_name' is not defined"),
    ],
)
def test_code_that_fails_to_load(
    evaluator: Evaluator, rules_tasks: dict[str, Task], module_line: str, detail: str
) -> None:
    outcome = evaluator.score(
        rules_tasks["four_inputs_CC0_H0_T0"], "code", module_line + "\n" + attempt(CHECK_SIGN, RIGHT)
    )
    assert not outcome.passed
    assert outcome.inputs == ()
    assert stages(outcome)[2:] == [("execute", False, "load_error", detail)]
    assert FEEDBACK(outcome).text == (
        "Your previous function raised an exception:\n    "
        + detail
        + "\nFix the error and return the complete corrected code."
    )


# ----------------------------------------------------------------- test track


SCALES = "def test_scales_values(fcn):\n    assert np.allclose(fcn(np.array([{x}]), {f}), [{y}])\n"
ZERO = "def test_zero_factor(fcn):\n    assert np.allclose(fcn(np.array([1.0, 2.0]), 0.0), [0.0, 0.0])\n"


def suite(*tests: str) -> str:
    return "import numpy as np\nimport time\n\n" + "\n".join(tests)


def results(outcome: SuiteOutcome) -> list[tuple[str, bool, bool, dict[str, bool]]]:
    return [(t.name, t.present, t.passes_reference, t.detected) for t in outcome.tests]


def test_a_test_that_catches_one_of_its_two_failures(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    # x = [1], factor 2: the reference gives 2, fail_adds 3 (caught), fail_squares 2 (not caught)
    outcome = evaluator.score(
        rules_tasks["two_failures_CC0_H0_T0"], "tests", suite(SCALES.format(x="1.0", f="2.0", y="2.0"), ZERO)
    )
    assert results(outcome) == [
        ("test_scales_values", True, True, {"fail_adds": True, "fail_squares": False}),
        ("test_zero_factor", True, True, {"fail_ones": True}),
    ]
    assert (outcome.passed, outcome.joint_score, outcome.detection_share) == (False, 0.5, pytest.approx(2 / 3))
    assert stages(outcome)[-1][:3] == ("tests", False, "failure_not_detected")
    fb = FEEDBACK(outcome)
    assert fb.score == 0.5
    assert (
        fb.text.splitlines()[1]
        == "- test_scales_values passes on 1 of the 2 wrong implementations it should reject (number 2)."
    )


def test_a_test_that_catches_both(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    outcome = evaluator.score(
        rules_tasks["two_failures_CC0_H0_T0"], "tests", suite(SCALES.format(x="1.0, 2.0", f="3.0", y="3.0, 6.0"), ZERO)
    )
    assert outcome.passed and outcome.joint_score == 1.0
    assert stages(outcome)[-1][:3] == ("tests", True, None)


def test_a_missing_test_and_a_test_failing_the_reference(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    outcome = evaluator.score(
        rules_tasks["two_failures_CC0_H0_T0"], "tests", suite(SCALES.format(x="1.0", f="2.0", y="5.0"))
    )
    assert results(outcome) == [
        ("test_scales_values", True, False, {"fail_adds": True, "fail_squares": True}),
        ("test_zero_factor", False, False, {"fail_ones": False}),
    ]
    assert stages(outcome)[-1][:3] == ("tests", False, "missing_test")
    error = outcome.tests[0].reference_error
    assert error is not None and error.type == "AssertionError" and error.message == ""
    assert error.traceback[-1].startswith("<test>, line ") and "assert np.allclose" in error.traceback[-1]
    fb = FEEDBACK(outcome)
    assert fb.score == 0.0
    assert fb.text.splitlines()[1:3] == [
        "Missing tests (write a function with exactly this name): test_zero_factor.",
        f"- test_scales_values fails on a correct implementation (AssertionError), at: {error.traceback[-1]}.",
    ]


def test_a_test_failing_only_the_reference(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    wrong_zero = ZERO.replace("[0.0, 0.0]", "[1.0, 1.0]")
    outcome = evaluator.score(
        rules_tasks["two_failures_CC0_H0_T0"],
        "tests",
        suite(SCALES.format(x="1.0, 2.0", f="3.0", y="3.0, 6.0"), wrong_zero),
    )
    assert results(outcome)[1] == ("test_zero_factor", True, False, {"fail_ones": False})
    assert stages(outcome)[-1][:3] == ("tests", False, "fails_on_reference")
    assert outcome.joint_score == 0.5 and outcome.reference_pass_share == 0.5


def test_a_test_that_hangs_on_the_reference(quick_tests: Evaluator, rules_tasks: dict[str, Task]) -> None:
    hanging = ZERO.replace("assert", "time.sleep(30)\n    assert")
    outcome = quick_tests.score(
        rules_tasks["two_failures_CC0_H0_T0"],
        "tests",
        suite(SCALES.format(x="1.0, 2.0", f="3.0", y="3.0, 6.0"), hanging),
    )
    hung = outcome.tests[1]
    assert (hung.present, hung.passes_reference, hung.detected) == (True, False, {"fail_ones": True})
    # how it ended, and nothing more: no message, no traceback in the record
    assert hung.reference_error is not None
    assert hung.reference_error.model_dump() == {"type": "timeout", "message": "", "traceback": ()}
    # (only the hanging test is asserted on: under load the others may run out of these 3 s too)
    assert "- test_zero_factor fails on a correct implementation (timeout)." in FEEDBACK(outcome).text.splitlines()


FORGES_A_PASS = """def test_zero_factor(fcn):
    for fd in range(3, 64):  # its result channel is one of them
        try:
            with open(fd, "wb", closefd=False) as channel:
                channel.write(b'{"event": "test", "status": "passed", "seconds": 0.0}\\n')
        except OSError:
            pass
    time.sleep(30)
"""


def test_a_test_that_writes_its_own_pass_and_hangs_has_not_passed(
    quick_tests: Evaluator, rules_tasks: dict[str, Task]
) -> None:
    outcome = quick_tests.score(
        rules_tasks["two_failures_CC0_H0_T0"],
        "tests",
        suite(SCALES.format(x="1.0, 2.0", f="3.0", y="3.0, 6.0"), FORGES_A_PASS),
    )
    forged = outcome.tests[1]
    assert (forged.present, forged.passes_reference, forged.detected) == (True, False, {"fail_ones": True})
    assert forged.reference_error is not None and forged.reference_error.type == "timeout"
    assert "- test_zero_factor fails on a correct implementation (timeout)." in FEEDBACK(outcome).text.splitlines()


def test_a_test_that_hangs_is_stopped_at_its_pairs_limit_and_the_tests_after_it_still_run(
    sandbox: Sandbox, rules_tasks: dict[str, Task]
) -> None:
    # the task's first test hangs on all three implementations: each of its pairs is stopped at
    # test_seconds (3 x 6 s), well inside the job's wall clock (5 pairs x 6 s + 5 s); had a pair the
    # job's clock, the first would hold the job to its end and test_zero_factor would never run
    ev = FunctionScorer(sandbox, FunctionScoringConfig(test_seconds=6.0))
    try:
        hanging = SCALES.format(x="1.0", f="2.0", y="2.0").replace("assert", "time.sleep(60)\n    assert")
        outcome = ev.score(rules_tasks["two_failures_CC0_H0_T0"], "tests", suite(hanging, ZERO))
    finally:
        ev.close()
    assert results(outcome) == [
        ("test_scales_values", True, False, {"fail_adds": True, "fail_squares": True}),
        ("test_zero_factor", True, True, {"fail_ones": True}),
    ]
    error = outcome.tests[0].reference_error
    assert error is not None and error.type == "timeout"


def test_each_stage_records_the_time_spent_on_it_alone(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    outcome = evaluator.score(
        rules_tasks["four_inputs_CC0_H0_T0"], "code", attempt("time.sleep(0.05)", CHECK_SIGN, RIGHT)
    )
    assert outcome.passed and [s.stage for s in outcome.stages] == ["parse", "imports", "execute", "correct"]
    seconds = [s.seconds for s in outcome.stages]
    assert all(t is not None and t > 0.0 for t in seconds)  # each measured: no clock reads the same twice
    # the run holds every call the child timed; judging its results is the correct stage's
    called = sum(r.seconds or 0.0 for r in outcome.inputs)
    assert called >= 4 * 0.05 and seconds[2] >= called > seconds[3]
    assert sum(seconds) <= outcome.seconds
    # the test track: the tests stage counts from its own start, not from the parse's
    text = suite(ZERO.replace("):\n", "):\n    time.sleep(0.1)\n", 1))
    tests = evaluator.score(rules_tasks["two_failures_CC0_H0_T0"], "tests", text)
    assert [s.stage for s in tests.stages] == ["parse", "imports", "tests"]
    parse, imports, ran = (s.seconds for s in tests.stages)
    assert parse is not None and imports is not None and ran is not None
    assert parse > 0.0 and imports > 0.0 and ran >= 0.2
    assert parse + imports + ran <= tests.seconds


@pytest.mark.parametrize(
    ("text", "stage", "reason"),
    [
        ("def test_scales_values(fcn)\n    pass\n", "parse", "syntax_error"),
        ("import os\n" + ZERO, "imports", "disallowed_import"),
    ],
)
def test_a_suite_stopped_early_scores_every_test_missing(
    evaluator: Evaluator, rules_tasks: dict[str, Task], text: str, stage: str, reason: str
) -> None:
    outcome = evaluator.score(rules_tasks["two_failures_CC0_H0_T0"], "tests", text)
    assert results(outcome) == [
        ("test_scales_values", False, False, {"fail_adds": False, "fail_squares": False}),
        ("test_zero_factor", False, False, {"fail_ones": False}),
    ]
    assert stages(outcome)[-1][:3] == (stage, False, reason)
    assert (outcome.passed, outcome.joint_score) == (False, 0.0)


# ----------------------------------------------------------------- implementations


def test_an_implementation_is_the_module_reduced_to_what_it_needs() -> None:
    source = (
        "import numpy as np\nK = 2\n\ndef helper(x):\n    return K * x\n\n"
        'def main(x):\n    """The doc."""\n    return helper(x)\n\n'
        'def fail_a(x):\n    """Wrong."""\n    return x\n\n'
        "def fail_a(x):\n    return -x\n\n"
        "def test_main(fcn):\n    assert fcn(1) == 2\n\n"
        "def task_info():\n    return {}\n"
    )
    reduced = implementation_source(source, "fail_a", "main", ("test_main", "fail_a", "task_info", "main"))
    namespace: dict[str, object] = {}
    exec(reduced, namespace)
    assert sorted(k for k in namespace if not k.startswith("__")) == ["K", "helper", "main", "np"]
    assert namespace["main"](3) == -3  # type: ignore[operator]  # the later definition wins
    assert "Wrong" not in reduced and "The doc" not in reduced and "test_main" not in reduced
    reference = implementation_source(source, "main", "main", ("test_main", "fail_a", "task_info", "main"))
    assert '"""' not in reference and reference.rstrip().endswith("return helper(x)")


def test_an_implementation_is_cut_from_the_module_lines_or_printed_back_when_they_cannot_be_cut() -> None:
    source = (
        "import numpy as np  # kept\n"
        "import math; K = 2\n"
        "def fail_a(x): 'on the def line'; return -x\n"
        "@staticmethod\n"
        "def helper(x):\n    return K * x\n"
        "def main(x):\n    'Only a docstring.'\n"
        "def fail_b(x):\n    'Doc.' ; y = 2\n    return y\n"
        "def fail_c(x):  # the comment stays\n    '''Doc\n    on two lines.'''  # and this one\n    return x + 1\n"
        "T = 3"
    )
    drop = ("main", "fail_a", "fail_b", "fail_c")
    head = "import numpy as np  # kept\nimport math; K = 2\n@staticmethod\ndef helper(x):\n    return K * x\nT = 3\n"
    assert implementation_source(source, "main", "solve", drop) == head + "def solve(x):\n    pass\n"
    assert implementation_source(source, "fail_c", "solve", drop) == (
        head + "def solve(x):  # the comment stays\n    return x + 1\n"
    )
    # a docstring sharing its line with the def or with other code: the function is printed back
    assert implementation_source(source, "fail_a", "solve", drop) == head + "def solve(x):\n    return -x\n"
    assert implementation_source(source, "fail_b", "solve", drop) == head + "def solve(x):\n    y = 2\n    return y\n"


def test_signatures_docstrings_and_names_that_share_lines_with_other_code_are_kept_whole() -> None:
    source = (
        "K = 2\n"
        "def fail_d(\n    x): 'On the last line of the signature.'\n"
        'def fail_e(x):\n    """Doc\n    on two lines."""; y = 2\n    y += 1\n    return y\n'
        'def fail_f(x, tag="def fail_f"):\n    """Doc."""\n    return tag\n'
        "def fail_g(x):\n        'Only a docstring, indented deeper.'\n\n"
        "T = 3\n"
    )
    drop = ("fail_d", "fail_e", "fail_f", "fail_g")
    head = "K = 2\nT = 3\n"

    def cut(name: str) -> str:
        return implementation_source(source, name, "solve", drop)

    assert cut("fail_d") == head + "def solve(x):\n    pass\n"  # printed back: the docstring is on the signature
    assert cut("fail_e") == head + "def solve(x):\n    y = 2\n    y += 1\n    return y\n"  # printed back: code after it
    assert cut("fail_f") == head + 'def solve(x, tag="def fail_f"):\n    return tag\n'  # the default stays
    assert cut("fail_g") == head + "def solve(x):\n        pass\n"


def test_inputs_holding_functions_are_built_in_the_attempts_process_from_the_module(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    from test_module_inputs import LOADS, THROUGH_GLOBALS

    task = load_task(write_module(tmp_path, "nodal_loads_CC0_H2_T2.py", LOADS), evaluator.sandbox)
    for name in ("nodal_loads", "fail_left_end"):  # what the sandbox holds of the module for either
        namespace: dict[str, object] = {}
        exec(task_implementation(task, name)["module_source"], namespace)
        assert sorted(k for k in namespace if not k.startswith("__")) == [
            "SCALE", "_sample_point", "element_share", "nodal_loads", "np"
        ]  # fmt: skip
    outcome = evaluator.score(task, "code", ideal_answer(task))
    assert (outcome.passed, [r.status for r in outcome.inputs]) == (True, ["match"] * 4)
    # task_info runs there to build them; the reference behind it does not
    reached = evaluator.score(task, "code", THROUGH_GLOBALS.format(name="nodal_loads"))
    assert reached.stages[-1].detail == "input 0: RuntimeError: not available while the verification inputs are built"


def test_every_implementation_of_our_tasks_has_the_syntax_tree_of_the_module_reduced(sandbox: Sandbox) -> None:
    """What the sandbox runs is the module without the dropped functions, the chosen one renamed,
    without its docstring and last: checked on the syntax tree against that rule done on the tree."""

    def on_the_tree(source: str, function: str, main_name: str, drop: tuple[str, ...]) -> str:
        tree = ast.parse(source)
        chosen = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function][-1]
        chosen.name = main_name
        if ast.get_docstring(chosen, clean=False) is not None:
            chosen.body = chosen.body[1:] or [ast.Pass()]
        body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name in (*drop, function))]
        return ast.dump(ast.Module(body=[*body, chosen], type_ignores=[]))

    checked = 0
    for task in load_tasks(Path(__file__).resolve().parent.parent / "tasks", sandbox):
        drop = (*task.test_names, *task.expected_failure_names, "task_info", task.main_name)
        for name in (task.main_name, *task.expected_failure_names):
            cut = implementation_source(task.module_source, name, task.main_name, drop)
            assert ast.dump(ast.parse(cut)) == on_the_tree(task.module_source, name, task.main_name, drop), name
            checked += 1
    assert checked == 232


def test_the_reference_outputs_are_computed_once_per_task(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    task = rules_tasks["four_inputs_CC0_H0_T0"]
    first = evaluator.scorer_for("code").reference_outputs(task)
    assert evaluator.scorer_for("code").reference_outputs(task) is first
    assert [o.raises for o in first] == [None, None, None, ("ValueError", "Exception", "BaseException", "object")]
    assert list(first[2].value) == [6.0, 12.0]


def test_reference_outputs_are_computed_in_the_sandbox(
    evaluator: Evaluator, rules_tasks: dict[str, Task], tmp_path: Path
) -> None:
    outputs = evaluator.scorer_for("code").run_reference(rules_tasks["two_failures_CC0_H0_T0"], "fail_squares")
    assert [list(o.value) for o in outputs] == [[3.0, 12.0]]


# ----------------------------------------------------------------- limits given to the sandbox


class RecordingSandbox:
    """The session's sandbox, recording the policy of every job it is given."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner, self.size = inner, inner.size
        self.policies: list[tuple[str, object]] = []
        self.jobs: list[dict[str, object]] = []

    def run(self, job: dict[str, object], policy: object) -> object:
        self.policies.append((str(job["kind"]), policy))
        self.jobs.append(job)
        return self.inner.run(job, policy)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("task_id", "call_seconds", "wall"),
    [
        ("four_inputs_CC0_H0_T0", 10.0, 0.25 * 4 + 5.0),  # the task's own per-call limit, times its 4 inputs
        ("scale_vector_CC0_H0_T0", 10.0, 10.0 * 3 + 5.0),  # no limit of its own: the evaluator's, times 3 inputs
        ("scale_vector_CC0_H0_T0", 7.0, 7.0 * 3 + 5.0),
    ],
)
def test_the_wall_clock_limit_of_a_call_job_scales_with_the_inputs(
    sandbox: Sandbox, rules_tasks: dict[str, Task], scale_task: Task, task_id: str, call_seconds: float, wall: float
) -> None:
    task = rules_tasks.get(task_id, scale_task)
    recording = RecordingSandbox(sandbox)
    ev = FunctionScorer(recording, FunctionScoringConfig(call_seconds=call_seconds, memory_mb=1024))  # type: ignore[arg-type]
    try:
        assert ev.score(task, "code", CORRECT_SCALE).passed
    finally:
        ev.close()
    assert [kind for kind, _ in recording.policies] == ["call", "call"]  # the reference, then the attempt
    for _, policy in recording.policies:
        assert (policy.wall_seconds, policy.memory_mb, policy.hidden_paths) == (  # type: ignore[attr-defined]
            wall,
            1024,
            (str(Path(task.path).parent),),
        )


def test_the_default_limits_are_the_ones_the_readme_states() -> None:
    assert FunctionScoringConfig() == FunctionScoringConfig(call_seconds=10.0, test_seconds=30.0, memory_mb=2048)
    cases = CaseScoringConfig()
    assert (cases.solve_seconds, cases.memory_mb, cases.retimes) == (120.0, 4096, 2)  # and docs/pde_cases.md


class RefusingSandbox(RecordingSandbox):
    """Records the policy of a job and runs nothing (the job comes back empty)."""

    def run(self, job: dict[str, object], policy: object) -> object:
        self.policies.append((str(job["kind"]), policy))
        return JobResult()


def test_the_wall_clock_limit_is_capped_at_15_minutes(sandbox: Sandbox, scale_task: Task) -> None:
    recording = RefusingSandbox(sandbox)
    ev = FunctionScorer(recording, FunctionScoringConfig(call_seconds=400.0))  # type: ignore[arg-type]
    try:
        with pytest.raises(ReferenceFailure) as err:
            ev.score(scale_task, "code", CORRECT_SCALE)
    finally:
        ev.close()
    assert str(err.value) == (
        "scale_vector_CC0_H0_T0: reference gave no result on input 0 (the process exited "
        "(code None) before returning a result)"
    )
    assert [(kind, policy.wall_seconds) for kind, policy in recording.policies] == [  # type: ignore[attr-defined]
        ("call", 900.0)
    ]


def test_a_test_job_gets_the_test_time_limit(sandbox: Sandbox, rules_tasks: dict[str, Task]) -> None:
    task = rules_tasks["two_failures_CC0_H0_T0"]
    recording = RecordingSandbox(sandbox)
    ev = FunctionScorer(recording, FunctionScoringConfig(test_seconds=12.5, memory_mb=900))  # type: ignore[arg-type]
    try:
        ev.score(task, "tests", suite(SCALES.format(x="1.0, 2.0", f="3.0", y="3.0, 6.0"), ZERO))
    finally:
        ev.close()
    # one job for the attempt: 2 tests x (reference + failures) = 5 pairs, 12.5 s each, enforced pair by pair
    assert [kind for kind, _ in recording.policies] == ["tests"]
    (_, policy), (job,) = recording.policies[0], recording.jobs
    assert (policy.wall_seconds, policy.memory_mb, policy.hidden_paths) == (  # type: ignore[attr-defined]
        5 * 12.5 + 5.0,
        900,
        (str(Path(task.path).parent),),
    )
    assert job["pair_seconds"] == 12.5
    assert [(p["test"], p["implementation"]) for p in job["pairs"]] == [  # type: ignore[attr-defined]
        ("test_scales_values", 0),  # the reference, then each of the test's expected failures
        ("test_scales_values", 1),
        ("test_scales_values", 2),
        ("test_zero_factor", 0),  # the reference again, the same implementation
        ("test_zero_factor", 3),
    ]
    assert [impl["module_source"].count("def scale_vector") for impl in job["implementations"]] == [1] * 4  # type: ignore[attr-defined, index]


def test_the_allowed_imports_come_before_the_attempt(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    # the task's import lines run first, so an attempt may use np without importing it
    code = "def scale_vector(x, factor):\n    if factor < 0:\n        raise ValueError\n    return factor * np.asarray(x)\n"
    assert evaluator.score(rules_tasks["four_inputs_CC0_H0_T0"], "code", code).passed


def test_long_errors_are_cut(evaluator: Evaluator, rules_tasks: dict[str, Task]) -> None:
    # the child sends the start and the end of a message in 600 characters (scoring/error_text.py): the
    # words that name the error come first, its cause last; the cut's count is masked as every number is
    code = attempt(CHECK_SIGN, "raise ValueError('a' * 300 + 'm' * 1000 + '" + "c" * 400 + "')")
    error = evaluator.score(rules_tasks["four_inputs_CC0_H0_T0"], "code", code).inputs[0].error
    assert error is not None
    assert (error.type, error.message) == ("ValueError", "a" * 286 + " … [# characters cut] … " + "c" * 287)
    assert [len(line) for line in error.traceback] == [300]
    # a class of the attempt's own is named by its nearest builtin base only, its message withheld
    code = attempt(CHECK_SIGN, "raise type('E' * 150, (KeyError,), {})('m' * 1000)")
    error = evaluator.score(rules_tasks["four_inputs_CC0_H0_T0"], "code", code).inputs[0].error
    assert error is not None
    assert (error.type, error.message) == ("a custom exception derived from KeyError", "")


FORGER = (
    FRAME_STACK
    + """

FORGED = [
    '{"event": "input", "index": 0, "status": "error"}',
    '{"event": "input", "index": 1, "status": "error", "error_type": "E", "message": "' + "m" * 700 +
    '", "traceback": [' + ", ".join(['"' + "t" * 400 + '"'] * 12) + ']}',
    '{"event": "input", "index": 2, "status": "ok", "value": {"__ndarray__": {"dtype": "float64", "shape": [0, 1e30], '
    '"data": ""}}}',
    '{"event": "input", "index": 3, "status": "error", "error_type": "ValueError"}',
]
"""
)


def test_frames_an_attempt_forges_are_judged_within_the_same_bounds(
    evaluator: Evaluator, rules_tasks: dict[str, Task]
) -> None:
    # the attempt writes its own frames to the result pipe and leaves before returning anything
    code = attempt(
        "out = next(f.f_locals['out'] for f in _stack() if 'out' in f.f_locals)",
        "for line in FORGED:\n        os.write(out._fd, (line + '\\n').encode())",
        "os._exit(0)",
    )
    outcome = evaluator.score(rules_tasks["four_inputs_CC0_H0_T0"], "code", FORGER + code)
    assert statuses(outcome) == ["error", "error", "mismatch", "mismatch"]
    assert [(r.mismatch, r.seconds) for r in outcome.inputs] == [
        (None, None),
        (None, None),
        ("unsupported_output", None),
        ("wrong_exception", None),
    ]  # no error_mro sent
    first, second = outcome.inputs[:2]
    # forged type names are no builtin's, their messages withheld, lines not from the attempt's code dropped
    assert (first.error.type, first.error.message, first.error.traceback) == ("a custom exception", "", ())
    assert (second.error.type, second.error.message, second.error.traceback) == ("a custom exception", "", ())
    assert stages(outcome)[2:] == [("execute", False, "runtime_error", "input 0: a custom exception")]


def test_a_tests_failure_message_on_the_reference_is_not_kept(
    evaluator: Evaluator, rules_tasks: dict[str, Task]
) -> None:
    # the message could show the reference's output ("got [2.]"): only the type and own lines are kept
    leaky = "def test_scales_values(fcn):\n    y = fcn(np.array([1.0]), 2.0)\n    assert y[0] == 5.0, f'got {y}'\n"
    outcome = evaluator.score(rules_tasks["two_failures_CC0_H0_T0"], "tests", suite(leaky, ZERO))
    error = outcome.tests[0].reference_error
    assert error is not None and (error.type, error.message) == ("AssertionError", "")
    assert "got [2.]" not in FEEDBACK(outcome).text  # its own source line is shown, not the value


# ----------------------------------------------------------------- test track: score_tests at its boundaries


NO_TEST_STOP = "no function whose name starts with 'test_'"


@pytest.mark.parametrize(
    ("text", "expected_stages"),
    [
        (
            "import numpy as np\n\n\ndef check_scales(fcn):\n    assert fcn(np.ones(1), 1.0)[0] == 1.0\n",
            [("parse", False, "missing_function", NO_TEST_STOP)],
        ),
        ("import os\n" + ZERO, [("parse", True, None, None), ("imports", False, "disallowed_import", "import os")]),
    ],
    ids=["no test function", "a disallowed import"],
)
def test_a_suite_stopped_early_says_why_and_how_long_it_took(
    evaluator: Evaluator, rules_tasks: dict[str, Task], text: str, expected_stages: list[object]
) -> None:
    # a suite must define at least one function named test_...; helpers alone stop it at parse
    before = time.perf_counter()
    outcome = evaluator.score(rules_tasks["two_failures_CC0_H0_T0"], "tests", text)
    elapsed = time.perf_counter() - before
    assert stages(outcome) == expected_stages
    assert [(t.name, t.present) for t in outcome.tests] == [("test_scales_values", False), ("test_zero_factor", False)]
    assert 0.0 < outcome.seconds <= elapsed


def test_a_missing_test_does_not_stop_the_tests_after_it(
    sandbox: Sandbox, evaluator: Evaluator, rules_tasks: dict[str, Task]
) -> None:
    # test_scales_values, the task's first test, is missing; test_zero_factor is scored all the same
    before = time.perf_counter()
    outcome = evaluator.score(rules_tasks["two_failures_CC0_H0_T0"], "tests", suite(ZERO))
    elapsed = time.perf_counter() - before
    assert results(outcome) == [
        ("test_scales_values", False, False, {"fail_adds": False, "fail_squares": False}),
        ("test_zero_factor", True, True, {"fail_ones": True}),
    ]
    assert [t.reference_error for t in outcome.tests] == [None, None]  # a test passing the reference has no error
    assert stages(outcome) == [
        ("parse", True, None, None),
        ("imports", True, None, None),
        ("tests", False, "missing_test", None),
    ]
    # the isolation the sandbox gave the job is recorded with the outcome
    assert outcome.isolation == sandbox.isolation().level != "unknown"
    assert 0.0 < outcome.stages[-1].seconds <= outcome.seconds <= elapsed


def test_a_suite_with_none_of_the_tasks_tests_runs_nothing(sandbox: Sandbox, rules_tasks: dict[str, Task]) -> None:
    recording = RecordingSandbox(sandbox)
    ev = FunctionScorer(recording)  # type: ignore[arg-type]
    try:
        outcome = ev.score(
            rules_tasks["two_failures_CC0_H0_T0"], "tests", suite("def test_other(fcn):\n    assert True\n")
        )
    finally:
        ev.close()
    assert recording.policies == []  # no job is sent to the sandbox: there is no pair to run
    assert results(outcome) == [
        ("test_scales_values", False, False, {"fail_adds": False, "fail_squares": False}),
        ("test_zero_factor", False, False, {"fail_ones": False}),
    ]
    assert stages(outcome)[-1][:3] == ("tests", False, "missing_test")
    assert (outcome.passed, outcome.isolation) == (False, "unknown")  # nothing ran, so no isolation to record


def test_a_suite_that_fails_to_build_gives_its_error_on_the_reference(
    evaluator: Evaluator, rules_tasks: dict[str, Task]
) -> None:
    # the module-level assignment raises while the suite is built, before any test runs
    outcome = evaluator.score(
        rules_tasks["two_failures_CC0_H0_T0"],
        "tests",
        suite("SCALE = 1 / 0\n", SCALES.format(x="1.0", f="2.0", y="2.0")),
    )
    assert results(outcome)[0] == ("test_scales_values", True, False, {"fail_adds": True, "fail_squares": True})
    error = outcome.tests[0].reference_error
    assert error is not None
    assert (error.type, error.message, error.traceback) == (
        "ZeroDivisionError",
        "",
        ("<test>, line 3, in <module>: SCALE = 1 / 0",),
    )


def test_a_suite_may_use_the_tasks_imports_without_importing_them(
    evaluator: Evaluator, rules_tasks: dict[str, Task]
) -> None:
    # the task's import lines (import numpy as np) run before the suite, which uses np without importing it
    outcome = evaluator.score(
        rules_tasks["two_failures_CC0_H0_T0"], "tests", SCALES.format(x="1.0, 2.0", f="3.0", y="3.0, 6.0") + "\n" + ZERO
    )
    assert results(outcome) == [
        ("test_scales_values", True, True, {"fail_adds": True, "fail_squares": True}),
        ("test_zero_factor", True, True, {"fail_ones": True}),
    ]
    assert outcome.passed


FORGING_TEST = (
    FRAME_STACK
    + """

def test_scales_values(fcn):
    out = next(f.f_locals['out'] for f in _stack() if 'out' in f.f_locals)
    out.emit({'event': 'test', 'status': 'failed', 'error_type': 'AssertionError', 'traceback': [
        '<given>, line 1, in <module>: import numpy as np',
        '<given>, line 2, in <module>: import numpy as np',
        '<test>, line 1, in <module>: import numpy as np',
        '<test>, line 3, in _stack: made up',
    ]})
"""
)


def test_a_forged_failure_on_the_reference_shows_only_lines_of_the_code_its_author_has(
    evaluator: Evaluator, rules_tasks: dict[str, Task]
) -> None:
    # the test writes its own failed frame: of its traceback lines, those agreeing with the task's
    # import lines (given before the suite) or with the suite's own code are kept, the others dropped
    outcome = evaluator.score(rules_tasks["two_failures_CC0_H0_T0"], "tests", suite(FORGING_TEST, ZERO))
    error = outcome.tests[0].reference_error
    assert error is not None
    assert (error.type, error.message, error.traceback) == (
        "AssertionError",
        "",
        ("<given>, line 1, in <module>: import numpy as np", "<test>, line 1, in <module>: import numpy as np"),
    )
    assert outcome.tests[0].passes_reference is False


# ----------------------------------------------------------------- scripted sandbox results (mutation tests, #24)
# A fresh evaluator over a sandbox that runs nothing and hands back scripted job results: the
# verdicts on what a child may send (a frame without its time, a reference's exception named by
# its type alone, a module that fails to build), each run in the test itself with no cached
# reference outputs.


class ScriptedSandbox:
    """Gives each job the next of `results` (the reference's first, then the attempt's),
    recording the jobs; `pause` seconds pass in each job."""

    size = 1

    def __init__(self, *results: JobResult, pause: float = 0.0) -> None:
        self.results, self.pause = list(results), pause
        self.jobs: list[dict[str, object]] = []

    def run(self, job: dict[str, object], policy: object) -> JobResult:
        self.jobs.append(job)
        time.sleep(self.pause)
        return self.results.pop(0)


def ok_frame(index: int, value: object, **extra: object) -> dict[str, object]:
    return {"event": "input", "index": index, "status": "ok", "value": codec.to_data(value), **extra}


def error_frame(index: int, mro: list[str] | None, **extra: object) -> dict[str, object]:
    frame: dict[str, object] = {"event": "input", "index": index, "status": "error", "message": "no", **extra}
    if mro is not None:
        frame.update(error_type=mro[0], error_mro=mro)
    return frame


VALUE_ERROR = ["ValueError", "Exception", "BaseException", "object"]
KEY_ERROR = ["KeyError", "LookupError", "Exception", "BaseException", "object"]
# scale_vector_CC0_H0_T0's reference: 2 * [1, 2, 3], 0.5 * [[1, -1], [0.5, 4]], then ValueError
SCALE_REFERENCE = JobResult(
    frames=[
        ok_frame(0, np.array([2.0, 4.0, 6.0])),
        ok_frame(1, np.array([[0.5, -0.5], [0.25, 2.0]])),
        error_frame(2, VALUE_ERROR),
    ]
)


def scripted(task: Task, text: str, *results: JobResult, pause: float = 0.0) -> tuple[FunctionOutcome, float]:
    """The outcome of `text` scored over `results`, and the seconds the scoring took."""
    ev = FunctionScorer(ScriptedSandbox(*results, pause=pause))  # type: ignore[arg-type]
    t0 = time.perf_counter()
    outcome = ev.score(task, "code", text)
    return outcome, time.perf_counter() - t0


def test_each_input_keeps_the_time_its_frame_reports_and_none_without_a_number(scale_task: Task) -> None:
    attempt_result = JobResult(
        frames=[
            ok_frame(0, np.array([2.0, 4.0, 6.0]), seconds=2),  # an int is a time too
            {"event": "input", "index": 1, "status": "ok", "value": {"not": "decodable"}, "seconds": 0.25},
            error_frame(2, VALUE_ERROR, seconds="slow"),  # not a number: no time
        ],
        isolation="namespaced",
    )
    outcome, _ = scripted(scale_task, CORRECT_SCALE, SCALE_REFERENCE, attempt_result)
    assert [(r.status, r.mismatch, r.seconds) for r in outcome.inputs] == [
        ("match", None, 2.0),
        ("mismatch", "unsupported_output", 0.25),  # a value that does not decode keeps its time
        ("match", None, None),
    ]
    attempt_result = JobResult(frames=[ok_frame(0, np.array([2.0, 4.0, 6.0])), *SCALE_REFERENCE.frames[1:]])
    outcome, _ = scripted(scale_task, CORRECT_SCALE, SCALE_REFERENCE, attempt_result)
    assert [r.seconds for r in outcome.inputs] == [None, None, None]  # no time sent: none recorded, not 0


def test_an_error_before_a_timeout_stays_the_reason_the_code_did_not_run(scale_task: Task) -> None:
    """Input 0 raised, then the job ran out of time: the inputs after the error were not run,
    and the first failure, the error, is what the stage and the feedback name."""
    attempt_result = JobResult(frames=[error_frame(0, KEY_ERROR)], timed_out=True)
    outcome, _ = scripted(scale_task, CORRECT_SCALE, SCALE_REFERENCE, attempt_result)
    assert statuses(outcome) == ["error", "not_run", "not_run"]
    assert stages(outcome)[2:] == [("execute", False, "runtime_error", "input 0: KeyError: no")]
    assert FEEDBACK(outcome).text.startswith(
        "Your previous function raised an exception on verification input 0:\n    KeyError: no"
    )


def test_only_a_value_mismatch_measures_an_error_so_a_wrong_shape_is_no_near_miss(scale_task: Task) -> None:
    attempt_result = JobResult(
        frames=[
            ok_frame(0, np.array([2.0, 4.0])),
            ok_frame(1, np.array([[0.5, -0.5], [0.25, 2.0]])),
            error_frame(2, VALUE_ERROR),
        ]
    )
    outcome, _ = scripted(scale_task, CORRECT_SCALE, SCALE_REFERENCE, attempt_result)
    assert [(r.status, r.mismatch, r.relative_error) for r in outcome.inputs] == [
        ("mismatch", "shape_mismatch", None),
        ("match", None, None),
        ("match", None, None),
    ]
    assert worst_error(outcome) is None  # measured nowhere: not counted among the near misses
    attempt_result = JobResult(frames=[ok_frame(0, np.array([2.0, 4.0, 6.5])), *SCALE_REFERENCE.frames[1:]])
    outcome, _ = scripted(scale_task, CORRECT_SCALE, SCALE_REFERENCE, attempt_result)
    assert [r.relative_error for r in outcome.inputs] == [pytest.approx(0.5 / 6.0), None, None]


def test_inputs_after_an_expected_exception_that_was_not_raised_are_still_judged(scale_task: Task) -> None:
    reference = JobResult(
        frames=[
            error_frame(0, VALUE_ERROR),
            ok_frame(1, np.array([2.0, 4.0, 6.0])),
            ok_frame(2, np.array([[0.5, -0.5], [0.25, 2.0]])),
        ]
    )
    attempt_result = JobResult(
        frames=[
            ok_frame(0, np.array([2.0, 4.0, 6.0])),  # a value where the reference raises
            ok_frame(1, np.array([2.0, 4.0, 6.0])),  # as the reference
            ok_frame(2, np.array([[0.5, -0.5], [0.25, 3.0]])),  # one entry wrong
        ]
    )
    outcome, _ = scripted(scale_task, CORRECT_SCALE, reference, attempt_result)
    assert [(r.index, r.status, r.mismatch) for r in outcome.inputs] == [
        (0, "mismatch", "expected_exception"),
        (1, "match", None),
        (2, "mismatch", "value_mismatch"),
    ]
    assert stages(outcome)[2:] == [
        ("execute", True, None, None),
        ("correct", False, "wrong_output", "2 of 3 verification inputs differ"),
    ]


def test_a_reference_exception_named_by_its_type_alone_is_matched_by_that_type(scale_task: Task) -> None:
    # a reference frame may name its exception without the classes it derives from
    reference = JobResult(frames=[*SCALE_REFERENCE.frames[:2], error_frame(2, None, error_type="ValueError")])
    ev = FunctionScorer(ScriptedSandbox(reference, reference))  # type: ignore[arg-type]
    assert [o.raises for o in ev.reference_outputs(scale_task)] == [None, None, ("ValueError",)]
    assert [o.raises for o in ev.run_reference(scale_task)] == [None, None, ("ValueError",)]
    for raised, status, mismatch in ((VALUE_ERROR, "match", None), (KEY_ERROR, "mismatch", "wrong_exception")):
        attempt_result = JobResult(frames=[*SCALE_REFERENCE.frames[:2], error_frame(2, raised)])
        outcome, _ = scripted(scale_task, CORRECT_SCALE, reference, attempt_result)
        assert [(r.status, r.mismatch) for r in outcome.inputs] == [
            ("match", None),
            ("match", None),
            (status, mismatch),
        ]
        assert outcome.passed is (status == "match")


def test_a_reference_exception_keeps_the_classes_it_derives_from(scale_task: Task) -> None:
    reference = JobResult(frames=[*SCALE_REFERENCE.frames[:2], error_frame(2, KEY_ERROR)])
    ev = FunctionScorer(ScriptedSandbox(reference))  # type: ignore[arg-type]
    assert [o.raises for o in ev.reference_outputs(scale_task)] == [None, None, tuple(KEY_ERROR)]


def test_a_reference_that_fails_to_build_names_the_message_of_its_first_build_error(scale_task: Task) -> None:
    broken = JobResult(
        frames=[
            {"event": "build_error", "error_type": "ImportError", "message": "no module named 'numpyy'"},
            {"event": "build_error", "error_type": "NameError", "message": "second"},
        ]
    )
    for result in (broken, JobResult(frames=broken.frames[:1])):
        ev = FunctionScorer(ScriptedSandbox(result))  # type: ignore[arg-type]
        with pytest.raises(ReferenceFailure) as err:
            ev.score(scale_task, "code", CORRECT_SCALE)
        assert str(err.value) == "scale_vector_CC0_H0_T0: the module failed to build: no module named 'numpyy'"


def test_an_attempt_that_does_not_parse_is_timed_and_runs_nothing(scale_task: Task) -> None:
    sandbox = ScriptedSandbox()
    ev = FunctionScorer(sandbox)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    outcome = ev.score(scale_task, "code", "def scale_vector(x, factor)\n    return x\n")
    elapsed = time.perf_counter() - t0
    assert (outcome.task_id, outcome.passed, outcome.inputs) == ("scale_vector_CC0_H0_T0", False, ())
    assert stages(outcome) == [("parse", False, "syntax_error", "SyntaxError: expected ':' (line 1)")]
    assert 0.0 < outcome.stages[0].seconds <= outcome.seconds <= elapsed
    assert sandbox.jobs == [] and outcome.isolation == "unknown"  # nothing ran: no isolation to record


def test_an_attempt_with_disallowed_imports_names_them_all_and_runs_nothing(scale_task: Task) -> None:
    sandbox = ScriptedSandbox()
    ev = FunctionScorer(sandbox)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    outcome = ev.score(scale_task, "code", "import os\nimport subprocess\n" + CORRECT_SCALE)
    elapsed = time.perf_counter() - t0
    assert (outcome.task_id, outcome.passed, outcome.inputs) == ("scale_vector_CC0_H0_T0", False, ())
    assert stages(outcome) == [
        ("parse", True, None, None),
        ("imports", False, "disallowed_import", "import os; import subprocess"),
    ]
    assert 0.0 < outcome.stages[0].seconds <= outcome.seconds <= elapsed
    assert sandbox.jobs == []  # neither the reference nor the attempt ran
    fb = FEEDBACK(outcome)
    assert (fb.score, fb.text) == (
        0.05,
        "Your previous answer imports something that is not allowed: import os; import subprocess.\n"
        "Use only the imports listed in the task (and the helper functions it provides).",
    )


def test_the_execute_stage_is_timed_over_the_attempts_job_and_the_outcome_over_everything(scale_task: Task) -> None:
    attempt_result = JobResult(frames=SCALE_REFERENCE.frames, isolation="namespaced")
    outcome, elapsed = scripted(scale_task, CORRECT_SCALE, SCALE_REFERENCE, attempt_result, pause=0.05)
    assert outcome.passed and outcome.isolation == "namespaced"  # the attempt job's isolation
    execute = outcome.stages[2]
    assert execute.stage == "execute"
    assert 0.05 <= execute.seconds <= elapsed - 0.05  # the attempt's job, not the reference's before it
    assert 0.1 <= outcome.seconds <= elapsed  # both jobs


def test_a_traceback_line_into_the_given_code_is_shown_with_the_attempts_own(scale_task: Task) -> None:
    # the runner keeps the lines of the attempt's code; lines into the code it is given (imports,
    # helpers) are the author's to see too, those into anything else are dropped
    helper = "def checked(factor):\n    if factor > 1:\n        raise KeyError('big')\n    return factor\n"
    task = scale_task.model_copy(update={"helpers": (SourceFunction(name="checked", source=helper),)})
    code = "import numpy as np\n\ndef scale_vector(x, factor):\n    return checked(factor) * np.asarray(x)\n"
    shown = [
        "<attempt>, line 4, in scale_vector: return checked(factor) * np.asarray(x)",
        "<given>, line 3, in checked: raise KeyError('big')",
    ]
    traceback = [*shown, "<task>, line 3, in checked: raise KeyError('big')"]
    attempt_result = JobResult(frames=[error_frame(0, KEY_ERROR, traceback=traceback), *SCALE_REFERENCE.frames[1:]])
    outcome, _ = scripted(task, code, SCALE_REFERENCE, attempt_result)
    error = outcome.inputs[0].error
    assert error is not None and (error.type, error.message, error.traceback) == ("KeyError", "no", tuple(shown))


CHECKED = "def checked(factor):\n    if factor > 1:\n        raise KeyError('big')\n    return factor\n"


def test_a_call_that_raises_in_a_given_helper_shows_the_helper_s_line_too(
    evaluator: Evaluator, scale_task: Task, rules_tasks: dict[str, Task]
) -> None:
    """The child sends the lines of the code the attempt was given (a build error's too); the line that
    raised is often the helper's."""
    helpers = {"helpers": (SourceFunction(name="checked", source=CHECKED),)}
    code = "import numpy as np\n\ndef scale_vector(x, factor):\n    return checked(factor) * np.asarray(x)\n"
    outcome = evaluator.score(scale_task.model_copy(update=helpers), "code", code)
    error = outcome.inputs[0].error  # factor 2
    assert error is not None and (error.type, error.traceback) == (
        "KeyError",
        (
            "<attempt>, line 4, in scale_vector: return checked(factor) * np.asarray(x)",
            "<given>, line 3, in checked: raise KeyError('big')",
        ),
    )
    assert [r.status for r in outcome.inputs] == ["error", "match", "mismatch"]  # factor 0.5, then -1 (no raise)
    # a test calling it: its failure on the reference shows the helper's line after the test's
    task = rules_tasks["two_failures_CC0_H0_T0"].model_copy(update=helpers)
    suite_text = suite("def test_scales_values(fcn):\n    assert checked(5.0) == fcn(5.0, 1.0)\n", ZERO)
    failed = evaluator.score(task, "tests", suite_text).tests[0].reference_error
    assert failed is not None and failed.traceback == (
        "<test>, line 5, in test_scales_values: assert checked(5.0) == fcn(5.0, 1.0)",
        "<given>, line 3, in checked: raise KeyError('big')",
    )


def test_an_unknown_track_is_refused_by_name(scale_task: Task) -> None:
    ev = FunctionScorer(ScriptedSandbox())  # type: ignore[arg-type]
    with pytest.raises(ValueError) as err:
        ev.score(scale_task, "proofs", CORRECT_SCALE)  # type: ignore[call-overload]
    assert str(err.value) == "unknown track 'proofs'; expected 'code' or 'tests'"


def test_a_pde_case_runs_in_the_evaluators_sandbox_when_no_case_scorer_is_given() -> None:
    case = next(c for c in load_cases(ROOT / "cases") if c.task_id == "poisson_square_oscillating")
    failed = {"event": "solve", "status": "error", "seconds": 0.01, "message": "boom", "traceback": []}
    sandbox = ScriptedSandbox(
        JobResult(frames=[{**failed, "error_type": "RuntimeError", "error_mro": ["RuntimeError"]}])
    )
    outcome = Evaluator(sandbox).score(case, "numpy-scipy", "def solve(spec):\n    raise RuntimeError('boom')\n")  # type: ignore[arg-type]
    assert [job["kind"] for job in sandbox.jobs] == ["solve"]
    assert [(s.stage, s.passed, s.reason) for s in outcome.stages] == [("executes", False, "runtime_error")]


# ----------------------------------------------------------------- the registry and the dispatch: track -> kind -> scorer
# Kinds of the test's own, with no sandbox: which kind a track, an outcome or a log's tag names,
# which scorer a track's attempts go to (kinds sharing a scorer_key share one), and what a run
# loads for its tracks.

BUILTIN_TRACKS = ("code", "tests", "numpy-scipy", "scikit-fem", "dolfinx", "ngsolve")


class StubOutcome(OutcomeBase):
    kind: Literal["stub"] = "stub"


@dataclass
class StubScorer:
    name: str
    calibration_id: str | None = None
    closed: int = 0

    def score(self, problem: Any, track: str, text: str) -> StubOutcome:
        return StubOutcome(task_id=f"{self.name} | {problem} | {track} | {text}", passed=True, stages=())

    def close(self) -> None:
        self.closed += 1


@dataclass(frozen=True)
class StubKind:
    track: str
    scorer_key: str = "stubs"
    default_path: str = "stubs-default"
    preload: tuple[str, ...] = ()
    outcome_type: type[OutcomeBase] = StubOutcome

    def load(self, path: str, sandbox: Any, options: ScoringOptions, tracks: Sequence[str]) -> LoadedProblems:
        skipped = [SkippedTask(name="broken", path=f"{path}/broken.py", reason=f"broken for {t}") for t in tracks]
        chosen = f" selecting {list(options.selections)}" if options.selections else ""
        scorer = StubScorer(f"loaded from {path} for {list(tracks)} on {sandbox} with {options.compat}{chosen}")
        # a made item names the problems "<path>/<item's name>1" and "...2"
        made = {
            item: f"{path}/{item.split(':')[0]}1,{path}/{item.split(':')[0]}2"
            for selection in options.selections
            for item in selector_items(selection)
            if ":" in item
        }
        return LoadedProblems({t: [f"{path}/{t}"] for t in tracks}, scorer, skipped, made=made)

    def scorer(self, sandbox: Any, options: ScoringOptions) -> StubScorer:
        return StubScorer(f"built on {sandbox} with {options.compat}", calibration_id=f"{self.scorer_key} calibration")


@pytest.fixture
def stub_kinds() -> Iterator[list[StubKind]]:
    kinds = [
        StubKind("stub-a", preload=("numpy", "scipy")),
        StubKind("stub-b", preload=("scipy", "json")),
        StubKind("stub-c", scorer_key="others", default_path="others-default"),
    ]
    for kind in kinds:
        assert register_kind(kind) is kind
    yield kinds
    for kind in kinds:
        unregister_kind(kind.track)


def test_the_registry_imports_the_builtin_kinds_when_first_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    import fembench_agents.kinds as registry

    monkeypatch.setattr(registry, "_loaded", False)  # as in a process that has not asked yet
    assert tracks() == BUILTIN_TRACKS


def test_a_track_is_registered_once_and_unregistered_by_name(stub_kinds: list[StubKind]) -> None:
    assert register_kind(stub_kinds[0]) is stub_kinds[0]  # the same kind again: nothing changes
    with pytest.raises(ValueError) as err:
        register_kind(StubKind("stub-a", scorer_key="another"))
    assert str(err.value) == "track 'stub-a' is already registered (by StubKind)"
    assert kind_for("stub-a") is stub_kinds[0]
    unregister_kind("stub-a")
    unregister_kind("stub-a")  # a track not registered (any more): nothing to remove
    assert tracks() == (*BUILTIN_TRACKS, "stub-b", "stub-c")
    with pytest.raises(ValueError) as err:
        kind_for("stub-a")
    assert str(err.value) == f"unknown track 'stub-a'; known: {', '.join((*BUILTIN_TRACKS, 'stub-b', 'stub-c'))}"
    assert register_kind(StubKind("stub-a", scorer_key="another")).scorer_key == "another"
    assert tracks() == (*BUILTIN_TRACKS, "stub-b", "stub-c", "stub-a")


def test_an_outcome_names_the_first_kind_registered_with_its_type(stub_kinds: list[StubKind]) -> None:
    outcome = StubOutcome(task_id="t", passed=False, stages=())
    assert kind_of_outcome(outcome) is stub_kinds[0]
    assert outcome_types()["stub"] is StubOutcome
    assert kind_of_outcome(FunctionOutcome(task_id="t", passed=True, stages=())) is kind_for("code")
    with pytest.raises(ValueError) as err:
        kind_of_outcome(OutcomeBase(task_id="t", passed=True, stages=()))
    assert str(err.value) == "no registered kind scores to OutcomeBase"


def test_kinds_sharing_a_scorer_key_share_one_scorer_built_on_first_use(stub_kinds: list[StubKind]) -> None:
    ev = Evaluator("the sandbox", options=ScoringOptions(compat=("rewrite",)))  # type: ignore[arg-type]
    shared = ev.scorer_for("stub-b")
    assert shared is ev.scorer_for("stub-a")
    assert shared.name == "built on the sandbox with ('rewrite',)"  # type: ignore[attr-defined]
    assert ev.score("p1", "stub-a", "text").task_id == "built on the sandbox with ('rewrite',) | p1 | stub-a | text"
    assert (ev.calibration_id("stub-a"), ev.calibration_id("stub-c")) == ("stubs calibration", "others calibration")
    given = StubScorer("given")
    ev.use("stub-b", given)  # replaces the scorer of every kind sharing stub-b's key, and no other
    assert ev.score("p2", "stub-a", "x").task_id == "given | p2 | stub-a | x"
    assert ev.scorer_for("stub-c").name == "built on the sandbox with ('rewrite',)"  # type: ignore[attr-defined]
    ev.close()
    assert (given.closed, ev.scorer_for("stub-c").closed, shared.closed) == (1, 1, 0)  # type: ignore[attr-defined]
    assert Evaluator("bare").scorer_for("stub-a").name == "built on bare with ()"  # type: ignore[arg-type, attr-defined]
    assert Evaluator("bare", {"stubs": given}).scorer_for("stub-b") is given  # type: ignore[arg-type]


def test_a_runs_problems_load_once_per_scorer_from_the_path_given_or_the_kinds_default(
    stub_kinds: list[StubKind],
) -> None:
    sets = load_problems(
        ["stub-b", "stub-c", "stub-a", "stub-b"],
        "sb",  # type: ignore[arg-type]
        paths={"stubs-default": "here", "elsewhere": "not read"},
        options=ScoringOptions(compat=("rewrite",)),
    )
    assert sets.by_track == {"stub-b": ["here/stub-b"], "stub-a": ["here/stub-a"], "stub-c": ["others-default/stub-c"]}
    assert list(sets.by_track) == ["stub-b", "stub-a", "stub-c"]
    loaded = "loaded from here for ['stub-b', 'stub-a'] on sb with ('rewrite',)"
    assert sets.evaluator.scorer_for("stub-a").name == loaded  # type: ignore[attr-defined]
    assert sets.evaluator.scorer_for("stub-b") is sets.evaluator.scorer_for("stub-a")
    assert (
        sets.evaluator.scorer_for("stub-c").name == "loaded from others-default for ['stub-c'] on sb with ('rewrite',)"
    )  # type: ignore[attr-defined]
    assert sets.evaluator.options == ScoringOptions(compat=("rewrite",))
    assert {t: [s.reason for s in group] for t, group in sets.skipped_by_track.items()} == {
        "stub-b": ["broken for stub-b", "broken for stub-a"],
        "stub-a": ["broken for stub-b", "broken for stub-a"],
        "stub-c": ["broken for stub-c"],
    }
    # every file left out once, the last reason given for it
    assert [(s.path, s.reason) for s in sets.skipped] == [
        ("here/broken.py", "broken for stub-a"),
        ("others-default/broken.py", "broken for stub-c"),
    ]
    bare = load_problems(["stub-c"], "sb")  # type: ignore[arg-type]
    # a track it did not load is scored by a scorer its kind builds on the same sandbox
    assert bare.evaluator.scorer_for("stub-a").name == "built on sb with ()"  # type: ignore[attr-defined]
    assert bare.evaluator.scorer_for("stub-c").name == "loaded from others-default for ['stub-c'] on sb with ()"  # type: ignore[attr-defined]
    assert preload_for(["stub-b", "stub-a", "stub-c"]) == ("scipy", "json", "numpy")


def test_each_kind_makes_the_made_items_of_its_own_tracks_selections(stub_kinds: list[StubKind]) -> None:
    """A grid's (track, selection) pairs reach the kind of each track, each once; the ids each made item
    names come back, and every run's selection is given them in the item's place."""
    config = run.RunConfig(model="m", agent="single-shot", track="stub-a", tasks="x,new:a,b=1")
    runs = [
        PlannedRun(config, Path("r1")),
        PlannedRun(dataclasses.replace(config, agent="feedback-loop"), Path("r2")),
        PlannedRun(dataclasses.replace(config, track="stub-b", tasks="y"), Path("r3")),
        PlannedRun(dataclasses.replace(config, track="stub-c", tasks="odd:q=2,z"), Path("r4")),
    ]
    pairs = grid_selections(runs)
    assert pairs == [("stub-a", "x,new:a,b=1"), ("stub-b", "y"), ("stub-c", "odd:q=2,z")]
    sets = load_problems(["stub-a", "stub-b", "stub-c"], "sb", selections=pairs)  # type: ignore[arg-type]
    assert sets.evaluator.scorer_for("stub-a").name == (  # type: ignore[attr-defined]
        "loaded from stubs-default for ['stub-a', 'stub-b'] on sb with () selecting ['x,new:a,b=1', 'y']"
    )
    assert sets.evaluator.scorer_for("stub-c").name == (  # type: ignore[attr-defined]
        "loaded from others-default for ['stub-c'] on sb with () selecting ['odd:q=2,z']"
    )
    assert sets.evaluator.options == ScoringOptions()  # the selections are the load's, not the scorer's
    assert sets.made == {
        "new:a,b=1": "stubs-default/new1,stubs-default/new2",
        "odd:q=2": "others-default/odd1,others-default/odd2",
    }
    assert resolve_selection("new:a,b=1,w", sets.made) == "stubs-default/new1,stubs-default/new2,w"
    assert [(r.config.agent, r.config.track, r.config.tasks, r.out) for r in resolved_runs(runs, sets.made)] == [
        ("single-shot", "stub-a", "x,stubs-default/new1,stubs-default/new2", Path("r1")),
        ("feedback-loop", "stub-a", "x,stubs-default/new1,stubs-default/new2", Path("r2")),
        ("single-shot", "stub-b", "y", Path("r3")),
        ("single-shot", "stub-c", "others-default/odd1,others-default/odd2,z", Path("r4")),
    ]
    none = load_problems(["stub-a"], "sb", selections=[("stub-c", "odd:q=2")])  # type: ignore[arg-type]
    assert none.made == {} and none.evaluator.scorer_for("stub-a").name.endswith("with ()")  # type: ignore[attr-defined]

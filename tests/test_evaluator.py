"""The staged evaluator on small tasks: parse -> imports -> execute -> correct for
functions, parse -> imports -> tests for test suites."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from conftest import CORRECT_SCALE, GOOD_SCALE_TESTS, strip_timings

from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite import outcomes as oc
from fembench_agents.suite.model import Task
from fembench_agents.suite.outcomes import FunctionOutcome


def stages(outcome: FunctionOutcome | oc.TestSuiteOutcome) -> list[tuple[str, bool, str | None]]:
    return [(s.stage, s.passed, s.reason) for s in outcome.stages]


# ----------------------------------------------------------------- passing


def test_correct_code_in_markdown_with_prose_passes(evaluator: Evaluator, scale_task: Task) -> None:
    reply = (
        "Sure! Here is the implementation you asked for.\n\n```python\n"
        + CORRECT_SCALE
        + "\nprint(scale_vector([1, 2], 3))  # a demo call the parser drops\n```\n\n"
        "It multiplies every entry and rejects a negative factor."
    )
    outcome = evaluator.score(scale_task, "code", reply)
    assert outcome.passed
    assert stages(outcome) == [
        ("parse", True, None),
        ("imports", True, None),
        ("execute", True, None),
        ("correct", True, None),
    ]
    assert [r.status for r in outcome.inputs] == ["match", "match", "match"]


def test_correct_bare_code_passes(evaluator: Evaluator, scale_task: Task) -> None:
    outcome = evaluator.score(scale_task, "code", CORRECT_SCALE)
    assert outcome.passed
    assert outcome.stage_reached == "correct"
    assert outcome.reason is None


def test_correct_code_among_several_blocks_is_chosen(evaluator: Evaluator, scale_task: Task) -> None:
    reply = "First a helper:\n```python\nX = 1\n```\nThen the function:\n```python\n" + CORRECT_SCALE + "```\n"
    assert evaluator.score(scale_task, "code", reply).passed


# ----------------------------------------------------------------- failing stages


@pytest.mark.parametrize(
    "body, mismatch",
    [
        ("return factor * np.asarray(x, dtype=float) + 1.0", "value_mismatch"),
        ("return (factor * np.asarray(x, dtype=float)).ravel()[:1]", "shape_mismatch"),
        ("return [1.0]", "shape_mismatch"),
        ("return 'a string'", "type_mismatch"),
        ("return factor * np.asarray(x, dtype=float) * np.nan", "non_finite"),
    ],
)
def test_wrong_output_fails_at_correct(evaluator: Evaluator, scale_task: Task, body: str, mismatch: str) -> None:
    code = (
        f"import numpy as np\ndef scale_vector(x, factor):\n    if factor < 0:\n        raise ValueError\n    {body}\n"
    )
    outcome = evaluator.score(scale_task, "code", code)
    assert not outcome.passed
    assert stages(outcome)[-1] == ("correct", False, "wrong_output")
    assert outcome.failed_stage == "correct"
    first = outcome.inputs[0]
    assert first.status == "mismatch" and first.mismatch == mismatch
    assert outcome.inputs[2].status == "match"  # the ValueError on input 2 is still right


def test_wrong_value_reports_where_and_size_not_reference(evaluator: Evaluator, scale_task: Task) -> None:
    code = "import numpy as np\ndef scale_vector(x, factor):\n    if factor < 0:\n        raise ValueError\n    return [factor * np.asarray(x, dtype=float) + 0.5]\n"
    outcome = evaluator.score(scale_task, "code", code)
    assert outcome.inputs[0].mismatch == "type_mismatch"
    code = "import numpy as np\ndef scale_vector(x, factor):\n    if factor < 0:\n        raise ValueError\n    return factor * np.asarray(x, dtype=float) + 0.5\n"
    outcome = evaluator.score(scale_task, "code", code)
    first = outcome.inputs[0]
    assert first.where == "output"
    assert first.relative_error == pytest.approx(0.5 / 6.0)  # max |diff| / max(1, max |reference|)
    shown = json.dumps(strip_timings(outcome.model_dump()))
    assert "6.0" not in shown and "4.0" not in shown  # reference values are never shown


def test_exception_fails_at_execute(evaluator: Evaluator, scale_task: Task) -> None:
    code = "def scale_vector(x, factor):\n    raise RuntimeError('boom in the attempt')\n"
    outcome = evaluator.score(scale_task, "code", code)
    assert not outcome.passed
    assert stages(outcome)[-1] == ("execute", False, "runtime_error")
    assert "RuntimeError: boom in the attempt" in outcome.stages[-1].detail
    assert outcome.inputs[0].status == "error" and outcome.inputs[0].error.type == "RuntimeError"
    assert any("<attempt>" in line for line in outcome.inputs[0].error.traceback)


def test_timeout_fails_at_execute(evaluator: Evaluator, load: Callable[[str], Task]) -> None:
    task = load("slow_scale_CC0_H0_T0")
    assert task.time_limit == 1
    outcome = evaluator.score(task, "code", "def scale_vector(x, factor):\n    while True:\n        pass\n")
    assert not outcome.passed
    assert stages(outcome)[-1] == ("execute", False, "timeout")
    assert [r.status for r in outcome.inputs] == ["timeout"]
    assert outcome.stages[-1].seconds < 20


@pytest.mark.parametrize(
    "code, detail",
    [
        ("import os\ndef scale_vector(x, factor):\n    return x\n", "import os"),
        ("import subprocess\ndef scale_vector(x, factor):\n    return x\n", "import subprocess"),
        ("from os import path\ndef scale_vector(x, factor):\n    return x\n", "from os import ..."),
        ("def scale_vector(x, factor):\n    os = __import__('os')\n    return x\n", "dynamic import via __import__"),
        ("import importlib\ndef scale_vector(x, factor):\n    return x\n", "import importlib"),
        ("def scale_vector(x, factor):\n    return importlib.import_module('os')\n", "dynamic import via importlib"),
    ],
)
def test_disallowed_import_fails_at_imports(evaluator: Evaluator, scale_task: Task, code: str, detail: str) -> None:
    outcome = evaluator.score(scale_task, "code", code)
    assert not outcome.passed
    assert stages(outcome) == [("parse", True, None), ("imports", False, "disallowed_import")]
    assert detail in outcome.stages[-1].detail
    assert outcome.inputs == ()


@pytest.mark.parametrize(
    "text, reason",
    [
        ("import numpy as np\ndef scale(x, factor):\n    return factor * x\n", "missing_function"),
        ("def scale_vector(x, factor)\n    return x\n", "syntax_error"),
        ("```python\ndef scale_vector(x, factor):\n  return [\n```", "syntax_error"),
        ("", "empty_reply"),
        ("   \n\n  ", "empty_reply"),
    ],
)
def test_unparseable_reply_fails_at_parse(evaluator: Evaluator, scale_task: Task, text: str, reason: str) -> None:
    outcome = evaluator.score(scale_task, "code", text)
    assert not outcome.passed
    assert stages(outcome) == [("parse", False, reason)]
    assert outcome.stages[0].detail


def test_module_level_error_fails_as_load_error(evaluator: Evaluator, scale_task: Task) -> None:
    code = "import numpy as np\nTABLE = np.zeros(3)[5]\ndef scale_vector(x, factor):\n    return x\n"
    outcome = evaluator.score(scale_task, "code", code)
    assert stages(outcome)[-1] == ("execute", False, "load_error")
    assert "IndexError" in outcome.stages[-1].detail


# ----------------------------------------------------------------- exceptions the reference raises


@pytest.mark.parametrize(
    "on_negative, passed, mismatch",
    [
        ("raise ValueError('negative')", True, None),
        ("raise type('Negative', (ValueError,), {})('a ValueError subclass')", True, None),
        ("raise TypeError('wrong type')", False, "wrong_exception"),
        ("pass", False, "expected_exception"),
    ],
)
def test_reference_exception_must_be_raised_too(
    evaluator: Evaluator, scale_task: Task, on_negative: str, passed: bool, mismatch: str | None
) -> None:
    code = (
        "import numpy as np\ndef scale_vector(x, factor):\n    if factor < 0:\n        "
        f"{on_negative}\n    return factor * np.asarray(x, dtype=float)\n"
    )
    outcome = evaluator.score(scale_task, "code", code)
    assert outcome.passed is passed
    assert outcome.inputs[2].mismatch == mismatch
    assert outcome.inputs[2].status == ("match" if passed else "mismatch")


# ----------------------------------------------------------------- invariance rules


def mode_code(name: str, vector: str, value: str = "float(w[0])") -> str:
    return f"import numpy as np\ndef {name}(K):\n    w, v = np.linalg.eigh(K)\n    vec = v[:, 0]\n    return {value}, {vector}\n"


@pytest.mark.parametrize(
    "task_id, vector, passed",
    [
        ("mode_sign_CC1_H0_T0", "vec", True),
        ("mode_sign_CC1_H0_T0", "-vec", True),
        ("mode_sign_CC1_H0_T0", "v[:, 1]", False),  # another eigenvector
        ("mode_sign_CC1_H0_T0", "2.0 * vec", False),  # sign-insensitive is not scale-insensitive
        ("mode_plain_CC1_H0_T0", "vec", True),
        ("mode_plain_CC1_H0_T0", "-vec", False),  # without the rule a flipped vector is wrong
        ("mode_scale_CC1_H0_T0", "vec", True),
        ("mode_scale_CC1_H0_T0", "-3.7 * vec", True),
        ("mode_scale_CC1_H0_T0", "v[:, 1]", False),
        ("mode_scale_CC1_H0_T0", "vec + 0.1", False),
    ],
)
def test_invariance_rules(
    evaluator: Evaluator, load: Callable[[str], Task], task_id: str, vector: str, passed: bool
) -> None:
    task = load(task_id)
    outcome = evaluator.score(task, "code", mode_code("smallest_mode", vector))
    assert outcome.passed is passed, outcome.inputs
    if not passed:
        assert outcome.inputs[0].mismatch == "value_mismatch"
        assert outcome.inputs[0].where == "output[1]"


def test_invariance_rule_does_not_excuse_the_eigenvalue(evaluator: Evaluator, load: Callable[[str], Task]) -> None:
    outcome = evaluator.score(load("mode_sign_CC1_H0_T0"), "code", mode_code("smallest_mode", "-vec", "-float(w[0])"))
    assert not outcome.passed
    assert outcome.inputs[0].where == "output[0]"


def test_invariance_rules_are_loaded(load: Callable[[str], Task]) -> None:
    rules = load("mode_scale_CC1_H0_T0").comparison.rules
    assert [(r.path, r.invariance) for r in rules] == [((1,), "scale")]
    assert load("mode_plain_CC1_H0_T0").comparison.rules == ()


# ----------------------------------------------------------------- test-suite attempts


def test_good_suite_reaches_joint_success(evaluator: Evaluator, scale_task: Task) -> None:
    outcome = evaluator.score(scale_task, "tests", "Tests:\n```python\n" + GOOD_SCALE_TESTS + "```")
    assert outcome.passed
    assert stages(outcome) == [("parse", True, None), ("imports", True, None), ("tests", True, None)]
    assert [(t.name, t.present, t.passes_reference, t.detected) for t in outcome.tests] == [
        ("test_scales_values", True, True, {"fail_adds": True}),
        ("test_negative_factor_raises", True, True, {"fail_no_check": True}),
    ]
    assert outcome.joint_score == 1.0


def test_task_own_tests_reach_joint_success_on_real_tasks(evaluator: Evaluator, sandbox) -> None:
    from conftest import FEM_1D

    from fembench_agents.suite.loader import load_tasks

    for task in load_tasks(FEM_1D, sandbox):
        outcome = evaluator.score(task, "tests", "\n\n".join(t.source for t in task.tests))
        assert outcome.passed, (task.task_id, outcome.tests)
        assert outcome.joint_score == 1.0


def test_test_failing_on_reference(evaluator: Evaluator, scale_task: Task) -> None:
    suite = GOOD_SCALE_TESTS.replace("[3.0, 6.0]", "[4.0, 6.0]")
    outcome = evaluator.score(scale_task, "tests", suite)
    assert not outcome.passed
    assert outcome.reason == "fails_on_reference"
    first = outcome.tests[0]
    assert first.present and not first.passes_reference and not first.joint
    assert first.reference_error is not None and first.reference_error.type == "AssertionError"
    assert first.reference_error.message == ""  # what the reference returned is never shown
    assert outcome.tests[1].joint
    assert outcome.joint_score == 0.5


def test_test_that_does_not_catch_expected_failure(evaluator: Evaluator, scale_task: Task) -> None:
    suite = GOOD_SCALE_TESTS.replace("fcn(np.array([1.0]), -1.0)", "raise ValueError('always')")
    outcome = evaluator.score(scale_task, "tests", suite)
    assert not outcome.passed
    assert outcome.reason == "failure_not_detected"
    second = outcome.tests[1]
    assert second.passes_reference and second.detected == {"fail_no_check": False} and not second.joint
    assert outcome.joint_score == 0.5
    assert outcome.detection_share == 0.5


def test_missing_required_test_counts_as_failed(evaluator: Evaluator, scale_task: Task) -> None:
    suite = GOOD_SCALE_TESTS.split("def test_negative_factor_raises")[0]
    outcome = evaluator.score(scale_task, "tests", suite)
    assert not outcome.passed
    assert outcome.reason == "missing_test"
    missing = outcome.tests[1]
    assert (missing.name, missing.present, missing.joint) == ("test_negative_factor_raises", False, False)
    assert missing.detected == {"fail_no_check": False}
    assert outcome.joint_score == 0.5


@pytest.mark.parametrize(
    "text, stage, reason",
    [
        ("", "parse", "empty_reply"),
        ("def helper():\n    return 1\n", "parse", "missing_function"),
        ("def test_scales_values(fcn):\n    assert fcn(\n", "parse", "syntax_error"),
        ("import os\ndef test_scales_values(fcn):\n    assert True\n", "imports", "disallowed_import"),
    ],
)
def test_suite_failing_early_scores_every_test_as_failed(
    evaluator: Evaluator, scale_task: Task, text: str, stage: str, reason: str
) -> None:
    outcome = evaluator.score(scale_task, "tests", text)
    assert not outcome.passed
    assert outcome.stages[-1].stage == stage and outcome.reason == reason
    assert [t.present for t in outcome.tests] == [False, False]
    assert outcome.joint_score == 0.0


def test_joint_score_arithmetic() -> None:
    tests = (
        oc.TestResult(name="a", present=True, passes_reference=True, detected={"f1": True, "f2": True}),
        oc.TestResult(name="b", present=True, passes_reference=True, detected={"f3": True, "f4": False}),
        oc.TestResult(name="c", present=True, passes_reference=False, detected={"f5": True}),
        oc.TestResult(name="d", present=False, detected={"f6": False}),
    )
    outcome = oc.TestSuiteOutcome(task_id="t", passed=False, stages=(), tests=tests)
    assert [t.joint for t in tests] == [True, False, False, False]
    assert outcome.joint_score == pytest.approx(1 / 4)
    assert outcome.reference_pass_share == pytest.approx(2 / 4)
    assert outcome.detection_share == pytest.approx(4 / 6)
    empty = oc.TestSuiteOutcome(task_id="t", passed=False, stages=())
    assert (empty.joint_score, empty.reference_pass_share, empty.detection_share) == (0.0, 0.0, 0.0)


def test_outcomes_round_trip_through_json(evaluator: Evaluator, scale_task: Task) -> None:
    from fembench_agents.kinds import outcome_types

    for outcome in (
        evaluator.score(scale_task, "code", CORRECT_SCALE),
        evaluator.score(scale_task, "tests", GOOD_SCALE_TESTS),
    ):
        data = json.loads(outcome.model_dump_json())  # as a log holds it: read back by its kind tag
        again = outcome_types()[data["kind"]].model_validate(data)
        assert again == outcome and type(again) is type(outcome)

"""The exact feedback a repairing agent reads, and the score it comes with,
for every stage and for partial outcomes: some inputs wrong, a timeout on the
third of several inputs, a test that catches some of its expected failures
but not all, tests missing next to tests failing the reference."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from fembench_agents.cases.outcomes import CaseOutcome
from fembench_agents.contracts import Feedback
from fembench_agents.kinds import register_kind, unregister_kind
from fembench_agents.scoring.feedback import (
    TemplateFeedback,
    magnitude,
    outcome_score,
)
from fembench_agents.scoring.outcomes import ErrorInfo, OutcomeBase, StageResult
from fembench_agents.suite.feedback import describe_mismatch
from fembench_agents.suite.outcomes import FunctionOutcome, InputResult
from fembench_agents.suite.outcomes import TestResult as CaseResult  # aliased: pytest would collect Test*
from fembench_agents.suite.outcomes import TestSuiteOutcome as SuiteOutcome

FIX = "Fix the error and return the complete corrected code."


def stages(*failed: tuple[str, str | None, str | None], passed: tuple[str, ...] = ()) -> tuple[StageResult, ...]:
    return (
        *(StageResult(stage=s, passed=True) for s in passed),
        *(StageResult(stage=s, passed=False, reason=r, detail=d) for s, r, d in failed),
    )


def function(
    *failed: tuple[str, str | None, str | None], passed: tuple[str, ...] = (), inputs: tuple[InputResult, ...] = ()
) -> FunctionOutcome:
    return FunctionOutcome(task_id="T", passed=not failed, stages=stages(*failed, passed=passed), inputs=inputs)


def feedback(outcome: FunctionOutcome | SuiteOutcome, **kwargs: str) -> Feedback:
    return TemplateFeedback(**kwargs)(outcome)


UP_TO_EXECUTE = ("parse", "imports")
UP_TO_CORRECT = ("parse", "imports", "execute")


# ----------------------------------------------------------------- function track


def test_parse_failure() -> None:
    fb = feedback(function(("parse", "syntax_error", "SyntaxError: invalid syntax (line 3)")))
    assert fb == Feedback(
        score=0.0,
        text=(
            "Your previous answer could not be used: SyntaxError: invalid syntax (line 3).\n"
            "Reply with the complete code in a single ```python block that defines the requested function."
        ),
    )


def test_parse_failure_without_detail_names_the_reason_and_the_target() -> None:
    fb = feedback(function(("parse", "empty_reply", None)), target="beam_stiffness")
    assert fb.text == (
        "Your previous answer could not be used: empty_reply.\n"
        "Reply with the complete code in a single ```python block that defines beam_stiffness."
    )


def test_disallowed_import() -> None:
    fb = feedback(
        function(("imports", "disallowed_import", "import os; dynamic import via __import__"), passed=("parse",))
    )
    assert fb == Feedback(
        score=0.05,
        text=(
            "Your previous answer imports something that is not allowed: import os; dynamic import via __import__.\n"
            "Use only the imports listed in the task (and the helper functions it provides)."
        ),
    )


def test_an_exception_names_the_first_failing_input_its_error_and_own_traceback() -> None:
    inputs = (
        InputResult(index=0, status="match"),
        InputResult(index=1, status="mismatch", mismatch="value_mismatch"),
        InputResult(
            index=2,
            status="error",
            error=ErrorInfo(
                type="ZeroDivisionError",
                message="division by zero",
                traceback=("<attempt>, line 4, in f: return a / b", "<attempt>, line 9, in g: f(0, 0)"),
            ),
        ),
        InputResult(index=3, status="error", error=ErrorInfo(type="KeyError", message="'k'")),
    )
    fb = feedback(
        function(
            ("execute", "runtime_error", "input 2: ZeroDivisionError: division by zero"),
            passed=UP_TO_EXECUTE,
            inputs=inputs,
        )
    )
    assert fb == Feedback(
        score=0.1,
        text=(
            "Your previous function raised an exception on verification input 2:\n"
            "    ZeroDivisionError: division by zero\n"
            "Traceback (your code only):\n"
            "    <attempt>, line 4, in f: return a / b\n"
            "    <attempt>, line 9, in g: f(0, 0)\n" + FIX
        ),
    )


def test_an_exception_without_traceback_lines_shows_none() -> None:
    inputs = (InputResult(index=0, status="error", error=ErrorInfo(type="MemoryError", message="")),)
    fb = feedback(function(("execute", "runtime_error", "input 0: MemoryError: "), passed=UP_TO_EXECUTE, inputs=inputs))
    assert fb.text == "Your previous function raised an exception on verification input 0:\n    MemoryError\n" + FIX


def test_code_that_does_not_load_names_no_input() -> None:
    fb = feedback(
        function(("execute", "load_error", "NameError: name 'q' is not defined: at load"), passed=UP_TO_EXECUTE)
    )
    assert fb == Feedback(
        score=0.1,
        text=("Your previous function raised an exception:\n    NameError: name 'q' is not defined: at load\n" + FIX),
    )


def test_a_timeout_on_the_third_of_four_inputs() -> None:
    inputs = (
        InputResult(index=0, status="match"),
        InputResult(index=1, status="match"),
        InputResult(index=2, status="timeout"),
        InputResult(index=3, status="not_run"),
    )
    fb = feedback(
        function(
            ("execute", "timeout", "input 2: the code did not finish within the time limit"),
            passed=UP_TO_EXECUTE,
            inputs=inputs,
        )
    )
    assert fb == Feedback(
        score=0.1,
        text=(
            "Your previous function did not finish within the time limit on verification input 2. "
            "Look for an infinite loop or an algorithm far slower than needed, and return the complete corrected code."
        ),
    )


def test_a_crash_on_the_second_input_shows_how_the_process_ended_once() -> None:
    inputs = (
        InputResult(index=0, status="match"),
        InputResult(index=1, status="crashed"),
        InputResult(index=2, status="not_run"),
    )
    fb = feedback(
        function(
            ("execute", "crashed", "input 1: the process was killed by signal 9 (memory or CPU limit, or a crash)"),
            passed=UP_TO_EXECUTE,
            inputs=inputs,
        )
    )
    assert fb == Feedback(
        score=0.1,
        text=(
            "Your previous function stopped the process on verification input 1: the process was killed by signal 9 "
            "(memory or CPU limit, or a crash). Check memory use (huge arrays), deep recursion and calls that exit the "
            "interpreter, and return the complete corrected code."
        ),
    )


@pytest.mark.parametrize(
    ("reason", "status", "opening"),
    [
        ("crashed", "crashed", "Your previous function stopped the process on verification input 0: "),
        ("timeout", "timeout", "Your previous function did not finish within the time limit on verification input 0. "),
    ],
)
def test_a_process_lost_on_the_first_input_names_input_0(reason: str, status: str, opening: str) -> None:
    inputs = (InputResult(index=0, status=status), InputResult(index=1, status="not_run"))
    fb = feedback(function(("execute", reason, "input 0: it ended"), passed=UP_TO_EXECUTE, inputs=inputs))
    assert fb.text.startswith(opening), fb.text


def test_a_detail_about_another_input_is_kept_whole() -> None:
    inputs = (InputResult(index=1, status="crashed"),)
    fb = feedback(function(("execute", "crashed", "input 12: exited"), passed=UP_TO_EXECUTE, inputs=inputs))
    assert "on verification input 1: input 12: exited. Check" in fb.text


def test_wrong_results_on_some_inputs_list_each_with_its_kind_and_place() -> None:
    inputs = (
        InputResult(index=0, status="match"),
        InputResult(index=1, status="mismatch", mismatch="value_mismatch", where="output[1]", relative_error=3e-4),
        InputResult(index=2, status="match"),
        InputResult(index=3, status="mismatch", mismatch="shape_mismatch", where="output"),
        InputResult(index=4, status="mismatch", mismatch="expected_exception", where="an exception of type ValueError"),
    )
    fb = feedback(
        function(("correct", "wrong_output", "3 of 5 verification inputs differ"), passed=UP_TO_CORRECT, inputs=inputs)
    )
    assert fb.score == pytest.approx(0.2 + 0.6 * 2 / 5)
    assert fb.text == (
        "Your previous function ran but returned wrong results on 3 of 5 verification inputs:\n"
        "- input 1: values differ, largest error about 1e-4 relative to the output scale (at output[1])\n"
        "- input 3: the output (or part of it) has the wrong shape (at output)\n"
        "- input 4: the function returned a value where the docstring requires an exception\n"
        "Re-read the docstring (conventions, ordering, signs, units, return shapes) and return the complete "
        "corrected code."
    )


@pytest.mark.parametrize(
    ("matches", "total", "score"), [(0, 1, 0.2), (0, 3, 0.2), (1, 3, 0.4), (2, 3, 0.6), (3, 4, 0.65)]
)
def test_a_wrong_answer_scores_by_the_share_of_inputs_it_gets_right(matches: int, total: int, score: float) -> None:
    inputs = tuple(
        InputResult(index=i, status="match" if i < matches else "mismatch", mismatch="value_mismatch")
        for i in range(total)
    )
    assert outcome_score(
        function(("correct", "wrong_output", None), passed=UP_TO_CORRECT, inputs=inputs)
    ) == pytest.approx(score)


def test_passing_scores_one() -> None:
    fb = feedback(
        function(passed=("parse", "imports", "execute", "correct"), inputs=(InputResult(index=0, status="match"),))
    )
    assert fb == Feedback(score=1.0, text="Your previous answer passed every check.")


@pytest.mark.parametrize(
    ("mismatch", "where", "text"),
    [
        ("shape_mismatch", "output[0]", "the output (or part of it) has the wrong shape (at output[0])"),
        ("length_mismatch", "output", "a returned sequence has the wrong length (at output)"),
        ("keys_mismatch", "output[2]", "a returned dict has the wrong keys (at output[2])"),
        ("type_mismatch", "output['K']", "a returned value has the wrong type (at output['K'])"),
        ("non_finite", "output", "the output contains NaN or infinite values (at output)"),
        ("unsupported_output", None, "the output is not plain data (numbers, arrays, lists, tuples, dicts)"),
        (
            "expected_exception",
            "an exception of type LinAlgError",
            "the function returned a value where the docstring requires an exception",
        ),
        ("wrong_exception", None, "the function raised a different exception type than the docstring requires"),
        ("value_mismatch", None, "values differ, largest error about unknown relative to the output scale"),
        ("something_new", "output", "something_new (at output)"),
        (None, None, "wrong result"),
    ],
)
def test_each_kind_of_mismatch_is_described(mismatch: str | None, where: str | None, text: str) -> None:
    assert describe_mismatch(InputResult(index=0, status="mismatch", mismatch=mismatch, where=where)) == text


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (3e-4, "1e-4"),
        (0.5, "1e0"),
        (0.3, "1e-1"),
        (1.0, "1e0"),
        (40.0, "1e2"),
        (1e-300, "1e-300"),
        (float("inf"), "unknown"),
        (-0.5, "unknown"),
        (0.0, "unknown"),
    ],
)
def test_magnitude_rounds_the_decimal_exponent(x: float, text: str) -> None:
    assert magnitude(x) == text


# ----------------------------------------------------------------- test track


def case(
    name: str, *, present: bool = True, reference: bool = True, error: ErrorInfo | None = None, **detected: bool
) -> CaseResult:
    return CaseResult(name=name, present=present, passes_reference=reference, reference_error=error, detected=detected)


def suite(*tests: CaseResult, reason: str = "missing_test") -> SuiteOutcome:
    joint = all(t.joint for t in tests)
    return SuiteOutcome(
        task_id="T",
        passed=joint,
        tests=tests,
        stages=(
            StageResult(stage="parse", passed=True),
            StageResult(stage="imports", passed=True),
            StageResult(stage="tests", passed=joint, reason=None if joint else reason),
        ),
    )


def test_a_mixed_test_suite_lists_every_problem_in_task_order() -> None:
    outcome = suite(
        case("test_a", present=False, reference=False, fail_x=False),
        case(
            "test_b",
            reference=False,
            fail_y=True,
            error=ErrorInfo(
                type="AssertionError",
                traceback=("<test>, line 3, in test_b: x = 1", "<test>, line 4, in test_b: assert x == 2"),
            ),
        ),
        case("test_c", fail_p=True, fail_q=False, fail_r=False),  # catches one of its three
        case("test_d", fail_s=True),
        case("test_e", present=False, reference=False, fail_t=False),
    )
    fb = feedback(outcome)
    assert fb.score == pytest.approx(1 / 5)
    assert fb.text == (
        "Your previous tests did not all do their job.\n"
        "Missing tests (write a function with exactly this name): test_a, test_e.\n"
        "- test_b fails on a correct implementation (AssertionError), at: <test>, line 4, in test_b: assert x == 2.\n"
        "- test_c passes on 2 of the 3 wrong implementations it should reject (numbers 2, 3).\n"
        "A test must pass on every correct implementation and fail on the wrong ones. "
        "Return the complete corrected test code."
    )


def test_a_test_failing_the_reference_without_a_result_says_so() -> None:
    outcome = suite(
        case("test_a", reference=False, fail_x=True), case("test_b", fail_y=True), reason="fails_on_reference"
    )
    assert feedback(outcome).text == (
        "Your previous tests did not all do their job.\n"
        "- test_a fails on a correct implementation (no result).\n"
        "A test must pass on every correct implementation and fail on the wrong ones. "
        "Return the complete corrected test code."
    )
    assert feedback(outcome).score == 0.5


def test_a_test_that_catches_some_failures_earns_no_joint_credit() -> None:
    outcome = suite(
        case("test_a", fail_x=True, fail_y=False),
        case("test_b", fail_z=True, fail_w=True),
        case("test_c", fail_v=True),
        reason="failure_not_detected",
    )
    fb = feedback(outcome)
    assert fb.score == pytest.approx(2 / 3)
    assert fb.text.splitlines()[1] == "- test_a passes on 1 of the 2 wrong implementations it should reject (number 2)."


def test_tests_failing_to_parse_score_zero_and_ask_for_tests() -> None:
    outcome = SuiteOutcome(
        task_id="T",
        passed=False,
        stages=stages(("parse", "missing_function", None)),
        tests=(case("test_a", present=False, reference=False, fail_x=False),),
    )
    assert feedback(outcome) == Feedback(
        score=0.0,
        text=(
            "Your previous answer could not be used: missing_function.\n"
            "Reply with the complete code in a single ```python block that defines the requested test functions."
        ),
    )


def test_tests_with_a_disallowed_import() -> None:
    outcome = SuiteOutcome(
        task_id="T", passed=False, stages=stages(("imports", "disallowed_import", "import os"), passed=("parse",))
    )
    assert feedback(outcome).text.startswith("Your previous answer imports something that is not allowed: import os.")
    assert feedback(outcome).score == 0.0


def test_a_complete_test_suite_passes() -> None:
    outcome = suite(case("test_a", fail_x=True), case("test_b", fail_y=True, fail_z=True))
    assert feedback(outcome) == Feedback(score=1.0, text="Your previous answer passed every check.")


def test_a_template_naming_something_the_outcome_does_not_provide_is_an_error(tmp_path: Path) -> None:
    import jinja2

    (tmp_path / "parse.j2").write_text("Could not use it: {{ detail }} ({{ reference_output }}).")
    builder = TemplateFeedback(template_dir=tmp_path)
    with pytest.raises(jinja2.UndefinedError, match="reference_output"):
        builder(function(("parse", "syntax_error", "SyntaxError")))


def test_templates_come_from_the_given_folder(tmp_path: Path) -> None:
    (tmp_path / "parse.j2").write_text("Unusable: {{ detail }}; write {{ target }}.\n\n")
    fb = TemplateFeedback(template_dir=tmp_path, target="f")(function(("parse", "syntax_error", "bad")))
    assert fb == Feedback(score=0.0, text="Unusable: bad; write f.")


def test_a_template_may_name_the_kind_of_outcome(tmp_path: Path) -> None:
    (tmp_path / "parse.j2").write_text("The {{ kind }} answer: {{ detail }}")
    builder = TemplateFeedback(template_dir=tmp_path)
    assert builder(function(("parse", "syntax_error", "bad"))).text == "The function answer: bad"
    tests = SuiteOutcome(task_id="T", passed=False, stages=stages(("parse", "empty_reply", "no block")))
    assert builder(tests).text == "The tests answer: no block"


def test_an_outcome_that_reached_no_stage_scores_zero() -> None:
    assert outcome_score(FunctionOutcome(task_id="T", passed=False, stages=())) == 0.0


def test_a_pde_outcome_that_reached_no_stage_is_graded_as_a_parse_failure() -> None:
    unstaged = CaseOutcome(task_id="T", passed=False, stages=(), library="numpy-scipy", family="poisson")
    assert outcome_score(unstaged) == 0.0


# ----------------------------------------------------------------- a kind with templates of its own


class CountOutcome(OutcomeBase):
    kind: Literal["count"] = "count"


@dataclass
class CountFeedback:
    folder: Path

    def template(self, outcome: CountOutcome) -> str:
        return "passed.j2" if outcome.passed else "failed.j2"

    def view(self, outcome: CountOutcome, targets: dict[str, str]) -> dict[str, Any]:
        failed = outcome.stages[-1]
        return {"stage": failed.stage, "detail": failed.detail, "target": targets["code"]}

    def score(self, outcome: CountOutcome) -> float:
        return 1.0 if outcome.passed else 0.25


@dataclass(frozen=True)
class CountKind:
    feedback: CountFeedback
    track: str = "counts"
    outcome_type: type[OutcomeBase] = CountOutcome


def test_a_kind_with_templates_of_its_own_is_rendered_from_its_folder_every_time(tmp_path: Path) -> None:
    (tmp_path / "failed.j2").write_text("{{ stage }} failed for {{ target }}: {{ detail }}\n")
    (tmp_path / "passed.j2").write_text("all {{ stage }} done\n")
    register_kind(CountKind(CountFeedback(tmp_path)))
    try:
        builder = TemplateFeedback(target="count()")
        failed = CountOutcome(task_id="T", passed=False, stages=stages(("execute", "runtime_error", "boom")))
        assert builder.template_for(failed) == "failed.j2"
        assert builder(failed) == Feedback(score=0.25, text="execute failed for count(): boom")
        assert builder(failed) == Feedback(score=0.25, text="execute failed for count(): boom")  # the kept templates
        done = CountOutcome(task_id="T", passed=True, stages=stages(passed=("execute",)))
        assert builder(done) == Feedback(score=1.0, text="all execute done")
    finally:
        unregister_kind("counts")


def test_the_template_of_a_function_or_tests_outcome_is_named_by_its_stage() -> None:
    builder = TemplateFeedback()
    assert builder.template_for(function(("parse", "syntax_error", "bad"))) == "parse.j2"
    assert builder.template_for(function(("execute", "timeout", None), passed=UP_TO_EXECUTE)) == "timeout.j2"

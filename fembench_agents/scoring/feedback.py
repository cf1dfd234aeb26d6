"""Feedback builders: `(outcome) -> Feedback(score, text)`, pure and testable.

Texts come from the jinja2 templates in `feedback/`, one per stage outcome,
rendered from a view of the outcome that holds only facts about the attempt
itself (its own errors and traceback lines, which input failed and how, the
order of magnitude of its error). Outcomes carry no reference values, sources
or thresholds, and an attempt's errors only as `disclosure` rebuilt them, so
no template can show one; expected failures are named by number only.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import jinja2

from fembench_agents.cases.tracks import get_track
from fembench_agents.contracts import Feedback
from fembench_agents.scoring.outcomes import (
    AnyOutcome,
    CaseOutcome,
    FunctionOutcome,
    InputResult,
    TestSuiteOutcome,
    first_failed,
)

FEEDBACK_DIR = Path(__file__).resolve().parents[2] / "feedback"

_MISMATCH_TEXT = {
    "shape_mismatch": "the output (or part of it) has the wrong shape",
    "length_mismatch": "a returned sequence has the wrong length",
    "keys_mismatch": "a returned dict has the wrong keys",
    "type_mismatch": "a returned value has the wrong type",
    "non_finite": "the output contains NaN or infinite values",
    "unsupported_output": "the output is not plain data (numbers, arrays, lists, tuples, dicts)",
    "expected_exception": "the function returned a value where the docstring requires an exception",
    "wrong_exception": "the function raised a different exception type than the docstring requires",
}

# How far along the pipeline an attempt got, for a graded score (GEPA needs a gradient).
_STAGE_SCORE = {"parse": 0.0, "imports": 0.05, "execute": 0.1, "executes": 0.1, "accurate": 0.4, "fast": 0.7}


def magnitude(x: float | None) -> str:
    if x is None or not math.isfinite(x) or x <= 0:
        return "unknown"
    return f"1e{round(math.log10(x)):d}"


def describe_mismatch(r: InputResult) -> str:
    if r.mismatch == "value_mismatch":
        text = f"values differ, largest error about {magnitude(r.relative_error)} relative to the output scale"
    else:
        text = _MISMATCH_TEXT.get(r.mismatch or "", r.mismatch or "wrong result")
    return f"{text} (at {r.where})" if r.where and r.mismatch != "expected_exception" else text


def outcome_score(outcome: AnyOutcome) -> float:
    if isinstance(outcome, TestSuiteOutcome):
        return outcome.joint_score
    if outcome.passed:
        return 1.0
    stage = outcome.failed_stage or "parse"
    if stage in _STAGE_SCORE:  # every stage but a function's "correct", which scores by its share of inputs
        return _STAGE_SCORE[stage]
    if isinstance(outcome, CaseOutcome):
        raise ValueError(f"a PDE case outcome failed at {stage!r}; expected one of executes, accurate, fast")
    share = sum(r.status == "match" for r in outcome.inputs) / max(len(outcome.inputs), 1)
    return 0.2 + 0.6 * share


class TemplateFeedback:
    """The default feedback builder."""

    def __init__(
        self,
        template_dir: str | Path = FEEDBACK_DIR,
        target: str = "the requested function",
        tests_target: str = "the requested test functions",
    ) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(template_dir)),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
        )
        self.target = target
        self.tests_target = tests_target

    def template_for(self, outcome: AnyOutcome) -> str:
        if outcome.passed:
            return "passed.j2"
        if isinstance(outcome, CaseOutcome):
            return "case.j2"
        stage, reason = outcome.failed_stage, outcome.reason
        if stage in ("parse", "imports", "tests"):
            return f"{stage}.j2"
        if stage == "execute":
            return {"timeout": "timeout.j2", "crashed": "crashed.j2"}.get(reason or "", "runtime_error.j2")
        return "wrong_output.j2"

    def view(self, outcome: FunctionOutcome | TestSuiteOutcome) -> dict[str, Any]:
        failed = first_failed(outcome.stages)
        target = self.tests_target if isinstance(outcome, TestSuiteOutcome) else self.target
        ctx: dict[str, Any] = {
            "kind": outcome.kind,
            "reason": outcome.reason,
            "target": target,
            "detail": failed.detail if failed else None,
            "input_index": None,
            "error_type": None,
            "error_message": None,
            "traceback": [],
        }
        if isinstance(outcome, FunctionOutcome):
            bad = next((r for r in outcome.inputs if r.status in ("error", "timeout", "crashed")), None)
            if bad is not None:
                ctx["input_index"] = bad.index
                # the templates name the input themselves: "input 3: <what happened>" -> "<what happened>"
                if ctx["detail"] and ctx["detail"].startswith(f"input {bad.index}: "):
                    ctx["detail"] = ctx["detail"][len(f"input {bad.index}: ") :]
                if bad.error:
                    ctx.update(
                        error_type=bad.error.type, error_message=bad.error.message, traceback=list(bad.error.traceback)
                    )
            elif failed is not None and failed.stage == "execute" and failed.detail:
                error_type, _, error_message = failed.detail.partition(": ")
                ctx.update(error_type=error_type, error_message=error_message)
            ctx["failing"] = [
                {"index": r.index, "description": describe_mismatch(r)}
                for r in outcome.inputs
                if r.status == "mismatch"
            ]
            ctx["total"] = len(outcome.inputs)
        else:
            ctx["missing"] = [t.name for t in outcome.tests if not t.present]
            ctx["fails_reference"] = [
                {
                    "name": t.name,
                    "error_type": t.reference_error.type if t.reference_error else "no result",
                    "traceback": list(t.reference_error.traceback) if t.reference_error else [],
                }
                for t in outcome.tests
                if t.present and not t.passes_reference
            ]
            # By number, never by name: a name says which bug to test for.
            ctx["undetected"] = [
                {
                    "name": t.name,
                    "slipped": [i for i, ok in enumerate(t.detected.values(), start=1) if not ok],
                    "total": len(t.detected),
                }
                for t in outcome.tests
                if t.present and not all(t.detected.values())
            ]
        return ctx

    def case_view(self, outcome: CaseOutcome) -> dict[str, Any]:
        """The attempt's own facts only: never `outcome.thresholds`. Not its
        measured time either: timings vary from one scoring to the next, and a
        replay must re-create every prompt of a feedback loop exactly."""
        failed = first_failed(outcome.stages)
        err = outcome.error
        return {
            "stage": failed.stage if failed else None,
            "reason": outcome.reason,
            "detail": failed.detail if failed else None,
            "allowed": ", ".join(get_track(outcome.library).allowed_imports),
            "error_type": err.type if err else None,
            "error_message": err.message if err else None,
            "traceback": list(err.traceback) if err else [],
            "error": outcome.relative_l2_error,
        }

    def __call__(self, outcome: AnyOutcome) -> Feedback:
        if isinstance(outcome, CaseOutcome):
            text = self.env.get_template(self.template_for(outcome)).render(**self.case_view(outcome))
            return Feedback(score=outcome_score(outcome), text=text.strip())
        text = self.env.get_template(self.template_for(outcome)).render(**self.view(outcome))
        return Feedback(score=outcome_score(outcome), text=text.strip())

"""What a repairing agent may learn of a function or test-suite outcome: the
template for its stage, the view the template renders (the attempt's own
errors and traceback lines, which input failed and how, the order of magnitude
of its error; expected failures by number only), and a graded score."""

from __future__ import annotations

from typing import Any

from fembench_agents.scoring.feedback import magnitude, stage_score
from fembench_agents.scoring.outcomes import first_failed
from fembench_agents.suite.outcomes import FunctionOutcome, InputResult, TestSuiteOutcome

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


def describe_mismatch(r: InputResult) -> str:
    if r.mismatch == "value_mismatch":
        text = f"values differ, largest error about {magnitude(r.relative_error)} relative to the output scale"
    else:
        text = _MISMATCH_TEXT.get(r.mismatch or "", r.mismatch or "wrong result")
    return f"{text} (at {r.where})" if r.where and r.mismatch != "expected_exception" else text


class FunctionFeedback:
    """The code and tests tracks' feedback (`KindFeedback`)."""

    folder = None  # the templates of feedback/

    def template(self, outcome: FunctionOutcome | TestSuiteOutcome) -> str:
        if outcome.passed:
            return "passed.j2"
        stage, reason = outcome.failed_stage, outcome.reason
        if stage in ("parse", "imports", "tests"):
            return f"{stage}.j2"
        if stage == "execute":
            return {"timeout": "timeout.j2", "crashed": "crashed.j2"}.get(reason or "", "runtime_error.j2")
        return "wrong_output.j2"

    def score(self, outcome: FunctionOutcome | TestSuiteOutcome) -> float:
        if isinstance(outcome, TestSuiteOutcome):
            return outcome.joint_score
        if outcome.passed:
            return 1.0
        found = stage_score(outcome.failed_stage or "parse")
        if found is not None:  # every stage but "correct", which scores by its share of inputs
            return found
        share = sum(r.status == "match" for r in outcome.inputs) / max(len(outcome.inputs), 1)
        return 0.2 + 0.6 * share

    def view(self, outcome: FunctionOutcome | TestSuiteOutcome, targets: dict[str, str]) -> dict[str, Any]:
        failed = first_failed(outcome.stages)
        target = targets["tests"] if isinstance(outcome, TestSuiteOutcome) else targets["code"]
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

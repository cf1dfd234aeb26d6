"""What a repairing agent may learn of a PDE solver outcome: the attempt's own
facts only (its stage, its error, the size of its error), never the thresholds
it was judged against nor its measured time: timings vary from one scoring to
the next, and a replay must re-create every prompt of a feedback loop exactly."""

from __future__ import annotations

from typing import Any

from fembench_agents.cases.outcomes import CaseOutcome
from fembench_agents.cases.tracks import get_track
from fembench_agents.scoring.feedback import stage_score
from fembench_agents.scoring.outcomes import first_failed


class CaseFeedback:
    """The PDE library tracks' feedback (`KindFeedback`)."""

    folder = None  # the templates of feedback/

    def template(self, outcome: CaseOutcome) -> str:
        return "passed.j2" if outcome.passed else "case.j2"

    def score(self, outcome: CaseOutcome) -> float:
        if outcome.passed:
            return 1.0
        stage = outcome.failed_stage or "parse"
        found = stage_score(stage)
        if found is None:
            raise ValueError(f"a PDE case outcome failed at {stage!r}; expected one of executes, accurate, fast")
        return found

    def view(self, outcome: CaseOutcome, targets: dict[str, str]) -> dict[str, Any]:
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

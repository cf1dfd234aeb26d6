"""Feedback builders: `(outcome) -> Feedback(score, text)`, pure and testable.

Texts come from the jinja2 templates in `feedback/`, one per stage outcome,
rendered from a view of the outcome (its kind's `KindFeedback`) that holds only facts about the attempt
itself (its own errors and traceback lines, which input failed and how, the
order of magnitude of its error). Outcomes carry no reference values, sources
or thresholds, and an attempt's errors only as `disclosure` rebuilt them, so
no template can show one; expected failures are named by number only.
"""

from __future__ import annotations

import math
from pathlib import Path

import jinja2

from fembench_agents.contracts import Feedback
from fembench_agents.kinds import kind_of_outcome
from fembench_agents.scoring.outcomes import OutcomeBase

FEEDBACK_DIR = Path(__file__).resolve().parents[2] / "feedback"

# How far along the pipeline an attempt got, for a graded score (GEPA needs a gradient).
_STAGE_SCORE = {"parse": 0.0, "imports": 0.05, "execute": 0.1, "executes": 0.1, "accurate": 0.4, "fast": 0.7}


def stage_score(stage: str) -> float | None:
    """The graded score of an attempt that failed at `stage`; None for a stage graded otherwise."""
    return _STAGE_SCORE.get(stage)


def magnitude(x: float | None) -> str:
    if x is None or not math.isfinite(x) or x <= 0:
        return "unknown"
    return f"1e{round(math.log10(x)):d}"


def outcome_score(outcome: OutcomeBase) -> float:
    """The graded score of `outcome`, as its kind grades it."""
    return kind_of_outcome(outcome).feedback.score(outcome)


class TemplateFeedback:
    """The default feedback builder: the template and view come from the outcome's kind."""

    def __init__(
        self,
        template_dir: str | Path = FEEDBACK_DIR,
        target: str = "the requested function",
        tests_target: str = "the requested test functions",
    ) -> None:
        self.env = _environment(Path(template_dir))
        self.targets = {"code": target, "tests": tests_target}
        self._kind_envs: dict[Path, jinja2.Environment] = {}  # a kind with templates of its own

    def template_for(self, outcome: OutcomeBase) -> str:
        return kind_of_outcome(outcome).feedback.template(outcome)

    def __call__(self, outcome: OutcomeBase) -> Feedback:
        feedback = kind_of_outcome(outcome).feedback
        env = self.env if feedback.folder is None else self._kind_env(feedback.folder)
        text = env.get_template(feedback.template(outcome)).render(**feedback.view(outcome, self.targets))
        return Feedback(score=feedback.score(outcome), text=text.strip())

    def _kind_env(self, folder: Path) -> jinja2.Environment:
        env = self._kind_envs.get(folder)
        if env is None:
            env = self._kind_envs[folder] = _environment(folder)
        return env


def _environment(folder: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )

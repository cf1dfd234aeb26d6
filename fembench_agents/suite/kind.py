"""The function tasks as registered kinds: the code track (write the function)
and the tests track (write its tests), over one suite and one scorer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fembench_agents.kinds import register_kind
from fembench_agents.kinds.contract import (
    AttemptScorer,
    LoadedProblems,
    PreviewedProblems,
    ProblemsUnavailable,
    Progress,
    ScoringOptions,
)
from fembench_agents.runs.defaults import TASKS_PATH
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.feedback import FunctionFeedback
from fembench_agents.suite.folder import FunctionFolder
from fembench_agents.suite.fresh_tasks import fresh_instances
from fembench_agents.suite.hidden import FunctionHidden
from fembench_agents.suite.loader import load_offered
from fembench_agents.suite.outcomes import FunctionOutcome, TestSuiteOutcome
from fembench_agents.suite.preview import preview_suite
from fembench_agents.suite.report_view import CODE_REPORT, TESTS_REPORT, FunctionReport
from fembench_agents.suite.scoring import FunctionScorer
from fembench_agents.suite.solver_view import FunctionSolverView
from fembench_agents.suite.validation import FunctionValidator


@dataclass(frozen=True)
class FunctionKind:
    """One track of the function tasks (`TaskKind`)."""

    track: str
    label: str
    outcome_type: type[FunctionOutcome] | type[TestSuiteOutcome]
    report: FunctionReport
    default_path: str = TASKS_PATH
    preload: tuple[str, ...] = ()
    scorer_key: str = "function"  # code and tests share the reference outputs one scorer caches
    feedback: FunctionFeedback = field(default_factory=FunctionFeedback)
    hidden: FunctionHidden = field(default_factory=FunctionHidden)
    folder: FunctionFolder = field(default_factory=FunctionFolder)
    validator: FunctionValidator = field(default_factory=FunctionValidator)
    solver: FunctionSolverView = field(init=False)  # follows from the track

    def __post_init__(self) -> None:
        object.__setattr__(self, "solver", FunctionSolverView(self.track))

    def load(self, path: str, sandbox: Sandbox, options: ScoringOptions, tracks: Sequence[str]) -> LoadedProblems:
        """Every task module under `path` that loads, on each track; each other is skipped with its reason."""
        loaded = load_offered(path, sandbox)
        scorer = self.scorer(sandbox, options)
        by_track: dict[str, list[Any]] = {track: list(loaded.tasks) for track in tracks}
        notes: list[str] = []
        if options.fresh_inputs is not None:
            # Fresh inputs change the verification inputs only, which the code track alone reads.
            fresh = fresh_instances(loaded.tasks, options.fresh_inputs, scorer)
            if "code" in by_track:
                by_track["code"] = sorted([*loaded.tasks, *fresh.tasks], key=lambda t: t.task_id)
            notes = fresh.lines()
        return LoadedProblems(by_track, scorer, list(loaded.skipped), notes=notes)

    def scorer(self, sandbox: Sandbox, options: ScoringOptions) -> FunctionScorer:
        return FunctionScorer(sandbox)

    def prepare(self, path: str, problems: Sequence[Any], scorer: AttemptScorer, progress: Progress) -> None:
        """A function task needs nothing of the machine beforehand."""

    def preview(self, path: str, tracks: Sequence[str], selections: Sequence[str] = ()) -> PreviewedProblems:
        """Every task module under `path` read unrun (`preview.py`), on each track; function tasks
        have no made items (an instance with fresh inputs is drawn by the run)."""
        try:
            tasks, skipped = preview_suite(path)
        except FileNotFoundError as exc:
            raise ProblemsUnavailable(str(exc)) from None
        return PreviewedProblems({track: list(tasks) for track in tracks}, skipped)


CODE = register_kind(
    FunctionKind(track="code", label="function code", outcome_type=FunctionOutcome, report=CODE_REPORT)
)
TESTS = register_kind(
    FunctionKind(track="tests", label="function tests", outcome_type=TestSuiteOutcome, report=TESTS_REPORT)
)

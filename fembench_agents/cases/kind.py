"""The PDE cases as registered kinds: one per library track, over one cases
folder and one scorer with this machine's calibration."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fembench_agents.cases import compat, store, timing
from fembench_agents.cases.calibrate import CalibrationFailed, calibrate_pairs
from fembench_agents.cases.feedback import CaseFeedback
from fembench_agents.cases.folder import CaseFolder
from fembench_agents.cases.fresh_sets import made_cases, preview_made
from fembench_agents.cases.hidden import CaseHidden
from fembench_agents.cases.outcomes import GATE_SETS, CaseOutcome
from fembench_agents.cases.problem import SolverCase, load_cases
from fembench_agents.cases.report_view import CASE_REPORT, CaseReport
from fembench_agents.cases.scorer import CaseScorer, CaseScoringConfig
from fembench_agents.cases.solver_view import CaseSolverView
from fembench_agents.cases.store import CaseStoreError
from fembench_agents.cases.tracks import TRACKS, TrackUnavailable, get_track
from fembench_agents.cases.validation import CaseValidator
from fembench_agents.kinds import register_kind
from fembench_agents.kinds.contract import (
    AttemptScorer,
    LoadedProblems,
    PreviewedProblems,
    ProblemsUnavailable,
    Progress,
    ScoringOptions,
)
from fembench_agents.runs.defaults import CASES_PATH
from fembench_agents.scoring.sandbox import Sandbox

CALIBRATION_REPEATS = 5  # timed solves per case (their median), as `cases calibrate` takes by default


@dataclass(frozen=True)
class LibraryKind:
    """One PDE library track (`TaskKind`): the cases it offers, scored executes -> accurate -> fast."""

    track: str
    label: str
    preload: tuple[str, ...]
    default_path: str = CASES_PATH
    outcome_type: type[CaseOutcome] = CaseOutcome
    scorer_key: str = "pde"  # one scorer: the cases' hidden records and the calibration, loaded once
    feedback: CaseFeedback = field(default_factory=CaseFeedback)
    hidden: CaseHidden = field(default_factory=CaseHidden)
    report: CaseReport = CASE_REPORT  # one for every library: its tables span them
    folder: CaseFolder = field(default_factory=CaseFolder)
    validator: CaseValidator = field(default_factory=CaseValidator)
    solver: CaseSolverView = field(init=False)  # follows from the library track

    def __post_init__(self) -> None:
        object.__setattr__(self, "solver", CaseSolverView(get_track(self.track)))

    def load(self, path: str, sandbox: Sandbox, options: ScoringOptions, tracks: Sequence[str]) -> LoadedProblems:
        """The built cases at `path` each library of `tracks` offers, and a scorer
        with this machine's calibration; unavailable when a library is not
        installed, the cases are not built or the machine is not calibrated."""
        problems = []
        for library in tracks:
            ok, why = get_track(library).available()
            if not ok:
                problems.append(f"library track {library!r} is unavailable: {why}")
        if problems:
            raise ProblemsUnavailable("\n".join(problems))
        config = scoring_config(options)
        try:
            cases = load_cases(Path(path))
            if config.gate_set == "published":
                none = [c.task_id for c in cases if store.load_record(Path(path), c.task_id).published is None]
                if none:
                    raise ProblemsUnavailable(
                        f"--gates published judges each case by its published record's thresholds; {len(none)} "
                        f"case(s) at {path} have none (our own cases have none; cases imported before they were "
                        f"kept need `cases import` again): {', '.join(none[:5])}{', ...' if len(none) > 5 else ''}"
                    )
            calibration = timing.load(Path(path))
        except timing.CalibrationMissing as exc:
            if not options.prepared_later:
                raise ProblemsUnavailable(str(exc)) from None
            calibration = None  # `prepare` times what the run selects
        except CaseStoreError as exc:
            raise ProblemsUnavailable(str(exc)) from None
        fresh, made = self._fresh(path, options, config, tracks)
        cases += [c for c in fresh if c.task_id not in {k.task_id for k in cases}]
        scorer = CaseScorer(sandbox, calibration, config)
        by_track: dict[str, list[Any]] = {lib: [c for c in cases if lib in c.spec.libraries] for lib in tracks}
        return LoadedProblems(by_track, scorer, made=made)

    @staticmethod
    def _fresh(
        path: str, options: ScoringOptions, config: CaseScoringConfig, tracks: Sequence[str]
    ) -> tuple[list[SolverCase], dict[str, str]]:
        """The fresh instances the selections name (`fresh:...`), made on these libraries or read from their cache."""
        if not options.selections:
            return [], {}
        try:
            fresh, made = made_cases(Path(path), options.selections, sorted(tracks))
        except (ValueError, TrackUnavailable) as exc:  # a bad item, a family no library solves, ...
            raise ProblemsUnavailable(str(exc)) from None
        if fresh and config.gate_set == "published":
            raise ProblemsUnavailable("--gates published: fresh instances have no published record to be judged by")
        return fresh, made

    def prepare(self, path: str, problems: Sequence[Any], scorer: AttemptScorer, progress: Progress) -> None:
        """Time, once per machine, the calibration solver of each selected case on this library
        that has no time yet, and give the scorer the machine's calibration with them."""
        if not isinstance(scorer, CaseScorer):
            raise TypeError(f"a PDE case needs a CaseScorer, got {type(scorer).__name__}")
        have = scorer.calibration.t_base if scorer.calibration is not None else {}
        missing = [(c, self.track) for c in problems if self.track not in have.get(c.task_id, {})]
        if not missing:
            return
        what = f"calibrating {self.track} on this machine (once): {len(missing)} case(s)"
        progress(what, 0, len(missing))
        repeats = scorer.calibration.repeats if scorer.calibration is not None else CALIBRATION_REPEATS
        try:
            scorer.calibration, _ = calibrate_pairs(
                Path(path), missing, repeats, on_pair=lambda done, total: progress(what, done, total)
            )
        except CalibrationFailed as exc:
            raise ProblemsUnavailable(str(exc)) from None

    def preview(self, path: str, tracks: Sequence[str], selections: Sequence[str] = ()) -> PreviewedProblems:
        """The built cases at `path` each library of `tracks` offers: read from their
        records, with no calibration or installed library needed; and the fresh instances the
        selections name, read from their cache or, not made yet, drawn (not built)."""
        try:
            cases = load_cases(Path(path))
            fresh = preview_made(Path(path), selections, sorted(tracks)) if selections else None
        except ValueError as exc:  # unbuilt cases, a bad item, a family no library solves, ...
            raise ProblemsUnavailable(str(exc)) from None
        if fresh is not None:
            cases += [c for c in fresh.cases if c.task_id not in {k.task_id for k in cases}]
        by_track = {lib: [c for c in cases if lib in c.spec.libraries] for lib in tracks}
        if fresh is None:
            return PreviewedProblems(by_track)
        return PreviewedProblems(by_track, made=fresh.made, notes=fresh.notes)

    def scorer(self, sandbox: Sandbox, options: ScoringOptions) -> CaseScorer:
        """Without a calibration the fast gate is not judged (`not_timed`)."""
        return CaseScorer(sandbox, config=scoring_config(options))


def scoring_config(options: ScoringOptions) -> CaseScoringConfig:
    """The scorer's configuration for a command's options; unknown names are refused, saying which are known."""
    try:
        compat.check(options.compat)
    except ValueError as exc:
        raise ProblemsUnavailable(str(exc)) from None
    for gate_set in GATE_SETS:
        if options.gates == gate_set:
            return CaseScoringConfig(compat=options.compat, gate_set=gate_set)
    raise ProblemsUnavailable(f"unknown gates {options.gates!r}; known: {', '.join(GATE_SETS)}")


LIBRARY_KINDS = tuple(
    register_kind(LibraryKind(track=name, label=f"PDE ({name})", preload=track.modules))
    for name, track in TRACKS.items()
)

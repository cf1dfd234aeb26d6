"""The PDE cases' saved solver programs (`score DIR --cases`): named
`{case_id}_{library}_{label}.py` (library: a track name such as numpy-scipy or
scikit-fem), counted per label and library at each gate. The summary records
the scoring options (compatibility options, which gates) and names the gates
that judged, so a re-score can be asked for alike and read beside others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from fembench_agents.cases.outcomes import CaseOutcome, gate_labels
from fembench_agents.cases.problem import SolverCase, load_cases
from fembench_agents.cases.store import CaseStoreError
from fembench_agents.cases.tracks import TRACKS
from fembench_agents.kinds.contract import ProblemsUnavailable, ScoringOptions, SkippedTask
from fembench_agents.kinds.review import FolderTable, SavedAttempt, SavedAttempts
from fembench_agents.scoring.sandbox import IsolationReport

_COLUMNS = ("label", "library", "programs", "executes", "accurate", "fast (pass)")


class StageCounts(BaseModel):
    """Per (label, library): attempts, and how many got through each gate."""

    label: str
    library: str
    attempts: int
    executes: int
    accurate: int
    fast: int


class ScoredWith(BaseModel):
    """The scoring options the verdicts depend on, as asked: asking them again reproduces the verdicts."""

    compat: tuple[str, ...] = ()
    gates: str = "ours"


class CaseFolderScore(BaseModel):
    summaries: list[StageCounts]
    outcomes: dict[str, dict[str, CaseOutcome]]  # "label/library" -> case id -> outcome
    unmatched_files: list[str]
    isolation: IsolationReport
    options: ScoredWith = ScoredWith()  # `score --compat ... --gates ...`
    gates: list[str] = []  # the gates that judged the outcomes, as a report names them


def find_programs(folder: Path, cases: list[SolverCase]) -> tuple[list[SavedAttempt], list[str]]:
    ids = sorted((c.task_id for c in cases), key=len, reverse=True)  # longest id wins a prefix tie
    found, unmatched = [], []
    for path in sorted(folder.glob("*.py")):
        hit = next(
            (
                SavedAttempt(cid, lib, path.stem[len(f"{cid}_{lib}_") :], path)
                for cid in ids
                for lib in TRACKS
                if path.stem.startswith(f"{cid}_{lib}_") and len(path.stem) > len(f"{cid}_{lib}_")
            ),
            None,
        )
        if hit is None:
            unmatched.append(path.name)
        else:
            found.append(hit)
    return found, unmatched


def passed_stage(outcome: CaseOutcome, stage: str) -> bool:
    return any(s.stage == stage and s.passed for s in outcome.stages)


def _cases(path: str) -> list[SolverCase]:
    try:
        return load_cases(Path(path))
    except CaseStoreError as exc:
        raise ProblemsUnavailable(str(exc)) from None


class CaseFolder:
    """`score DIR --cases` (`KindFolder`): the library tracks the programs name, stage counts per label and library."""

    def tracks(self, folder: Path, path: str) -> list[str]:
        programs, _ = find_programs(folder, _cases(path))
        return sorted({p.track for p in programs})

    def find(self, folder: Path, path: str, by_track: dict[str, list[Any]]) -> SavedAttempts:
        """A program for a library its case is not offered on matches nothing."""
        cases = _cases(path)
        by_id = {c.task_id: c for c in cases}
        programs, unmatched = find_programs(folder, cases)
        offered = [p for p in programs if p.track in by_id[p.task_id].spec.libraries]
        unmatched += [p.path.name for p in programs if p not in offered]
        return SavedAttempts(cases, offered, sorted(unmatched))

    def summary(
        self,
        found: SavedAttempts,
        scored: list[tuple[SavedAttempt, Any]],
        isolation: IsolationReport,
        skipped: list[SkippedTask],
        options: ScoringOptions,
    ) -> CaseFolderScore:
        outcomes: dict[str, dict[str, CaseOutcome]] = {}
        for program, outcome in scored:
            outcomes.setdefault(f"{program.label}/{program.track}", {})[program.task_id] = outcome
        summaries = []
        for key in sorted(outcomes):
            label, library = key.rsplit("/", 1)
            got = list(outcomes[key].values())
            summaries.append(
                StageCounts(
                    label=label,
                    library=library,
                    attempts=len(got),
                    executes=sum(passed_stage(o, "executes") for o in got),
                    accurate=sum(passed_stage(o, "accurate") for o in got),
                    fast=sum(passed_stage(o, "fast") for o in got),
                )
            )
        return CaseFolderScore(
            summaries=summaries,
            outcomes=outcomes,
            unmatched_files=found.unmatched,
            isolation=isolation,
            options=ScoredWith(compat=options.compat, gates=options.gates),
            gates=gate_labels(o for by_case in outcomes.values() for o in by_case.values()),
        )

    def table(self, summary: CaseFolderScore, found: SavedAttempts) -> FolderTable:
        rows = [
            (s.label, s.library, str(s.attempts), str(s.executes), str(s.accurate), str(s.fast))
            for s in summary.summaries
        ]
        notes = [f"gates: {label}" for label in summary.gates]
        if summary.options.compat:
            applied = sum(bool(o.substitutions) for by_case in summary.outcomes.values() for o in by_case.values())
            notes.append(f"compatibility options: {', '.join(summary.options.compat)} (applied to {applied} programs)")
        return FolderTable(noun="cases", columns=_COLUMNS, rows=rows, unmatched="case and library", notes=tuple(notes))

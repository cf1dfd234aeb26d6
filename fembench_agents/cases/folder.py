"""Scores a folder of saved solver programs for PDE cases, named
`{case_id}_{library}_{label}.py` (library: a track name such as numpy-scipy
or scikit-fem), like `score DIR` does for function tasks."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pydantic import BaseModel

from fembench_agents.cases.problem import SolverCase
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.outcomes import CaseOutcome
from fembench_agents.scoring.sandbox import IsolationReport
from fembench_agents.vocabulary import LIBRARY_TRACKS, LibraryTrack


@dataclass(frozen=True)
class CaseProgram:
    case_id: str
    library: LibraryTrack
    label: str
    path: Path


class StageCounts(BaseModel):
    """Per (label, library): attempts, and how many got through each gate."""

    label: str
    library: str
    attempts: int
    executes: int
    accurate: int
    fast: int


class CaseFolderScore(BaseModel):
    summaries: list[StageCounts]
    outcomes: dict[str, dict[str, CaseOutcome]]  # "label/library" -> case id -> outcome
    unmatched_files: list[str]
    isolation: IsolationReport


def find_programs(folder: Path, cases: list[SolverCase]) -> tuple[list[CaseProgram], list[str]]:
    ids = sorted((c.task_id for c in cases), key=len, reverse=True)  # longest id wins a prefix tie
    found, unmatched = [], []
    for path in sorted(folder.glob("*.py")):
        hit = next(
            (
                CaseProgram(cid, lib, path.stem[len(f"{cid}_{lib}_") :], path)
                for cid in ids
                for lib in LIBRARY_TRACKS
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


def score_case_folder(
    folder: Path,
    cases: list[SolverCase],
    evaluator: Evaluator,
    progress: Callable[[CaseProgram], None] | None = None,
) -> CaseFolderScore:
    by_id = {c.task_id: c for c in cases}
    programs, unmatched = find_programs(folder, cases)
    offered = [p for p in programs if p.library in by_id[p.case_id].spec.libraries]
    unmatched += [p.path.name for p in programs if p not in offered]

    def score(p: CaseProgram) -> tuple[CaseProgram, CaseOutcome]:
        outcome = cast(CaseOutcome, evaluator.score(by_id[p.case_id], p.library, p.path.read_text(errors="replace")))
        if progress:
            progress(p)
        return p, outcome

    outcomes: dict[str, dict[str, CaseOutcome]] = {}
    with ThreadPoolExecutor(max_workers=evaluator.sandbox.size) as pool:
        for p, outcome in pool.map(score, offered):
            outcomes.setdefault(f"{p.label}/{p.library}", {})[p.case_id] = outcome
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
        unmatched_files=sorted(unmatched),
        isolation=evaluator.sandbox.isolation(),
    )

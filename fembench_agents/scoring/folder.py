"""Scores a folder of saved completions named `{task_id}_code_{label}.py` and
`{task_id}_test_{label}.py` (the naming FEM-Bench uses for published outputs)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pydantic import BaseModel

from fembench_agents.contracts import SkippedTask
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.outcomes import FunctionOutcome, TestSuiteOutcome
from fembench_agents.scoring.sandbox import IsolationReport
from fembench_agents.suite.model import Task

_TRACKS = {"code": "code", "test": "tests"}  # a file name's word -> the track it is scored on


@dataclass(frozen=True)
class Completion:
    task_id: str
    track: str  # code | test
    label: str
    path: Path


class LabelSummary(BaseModel):
    label: str
    tasks: int
    functions_correct: int
    mean_joint_test_success: float
    mean_reference_pass: float
    mean_failure_detection: float


class FolderScore(BaseModel):
    summaries: list[LabelSummary]
    function_outcomes: dict[str, dict[str, FunctionOutcome]]  # label -> task id -> outcome
    test_outcomes: dict[str, dict[str, TestSuiteOutcome]]
    unmatched_files: list[str]
    isolation: IsolationReport
    skipped_tasks: list[SkippedTask] = []  # task modules that did not load, each with the reason


def find_completions(folder: Path, tasks: list[Task]) -> tuple[list[Completion], list[str]]:
    ids = sorted((t.task_id for t in tasks), key=len, reverse=True)  # longest id wins a prefix tie
    found, unmatched = [], []
    for path in sorted(folder.glob("*.py")):
        stem = path.stem
        for task_id in ids:
            for track in ("code", "test"):
                prefix = f"{task_id}_{track}_"
                if stem.startswith(prefix) and len(stem) > len(prefix):
                    found.append(Completion(task_id, track, stem[len(prefix) :], path))
                    break
            else:
                continue
            break
        else:
            unmatched.append(path.name)
    return found, unmatched


def score_folder(
    folder: Path, tasks: list[Task], evaluator: Evaluator, progress: Callable[[Completion], None] | None = None
) -> FolderScore:
    by_id = {t.task_id: t for t in tasks}
    completions, unmatched = find_completions(folder, tasks)

    def score(c: Completion) -> tuple[Completion, FunctionOutcome | TestSuiteOutcome]:
        text = c.path.read_text(errors="replace")
        task = by_id[c.task_id]
        outcome = cast(FunctionOutcome | TestSuiteOutcome, evaluator.score(task, _TRACKS[c.track], text))
        if progress:
            progress(c)
        return c, outcome

    fn: dict[str, dict[str, FunctionOutcome]] = {}
    ts: dict[str, dict[str, TestSuiteOutcome]] = {}
    with ThreadPoolExecutor(max_workers=evaluator.sandbox.size) as pool:
        for c, outcome in pool.map(score, completions):
            if isinstance(outcome, FunctionOutcome):
                fn.setdefault(c.label, {})[c.task_id] = outcome
            else:
                ts.setdefault(c.label, {})[c.task_id] = outcome
    summaries = []
    for label in sorted(set(fn) | set(ts)):
        f, t = fn.get(label, {}), ts.get(label, {})
        n = len(tasks)
        summaries.append(
            LabelSummary(
                label=label,
                tasks=n,
                functions_correct=sum(o.passed for o in f.values()),
                mean_joint_test_success=sum(o.joint_score for o in t.values()) / n,
                mean_reference_pass=sum(o.reference_pass_share for o in t.values()) / n,
                mean_failure_detection=sum(o.detection_share for o in t.values()) / n,
            )
        )
    return FolderScore(
        summaries=summaries,
        function_outcomes=fn,
        test_outcomes=ts,
        unmatched_files=unmatched,
        isolation=evaluator.sandbox.isolation(),
    )

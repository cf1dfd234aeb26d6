"""The function tasks' saved completions (`score DIR`): named
`{task_id}_code_{label}.py` and `{task_id}_test_{label}.py` (the naming FEM-Bench
uses for published outputs), summed up per label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from fembench_agents.kinds.contract import ScoringOptions, SkippedTask
from fembench_agents.kinds.review import FolderTable, SavedAttempt, SavedAttempts
from fembench_agents.scoring.sandbox import IsolationReport
from fembench_agents.suite.outcomes import FunctionOutcome, TestSuiteOutcome

# A file name's word -> the track it is scored on.
_TRACKS = {"code": "code", "test": "tests"}
_COLUMNS = ("label", "functions correct", "joint test success", "tests pass reference", "failures detected")


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


def find_completions(folder: Path, tasks: list[Any]) -> tuple[list[SavedAttempt], list[str]]:
    ids = sorted((t.task_id for t in tasks), key=len, reverse=True)  # longest id wins a prefix tie
    found, unmatched = [], []
    for path in sorted(folder.glob("*.py")):
        stem = path.stem
        for task_id in ids:
            for word, track in _TRACKS.items():
                prefix = f"{task_id}_{word}_"
                if stem.startswith(prefix) and len(stem) > len(prefix):
                    found.append(SavedAttempt(task_id, track, stem[len(prefix) :], path))
                    break
            else:
                continue
            break
        else:
            unmatched.append(path.name)
    return found, unmatched


class FunctionFolder:
    """`score DIR` for the function tasks (`KindFolder`): both tracks, one summary row per label."""

    def tracks(self, folder: Path, path: str) -> list[str]:
        return list(_TRACKS.values())

    def find(self, folder: Path, path: str, by_track: dict[str, list[Any]]) -> SavedAttempts:
        tasks = by_track[_TRACKS["code"]]
        attempts, unmatched = find_completions(folder, tasks)
        return SavedAttempts(tasks, attempts, unmatched)

    def summary(
        self,
        found: SavedAttempts,
        scored: list[tuple[SavedAttempt, Any]],
        isolation: IsolationReport,
        skipped: list[SkippedTask],
        options: ScoringOptions,  # the function tasks' scorer takes none
    ) -> FolderScore:
        fn: dict[str, dict[str, FunctionOutcome]] = {}
        ts: dict[str, dict[str, TestSuiteOutcome]] = {}
        for attempt, outcome in scored:
            if isinstance(outcome, FunctionOutcome):
                fn.setdefault(attempt.label, {})[attempt.task_id] = outcome
            else:
                ts.setdefault(attempt.label, {})[attempt.task_id] = outcome
        n = len(found.problems)
        summaries = []
        for label in sorted(set(fn) | set(ts)):
            f, t = fn.get(label, {}), ts.get(label, {})
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
            unmatched_files=found.unmatched,
            isolation=isolation,
            skipped_tasks=skipped,
        )

    def table(self, summary: FolderScore, found: SavedAttempts) -> FolderTable:
        rows = [
            (
                s.label,
                f"{s.functions_correct}/{s.tasks}",
                f"{s.mean_joint_test_success:.3f}",
                f"{s.mean_reference_pass:.3f}",
                f"{s.mean_failure_detection:.3f}",
            )
            for s in summary.summaries
        ]
        return FolderTable(noun="tasks", columns=_COLUMNS, rows=rows, unmatched="task")

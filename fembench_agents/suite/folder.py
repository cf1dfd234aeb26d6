"""The function tasks' saved completions (`score DIR`): named
`{task_id}_code_{label}.py` and `{task_id}_test_{label}.py` (the naming FEM-Bench
uses for published outputs), summed up per label. With `--fresh-inputs SEED` a
function saved for a published task is scored on its fresh instance too
(unless the folder holds one saved for the instance's own id), and the summary
counts the fresh instances apart."""

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
_FRESH_COLUMN = "functions correct, fresh inputs"


class LabelSummary(BaseModel):
    label: str
    tasks: int
    functions_correct: int
    mean_joint_test_success: float
    mean_reference_pass: float
    mean_failure_detection: float
    fresh_tasks: int = 0  # fresh instances scored beside the published tasks (`--fresh-inputs`)
    fresh_functions_correct: int = 0


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
        return SavedAttempts(tasks, attempts + _on_fresh_instances(attempts, tasks), unmatched)

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
        fresh = {t.task_id for t in found.problems if t.published_id is not None}
        n = len(found.problems) - len(fresh)
        summaries = []
        for label in sorted(set(fn) | set(ts)):
            f, t = fn.get(label, {}), ts.get(label, {})
            summaries.append(
                LabelSummary(
                    label=label,
                    tasks=n,
                    functions_correct=sum(o.passed for i, o in f.items() if i not in fresh),
                    mean_joint_test_success=sum(o.joint_score for o in t.values()) / n,
                    mean_reference_pass=sum(o.reference_pass_share for o in t.values()) / n,
                    mean_failure_detection=sum(o.detection_share for o in t.values()) / n,
                    fresh_tasks=len(fresh),
                    fresh_functions_correct=sum(o.passed for i, o in f.items() if i in fresh),
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
        fresh = any(s.fresh_tasks for s in summary.summaries)
        rows = [
            (
                s.label,
                f"{s.functions_correct}/{s.tasks}",
                f"{s.mean_joint_test_success:.3f}",
                f"{s.mean_reference_pass:.3f}",
                f"{s.mean_failure_detection:.3f}",
                *([f"{s.fresh_functions_correct}/{s.fresh_tasks}"] if fresh else []),
            )
            for s in summary.summaries
        ]
        columns = (*_COLUMNS, _FRESH_COLUMN) if fresh else _COLUMNS
        return FolderTable(noun="tasks", columns=columns, rows=rows, unmatched="task")


def _on_fresh_instances(attempts: list[SavedAttempt], tasks: list[Any]) -> list[SavedAttempt]:
    """Each function saved for a published task, scored on that task's fresh instances
    too, unless the folder saved one under the instance's own id and the same label."""
    saved = {(a.task_id, a.track, a.label) for a in attempts}
    out = []
    for task in tasks:
        if task.published_id is None:
            continue
        for a in attempts:
            if a.task_id == task.published_id and a.track == "code" and (task.task_id, "code", a.label) not in saved:
                out.append(SavedAttempt(task.task_id, "code", a.label, a.path))
    return out

"""`score DIR`: attempts saved in a folder, scored as a run scores its attempts.
The kind reads the folder (`TaskKind.folder`: which file holds which attempt)
and sums the outcomes up; this module scores the attempts, concurrently on
the evaluator's sandbox."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fembench_agents.kinds.contract import SkippedTask
from fembench_agents.kinds.review import FolderSummary, KindFolder, SavedAttempt, SavedAttempts
from fembench_agents.scoring.evaluator import Evaluator


def score_saved(
    found: SavedAttempts,
    folder: KindFolder,
    evaluator: Evaluator,
    progress: Callable[[SavedAttempt], None] | None = None,
    skipped: list[SkippedTask] | None = None,
) -> FolderSummary:
    """Every attempt of `found`, scored on its track; `folder`'s summary of them.
    `skipped`: the problem sources that did not load (the summary may name them)."""
    by_id = {p.task_id: p for p in found.problems}

    def score(attempt: SavedAttempt) -> tuple[SavedAttempt, Any]:
        outcome = evaluator.score(by_id[attempt.task_id], attempt.track, attempt.path.read_text(errors="replace"))
        if progress:
            progress(attempt)
        return attempt, outcome

    with ThreadPoolExecutor(max_workers=evaluator.sandbox.size) as pool:
        scored = list(pool.map(score, found.attempts))
    return folder.summary(found, scored, evaluator.sandbox.isolation(), list(skipped or []), evaluator.options)

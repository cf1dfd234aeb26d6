"""A GEPA callback that drives a rich progress bar: metric calls spent of the
budget, the iteration, candidates kept and the best validation score so far."""

from __future__ import annotations

from typing import Any

from rich.progress import Progress, TaskID


class RichProgress:
    def __init__(self, progress: Progress, total: int) -> None:
        self.progress = progress
        self.bar: TaskID = progress.add_task("GEPA", total=total)
        self.best = 0.0
        self.candidates = 0
        self.iteration = 0

    def _show(self, completed: int | None = None) -> None:
        text = f"GEPA it {self.iteration}, {self.candidates} candidates, best val {self.best:.3f}"
        self.progress.update(self.bar, description=text, completed=completed)

    def on_iteration_start(self, event: dict[str, Any]) -> None:
        state = event["state"]
        self.iteration = int(event["iteration"])
        self.candidates = len(state.program_candidates)
        self.best = max(self.best, max(state.program_full_scores_val_set, default=0.0))
        self._show(int(state.total_num_evals))

    def on_budget_updated(self, event: dict[str, Any]) -> None:
        self._show(int(event["metric_calls_used"]))

    def on_valset_evaluated(self, event: dict[str, Any]) -> None:
        self.best = max(self.best, float(event["average_score"]))
        self.candidates = max(self.candidates, int(event["candidate_idx"]) + 1)
        self._show()

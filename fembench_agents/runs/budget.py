"""`--max-cost`: a cap on what a run (or a whole `compare` grid) spends on
model calls.

The spend is the sum of the recorded costs of the grid's model calls, each
sample counted once (by its request hash) at its recorded cost, as the report
counts it: a call served from the response cache, like a resumed attempt,
costs what it cost when it was first asked. It starts from what the run
directories' logs already hold, so a resume counts what earlier sessions
spent. Once it reaches the cap no model call starts: an episode in flight ends
as an error whose text starts "stopped: budget" (error kind "budget"), an
episode not started stays unstarted, and both are run again by a resume with a
higher cap. Calls already in flight when the cap is reached finish and are
counted, so the spend can pass the cap by those calls. A call whose price is
unknown counts $0: the commands refuse `--max-cost` for a model litellm has no
price for (or prices at $0, as its map does for models it lists without
prices; the embedded model is free and not refused), so that only happens
when a provider returns no token usage."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fembench_agents.messages import ModelResponse
from fembench_agents.runs.health import BUDGET_ERROR_KIND, RunStopped
from fembench_agents.runs.log import ModelCallRecord, read_log
from fembench_agents.runs.recording import ModelUnavailable

STOPPED = "stopped: budget"  # how such an episode's error starts


def usd(value: float, cap: float) -> str:
    """Dollars as the progress line and the stop message show them: to the cent,
    or to 4 decimals when the cap is under a dollar (a cent would hide the spend)."""
    return f"${value:.2f}" if cap >= 1 else f"${value:.4f}"


def unpriced_refusal(model: str, zero: bool) -> str:
    """Why `--max-cost` refuses `model`: no price, or (`zero`) $0 from litellm's price map."""
    why = "litellm prices it at $0 per token" if zero else "litellm has no price for it"
    return f"--max-cost cannot cap model {model!r}: {why}, so its calls would count $0; run it without --max-cost"


@dataclass
class SpendCap:
    """The spend of a run or grid against its cap; `on_change` hears every new spend."""

    cap: float
    spent: float = 0.0
    on_change: Callable[[SpendCap], None] | None = None
    _counted: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.cap < 0:
            raise ValueError(f"max cost must be >= 0 USD, got {self.cap}")

    @property
    def reached(self) -> bool:
        return self.spent >= self.cap

    def line(self) -> str:
        """What the progress line shows: "$0.0123 of $0.0500"."""
        return f"{usd(self.spent, self.cap)} of {usd(self.cap, self.cap)}"

    def count_logged(self, run_dirs: Iterable[Path]) -> None:
        """Add what the logs of `run_dirs` (those that exist) already spent."""
        for run_dir in run_dirs:
            for record in read_log(run_dir):
                if isinstance(record, ModelCallRecord) and record.response is not None:
                    self._add(record.request_hash, record.response.cost_usd)

    def check(self) -> None:
        """Before a model call: ModelUnavailable (error kind "budget") once the cap is reached."""
        if self.reached:
            raise ModelUnavailable(f"{STOPPED}: spent {self.line()} (--max-cost)", BUDGET_ERROR_KIND)

    def charge(self, response: ModelResponse) -> None:
        """After a model call: its cost, unless its sample was counted already."""
        self._add(response.request_hash, response.cost_usd)

    def _add(self, request_hash: str | None, cost: float | None) -> None:
        if request_hash is not None:
            if request_hash in self._counted:
                return
            self._counted.add(request_hash)
        self.spent += cost or 0.0
        if self.on_change is not None:
            self.on_change(self)


class BudgetReached(RunStopped):
    """The run reached its spend cap: `stopped` episodes ended "stopped: budget"
    in flight and `not_started` were never started; a resume with a higher cap runs both."""

    def __init__(self, budget: SpendCap, stopped: int, not_started: int) -> None:
        RuntimeError.__init__(
            self,
            f"budget reached: spent {budget.line()}; {stopped} episode{'s' if stopped != 1 else ''} stopped, "
            f"{not_started} not started",
        )
        self.kind, self.message, self.failed, self.not_run = BUDGET_ERROR_KIND, str(self), stopped, not_started
        self.budget, self.stopped, self.not_started = budget, stopped, not_started


def merged_stop(stops: list[BudgetReached]) -> str:
    """One line for every run of a grid the shared cap stopped."""
    stopped = sum(s.stopped for s in stops)
    not_started = sum(s.not_started for s in stops)
    return str(BudgetReached(stops[0].budget, stopped, not_started))

"""`optimize --dry-run`: the most model calls an optimization can make, from its
settings and its split, with tokens and dollars, as `RULES` states them.

  GEPA's metric calls: one task-model call each (the agent is single-shot), at
    most budget + V + 2 x minibatch: GEPA stops at the first iteration boundary
    at or past the budget, and an iteration spends a minibatch on the parent, one
    on the child and V (the validation size) when the child is accepted
  final training evaluation: the best and the seed prompt on every training task, 2 x train
  held-out judgement (--evaluate): heldout x heldout_repeats x 2 agents
  reflection calls: at most ceil((budget - V) / minibatch): every reflection follows
    a minibatch evaluation of its parent, after the seed's validation pass
  task prompt tokens: the mean first prompt (the seed system prompt and the task
    prompt) over the problems each phase runs, x its calls; optimized prompts grow
  reflection prompt tokens: the seed prompt plus minibatch x (mean task prompt +
    max_tokens) per call: the candidate and what its minibatch asked and answered
  completion tokens: max_tokens (the reflection model's for its calls) x calls, an upper bound"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fembench_agents.agents.prompted import PromptAgent
from fembench_agents.optimize.budget import resolve_budget
from fembench_agents.optimize.settings import OptimizeSettings
from fembench_agents.optimize.split import split_tasks
from fembench_agents.runs.estimate import Prices, TokenCounter

RULES = (
    "GEPA metric calls: 1 task-model call each, at most budget + V + 2 x minibatch "
    "(GEPA stops at the first iteration boundary past the budget)",
    "final training evaluation: best and seed prompt on every training task; held-out judgement: "
    "heldout x heldout_repeats x 2 agents",
    "reflection calls: at most ceil((budget - V) / minibatch), each after a minibatch evaluation of its parent",
    "prompt tokens: the mean first prompt with the seed system prompt x calls (optimized prompts grow); "
    "a reflection prompt: the seed prompt + minibatch x (mean task prompt + max_tokens)",
    "completion tokens: max_tokens x calls, an upper bound; dollars at litellm's prices (unpriced: none)",
)


@dataclass(frozen=True)
class PhaseRow:
    phase: str
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    dollars: float | None

    def cells(self) -> list[str]:
        money = "unpriced" if self.dollars is None else f"${self.dollars:,.4f}"
        return [
            self.phase,
            self.model,
            f"{self.calls:,}",
            f"{self.prompt_tokens:,}",
            f"{self.completion_tokens:,}",
            money,
        ]


COLUMNS = ("phase", "model", "max calls", "prompt tokens", "completion tokens", "dollars")


def _row(phase: str, model: str, calls: int, prompt: int, completion: int, prices: Prices) -> PhaseRow:
    price = prices(model)
    cost = None if price is None else (prompt * price[0] + completion * price[1]) / 1e6
    return PhaseRow(phase, model, calls, prompt, completion, cost)


def estimate_optimization(
    settings: OptimizeSettings, problems: Sequence[Any], prices: Prices, tokens: TokenCounter, evaluate: bool
) -> list[PhaseRow]:
    """One row per phase; ValueError for a split or budget that cannot be had."""
    split = split_tasks(problems, settings.heldout, settings.val_fraction, settings.seed, settings.tasks)
    by_id = {p.task_id: p for p in problems}
    budget = resolve_budget(settings.budget, len(split.val)).max_metric_calls
    seed = PromptAgent(name="seed", scaffold=settings.scaffold, system_prompt=settings.seed_prompt)

    def mean_prompt(ids: Sequence[str]) -> int:
        counts = [tokens(seed.first_messages(by_id[i], settings.track)) for i in ids]
        return round(sum(counts) / len(counts)) if counts else 0

    task_tokens = settings.params.max_tokens or 0
    minibatch = settings.reflection_minibatch_size
    seen = mean_prompt([*split.train, *split.val])
    metric_calls = budget + len(split.val) + 2 * minibatch
    rows = [
        _row(
            "GEPA metric calls",
            settings.model,
            metric_calls,
            seen * metric_calls,
            task_tokens * metric_calls,
            prices,
        )
    ]
    if settings.final_train_eval:
        calls = 2 * len(split.train)
        rows.append(
            _row(
                "final training evaluation",
                settings.model,
                calls,
                mean_prompt(split.train) * calls,
                task_tokens * calls,
                prices,
            )
        )
    if evaluate:
        calls = 2 * len(split.heldout) * settings.heldout_repeats
        rows.append(
            _row(
                "held-out judgement",
                settings.model,
                calls,
                mean_prompt(split.heldout) * calls,
                task_tokens * calls,
                prices,
            )
        )
    reflections = math.ceil(max(budget - len(split.val), 0) / minibatch)
    seed_tokens = tokens(seed.first_messages(by_id[split.train[0]], settings.track)) - tokens(
        PromptAgent(name="bare", scaffold=settings.scaffold).first_messages(by_id[split.train[0]], settings.track)
    )
    per_reflection = seed_tokens + minibatch * (seen + task_tokens)
    rows.append(
        _row(
            "reflection",
            settings.reflection_model,
            reflections,
            per_reflection * reflections,
            (settings.reflection_params.max_tokens or 0) * reflections,
            prices,
        )
    )
    return rows


def split_line(settings: OptimizeSettings, problems: Sequence[Any]) -> str:
    split = split_tasks(problems, settings.heldout, settings.val_fraction, settings.seed, settings.tasks)
    budget = resolve_budget(settings.budget, len(split.val))
    return (
        f"held out {len(split.heldout)}, train {len(split.train)}, validation {len(split.val)}; "
        f"budget {settings.budget} = {budget.max_metric_calls} metric calls ({budget.formula})"
    )

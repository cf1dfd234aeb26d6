"""`--dry-run`: what a grid would ask of its models, from the rendered prompts
and each agent's limit on model calls, with no model call and no sandbox job.

The rule, per run (model x agent x track), as `RULES` prints it:
  episodes          = problems x repeats, less those a resume would skip (done in the run's log)
  max calls         = episodes x the agent's limit per episode (feedback-loop:N -> N,
                      single-shot and template-guided -> 1, best-of:N -> N, plan-then-code:N ->
                      1 + N, debug-and-refine:D:R -> 2 + D + R, openhands -> attempts x
                      iterations, mini-swe-agent -> attempts x steps)
  prompt tokens     = sum over those episodes of (its first prompt's tokens x the agent's limit),
                      tokens as litellm counts them for gpt-4o-mini (repair prompts add the
                      feedback and the previous code, and a coding agent resends its growing
                      conversation at every step: more than this)
  completion tokens = max_tokens x max calls: an upper bound
  dollars           = prompt tokens x input price + completion tokens x output price, at the
                      prices the model's calls are billed at (litellm's price map; the embedded
                      model is free); "unpriced" when there is none"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from fembench_agents.messages import Message
from fembench_agents.runs.grid import PlannedRun
from fembench_agents.runs.log import MANIFEST_NAME, episode_key, read_log, read_manifest
from fembench_agents.runs.reader import finished_episodes
from fembench_agents.runs.selection import select_tasks

TOKENIZER = "gpt-4o-mini"  # whose tokenizer counts every model's prompts (documented in RULES)
RULES = (
    "episodes: problems x repeats, less those a resume would skip",
    "max calls: episodes x the agent's limit per episode (feedback-loop:N -> N, single-shot -> 1, best-of:N -> N, "
    "plan-then-code:N -> 1 + N, debug-and-refine:D:R -> 2 + D + R, openhands -> attempts x iterations, "
    "mini-swe-agent -> attempts x steps)",
    f"prompt tokens: each episode's first prompt as rendered ({TOKENIZER}'s tokenizer, via litellm) x the "
    "agent's limit; repair prompts, a thinking agent's plan and coding agents' growing conversations send more",
    "completion tokens: max_tokens x max calls, an upper bound",
    "dollars: those tokens at litellm's prices for the model; unpriced where it has none; the embedded model is free",
)

TokenCounter = Callable[[list[Message]], int]
Prices = Callable[[str], tuple[float, float] | None]  # model -> (input, output) USD per million tokens


@runtime_checkable
class PlannedAgent(Protocol):
    """An agent that says how many model calls an episode makes at most, and what it opens with."""

    name: str

    @property
    def max_model_calls(self) -> int: ...

    def first_messages(self, task: Any, track: str) -> list[Message]: ...


@dataclass(frozen=True)
class EstimateRow:
    model: str
    agent: str
    track: str
    episodes: int
    max_calls: int | None  # None: the agent states no limit
    prompt_tokens: int | None
    completion_tokens: int | None
    dollars: float | None  # None: unpriced, or no limit to price

    def cells(self) -> list[str]:
        def count(value: int | None) -> str:
            return "?" if value is None else f"{value:,}"

        return [
            self.model,
            self.agent,
            self.track,
            f"{self.episodes:,}",
            count(self.max_calls),
            count(self.prompt_tokens),
            count(self.completion_tokens),
            dollars(self.dollars, self.max_calls is not None),
        ]


COLUMNS = ("model", "agent", "track", "episodes", "max calls", "prompt tokens", "completion tokens", "dollars")


def dollars(value: float | None, limited: bool = True) -> str:
    if not limited:
        return "?"
    return "unpriced" if value is None else f"${value:,.4f}"


def litellm_tokens(messages: list[Message]) -> int:
    """Tokens of `messages` as litellm counts them for TOKENIZER (offline: tiktoken's bundled encoding)."""
    from fembench_agents.models._litellm import litellm  # lazy: litellm's import

    return int(litellm.token_counter(model=TOKENIZER, messages=[m.model_dump() for m in messages]))


def unfinished(run: PlannedRun, agent_name: str, problems: Sequence[Any]) -> list[tuple[Any, int]]:
    """(problem, repeat) of every episode of `run` a resume would start; ValueError, as
    the run itself would raise, when its directory holds another run."""
    c = run.config
    if (run.out / MANIFEST_NAME).exists() and read_manifest(run.out).config != c.identity():
        raise ValueError(
            f"{run.out} holds a different run (config {read_manifest(run.out).config}); choose another --out"
        )
    done = finished_episodes(read_log(run.out)) if run.out.exists() else {}
    return [
        (p, r)
        for r in range(c.repeats)
        for p in problems
        if episode_key(c.model, agent_name, c.track, p.task_id, r) not in done
    ]


def estimate_run(
    run: PlannedRun, agent: Any, problems: Sequence[Any], prices: Prices, tokens: TokenCounter
) -> EstimateRow:
    c = run.config
    todo = unfinished(run, agent.name, select_tasks(list(problems), c.tasks))
    if not isinstance(agent, PlannedAgent):
        return EstimateRow(c.model, agent.name, c.track, len(todo), None, None, None, None)
    limit = agent.max_model_calls
    first = {p.task_id: tokens(agent.first_messages(p, c.track)) for p, _ in todo}
    calls = len(todo) * limit
    prompt = sum(first[p.task_id] for p, _ in todo) * limit
    completion = (c.params.max_tokens or 0) * calls
    price = prices(c.model)
    cost = None if price is None else (prompt * price[0] + completion * price[1]) / 1e6
    return EstimateRow(c.model, agent.name, c.track, len(todo), calls, prompt, completion, cost)


def total_row(rows: Sequence[EstimateRow]) -> list[str]:
    """The table's last line: sums, "?" where a run has no limit, unpriced where any run is."""
    limited = all(r.max_calls is not None for r in rows)
    priced = all(r.dollars is not None for r in rows)

    def total(values: list[int | None]) -> str:
        return f"{sum(v or 0 for v in values):,}" if limited else "?"

    money = sum(r.dollars or 0.0 for r in rows) if priced else None
    return [
        "total",
        "",
        "",
        f"{sum(r.episodes for r in rows):,}",
        total([r.max_calls for r in rows]),
        total([r.prompt_tokens for r in rows]),
        total([r.completion_tokens for r in rows]),
        dollars(money, limited),
    ]

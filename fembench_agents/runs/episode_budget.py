"""Matched budgets: the same caps on every agent's episode, whatever its internal
loop (`--episode-budget calls=N,tokens=N,usd=X,seconds=S`, or `episode_budget`
in an experiment file). The session checks them before each model call; a cap
reached ends the episode with the verdict of its last scored attempt, and the
episode records which cap ended it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

CAPS = ("calls", "tokens", "usd", "seconds")


class EpisodeBudgetSpent(Exception):
    """No model call starts: a cap of the episode's budget is reached (the session
    keeps which, as the episode's `budget_stop`)."""


@dataclass(frozen=True)
class EpisodeBudget:
    calls: int | None = None  # model calls (a coding agent's steps, best-of's samples, all alike)
    tokens: int | None = None  # prompt plus completion tokens
    usd: float | None = None  # recorded cost; a call without a price counts nothing
    seconds: float | None = None  # since the episode started, model and scoring time alike

    def __post_init__(self) -> None:
        for name in CAPS:
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"episode budget: {name} must be positive, got {value}")
        if all(getattr(self, name) is None for name in CAPS):
            raise ValueError(f"episode budget: give at least one of {', '.join(CAPS)}")

    @classmethod
    def parse(cls, text: str) -> EpisodeBudget:
        """`calls=N,tokens=N,usd=X,seconds=S`, any of them, in any order."""
        values: dict[str, Any] = {}
        for item in (part.strip() for part in text.split(",") if part.strip()):
            key, sep, value = item.partition("=")
            key = key.strip()
            if not sep or key not in CAPS:
                raise ValueError(f"episode budget {text!r}: expected KEY=VALUE with KEY one of {', '.join(CAPS)}")
            if key in values:
                raise ValueError(f"episode budget {text!r}: {key} given twice")
            try:
                values[key] = int(value) if key in ("calls", "tokens") else float(value)
            except ValueError:
                kind = "an integer" if key in ("calls", "tokens") else "a number"
                raise ValueError(f"episode budget {text!r}: {key} must be {kind}, got {value.strip()!r}") from None
        return cls(**values)

    @classmethod
    def of(cls, value: EpisodeBudget | dict[str, Any] | str | None) -> EpisodeBudget | None:
        """The budget as a manifest, an experiment file or the command line gives it."""
        if value is None or isinstance(value, EpisodeBudget):
            return value
        return cls.parse(value) if isinstance(value, str) else cls(**value)

    def reached(self, calls: int, tokens: int, usd: float, seconds: float) -> str | None:
        """The first cap (in the order calls, tokens, usd, seconds) that the episode's use has reached."""
        used = {"calls": calls, "tokens": tokens, "usd": usd, "seconds": seconds}
        return next((name for name in CAPS if (cap := getattr(self, name)) is not None and used[name] >= cap), None)

    def describe(self) -> str:
        return ",".join(f"{k}={v:g}" for k, v in asdict(self).items() if v is not None)

"""The split of an optimization's problems (function tasks, PDE cases, any
kind's): held-out problems (never evaluated while optimizing), and the rest
shuffled by a seed into training and validation."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from fembench_agents.contracts import Problem
from fembench_agents.runs.defaults import DEFAULT_SELECTION
from fembench_agents.runs.selection import resolve_selection, select_tasks, selector_items


class Split(BaseModel):
    model_config = ConfigDict(frozen=True)
    heldout_selector: str
    val_fraction: float
    seed: int
    heldout: tuple[str, ...]
    train: tuple[str, ...]
    val: tuple[str, ...]

    @property
    def seen(self) -> frozenset[str]:
        """The tasks optimization may evaluate."""
        return frozenset(self.train) | frozenset(self.val)

    def check_disjoint(self) -> None:
        """Held-out tasks are in neither training nor validation, and those two do not overlap."""
        leaked = sorted(frozenset(self.heldout) & self.seen)
        if leaked:
            raise HeldOutViolation(f"held-out tasks in the training or validation set: {', '.join(leaked)}")
        both = sorted(frozenset(self.train) & frozenset(self.val))
        if both:
            raise ValueError(f"tasks in both the training and validation set: {', '.join(both)}")


class HeldOutViolation(RuntimeError):
    """A held-out task was (or was about to be) used during optimization."""


def with_made(tasks: str, heldout: str, made: Mapping[str, str]) -> tuple[str, str]:
    """(tasks, heldout) with the ids a kind made for their made items (fresh PDE instances) in the
    items' places. The problems the held-out selection makes take part even when `tasks` does not
    name them: a fresh held-out set is one nobody has seen, optimizer included."""
    held = resolve_selection(heldout, made)
    among = resolve_selection(tasks, made)
    extra = [made[item] for item in selector_items(heldout) if item in made]
    if extra and among.strip() not in (DEFAULT_SELECTION, "*", ""):
        among = ",".join([among, *extra])
    return among, held


def split_tasks(tasks: Sequence[Problem], heldout: str, val_fraction: float, seed: int, among: str = "all") -> Split:
    """`among` selects the problems taking part as `run --tasks` does (ids or
    fnmatch patterns, `all`); `heldout` selects the held-out ones among them;
    of the others, round(val_fraction * n) go to validation, chosen by
    random.Random(seed) over the sorted ids, so the split depends on nothing else."""
    if not heldout.strip() or heldout.strip() in ("all", "*"):
        raise ValueError(f"--heldout must name the held-out tasks (ids or patterns), got {heldout!r}")
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be between 0 and 1 (exclusive), got {val_fraction}")
    tasks = select_tasks(list(tasks), among)
    held = {t.task_id for t in select_tasks(tasks, heldout)}
    rest = sorted(t.task_id for t in tasks if t.task_id not in held)
    if len(rest) < 2:
        raise ValueError(
            f"after holding out {len(held)} tasks only {len(rest)} remain; "
            "need at least one training and one validation task"
        )
    n_val = min(max(round(val_fraction * len(rest)), 1), len(rest) - 1)
    shuffled = list(rest)
    random.Random(seed).shuffle(shuffled)
    split = Split(
        heldout_selector=heldout,
        val_fraction=val_fraction,
        seed=seed,
        heldout=tuple(sorted(held)),
        train=tuple(sorted(shuffled[n_val:])),
        val=tuple(sorted(shuffled[:n_val])),
    )
    split.check_disjoint()
    return split

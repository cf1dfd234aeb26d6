"""A selection of problems (`--tasks`, `--cases`, an experiment's `tasks` and `cases`):
comma-separated ids, fnmatch patterns, `all`, and items a kind makes on demand.

An item `NAME:...` names problems a kind makes when a run asks for them (the PDE
cases' fresh instances, `fresh:poisson,heat:seed=7:count=3`); its own list may hold
commas, so it runs to its first `key=value` part. The kind makes them when it loads
(`ScoringOptions.selections`) and says which ids each item names; `resolve_selection`
puts those ids in the item's place before anything selects."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping

from fembench_agents.contracts import Problem
from fembench_agents.runs.defaults import DEFAULT_SELECTION


def selector_items(selector: str) -> list[str]:
    """The items of a selection: split at commas, except inside a made item (`NAME:...`), which
    runs on through the first part that holds `=` (its options)."""
    items: list[str] = []
    open_item = False
    for part in (p.strip() for p in selector.split(",")):
        if open_item:
            items[-1] += f",{part}"
        elif part:
            items.append(part)
        else:
            continue
        open_item = ":" in items[-1] and "=" not in items[-1]
    return items


def resolve_selection(selector: str, made: Mapping[str, str]) -> str:
    """`selector` with every made item a kind made (`made`: item -> the ids it names, comma-separated)
    in its place; other items as they are."""
    if not made:
        return selector
    return ",".join(made.get(item, item) for item in selector_items(selector))


def select_tasks[P: Problem](tasks: list[P], selector: str) -> list[P]:
    """Comma-separated task (or case) ids or fnmatch patterns; `all` selects
    everything, except problems marked as leaking (`Problem.leak`), which only
    their own id selects. An id selects its instances too (`<id>~<instance>`, a
    fresh instance drawn for this run: `--fresh-inputs`)."""
    if selector.strip() in (DEFAULT_SELECTION, "*", ""):
        return [t for t in tasks if not t.leak]
    chosen: dict[str, P] = {}
    for pattern in selector_items(selector):
        hits = [
            t
            for t in tasks
            if t.task_id == pattern
            or t.task_id.startswith(f"{pattern}~")
            or (fnmatch.fnmatchcase(t.task_id, pattern) and not t.leak)
        ]
        if not hits:
            leaking = [t.task_id for t in tasks if fnmatch.fnmatchcase(t.task_id, pattern)]
            why = f" but cases marked as leaking ({', '.join(leaking)}: name them by id)" if leaking else ""
            if ":" in pattern and not leaking:
                why = " (an item a kind makes, such as fresh PDE instances, is made by run, compare and optimize)"
            raise ValueError(f"task selector {pattern!r} matches no task{why}")
        chosen.update((t.task_id, t) for t in hits)
    return sorted(chosen.values(), key=lambda t: t.task_id)

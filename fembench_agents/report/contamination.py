"""Published tasks beside fresh instances of the same strata: how much of a pass rate
may be recall. Every kind says of a task id where it comes from and what it is
compared on (`TaskInfo.origin`, `TaskInfo.stratum`: a PDE case's "family/domain", a
function task's published id); nothing here knows a kind.

The rule, per model x agent x track. A task's rate is the share of its repeats that
passed; a stratum's rate on one side is the mean of its tasks' rates there. A stratum
with tasks on both sides is paired, and its difference is published - fresh. A scope
(each family, the part of a stratum before "/", a stratum without "/" being its own
family; and "overall") gives the mean over its paired strata of each side's rate and of
the differences, with a percentile bootstrap interval over those strata (the report's
seed, resamples and confidence). Strata on one side only are listed as unpaired and are
in no difference; tasks whose kind gives no stratum are left out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import partial
from typing import Literal

import numpy as np

from fembench_agents.report.schema import (
    ContaminationRow,
    Estimate,
    ReportSettings,
    TaskInfo,
    UnpairedStratum,
)
from fembench_agents.report.stats import bootstrap_ci
from fembench_agents.runs.log import EpisodeRecord

OVERALL = "overall"
Side = Literal["published", "fresh"]
SIDES: tuple[Side, ...] = ("published", "fresh")

Key = tuple[str, str, str]  # model, agent, track
Sides = dict[str, dict[str, list[float]]]  # stratum -> side -> its tasks' rates


def family_of(stratum: str) -> str:
    """The family a stratum is compared within: its part before "/", or all of it."""
    return stratum.split("/", 1)[0]


def task_rates(episodes: Sequence[EpisodeRecord]) -> dict[Key, dict[str, float]]:
    """Per model x agent x track, each task's share of repeats that passed."""
    counts: dict[Key, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for ep in episodes:
        counts[(ep.model, ep.agent, ep.track)][ep.task_id].append(ep.passed)
    return {key: {t: sum(p) / len(p) for t, p in tasks.items()} for key, tasks in counts.items()}


def by_stratum(rates: dict[str, float], info: Callable[[str], TaskInfo]) -> Sides:
    """Each task's rate under its stratum and side; tasks without a stratum are left out."""
    sides: Sides = defaultdict(lambda: {side: [] for side in SIDES})
    for task_id, rate in sorted(rates.items()):
        about = info(task_id)
        if about.stratum is not None:
            sides[about.stratum][about.origin].append(rate)
    return dict(sides)


def scope_row(
    key: Key, scope: str, paired: dict[str, dict[str, list[float]]], settings: ReportSettings
) -> ContaminationRow:
    """The row of one scope over its paired strata."""
    published = [float(np.mean(s["published"])) for s in paired.values()]
    fresh = [float(np.mean(s["fresh"])) for s in paired.values()]
    differences = [p - f for p, f in zip(published, fresh, strict=True)]
    low, high = bootstrap_ci(
        differences, resamples=settings.resamples, confidence=settings.confidence, seed=settings.seed
    )
    return ContaminationRow(
        model=key[0],
        agent=key[1],
        track=key[2],
        scope=scope,
        strata=len(paired),
        published_tasks=sum(len(s["published"]) for s in paired.values()),
        fresh_tasks=sum(len(s["fresh"]) for s in paired.values()),
        published=float(np.mean(published)),
        fresh=float(np.mean(fresh)),
        difference=Estimate(value=float(np.mean(differences)), low=low, high=high),
    )


def contamination(
    episodes: Sequence[EpisodeRecord], info: Callable[[str, str], TaskInfo], settings: ReportSettings
) -> tuple[list[ContaminationRow], list[UnpairedStratum]]:
    """The rows (each family's, then "overall") and the unpaired strata of every model x agent x
    track that ran a fresh instance; `info(track, task_id)` is the task's kind's word on it."""
    rows: list[ContaminationRow] = []
    unpaired: list[UnpairedStratum] = []
    for key, rates in sorted(task_rates(episodes).items()):
        sides = by_stratum(rates, partial(info, key[2]))
        if not any(s["fresh"] for s in sides.values()):
            continue
        paired = {name: s for name, s in sorted(sides.items()) if s["published"] and s["fresh"]}
        for name, s in sorted(sides.items()):
            if name not in paired:
                side: Side = "published" if s["published"] else "fresh"
                unpaired.append(
                    UnpairedStratum(
                        model=key[0], agent=key[1], track=key[2], stratum=name, side=side, tasks=len(s[side])
                    )
                )
        families = sorted({family_of(name) for name in paired})
        for family in families:
            mine = {name: s for name, s in paired.items() if family_of(name) == family}
            rows.append(scope_row(key, family, mine, settings))
        if paired:
            rows.append(scope_row(key, OVERALL, paired, settings))
    return rows, unpaired

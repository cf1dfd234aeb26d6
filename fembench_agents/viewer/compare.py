"""What the viewer's side-by-side comparison reads: the arms, each task's
verdict per arm, and per task its episodes paired by repeat index with the
line diff of their programs attempt by attempt.

An arm is a model and an agent. A site holds one episode per model, agent,
track, task and repeat (the report refuses the same episode in two runs), so
the runs an arm's episodes came from follow from it and are named beside it.
A task counts as solved by an arm when a strict majority of its repeats
passed, the rule the paired tests use, so the page's counts are the paired
table's. Everything here is already on the episode pages (which episode, the
code its replies hold); the diffs are the only thing computed anew."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from fembench_agents.report.stats import majority_passed
from fembench_agents.runs.log import EpisodeRecord
from fembench_agents.viewer.episodes import code_diff

ArmKey = tuple[str, str]  # model, agent
TaskKey = tuple[str, str]  # track, task


@dataclass(frozen=True)
class ComparedEpisode:
    """One episode as the comparison needs it: its number in the site, its run,
    and the program each of its attempts handed in, in attempt order."""

    n: int
    run: str
    episode: EpisodeRecord
    codes: tuple[str, ...]


def arm_of(ep: EpisodeRecord) -> ArmKey:
    return (ep.model, ep.agent)


def arm_label(arm: ArmKey) -> str:
    return f"{arm[0]} / {arm[1]}"


def attempt_diffs(a: ComparedEpisode, b: ComparedEpisode) -> list[list[str] | None]:
    """For each attempt position, the diff from arm a's program to arm b's;
    None where one of the two episodes made fewer attempts."""
    out: list[list[str] | None] = []
    for p in range(max(len(a.codes), len(b.codes))):
        if p >= len(a.codes) or p >= len(b.codes):
            out.append(None)
            continue
        labels = (
            f"{arm_label(arm_of(a.episode))}, attempt {p + 1}",
            f"{arm_label(arm_of(b.episode))}, attempt {p + 1}",
        )
        out.append(code_diff(a.codes[p], b.codes[p], labels))
    return out


def task_comparison(
    key: TaskKey, arms: Sequence[ArmKey], by_arm: dict[int, dict[int, ComparedEpisode]]
) -> dict[str, Any]:
    """One task's data file: per repeat index, the episode of each arm (None
    where that arm has no such repeat) and the diffs between every two arms
    that have one, keyed "i-j" with arm i before arm j."""
    repeats = sorted({r for eps in by_arm.values() for r in eps})
    out = []
    for r in repeats:
        present = [i for i in range(len(arms)) if r in by_arm.get(i, {})]
        out.append(
            {
                "repeat": r,
                "episodes": [by_arm[i][r].n if i in present else None for i in range(len(arms))],
                "diffs": {f"{i}-{j}": attempt_diffs(by_arm[i][r], by_arm[j][r]) for i, j in combinations(present, 2)},
            }
        )
    return {"track": key[0], "task": key[1], "repeats": out}


def comparison(entries: Sequence[ComparedEpisode]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The index's part ({"arms", "tasks"}: tasks[k]["results"][i] is arm i's
    {"passes", "repeats", "solved"} on task k, or None) and task k's data file,
    for every task of `entries`. Arms and tasks are sorted, so arm i comes
    before arm j whenever i < j, as in the paired tests (agent A before B)."""
    arms = sorted({arm_of(e.episode) for e in entries})
    arm_id = {a: i for i, a in enumerate(arms)}
    runs: dict[int, set[str]] = defaultdict(set)
    counts: Counter[int] = Counter()
    tasks: dict[TaskKey, dict[int, dict[int, ComparedEpisode]]] = defaultdict(lambda: defaultdict(dict))
    for e in entries:
        i = arm_id[arm_of(e.episode)]
        runs[i].add(e.run)
        counts[i] += 1
        tasks[(e.episode.track, e.episode.task_id)][i][e.episode.repeat] = e
    index_tasks, files = [], []
    for key in sorted(tasks):
        by_arm = tasks[key]
        results: list[dict[str, Any] | None] = []
        for i in range(len(arms)):
            eps = by_arm.get(i)
            if not eps:
                results.append(None)
                continue
            passes = sum(e.episode.passed for e in eps.values())
            results.append({"passes": passes, "repeats": len(eps), "solved": majority_passed(len(eps), passes)})
        index_tasks.append({"track": key[0], "task": key[1], "results": results})
        files.append(task_comparison(key, arms, by_arm))
    index_arms = [
        {
            "model": model,
            "agent": agent,
            "label": arm_label((model, agent)),
            "runs": sorted(runs[i]),
            "episodes": counts[i],
        }
        for i, (model, agent) in enumerate(arms)
    ]
    return {"arms": index_arms, "tasks": index_tasks}, files


def arm_ids(compare_index: dict[str, Any]) -> dict[ArmKey, int]:
    """(model, agent) -> the arm's number in the site, for links into the comparison."""
    return {(a["model"], a["agent"]): i for i, a in enumerate(compare_index["arms"])}

"""From run directories to a `Report`: collect finished episodes, group them
by model x agent x track, and compute every table the report shows."""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from fembench_agents.contracts import Track
from fembench_agents.report.contamination import contamination
from fembench_agents.report.kind_parts import kind_fields, report_part
from fembench_agents.report.schema import (
    Estimate,
    GroupSummary,
    PairedTest,
    Report,
    ReportSettings,
    RunInfo,
    TaskCell,
    TaskRow,
    TaskTable,
)
from fembench_agents.report.stats import (
    bootstrap_ci,
    k_of_n,
    majority_passed,
    mcnemar_exact,
    mean_pass_at_k,
)
from fembench_agents.runs.episode_budget import EpisodeBudget
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord
from fembench_agents.runs.reader import RunRecords, chosen_episodes, latest_attempts, open_run

GroupKey = tuple[str, str, Track]  # model, agent, track
RunSource = str | os.PathLike[str] | RunRecords  # a run directory, or one already read


def _read(source: RunSource) -> RunRecords:
    return source if isinstance(source, RunRecords) else open_run(source)


def collect_episodes(
    run_dirs: Iterable[RunSource],
) -> tuple[list[RunInfo], list[tuple[str, EpisodeRecord]]]:
    """Every episode of every run, tagged with its run id. Within a run the
    last "done" record of an episode wins, else its last "error" record (a
    failure that a resume did not redo). The same episode in two runs is an
    error: the report would otherwise count it twice."""
    runs: list[RunInfo] = []
    episodes: list[tuple[str, EpisodeRecord]] = []
    seen: dict[str, str] = {}
    for source in run_dirs:
        run = _read(source)
        directory = run.path
        manifest = run.manifest
        chosen = chosen_episodes(run.records)
        for key, record in chosen.items():
            if key in seen:
                raise ValueError(
                    f"episode {key} appears in run {seen[key]} and in run "
                    f"{manifest.run_id} ({directory}); report each episode once"
                )
            seen[key] = manifest.run_id
            episodes.append((manifest.run_id, record))
        runs.append(
            RunInfo(
                run_id=manifest.run_id,
                path=str(Path(directory)),
                created=manifest.created,
                git_commit=manifest.git_commit,
                episodes=len(chosen),
                isolation=manifest.isolation,
                episode_budget=_budget(manifest.config.get("episode_budget")),
            )
        )
    return runs, episodes


def _budget(recorded: Any) -> str | None:
    budget = EpisodeBudget.of(recorded) if recorded else None
    return budget.describe() if budget else None


def collect_attempts(run_dirs: Iterable[RunSource]) -> list[AttemptRecord]:
    """The latest record of every attempt of every run."""
    return [a for d in run_dirs for a in latest_attempts(_read(d).records).values()]


def failure_stage(ep: EpisodeRecord) -> str | None:
    """The stage a failed episode is counted under; None when it passed. A
    failed model call with no scored attempt counts as "model_error"."""
    if ep.passed:
        return None
    if ep.failed_stage:
        return ep.failed_stage
    if ep.reason == "model_error":
        return "model_error"
    return "error" if ep.status == "error" else "unknown"


def _by_task(eps: Sequence[EpisodeRecord]) -> dict[str, list[EpisodeRecord]]:
    out: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for ep in sorted(eps, key=lambda e: (e.task_id, e.repeat)):
        out[ep.task_id].append(ep)
    return dict(out)


def _estimate(values: list[float], settings: ReportSettings) -> Estimate:
    low, high = bootstrap_ci(values, resamples=settings.resamples, confidence=settings.confidence, seed=settings.seed)
    return Estimate(value=float(np.mean(values)), low=low, high=high)


def summarize_group(
    key: GroupKey, eps: Sequence[EpisodeRecord], runs: list[str], settings: ReportSettings
) -> GroupSummary:
    model, agent, track = key
    tasks = _by_task(eps)
    counts = [(len(t), sum(e.passed for e in t)) for t in tasks.values()]
    repeats_min = min(n for n, _ in counts)
    stages = Counter(s for e in eps if (s := failure_stage(e)))
    reasons = Counter(f"{s}/{e.reason}" if e.reason not in (None, s) else s for e in eps if (s := failure_stage(e)))
    costs = [e.cost_usd for e in eps]
    return GroupSummary(
        model=model,
        agent=agent,
        track=track,
        runs=runs,
        tasks=len(tasks),
        repeats_min=repeats_min,
        repeats_max=max(n for n, _ in counts),
        episodes=len(eps),
        attempts=sum(e.attempts for e in eps),
        passed=sum(e.passed for e in eps),
        errors=sum(e.status == "error" for e in eps),
        tasks_solved=sum(majority_passed(n, c) for n, c in counts),
        correct=_estimate([c / n for n, c in counts], settings),
        joint_tests=(
            _estimate([float(np.mean([e.score for e in t])) for t in tasks.values()], settings)
            if report_part(track).graded
            else None
        ),
        oracle=(
            _estimate([float(np.mean([bool(e.oracle_passed) for e in t])) for t in tasks.values()], settings)
            if all(e.oracle_passed is not None for e in eps)
            else None
        ),
        pass_at_k={k: mean_pass_at_k(counts, k) for k in range(1, repeats_min + 1)},
        k_of_n=k_of_n(counts),
        stage_failures=dict(sorted(stages.items())),
        failure_reasons=dict(sorted(reasons.items())),
        prompt_tokens=sum(e.prompt_tokens for e in eps),
        completion_tokens=sum(e.completion_tokens for e in eps),
        cost_usd=None if any(c is None for c in costs) else float(sum(c for c in costs if c is not None)),
        seconds=sum(e.seconds for e in eps),
        model_seconds=sum(e.model_seconds for e in eps),
        budget_stops=dict(sorted(Counter(e.budget_stop for e in eps if e.budget_stop).items())),
        model_calls=sum(e.model_calls for e in eps),
        reused_calls=sum(e.reused_calls for e in eps),
    )


def task_table(model: str, track: Track, groups: Mapping[str, Sequence[EpisodeRecord]]) -> TaskTable:
    """Rows are tasks, columns the agents in `groups` (agent -> episodes)."""
    cells: dict[str, dict[str, TaskCell]] = defaultdict(dict)
    for agent, eps in groups.items():
        for task_id, t in _by_task(eps).items():
            cells[task_id][agent] = TaskCell(
                passes=sum(e.passed for e in t), repeats=len(t), score=float(np.mean([e.score for e in t]))
            )
    rows = [TaskRow(task_id=task_id, cells=cells[task_id]) for task_id in sorted(cells)]
    return TaskTable(model=model, track=track, agents=sorted(groups), rows=rows)


def paired_test(table: TaskTable, agent_a: str, agent_b: str) -> PairedTest:
    """McNemar on the tasks both agents ran, a task being solved by an agent
    when a strict majority of its repeats passed. Pairing repeats by index
    would treat independent samples as matched and count one task several
    times, so the task is the paired unit."""
    rows = [r for r in table.rows if agent_a in r.cells and agent_b in r.cells]
    solved_a = [majority_passed(r.cells[agent_a].repeats, r.cells[agent_a].passes) for r in rows]
    solved_b = [majority_passed(r.cells[agent_b].repeats, r.cells[agent_b].passes) for r in rows]
    result = mcnemar_exact(solved_a, solved_b)
    return PairedTest(
        model=table.model,
        track=table.track,
        agent_a=agent_a,
        agent_b=agent_b,
        tasks=result.pairs,
        both=result.both,
        a_only=result.a_only,
        b_only=result.b_only,
        neither=result.neither,
        p_value=result.p_value,
    )


def build_report(run_dirs: Iterable[RunSource], settings: ReportSettings | None = None) -> Report:
    """The comparison report over one or more run directories (or runs
    already read, so that a caller who needs the records too reads each log once)."""
    settings = settings or ReportSettings()
    run_dirs = [_read(d) for d in run_dirs]
    runs, tagged = collect_episodes(run_dirs)
    grouped: dict[GroupKey, list[EpisodeRecord]] = defaultdict(list)
    group_runs: dict[GroupKey, set[str]] = defaultdict(set)
    for run_id, ep in tagged:
        key = (ep.model, ep.agent, ep.track)
        grouped[key].append(ep)
        group_runs[key].add(run_id)
    keys = sorted(grouped, key=lambda k: (k[0], k[2], k[1]))  # model, track, agent
    groups = [summarize_group(k, grouped[k], sorted(group_runs[k]), settings) for k in keys]
    by_model_track: dict[tuple[str, Track], dict[str, list[EpisodeRecord]]] = defaultdict(dict)
    for model, agent, track in keys:
        by_model_track[(model, track)][agent] = grouped[(model, agent, track)]
    tables = [task_table(model, track, agents) for (model, track), agents in by_model_track.items()]
    paired = [paired_test(t, a, b) for t in tables for a, b in combinations(t.agents, 2)]
    attempts = collect_attempts(run_dirs)
    episodes = [ep for _, ep in tagged]
    own = kind_fields(episodes, attempts, settings)  # each kind's sections (the papers' tables, PDE stages)
    fresh, unpaired = contamination(episodes, lambda track, task_id: report_part(track).task_info(task_id), settings)
    generic = {"settings": settings, "runs": runs, "groups": groups, "task_tables": tables, "paired": paired}
    generic |= {"contamination": fresh, "contamination_unpaired": unpaired}
    return Report.model_validate({**generic, **own})

"""The tables FEM-Bench and FEABench publish, from finished episodes and
their scored attempts: per-task best-of-n and n-of-n by domain and tier, the
four test-track aggregates, breakdowns by tier, knowledge class and domain,
and the executability / near-miss diagnostics of function attempts."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence

from fembench_agents.report.schema import (
    AgentMetrics,
    BreakdownRow,
    Diagnostics,
    PaperCell,
    PaperRow,
    PaperTable,
    TaskInfo,
)
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord
from fembench_agents.suite.fresh_spec import published_id
from fembench_agents.suite.model import Tier
from fembench_agents.suite.outcomes import FunctionOutcome, TestSuiteOutcome

FUNCTION_TRACKS = ("code", "tests")  # the function kind's tracks, in the papers' order
DOMAINS = {"FEM_1D_": "FEM 1D", "FEM_2D_": "FEM 2D", "MSA_3D_": "MSA 3D"}
DOMAIN_ORDER = (*DOMAINS.values(), "other")
RAN = ("match", "mismatch")  # input statuses of code that ran to completion


def task_info(task_id: str) -> TaskInfo:
    """Domain from the id's prefix, tier and knowledge class from its
    `_CC<c>_H<h>_T<t>` suffix; ids outside the suite read "other" and "-". A fresh
    instance (`<id>~fresh<seed>`) reads as its published task, with origin "fresh"
    and that task's id as its stratum."""
    published = published_id(task_id)
    origin = "fresh" if published != task_id else "published"
    domain = next((name for prefix, name in DOMAINS.items() if published.startswith(prefix)), "other")
    tier = Tier.from_task_id(published)
    tier_label, knowledge = ("-", "-") if tier is None else (f"T{tier.help_level}", f"CC{tier.conceptual_challenge}")
    return TaskInfo(domain=domain, tier=tier_label, knowledge=knowledge, origin=origin, stratum=published)


def paper_order(task_id: str) -> tuple[int, str, str]:
    """Domain as the papers list them, then tier, then id."""
    info = task_info(task_id)
    return DOMAIN_ORDER.index(info.domain), info.tier, task_id


def column(model: str, agent: str) -> str:
    return f"{model} / {agent}"


def _cell(eps: Sequence[EpisodeRecord]) -> PaperCell:
    return PaperCell(passes=sum(e.passed for e in eps), repeats=len(eps), score=sum(e.score for e in eps) / len(eps))


def _by_task(eps: Iterable[EpisodeRecord]) -> dict[str, list[EpisodeRecord]]:
    out: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for e in eps:
        out[e.task_id].append(e)
    return out


def paper_tables(episodes: Sequence[EpisodeRecord]) -> list[PaperTable]:
    """One table per function track that has episodes."""
    tables = []
    for track in FUNCTION_TRACKS:
        eps = [e for e in episodes if e.track == track]
        if not eps:
            continue
        cells: dict[str, dict[str, PaperCell]] = defaultdict(dict)
        by_column: dict[str, list[EpisodeRecord]] = defaultdict(list)
        for e in eps:
            by_column[column(e.model, e.agent)].append(e)
        for col, col_eps in by_column.items():
            for task_id, t in _by_task(col_eps).items():
                cells[task_id][col] = _cell(t)
        rows = [
            PaperRow(task_id=task_id, info=task_info(task_id), cells=cells[task_id])
            for task_id in sorted(cells, key=paper_order)
        ]
        tables.append(PaperTable(track=track, columns=sorted(by_column), rows=rows))
    return tables


def last_attempts(attempts: Iterable[AttemptRecord]) -> dict[str, AttemptRecord]:
    """Episode key -> its last scored attempt (the one its verdict rests on)."""
    out: dict[str, AttemptRecord] = {}
    for a in attempts:
        if a.outcome is not None and (a.episode not in out or a.attempt_index >= out[a.episode].attempt_index):
            out[a.episode] = a
    return out


def _mean_over_tasks(values: Iterable[tuple[str, float]]) -> float | None:
    per_task: dict[str, list[float]] = defaultdict(list)
    for task_id, v in values:
        per_task[task_id].append(v)
    return statistics.fmean(statistics.fmean(v) for v in per_task.values()) if per_task else None


def test_track_metrics(episodes: Sequence[EpisodeRecord], attempts: Iterable[AttemptRecord]) -> list[AgentMetrics]:
    """An episode without a scored test suite (its model call failed) counts
    as passing no test and detecting no failure."""
    last = last_attempts(attempts)
    pairs = sorted({(e.model, e.agent) for e in episodes if e.track in FUNCTION_TRACKS})
    rows = []
    for model, agent in pairs:
        mine = [e for e in episodes if e.model == model and e.agent == agent]
        code = [e for e in mine if e.track == "code"]
        tests = [e for e in mine if e.track == "tests"]
        suites = {
            e.episode: o if isinstance(o := getattr(last.get(e.episode), "outcome", None), TestSuiteOutcome) else None
            for e in tests
        }
        rows.append(
            AgentMetrics(
                model=model,
                agent=agent,
                function_correctness=_mean_over_tasks((e.task_id, float(e.passed)) for e in code),
                reference_pass=_mean_over_tasks(
                    (e.task_id, s.reference_pass_share if (s := suites[e.episode]) else 0.0) for e in tests
                ),
                failures_detected=_mean_over_tasks(
                    (e.task_id, s.detection_share if (s := suites[e.episode]) else 0.0) for e in tests
                ),
                joint_success=_mean_over_tasks((e.task_id, e.score) for e in tests),
            )
        )
    return rows


def breakdowns(episodes: Sequence[EpisodeRecord]) -> list[BreakdownRow]:
    """Function tracks only: PDE cases have no tier or knowledge class."""
    groups: dict[tuple[str, str, str], list[EpisodeRecord]] = defaultdict(list)
    for e in episodes:
        if e.track in FUNCTION_TRACKS:
            groups[(e.model, e.agent, e.track)].append(e)
    rows = []
    for (model, agent, track), eps in sorted(groups.items()):
        for by in ("tier", "knowledge", "domain"):
            buckets: dict[str, list[EpisodeRecord]] = defaultdict(list)
            for e in eps:
                buckets[getattr(task_info(e.task_id), by)].append(e)
            order = sorted(buckets, key=DOMAIN_ORDER.index) if by == "domain" else sorted(buckets)
            for value in order:
                cells = [_cell(t) for t in _by_task(buckets[value]).values()]
                rows.append(
                    BreakdownRow(
                        model=model,
                        agent=agent,
                        track=track,  # type: ignore[arg-type]
                        by=by,  # type: ignore[arg-type]
                        value=value,
                        tasks=len(cells),
                        episodes=len(buckets[value]),
                        correct=statistics.fmean(c.passes / c.repeats for c in cells),
                        best_of_n=sum(c.best_of_n for c in cells),
                        n_of_n=sum(c.n_of_n for c in cells),
                    )
                )
    return rows


def _executable(o: FunctionOutcome) -> bool:
    return bool(o.inputs) and all(i.status in RAN for i in o.inputs)


def worst_error(o: FunctionOutcome) -> float | None:
    """The largest relative error measured on any input; None when none was."""
    errors = [i.relative_error for i in o.inputs if i.relative_error is not None]
    return max(errors) if errors else None


def diagnostics(attempts: Iterable[AttemptRecord], near_miss_error: float) -> list[Diagnostics]:
    groups: dict[tuple[str, str], list[FunctionOutcome]] = defaultdict(list)
    for a in attempts:
        if isinstance(a.outcome, FunctionOutcome):
            groups[(a.model, a.agent)].append(a.outcome)
    rows = []
    for (model, agent), outcomes in sorted(groups.items()):
        executable = [o for o in outcomes if _executable(o)]
        wrong = [o for o in executable if not o.passed]
        errors = [err for o in wrong if (err := worst_error(o)) is not None]
        near = sum(err <= near_miss_error for err in errors)
        rows.append(
            Diagnostics(
                model=model,
                agent=agent,
                attempts=len(outcomes),
                executable=len(executable),
                executable_share=len(executable) / len(outcomes),
                wrong_executable=len(wrong),
                median_error=statistics.median(errors) if errors else None,
                near_misses=near,
                near_miss_share=near / len(errors) if errors else None,
            )
        )
    return rows

"""The PDE cases' per-stage table: over every scored attempt (not only an
episode's last), per model x agent x library x family: executes over all
attempts, accurate over executed, fast over accurate, pass overall, and the
measured error and solve time of the attempts that executed."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable

from fembench_agents.report.schema import CaseMargins, CaseStageRow
from fembench_agents.runs.log import AttemptRecord
from fembench_agents.scoring.outcomes import CaseOutcome

CaseKey = tuple[str, str, str, str]  # model, agent, library, family


def _reached(outcome: CaseOutcome, stage: str) -> bool:
    return any(s.stage == stage and s.passed for s in outcome.stages)


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _grouped(attempts: Iterable[AttemptRecord]) -> dict[CaseKey, list[CaseOutcome]]:
    grouped: dict[CaseKey, list[CaseOutcome]] = defaultdict(list)
    for record in attempts:
        o = record.outcome
        if isinstance(o, CaseOutcome):
            grouped[(record.model, record.agent, o.library, o.family)].append(o)
    return grouped


def case_stage_rows(attempts: Iterable[AttemptRecord]) -> list[CaseStageRow]:
    """`attempts`: the latest record of every scored attempt."""
    grouped = _grouped(attempts)
    rows = []
    for (model, agent, library, family), outcomes in sorted(grouped.items()):
        executed = [o for o in outcomes if _reached(o, "executes")]
        accurate = [o for o in executed if _reached(o, "accurate")]
        passed = [o for o in accurate if _reached(o, "fast")]
        errors = [o.relative_l2_error for o in executed if o.relative_l2_error is not None]
        times = [o.solve_seconds for o in executed if o.solve_seconds is not None]
        rows.append(
            CaseStageRow(
                model=model,
                agent=agent,
                library=library,
                family=family,
                attempts=len(outcomes),
                executes=len(executed),
                accurate=len(accurate),
                fast=len(passed),
                executes_rate=_share(len(executed), len(outcomes)),
                accurate_rate=_share(len(accurate), len(executed)),
                fast_rate=_share(len(passed), len(accurate)),
                pass_rate=_share(len(passed), len(outcomes)),
                median_error=statistics.median(errors) if errors else None,
                median_seconds=statistics.median(times) if times else None,
            )
        )
    return rows


def case_margins(attempts: Iterable[AttemptRecord]) -> list[CaseMargins]:
    """Each executed attempt's error and time over the thresholds it was judged by."""
    rows = []
    for (model, agent, library, family), outcomes in sorted(_grouped(attempts).items()):
        executed = [o for o in outcomes if _reached(o, "executes") and o.thresholds is not None]
        rows.append(
            CaseMargins(
                model=model,
                agent=agent,
                library=library,
                family=family,
                error_ratios=[
                    o.relative_l2_error / o.thresholds.tau_acc
                    for o in executed
                    if o.thresholds and o.relative_l2_error is not None and o.thresholds.tau_acc > 0
                ],
                time_ratios=[
                    o.solve_seconds / o.thresholds.tau_time
                    for o in executed
                    if o.thresholds and o.solve_seconds is not None and o.thresholds.tau_time
                ],
            )
        )
    return rows

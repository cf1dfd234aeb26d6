"""The PDE cases' report tables. Per stage: over every scored attempt (not only
an episode's last), per model x agent x library x family: executes over all
attempts, accurate over executed, fast over accurate, pass overall, and the
measured error and solve time of the attempts that executed. Margins: each
executed attempt's error and time over the thresholds it was judged by."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence

from fembench_agents.cases.outcomes import CaseOutcome, gate_labels
from fembench_agents.report.kind_parts import Rows
from fembench_agents.report.schema import CaseMargins, CaseStageRow, Report
from fembench_agents.runs.log import AttemptRecord

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


def case_gates(attempts: Iterable[AttemptRecord]) -> list[str]:
    """The gates that judged the scored PDE attempts, each named once."""
    return gate_labels(o for o in (r.outcome for r in attempts) if isinstance(o, CaseOutcome))


def gates_named(report: Report) -> str | None:
    """What a reader must know to set the figures beside others': whose gates judged."""
    return "gates: " + "; ".join(report.case_gates) if report.case_gates else None


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def case_rows(report: Report) -> Rows:
    headers = [
        "Model",
        "Agent",
        "Library",
        "Family",
        "Attempts",
        "Executes",
        "Accurate",
        "Fast",
        "Pass",
        "Median error",
    ]
    body = [
        [
            r.model,
            r.agent,
            r.library,
            r.family,
            str(r.attempts),
            f"{r.executes} ({_rate(r.executes_rate)})",
            f"{r.accurate} ({_rate(r.accurate_rate)})",
            f"{r.fast} ({_rate(r.fast_rate)})",
            _rate(r.pass_rate),
            "-" if r.median_error is None else f"{r.median_error:.2e}",
        ]
        for r in report.case_stages
    ]
    return headers, body


def _quantiles(values: Sequence[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.2g}"
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{q2:.2g} [{q1:.2g}, {q3:.2g}]"


def _within(values: Sequence[float]) -> str:
    return f"{sum(v <= 1.0 for v in values)}/{len(values)}"


def margin_rows(margins: Sequence[CaseMargins]) -> Rows:
    headers = [
        "Model",
        "Agent",
        "Library",
        "Family",
        "Error / tau_acc: median [quartiles]",
        "Within tau_acc",
        "Time / tau_time: median [quartiles]",
        "Within tau_time",
    ]
    body = [
        [
            m.model,
            m.agent,
            m.library,
            m.family,
            _quantiles(m.error_ratios),
            _within(m.error_ratios),
            _quantiles(m.time_ratios),
            _within(m.time_ratios),
        ]
        for m in margins
    ]
    return headers, body

"""Family x domain x library coverage of a set of cases, for `cases list`."""

from __future__ import annotations

from collections import defaultdict

from fembench_agents.cases.model import DOMAINS, FAMILIES, CaseFile


def letters(libraries: list[str]) -> dict[str, str]:
    """One capital letter per library track, in name order (the table's legend)."""
    return {lib: chr(ord("A") + k) for k, lib in enumerate(sorted(libraries))}


def matrix(cases: list[CaseFile], libraries: list[str]) -> list[list[str]]:
    """Rows: family, then per domain "count letters" (the tracks offering at least one of
    those cases), then the family's total; empty cells are "-"."""
    legend = letters(libraries)
    count: dict[tuple[str, str], int] = defaultdict(int)
    offered: dict[tuple[str, str], set[str]] = defaultdict(set)
    for c in cases:
        count[c.family, c.domain] += 1
        offered[c.family, c.domain] |= {lib for lib in c.libraries if lib in legend}
    rows = []
    for fam in FAMILIES:
        total = sum(count[fam, d] for d in DOMAINS)
        if not total:
            continue
        cells = [
            f"{count[fam, d]} {''.join(sorted(legend[lib] for lib in offered[fam, d]))}" if count[fam, d] else "-"
            for d in DOMAINS
        ]
        rows.append([fam, *cells, str(total)])
    return rows

"""Family x domain x library coverage of a set of cases, for `cases list`."""

from __future__ import annotations

from collections import defaultdict

from fembench_agents.cases.model import DOMAINS, FAMILIES, CaseFile


def letters(libraries: list[str]) -> dict[str, str]:
    """One capital letter per library track, in name order (the table's legend)."""
    return {lib: chr(ord("A") + k) for k, lib in enumerate(sorted(libraries))}


def matrix(cases: list[CaseFile], libraries: list[str]) -> list[list[str]]:
    """Rows: family, then per domain "count letters" (a capital letter: the track offers every
    one of those cases; lower case: only some), then the family's total; empty cells are "-"."""
    legend = letters(libraries)
    count: dict[tuple[str, str], int] = defaultdict(int)
    offers: dict[tuple[str, str, str], int] = defaultdict(int)
    for c in cases:
        count[c.family, c.domain] += 1
        for lib in c.libraries:
            offers[c.family, c.domain, lib] += 1

    def mark(fam: str, dom: str) -> str:
        n = count[fam, dom]
        found = [(legend[lib], offers[fam, dom, lib]) for lib in sorted(legend) if offers[fam, dom, lib]]
        return f"{n} " + "".join(letter if k == n else letter.lower() for letter, k in found)

    rows = []
    for fam in FAMILIES:
        total = sum(count[fam, d] for d in DOMAINS)
        if not total:
            continue
        cells = [mark(fam, d) if count[fam, d] else "-" for d in DOMAINS]
        rows.append([fam, *cells, str(total)])
    return rows

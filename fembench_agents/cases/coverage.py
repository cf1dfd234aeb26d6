"""Family x domain x library coverage of a set of cases, for `cases list`."""

from __future__ import annotations

from collections import defaultdict

from fembench_agents.cases.model import CURVED_DOMAINS, DOMAINS, FAMILIES, TRANSIENT_VARIANTS, CaseFile

VARIANTS = ("neumann", "robin", "do-nothing", "periodic", "transient")  # the columns of `variants`
COLUMNS = (*DOMAINS, *CURVED_DOMAINS)  # the columns of `matrix`: the polygons, then the curved domains


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
        total = sum(count[fam, d] for d in COLUMNS)
        if not total:
            continue
        cells = [mark(fam, d) if count[fam, d] else "-" for d in COLUMNS]
        rows.append([fam, *cells, str(total)])
    return rows


def _variants_of(case: CaseFile) -> set[str]:
    found: set[str] = {c.kind for c in case.natural.values()}
    if case.periodic:
        found.add("periodic")
    if case.family in TRANSIENT_VARIANTS and case.time is not None:
        found.add("transient")
    return found


def variants(cases: list[CaseFile], libraries: list[str]) -> list[list[str]]:
    """Rows: family, then per variant (a piece kind other than Dirichlet, or the transient variant of
    a steady family) "count letters" as in `matrix`, then how many of the family's cases have any."""
    legend = letters(libraries)
    rows = []
    for fam in FAMILIES:
        mine = [c for c in cases if c.family == fam and _variants_of(c)]
        if not mine:
            continue
        cells = []
        for variant in VARIANTS:
            having = [c for c in mine if variant in _variants_of(c)]
            if not having:
                cells.append("-")
                continue
            offers = {lib: sum(lib in c.libraries for c in having) for lib in sorted(legend)}
            marks = "".join(legend[lib] if k == len(having) else legend[lib].lower() for lib, k in offers.items() if k)
            cells.append(f"{len(having)} {marks}")
        rows.append([fam, *cells, str(len(mine))])
    return rows

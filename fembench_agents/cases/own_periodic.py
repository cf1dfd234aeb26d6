"""Periodic sides of our own cases on the unit square: a case file's `periodic = ["x"]`
identifies the left and right sides (the right one the image of the left), `["y"]` the bottom
and top. The pieces keep their segments, take kind `periodic` and their partner's name and no
value. The manufactured solution (its value and normal derivative), the forcing and the
coefficients must agree on paired sides (published_periodic.check_periodic, the importer's
check), else the case is refused naming what is not periodic."""

from __future__ import annotations

import sympy as sp

from fembench_agents.cases import manufactured
from fembench_agents.cases.manufactured import CaseDefinitionError, forcing, parse
from fembench_agents.cases.model import CaseFile
from fembench_agents.cases.published_domains import Excluded, T, X, Y
from fembench_agents.cases.published_periodic import PAIRS, check_periodic, partners

BOX = (0.0, 1.0, 0.0, 1.0)


def periodic_partners(case: CaseFile, solution: list[sp.Expr] | None) -> dict[str, str]:
    """Each periodic piece's partner, both ways; {} for a case without periodic sides."""
    if not case.periodic:
        return {}
    if solution is None:
        raise CaseDefinitionError(f"{case.id}: periodic sides are for a case with a manufactured solution")
    pairs = partners(tuple(case.periodic))
    clash = sorted(set(pairs) & set(case.natural))
    if clash:
        raise CaseDefinitionError(f"{case.id}: {', '.join(clash)} cannot be both periodic and natural")
    coefficients = [
        parse(c)
        for v in case.coefficients.values()
        for c in (v if isinstance(v, list) else [v])
        if not (isinstance(c, str) and "u" in sp.sympify(c).free_symbols)  # R(u) is no field
    ]
    # the check reads expressions in its own symbols (not declared real)
    ours = {manufactured.x: X, manufactured.y: Y, manufactured.t: T}
    data = {
        what: [sp.sympify(e).subs(ours) for e in exprs]
        for what, exprs in (
            ("solution", solution),
            ("forcing", forcing(case, solution)),
            ("coefficients", coefficients),
        )
    }
    t_end = case.time.t_end if case.time else 1.0
    try:
        check_periodic(data, BOX, tuple(sorted(d for d in PAIRS if d in case.periodic)), t_end)
    except Excluded as exc:
        raise CaseDefinitionError(f"{case.id}: {str(exc).removeprefix('record defect: ')}") from None
    return pairs

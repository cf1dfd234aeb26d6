"""Boundary conditions beyond Dirichlet, per boundary piece: what each kind means
for each family (the words of the equation text), the outward normal of a piece,
and the data a manufactured solution gives a natural piece (its flux restricted
there, plus alpha u on a Robin piece).

The flux is the one the family's weak form puts on the boundary, so a natural
piece enters a finite-element solve as a boundary integral of its data:
  poisson, heat         k du/dn
  convection_diffusion  eps du/dn
  reaction_diffusion    D du/dn
  helmholtz             du/dn
  elasticity            sigma(u) n (the traction; 0 is traction-free)
  stokes, navier_stokes nu du/dn - p n (kind do-nothing; 0 is the open outflow of
                        the Laplacian form, the published oracle's unlisted edges)
Biharmonic, Burgers and wave pieces are Dirichlet only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import sympy as sp

from fembench_agents.cases.domains import Domain

FLUX_WORDS: dict[str, str] = {
    "poisson": "k du/dn",
    "heat": "k du/dn",
    "convection_diffusion": "eps du/dn",
    "reaction_diffusion": "D du/dn",
    "helmholtz": "du/dn",
    "elasticity": "sigma(u) n",
    "stokes": "nu du/dn - p n",
    "navier_stokes": "nu du/dn - p n",
}
# the coefficient that multiplies du/dn in a scalar family's flux
FLUX_COEFFICIENT = {"poisson": "k", "heat": "k", "convection_diffusion": "eps", "reaction_diffusion": "D"}
FLOWS = ("stokes", "navier_stokes")


class UnsupportedCondition(ValueError):
    """A boundary kind the family does not state (the message says which and why)."""


def kinds_for(family: str) -> tuple[str, ...]:
    """The boundary kinds a family's pieces may have."""
    if family in FLOWS:
        return ("dirichlet", "do-nothing")
    if family == "elasticity":
        return ("dirichlet", "neumann")
    if family in FLUX_WORDS:
        return ("dirichlet", "neumann", "robin")
    return ("dirichlet",)


def check_kinds(family: str, kinds: Iterable[str]) -> None:
    bad = sorted(set(kinds) - set(kinds_for(family)))
    if bad:
        raise UnsupportedCondition(
            f"a {family} boundary piece of kind {', '.join(bad)}: {family} pieces are {', '.join(kinds_for(family))}"
        )


def natural_words(family: str, kinds: Iterable[str]) -> str:
    """The sentence the equation text adds for the natural kinds present ('' for none)."""
    flux = FLUX_WORDS.get(family, "")
    said = {
        "neumann": f"on a piece of kind neumann {flux} = g, n the outward unit normal"
        + (" (g a pair: the traction, 0 traction-free)" if family == "elasticity" else ""),
        "robin": f"on a piece of kind robin {flux} + alpha u = g, n the outward unit normal, alpha the piece's `alpha`",
        "do-nothing": f"on a piece of kind do-nothing {flux} = g (a pair), n the outward unit normal "
        "(g = 0: an open outflow)",
    }
    present = [k for k in ("neumann", "robin", "do-nothing") if k in set(kinds)]
    return "; ".join(said[k] for k in present)


PERIODIC_WORDS = (
    "a piece of kind periodic has no value: u there equals u at the translated point of its `partner` "
    "piece (a parallel side of the same length), and so does its normal derivative"
)


def with_kinds(equation: str, family: str, kinds: Iterable[str]) -> str:
    """The family's equation text for pieces of these kinds: unchanged when all are Dirichlet."""
    kinds = set(kinds)
    periodic = "periodic" in kinds
    kinds.discard("periodic")  # any family's pieces may be identified in pairs
    check_kinds(family, kinds)
    words = "; ".join(w for w in (natural_words(family, kinds), PERIODIC_WORDS if periodic else "") if w)
    if not words:
        return equation
    equation = equation.replace("on every boundary piece", "on every boundary piece of kind dirichlet", 1)
    if "do-nothing" in kinds:  # an open piece fixes the pressure; the comparison stays up to a constant
        equation = equation.replace(
            "p is fixed only up to a constant (it is compared after", "p is compared up to a constant (after"
        )
    return equation + "; " + words


def outward_normal(domain: Domain, a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """The outward unit normal of the straight piece a-b: the side of its midpoint the domain
    is not on (so it holds for holes and re-entrant corners alike)."""
    (ax, ay), (bx, by) = a, b
    length = float(np.hypot(bx - ax, by - ay))
    n = ((by - ay) / length, -(bx - ax) / length)
    probe = 1e-6
    mx, my = (ax + bx) / 2 + probe * n[0], (ay + by) / 2 + probe * n[1]
    if bool(domain.inside(np.array([mx]), np.array([my]))[0]):
        n = (-n[0], -n[1])
    return n


def _exact(v: float) -> sp.Expr:
    return sp.nsimplify(v, rational=True)


def flux(
    family: str,
    coefficients: dict[str, Any],
    u: list[sp.Expr],
    normal: tuple[float, float],
    x: sp.Symbol,
    y: sp.Symbol,
    parse: Any,
) -> list[sp.Expr]:
    """The family's flux of the solution u (its components; a flow's last one is p) through a
    boundary with this normal, per component. `parse` reads a coefficient as sympy."""
    nx, ny = _exact(normal[0]), _exact(normal[1])
    if family == "elasticity":
        E, nu = parse(coefficients["E"]), parse(coefficients["nu"])
        lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
        ux, uy = u
        exx, eyy, exy = sp.diff(ux, x), sp.diff(uy, y), (sp.diff(ux, y) + sp.diff(uy, x)) / 2
        tr = exx + eyy
        sxx, syy, sxy = 2 * mu * exx + lam * tr, 2 * mu * eyy + lam * tr, 2 * mu * exy
        return [sxx * nx + sxy * ny, sxy * nx + syy * ny]
    if family in FLOWS:
        nu = parse(coefficients["nu"])
        ux, uy, p = u
        return [nu * (sp.diff(c, x) * nx + sp.diff(c, y) * ny) - p * n for c, n in ((ux, nx), (uy, ny))]
    if family not in FLUX_WORDS:
        raise UnsupportedCondition(f"{family} has no natural boundary pieces")
    k = parse(coefficients[FLUX_COEFFICIENT[family]]) if family in FLUX_COEFFICIENT else sp.Integer(1)
    (s,) = u
    return [k * (sp.diff(s, x) * nx + sp.diff(s, y) * ny)]

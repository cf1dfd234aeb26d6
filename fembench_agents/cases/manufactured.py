"""Manufactured data derived with sympy: the forcing of each family's
operator applied to the chosen solution, and the boundary data restricted to
each boundary piece (the solution with x or y fixed, simplified), so no
agent-visible expression is the interior formula.

Sign conventions (the `equation` text shown to solvers says the same):
  poisson              -div(k grad u) = f
  heat                 du/dt - div(k grad u) = f,  u(t0) = u0
  convection_diffusion -eps lap(u) + b . grad u = f
  reaction_diffusion   -D lap(u) + R(u) = f,  R a nonlinear function of u
  elasticity           -div sigma(u) = f,  sigma = 2 mu eps(u) + lambda tr(eps(u)) I, plane strain
                       lambda = E nu / ((1 + nu)(1 - 2 nu)),  mu = E / (2 (1 + nu))
  helmholtz            -lap(u) - k^2 u = f
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from fembench_agents.cases.domains import Domain
from fembench_agents.cases.expressions import check_expr
from fembench_agents.cases.model import CaseFile, Coefficient

x, y, t, u_sym = sp.symbols("x y t u", real=True)
_LOCALS = {"x": x, "y": y, "t": t, "u": u_sym, "E": sp.E, "pi": sp.pi}

EQUATIONS: dict[str, str] = {
    "poisson": "-div(k grad u) = f in the domain; u = g on every boundary piece",
    "heat": "du/dt - div(k grad u) = f in the domain for t0 < t <= t_end; u = g on every boundary "
    "piece; u = u0 at t = t0; the output is u at t = t_end",
    "convection_diffusion": "-eps lap(u) + b . grad u = f in the domain, b = (b[0], b[1]); "
    "u = g on every boundary piece",
    "reaction_diffusion": "-D lap(u) + R(u) = f in the domain, R the given function of u; "
    "u = g on every boundary piece",
    "elasticity": "-div sigma(u) = f in the domain (plane strain), u = (ux, uy), "
    "sigma = 2 mu eps(u) + lambda tr(eps(u)) I, eps(u) = (grad u + grad u^T)/2, "
    "lambda = E nu / ((1 + nu)(1 - 2 nu)), mu = E / (2 (1 + nu)); "
    "u = g (a pair) on every boundary piece",
    "helmholtz": "-lap(u) - k^2 u = f in the domain; u = g on every boundary piece",
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "poisson": ("k",),
    "heat": ("k",),
    "convection_diffusion": ("eps", "b"),
    "reaction_diffusion": ("D", "R"),
    "elasticity": ("E", "nu"),
    "helmholtz": ("k",),
}


class CaseDefinitionError(ValueError):
    pass


def parse(text: Coefficient) -> sp.Expr:
    if isinstance(text, list):
        raise CaseDefinitionError(f"expected a scalar expression, got a list: {text!r}")
    check_expr(str(text))
    return sp.nsimplify(sp.sympify(str(text), locals=_LOCALS), rational=True)


def show(expr: sp.Expr) -> str:
    text = str(expr)
    check_expr(text)
    return text


def _lap(u: sp.Expr) -> sp.Expr:
    return sp.diff(u, x, 2) + sp.diff(u, y, 2)


def _simplify(e: sp.Expr) -> sp.Expr:
    """Boundary and initial data: the shortest of a few cheap normal forms
    (sympy's full simplify can take minutes on exponentials of large rationals)."""
    ex = sp.expand(e)
    forms = [e, ex, sp.factor_terms(ex), sp.factor_terms(e)]
    return min(forms, key=lambda f: (sp.count_ops(f), len(str(f)), str(f)))


def _tidy(e: sp.Expr) -> sp.Expr:
    """Forcing: a cheap, deterministic normal form (sympy's simplify can take minutes here)."""
    return sp.factor_terms(sp.expand(e))


@dataclass(frozen=True)
class Derived:
    solution: list[sp.Expr]  # one entry per component
    forcing: list[sp.Expr]
    boundary: list[list[sp.Expr]]  # per piece, per component
    initial: list[sp.Expr] | None


def forcing(case: CaseFile, u: list[sp.Expr]) -> list[sp.Expr]:
    c = case.coefficients
    missing = [k for k in REQUIRED[case.family] if k not in c]
    if missing:
        raise CaseDefinitionError(f"{case.id}: family {case.family} needs coefficients {missing}")
    fam = case.family
    if fam == "elasticity":
        E, nu = parse(c["E"]), parse(c["nu"])
        lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
        ux, uy = u
        exx, eyy, exy = sp.diff(ux, x), sp.diff(uy, y), (sp.diff(ux, y) + sp.diff(uy, x)) / 2
        tr = exx + eyy
        sxx, syy, sxy = 2 * mu * exx + lam * tr, 2 * mu * eyy + lam * tr, 2 * mu * exy
        return [-(sp.diff(sxx, x) + sp.diff(sxy, y)), -(sp.diff(sxy, x) + sp.diff(syy, y))]
    (s,) = u
    if fam in ("poisson", "heat"):
        k = parse(c["k"])
        f = -(sp.diff(k * sp.diff(s, x), x) + sp.diff(k * sp.diff(s, y), y))
        return [f + sp.diff(s, t)] if fam == "heat" else [f]
    if fam == "convection_diffusion":
        b = c["b"]
        if not isinstance(b, list) or len(b) != 2:
            raise CaseDefinitionError(f"{case.id}: b must be a list of two expressions")
        return [-parse(c["eps"]) * _lap(s) + parse(b[0]) * sp.diff(s, x) + parse(b[1]) * sp.diff(s, y)]
    if fam == "reaction_diffusion":
        R = parse(c["R"])
        if sp.diff(R, u_sym, 2) == 0:
            raise CaseDefinitionError(f"{case.id}: R(u) must be nonlinear in u")
        return [-parse(c["D"]) * _lap(s) + R.subs(u_sym, s)]
    if fam == "helmholtz":
        k = parse(c["k"])
        return [-_lap(s) - k**2 * s]
    raise CaseDefinitionError(f"unknown family {fam}")


def restrict(expr: sp.Expr, a: tuple[float, float], b: tuple[float, float]) -> sp.Expr:
    """The expression on the segment a-b: x or y replaced by its constant."""
    if a[0] == b[0]:
        return _simplify(expr.subs(x, sp.nsimplify(a[0])))
    return _simplify(expr.subs(y, sp.nsimplify(a[1])))


def derive(case: CaseFile, domain: Domain) -> Derived:
    raw = case.manufactured.u
    comps = raw if isinstance(raw, list) else [raw]
    if (len(comps) == 2) != (case.family == "elasticity"):
        raise CaseDefinitionError(f"{case.id}: elasticity needs [ux, uy]; other families one expression")
    u = [parse(e) for e in comps]
    if (case.time is None) == (case.family == "heat"):
        raise CaseDefinitionError(f"{case.id}: a time interval is required for heat and only for heat")
    if case.family != "heat" and any(t in e.free_symbols for e in u):
        raise CaseDefinitionError(f"{case.id}: a steady family's solution must not depend on t")
    f = [_tidy(e) for e in forcing(case, u)]
    boundary = [[restrict(e, a, b) for e in u] for _, a, b in domain.pieces]
    initial = None
    if case.time is not None:
        initial = [_simplify(e.subs(t, sp.nsimplify(case.time.t0))) for e in u]
    return Derived(solution=u, forcing=f, boundary=boundary, initial=initial)

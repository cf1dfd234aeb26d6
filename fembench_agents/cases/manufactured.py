"""Manufactured data derived with sympy: the forcing of each family's
operator applied to the chosen solution, and the boundary data restricted to
each boundary piece (the solution with x or y fixed, simplified), so no
agent-visible expression is the interior formula.

Sign conventions (the `equation` text shown to solvers says the same):
  poisson              -div(k grad u) = f
  heat                 du/dt - div(k grad u) = f,  u(t0) = u0
  convection_diffusion -eps lap(u) + b . grad u = f  (with a time interval: du/dt + ... = f, u(t0) = u0)
  reaction_diffusion   -D lap(u) + R(u) = f,  R a nonlinear function of u  (likewise transient)
  elasticity           -div sigma(u) = f,  sigma = 2 mu eps(u) + lambda tr(eps(u)) I, plane strain
                       lambda = E nu / ((1 + nu)(1 - 2 nu)),  mu = E / (2 (1 + nu))
  helmholtz            -lap(u) - k^2 u = f
  biharmonic           lap(lap(u)) = f,  u = g and lap(u) = h on the boundary (a pair per piece)
  stokes               -nu lap(u) + grad p = f,  div u = 0
  navier_stokes        -nu lap(u) + (u . grad) u + grad p = f,  div u = 0
  burgers              du/dt + u (du/dx + du/dy) - nu lap(u) = f,  u(t0) = u0
  wave                 d2u/dt2 - c^2 lap(u) = f,  u(t0) = u0,  du/dt(t0) = v0
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from fembench_agents.cases.conditions import UnsupportedCondition, flux, outward_normal, with_kinds
from fembench_agents.cases.domains import Domain
from fembench_agents.cases.expressions import check_expr
from fembench_agents.cases.model import FLOW_FAMILIES, TIME_FAMILIES, TRANSIENT_VARIANTS, CaseFile, Coefficient

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
    "biharmonic": "lap(lap(u)) = f in the domain; on every boundary piece u = g and lap(u) = h, "
    "the piece's value is the pair [g, h]; the output is u",
    "stokes": "-nu lap(u) + grad p = f and div u = 0 in the domain, velocity u = (ux, uy), pressure p; "
    "u = g (a pair) on every boundary piece; p is fixed only up to a constant (it is compared after "
    "subtracting its mean over the in-domain grid points, on both sides)",
    "navier_stokes": "-nu lap(u) + (u . grad) u + grad p = f and div u = 0 in the domain (steady), "
    "velocity u = (ux, uy), pressure p; u = g (a pair) on every boundary piece; p is fixed only up to a "
    "constant (it is compared after subtracting its mean over the in-domain grid points, on both sides)",
    "burgers": "du/dt + u (du/dx + du/dy) - nu lap(u) = f in the domain for t0 < t <= t_end (viscous "
    "Burgers, scalar); u = g on every boundary piece; u = u0 at t = t0; the output is u at t = t_end",
    "wave": "d2u/dt2 - c^2 lap(u) = f in the domain for t0 < t <= t_end; u = g on every boundary piece; "
    "at t = t0 u = u0 and du/dt = v0, `initial` is the pair [u0, v0]; the output is u at t = t_end",
}
# The transient variants (a case with a time interval), in the words of heat.
TRANSIENT_EQUATIONS: dict[str, str] = {
    "convection_diffusion": "du/dt - eps lap(u) + b . grad u = f in the domain for t0 < t <= t_end, "
    "b = (b[0], b[1]); u = g on every boundary piece; u = u0 at t = t0; the output is u at t = t_end",
    "reaction_diffusion": "du/dt - D lap(u) + R(u) = f in the domain for t0 < t <= t_end, R the given "
    "function of u; u = g on every boundary piece; u = u0 at t = t0; the output is u at t = t_end",
}


def equation(family: str, transient: bool = False, kinds: tuple[str, ...] = ("dirichlet",), dim: int = 2) -> str:
    """The equation text of a case: the family's (its transient variant's), with the words for
    the boundary kinds of its pieces (unchanged when every piece is Dirichlet); on a 3D domain a
    velocity b, a displacement and its data have three components (no plane strain)."""
    base = TRANSIENT_EQUATIONS[family] if transient and family in TRANSIENT_EQUATIONS else EQUATIONS[family]
    if dim == 2:
        return with_kinds(base, family, kinds)
    base = base.replace("b = (b[0], b[1])", "b = (b[0], b[1], b[2])").replace(" (plane strain)", "")
    return with_kinds(base, family, kinds).replace("(ux, uy)", "(ux, uy, uz)").replace("a pair", "a triple")


PRESSURE_COMPARED = "(it is compared after subtracting its mean over the in-domain grid points, on both sides)"
PRESSURE_NOT_COMPARED = "(it is not compared: the velocity u alone is scored)"


def case_equation(case: CaseFile, kinds: tuple[str, ...], dim: int = 2) -> str:
    """A case file's equation text; a flow whose pressure is not compared says so."""
    words = equation(case.family, case.time is not None, kinds, dim)
    if case.pressure_compared:
        return words
    if PRESSURE_COMPARED not in words:
        raise CaseDefinitionError(f"{case.id}: cannot say in its equation that p is not compared: {words!r}")
    return words.replace(PRESSURE_COMPARED, PRESSURE_NOT_COMPARED)


REQUIRED: dict[str, tuple[str, ...]] = {
    "poisson": ("k",),
    "heat": ("k",),
    "convection_diffusion": ("eps", "b"),
    "reaction_diffusion": ("D", "R"),
    "elasticity": ("E", "nu"),
    "helmholtz": ("k",),
    "biharmonic": (),
    "stokes": ("nu",),
    "navier_stokes": ("nu",),
    "burgers": ("nu",),
    "wave": ("c",),
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
    if fam in FLOW_FAMILIES:
        nu = parse(c["nu"])
        ux, uy, p = u
        fx = -nu * _lap(ux) + sp.diff(p, x)
        fy = -nu * _lap(uy) + sp.diff(p, y)
        if fam == "navier_stokes":
            fx += ux * sp.diff(ux, x) + uy * sp.diff(ux, y)
            fy += ux * sp.diff(uy, x) + uy * sp.diff(uy, y)
        return [fx, fy]
    (s,) = u
    if fam == "biharmonic":
        return [_lap(_lap(s))]
    if fam == "burgers":
        return [sp.diff(s, t) + s * (sp.diff(s, x) + sp.diff(s, y)) - parse(c["nu"]) * _lap(s)]
    if fam == "wave":
        return [sp.diff(s, t, 2) - parse(c["c"]) ** 2 * _lap(s)]
    if fam in ("poisson", "heat"):
        k = parse(c["k"])
        f = -(sp.diff(k * sp.diff(s, x), x) + sp.diff(k * sp.diff(s, y), y))
        return [f + sp.diff(s, t)] if fam == "heat" else [f]
    rate = sp.diff(s, t) if case.time is not None else sp.Integer(0)  # a transient variant's du/dt
    if fam == "convection_diffusion":
        b = c["b"]
        if not isinstance(b, list) or len(b) != 2:
            raise CaseDefinitionError(f"{case.id}: b must be a list of two expressions")
        return [rate - parse(c["eps"]) * _lap(s) + parse(b[0]) * sp.diff(s, x) + parse(b[1]) * sp.diff(s, y)]
    if fam == "reaction_diffusion":
        R = parse(c["R"])
        if sp.diff(R, u_sym, 2) == 0:
            raise CaseDefinitionError(f"{case.id}: R(u) must be nonlinear in u")
        return [rate - parse(c["D"]) * _lap(s) + R.subs(u_sym, s)]
    if fam == "helmholtz":
        k = parse(c["k"])
        return [-_lap(s) - k**2 * s]
    raise CaseDefinitionError(f"unknown family {fam}")


def restrict(expr: sp.Expr, a: tuple[float, float], b: tuple[float, float]) -> sp.Expr:
    """The expression on the segment a-b: x or y replaced by its constant."""
    if a[0] == b[0]:
        return _simplify(expr.subs(x, sp.nsimplify(a[0])))
    return _simplify(expr.subs(y, sp.nsimplify(a[1])))


def _solution(case: CaseFile) -> list[sp.Expr]:
    m = case.manufactured
    if m is None:
        raise CaseDefinitionError(f"{case.id}: no manufactured solution")
    flow = case.family in FLOW_FAMILIES
    if flow != (m.stream is not None) or (m.p is not None and not flow):
        raise CaseDefinitionError(f"{case.id}: Stokes and Navier-Stokes take `stream` and `p`; other families `u`")
    if m.stream is not None and m.p is not None:
        psi = parse(m.stream)
        return [sp.diff(psi, y), -sp.diff(psi, x), parse(m.p)]
    comps = m.u if isinstance(m.u, list) else [m.u]
    if (len(comps) == 2) != (case.family == "elasticity"):
        raise CaseDefinitionError(f"{case.id}: elasticity needs [ux, uy]; other families one expression")
    return [parse(e) for e in comps if e is not None]


def check_time(case: CaseFile) -> None:
    """A time interval where the family needs one, or where it has a transient variant."""
    if case.time is None and case.family in TIME_FAMILIES:
        raise CaseDefinitionError(f"{case.id}: a time interval is required for {', '.join(TIME_FAMILIES)}")
    if case.time is not None and case.family not in (*TIME_FAMILIES, *TRANSIENT_VARIANTS):
        raise CaseDefinitionError(
            f"{case.id}: a time interval is for {', '.join((*TIME_FAMILIES, *TRANSIENT_VARIANTS))} only"
        )


def boundary_kinds(case: CaseFile, domain: Domain) -> list[str]:
    """Each piece's kind: Dirichlet unless the case file names it under `natural`."""
    return piece_kinds(case, [n for n, _, _ in domain.pieces], domain.name, dim=2)


def piece_kinds(case: CaseFile, names: list[str], domain: str, dim: int) -> list[str]:
    """The kind of each named piece of a domain (Dirichlet unless the case file names it under
    `natural`), checked: the names exist, one piece at least is Dirichlet, the family states them."""
    unknown = sorted(set(case.natural) - set(names))
    if unknown:
        raise CaseDefinitionError(f"{case.id}: natural names no boundary piece of {domain}: {', '.join(unknown)}")
    kinds = [case.natural[n].kind if n in case.natural else "dirichlet" for n in names]
    if "dirichlet" not in kinds:
        raise CaseDefinitionError(f"{case.id}: at least one boundary piece must be Dirichlet (the solution is unique)")
    try:
        equation(case.family, case.time is not None, tuple(kinds), dim)
    except UnsupportedCondition as exc:
        raise CaseDefinitionError(f"{case.id}: {exc}") from None
    return kinds


def _piece_data(case: CaseFile, domain: Domain, u: list[sp.Expr]) -> list[list[sp.Expr]]:
    """Per piece, per component: the solution there (Dirichlet), its flux (neumann), its flux
    plus alpha u (robin); the biharmonic's pair [u, lap u]."""
    on_dirichlet = u[:2] if case.family in FLOW_FAMILIES else u
    if case.family == "biharmonic":
        on_dirichlet = [u[0], _lap(u[0])]
    out = []
    for name, a, b in domain.pieces:
        natural = case.natural.get(name)
        if natural is None:
            values = on_dirichlet
        else:
            values = flux(case.family, dict(case.coefficients), u, outward_normal(domain, a, b), x, y, parse)
            if natural.kind == "robin":
                values = [v + parse(natural.alpha) * c for v, c in zip(values, u, strict=False)]  # type: ignore[arg-type]
        out.append([restrict(e, a, b) for e in values])
    return out


def derive(case: CaseFile, domain: Domain) -> Derived:
    u = _solution(case)
    check_time(case)
    timed = case.time is not None
    if not timed and any(t in e.free_symbols for e in u):
        raise CaseDefinitionError(f"{case.id}: a steady family's solution must not depend on t")
    f = [_tidy(e) for e in forcing(case, u)]
    boundary_kinds(case, domain)
    boundary = _piece_data(case, domain, u)
    initial = None
    if case.time is not None:
        t0 = sp.nsimplify(case.time.t0)
        start = [*u, sp.diff(u[0], t)] if case.family == "wave" else u
        initial = [_simplify(e.subs(t, t0)) for e in start]
    return Derived(solution=u, forcing=f, boundary=boundary, initial=initial)

"""Our own cases on the unit cube (cube.py): a definition (CaseFile with domain
unit_cube and a grid with nz) becomes a CaseSpec with the six faces as boundary
pieces and the forcing of the family's 3D operator (cube_data.forcing). A
Dirichlet face's value is the manufactured solution's trace there; a face named
under `natural` carries the trace of the family's flux through it
(cube_data.face_flux), plus alpha u on a Robin face.

Families with a manufactured solution: the scalar ones poisson, heat, helmholtz,
convection_diffusion and reaction_diffusion (the last two with their transient
variants), elasticity in 3D, whose output is the whole displacement,
(3, nz, ny, nx), as our 2D elasticity cases give (2, ny, nx) (the imported
records keep the published magnitude), and Stokes: a manufactured velocity
[ux, uy, uz], checked divergence-free (a curl of a vector potential is), and a
pressure p; the output is the whole velocity u (3, nz, ny, nx) and p, compared up
to its mean as in our 2D Stokes cases, with the velocity given on every face (a
natural face would need the stress nu du/dn - p n, which no cube solver takes)."""

from __future__ import annotations

import sympy as sp

from fembench_agents.cases import cube
from fembench_agents.cases.case_spec import BoundaryPiece, CaseSpec, FieldSpec, OutputContract
from fembench_agents.cases.cube_data import NAMES, T, U, X, Y, Z, face_flux, face_trace, forcing
from fembench_agents.cases.expressions import check_expr
from fembench_agents.cases.manufactured import (
    CaseDefinitionError,
    case_equation,
    check_time,
    parse,
    piece_kinds,
    u_sym,
)
from fembench_agents.cases.model import CaseFile

CUBE_FAMILIES = ("poisson", "heat", "helmholtz", "convection_diffusion", "reaction_diffusion", "elasticity", "stokes")
VECTOR = ("elasticity", "stokes")  # a velocity or displacement of three components


def _show(e: sp.Expr) -> str:
    text = str(sp.factor_terms(sp.expand(e)))
    check_expr(text)
    return text


def _one(values: list[sp.Expr]) -> str | list[str]:
    return _show(values[0]) if len(values) == 1 else [_show(v) for v in values]


def _sym(text: object) -> sp.Expr:
    check_expr(str(text))
    return sp.sympify(str(text), locals=NAMES)


def _solution(case: CaseFile) -> tuple[list[sp.Expr], sp.Expr | None]:
    """The manufactured u (one entry per component) and, for Stokes, p."""
    m = case.manufactured
    vector, flow = case.family in VECTOR, case.family == "stokes"
    comps = None if m is None else m.u if isinstance(m.u, list) else [m.u]
    if (
        case.family not in CUBE_FAMILIES
        or m is None
        or comps is None
        or len(comps) != (3 if vector else 1)
        or (m.p is None) == flow
    ):
        raise CaseDefinitionError(
            f"{case.id}: a case on the unit cube takes a family among {', '.join(CUBE_FAMILIES)} "
            "with a manufactured u ([ux, uy, uz] for elasticity, [ux, uy, uz] and p for stokes, "
            f"one expression otherwise); got {case.family}"
        )
    u = [_sym(e) for e in comps]
    if not flow:
        return u, None
    div = sp.simplify(sum((sp.diff(c, s) for c, s in zip(u, (X, Y, Z), strict=True)), sp.Integer(0)))
    if div != 0:
        raise CaseDefinitionError(
            f"{case.id}: a Stokes velocity must be divergence-free (a curl of a vector potential is); div u = {div}"
        )
    return u, _sym(m.p)


def _contract(case: CaseFile, components: int) -> OutputContract:
    shape = case.grid.shape if components == 1 else (components, *case.grid.shape)
    fields = {"u": FieldSpec(shape=shape)}
    if case.family == "stokes" and case.pressure_compared:
        fields["p"] = FieldSpec(shape=case.grid.shape, up_to_constant=True)
    return OutputContract(fields=fields, layout=cube.LAYOUT)


def cube_spec(case: CaseFile) -> tuple[CaseSpec, list[sp.Expr]]:
    """The spec of a cube case and its manufactured solution (for Stokes, [ux, uy, uz, p])."""
    u, p = _solution(case)
    check_time(case)
    if case.time is None and any(T in e.free_symbols for e in u):
        raise CaseDefinitionError(f"{case.id}: a steady family's solution must not depend on t")
    if case.family == "reaction_diffusion" and sp.diff(parse(case.coefficients.get("R", "0")), u_sym, 2) == 0:
        raise CaseDefinitionError(f"{case.id}: R(u) must be nonlinear in u")
    kinds = piece_kinds(case, [name for name, _ in cube.FACES], cube.CUBE, dim=3)
    if p is not None and case.natural:
        raise CaseDefinitionError(
            f"{case.id}: a Stokes case on the unit cube gives the velocity on every face; "
            f"natural faces ({', '.join(sorted(case.natural))}) are not supported there"
        )
    # exact numbers, as manufactured.parse reads our 2D definitions (k = 1, not 1.0)
    exact = {k: [parse(e) for e in v] if isinstance(v, list) else parse(v) for k, v in case.coefficients.items()}
    exact = {k: v.subs(u_sym, U) if isinstance(v, sp.Expr) else v for k, v in exact.items()}
    pieces = []
    for (name, face), kind in zip(cube.FACES, kinds, strict=True):
        natural = case.natural.get(name)
        values = u
        if natural is not None:
            values = face_flux(case.family, exact, u, face)
            if natural.kind == "robin":
                values = [g + parse(natural.alpha) * c for g, c in zip(values, u, strict=True)]  # type: ignore[arg-type]
        alpha = natural.alpha if natural is not None else None
        value = _one([face_trace(v, face) for v in values])
        pieces.append(BoundaryPiece(name=name, kind=kind, face=face, value=value, alpha=alpha))  # type: ignore[arg-type]
    initial = _one([e.subs(T, sp.nsimplify(case.time.t0)) for e in u]) if case.time is not None else None
    spec = CaseSpec(
        id=case.id,
        family=case.family,
        equation=case_equation(case, tuple(kinds), dim=3),
        coefficients=dict(case.coefficients),
        forcing=_one(forcing(case.family, exact, u, p)),
        boundary=pieces,
        initial=initial,
        time=case.time,
        domain=cube.spec(),
        grid=case.grid,
        output=_contract(case, len(u)),
        libraries=case.libraries,
    )
    return spec, u if p is None else [*u, p]

"""Our own cases on the unit cube (cube.py): a definition (CaseFile with domain
unit_cube and a grid with nz) becomes a CaseSpec with the six faces as boundary
pieces and the forcing of the family's 3D operator (cube_data.forcing). A
Dirichlet face's value is the manufactured solution's trace there; a face named
under `natural` carries the trace of the family's flux through it
(cube_data.face_flux), plus alpha u on a Robin face.

Families with a manufactured solution: the scalar ones poisson, heat, helmholtz,
convection_diffusion and reaction_diffusion (the last two with their transient
variants), and elasticity in 3D, whose output is the whole displacement,
(3, nz, ny, nx), as our 2D elasticity cases give (2, ny, nx) (the imported
records keep the published magnitude)."""

from __future__ import annotations

import sympy as sp

from fembench_agents.cases import cube
from fembench_agents.cases.case_spec import BoundaryPiece, CaseSpec, FieldSpec, OutputContract
from fembench_agents.cases.cube_data import NAMES, T, U, face_flux, face_trace, forcing
from fembench_agents.cases.expressions import check_expr
from fembench_agents.cases.manufactured import CaseDefinitionError, check_time, equation, parse, piece_kinds, u_sym
from fembench_agents.cases.model import CaseFile

CUBE_FAMILIES = ("poisson", "heat", "helmholtz", "convection_diffusion", "reaction_diffusion", "elasticity")


def _show(e: sp.Expr) -> str:
    text = str(sp.factor_terms(sp.expand(e)))
    check_expr(text)
    return text


def _one(values: list[sp.Expr]) -> str | list[str]:
    return _show(values[0]) if len(values) == 1 else [_show(v) for v in values]


def _solution(case: CaseFile) -> list[sp.Expr]:
    m = case.manufactured
    vector = case.family == "elasticity"
    comps = None if m is None else m.u if isinstance(m.u, list) else [m.u]
    if case.family not in CUBE_FAMILIES or comps is None or len(comps) != (3 if vector else 1):
        raise CaseDefinitionError(
            f"{case.id}: a case on the unit cube takes a family among {', '.join(CUBE_FAMILIES)} "
            f"with a manufactured u ([ux, uy, uz] for elasticity, one expression otherwise); got {case.family}"
        )
    for e in comps:
        check_expr(str(e))
    return [sp.sympify(str(e), locals=NAMES) for e in comps]


def cube_spec(case: CaseFile) -> tuple[CaseSpec, list[sp.Expr]]:
    """The spec of a cube case and its manufactured solution."""
    u = _solution(case)
    check_time(case)
    if case.time is None and any(T in e.free_symbols for e in u):
        raise CaseDefinitionError(f"{case.id}: a steady family's solution must not depend on t")
    if case.family == "reaction_diffusion" and sp.diff(parse(case.coefficients.get("R", "0")), u_sym, 2) == 0:
        raise CaseDefinitionError(f"{case.id}: R(u) must be nonlinear in u")
    kinds = piece_kinds(case, [name for name, _ in cube.FACES], cube.CUBE, dim=3)
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
    shape = case.grid.shape if len(u) == 1 else (len(u), *case.grid.shape)
    spec = CaseSpec(
        id=case.id,
        family=case.family,
        equation=equation(case.family, case.time is not None, tuple(kinds), dim=3),
        coefficients=dict(case.coefficients),
        forcing=_one(forcing(case.family, exact, u)),
        boundary=pieces,
        initial=initial,
        time=case.time,
        domain=cube.spec(),
        grid=case.grid,
        output=OutputContract(fields={"u": FieldSpec(shape=shape)}, layout=cube.LAYOUT),
        libraries=case.libraries,
    )
    return spec, u

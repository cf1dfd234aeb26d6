"""Our own cases on the unit cube (cube.py): a definition (CaseFile with domain
unit_cube and a grid with nz) becomes a CaseSpec with the six faces as boundary
pieces, each valued by the manufactured solution's trace there, and the forcing
of the family's 3D operator (cube_data.forcing). Scalar families with a
manufactured solution only: poisson, heat, helmholtz, convection_diffusion (a
vector family's 3D output, (3, nz, ny, nx), has no calibration solver of ours
besides the imported magnitudes)."""

from __future__ import annotations

import sympy as sp

from fembench_agents.cases import cube
from fembench_agents.cases.cube_data import NAMES, T, face_trace, forcing
from fembench_agents.cases.expressions import check_expr
from fembench_agents.cases.manufactured import CaseDefinitionError, equation, parse
from fembench_agents.cases.model import TIME_FAMILIES, BoundaryPiece, CaseFile, CaseSpec, FieldSpec, OutputContract

CUBE_FAMILIES = ("poisson", "heat", "helmholtz", "convection_diffusion")


def _show(e: sp.Expr) -> str:
    text = str(sp.factor_terms(sp.expand(e)))
    check_expr(text)
    return text


def cube_spec(case: CaseFile) -> tuple[CaseSpec, list[sp.Expr]]:
    """The spec of a cube case and its manufactured solution."""
    m = case.manufactured
    if case.family not in CUBE_FAMILIES or m is None or not isinstance(m.u, str):
        raise CaseDefinitionError(
            f"{case.id}: a case on the unit cube takes a family among {', '.join(CUBE_FAMILIES)} "
            f"with a manufactured scalar u; got {case.family}"
        )
    if (case.time is None) == (case.family in TIME_FAMILIES):
        raise CaseDefinitionError(f"{case.id}: a time interval is required for {', '.join(TIME_FAMILIES)} only")
    check_expr(m.u)
    u = sp.sympify(m.u, locals=NAMES)
    if case.time is None and T in u.free_symbols:
        raise CaseDefinitionError(f"{case.id}: a steady family's solution must not depend on t")
    # exact numbers, as manufactured.parse reads our 2D definitions (k = 1, not 1.0)
    exact = {k: [parse(e) for e in v] if isinstance(v, list) else parse(v) for k, v in case.coefficients.items()}
    f = forcing(case.family, exact, [u])
    pieces = [BoundaryPiece(name=name, face=face, value=_show(face_trace(u, face))) for name, face in cube.FACES]
    initial = _show(u.subs(T, sp.nsimplify(case.time.t0))) if case.time is not None else None
    spec = CaseSpec(
        id=case.id,
        family=case.family,
        equation=equation(case.family, dim=3),
        coefficients=dict(case.coefficients),
        forcing=_show(f[0]),
        boundary=pieces,
        initial=initial,
        time=case.time,
        domain=cube.spec(),
        grid=case.grid,
        output=OutputContract(fields={"u": FieldSpec(shape=case.grid.shape)}, layout=cube.LAYOUT),
        libraries=case.libraries,
    )
    return spec, [u]

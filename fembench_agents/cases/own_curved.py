"""Our own curved domains: published kinds of domain (cases/published_shapes.py) with geometry of our
choosing inside the unit square, so that the case_spec gives the domain as the published
contract does (`type` and `geometry_params`) and the evaluation grid stays [0, 1]^2.

A case on one of them is built here rather than from a polygon (builder.make_spec hands it
over): the pieces are the shape's segments and arcs; a Dirichlet piece's data is the
solution's trace there (blend_algebra.piece_trace: an arc's is u composed with the radial
projection onto its circle, which is u on the circle and not inside); a natural piece's is
the family's flux through the piece's outward normal (on an arc the radial unit vector,
signed by the side the domain lies on), traced the same way. Which grid points are in the
domain is decided from the shape's primitives exactly (Shape.inside)."""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from fembench_agents.cases import cube, own_geometry
from fembench_agents.cases.blend_algebra import X as TRACE_X
from fembench_agents.cases.blend_algebra import Y as TRACE_Y
from fembench_agents.cases.blend_algebra import piece_trace
from fembench_agents.cases.case_spec import Arc, BoundaryPiece
from fembench_agents.cases.conditions import UnsupportedCondition, flux
from fembench_agents.cases.expressions import check_expr
from fembench_agents.cases.manufactured import (
    CaseDefinitionError,
    _lap,
    _simplify,
    _solution,
    _tidy,
    case_equation,
    check_time,
    forcing,
    parse,
    piece_kinds,
    show,
)
from fembench_agents.cases.manufactured import t as t_sym
from fembench_agents.cases.manufactured import x as x_sym
from fembench_agents.cases.manufactured import y as y_sym
from fembench_agents.cases.model import FLOW_FAMILIES, CaseFile, GridSpec
from fembench_agents.cases.shapes import Shape


def shape(name: str, geometry: dict[str, Any] | None = None) -> Shape:
    return own_geometry.curved(name, geometry)


def case_mask(domain: str, grid: GridSpec, geometry: dict[str, Any] | None = None) -> np.ndarray:
    """The closed domain's grid points (the output's shape) of one of our own domains: polygonal,
    curved (either of the size and placement `geometry` gives), or the unit cube (cube.py)."""
    if domain == cube.CUBE:
        return cube.grid_mask(grid)
    return own_geometry.mask(domain, geometry, grid)


def _outward(sh: Shape, geometry: tuple[tuple[float, float], tuple[float, float]] | Arc) -> tuple[Any, Any]:
    """The outward unit normal of a piece, as sympy in x and y: constant on a segment, radial on an
    arc (pointing away from the centre where the domain lies inside the circle)."""
    probe = 1e-6
    if isinstance(geometry, Arc):
        (cx, cy), r = geometry.center, geometry.radius
        a = (geometry.start + geometry.end) / 2
        px, py = cx + (r - probe) * np.cos(a), cy + (r - probe) * np.sin(a)
        sign = 1 if bool(sh.inside(np.array([px]), np.array([py]))[0]) else -1
        rho = sp.sqrt((x_sym - sp.nsimplify(cx)) ** 2 + (y_sym - sp.nsimplify(cy)) ** 2)
        return sign * (x_sym - sp.nsimplify(cx)) / rho, sign * (y_sym - sp.nsimplify(cy)) / rho
    (ax, ay), (bx, by) = geometry
    length = float(np.hypot(bx - ax, by - ay))
    n = ((by - ay) / length, -(bx - ax) / length)
    mx, my = (ax + bx) / 2 + probe * n[0], (ay + by) / 2 + probe * n[1]
    if bool(sh.inside(np.array([mx]), np.array([my]))[0]):
        n = (-n[0], -n[1])
    return sp.nsimplify(n[0]), sp.nsimplify(n[1])


def _text(trace: sp.Expr | str) -> str:
    if isinstance(trace, str):
        check_expr(trace)
        return trace
    return show(trace)


def _one(values: list[str]) -> str | list[str]:
    return values[0] if len(values) == 1 else values


def curved_spec(case: CaseFile, contract: Any) -> tuple[Any, list[sp.Expr]]:
    """The CaseSpec of a case on a curved domain of ours and its manufactured solution."""
    from fembench_agents.cases.case_spec import CaseSpec, DomainSpec

    if case.data is not None:
        raise CaseDefinitionError(f"{case.id}: a case on {case.domain} needs a manufactured solution")
    sh = shape(case.domain, case.geometry)
    kinds = piece_kinds(case, [n for n, _ in sh.pieces], case.domain, dim=2)
    try:
        words = case_equation(case, tuple(kinds))
    except UnsupportedCondition as exc:
        raise CaseDefinitionError(f"{case.id}: {exc}") from None
    u = _solution(case)
    check_time(case)
    if case.time is None and any(t_sym in e.free_symbols for e in u):
        raise CaseDefinitionError(f"{case.id}: a steady family's solution must not depend on t")
    f = [_tidy(e) for e in forcing(case, u)]
    on_dirichlet = u[:2] if case.family in FLOW_FAMILIES else u
    if case.family == "biharmonic":
        on_dirichlet = [u[0], _lap(u[0])]
    pieces = []
    for (name, geometry), kind in zip(sh.pieces, kinds, strict=True):
        values = on_dirichlet
        natural = case.natural.get(name)
        if natural is not None:
            values = flux(case.family, dict(case.coefficients), u, _outward(sh, geometry), x_sym, y_sym, parse)
            if natural.kind == "robin":
                values = [v + parse(natural.alpha) * c for v, c in zip(values, u, strict=False)]  # type: ignore[arg-type]
        # the traces substitute into expressions in shape_blends' symbols (not declared real)
        value = _one([_text(piece_trace(e.subs({x_sym: TRACE_X, y_sym: TRACE_Y}), geometry)) for e in values])
        alpha = natural.alpha if natural is not None else None
        if isinstance(geometry, Arc):
            pieces.append(BoundaryPiece(name=name, kind=kind, arc=geometry, value=value, alpha=alpha))  # type: ignore[arg-type]
        else:
            pieces.append(BoundaryPiece(name=name, kind=kind, segment=geometry, value=value, alpha=alpha))  # type: ignore[arg-type]
    initial = None
    if case.time is not None:
        t0 = sp.nsimplify(case.time.t0)
        start = [*u, sp.diff(u[0], t_sym)] if case.family == "wave" else u
        initial = _one([show(_simplify(e.subs(t_sym, t0))) for e in start])
    domain: DomainSpec = sh.spec()
    spec = CaseSpec(
        id=case.id,
        family=case.family,
        equation=words,
        coefficients=dict(case.coefficients),
        forcing=_one([show(e) for e in f]),
        boundary=pieces,
        initial=initial,
        time=case.time,
        domain=domain,
        grid=case.grid,
        output=contract,
        libraries=case.libraries,
    )
    return spec, u

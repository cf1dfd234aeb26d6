"""A flow record (Stokes, Navier-Stokes) without a manufactured solution whose scored field, the
velocity, is zero by its own data: zero velocity on every wall, zero traction on every open
(do-nothing) piece, and a forcing that is the gradient of a potential phi, constant on the open
pieces. Then u = 0 and p = phi + c solve it (the convection of Navier-Stokes vanishes with u),
and the velocity magnitude, the published output, has no relative error. Decided from the data
before any solve: a numerical solve gives discretisation noise over zero (Taylor-Hood is not
pressure-robust: 2.5e-7 on `stokes_exp_eccentric_annulus_narrow_source`, relative error 143),
which no threshold on the solved values tells from a small flow."""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from fembench_agents.cases.cube_data import NAMES, X, Y, Z

COORDINATES = (X, Y, Z)
S = sp.Symbol("s", real=True)  # the parameter along an open segment
Point = Sequence[float]


def potential(forcing: Sequence[sp.Expr]) -> sp.Expr | None:
    """phi with grad phi = forcing (in x, y or x, y, z), or None when the forcing is no gradient
    (or sympy finds no antiderivative). Integrated coordinate by coordinate, then checked."""
    coords = COORDINATES[: len(forcing)]
    # a curl first: cheap, and it spares integrating what is no gradient (the dumbbell's Gaussians: 10 s)
    pairs = [(i, j) for i in range(len(coords)) for j in range(i + 1, len(coords))]
    if any(sp.simplify(sp.diff(forcing[i], coords[j]) - sp.diff(forcing[j], coords[i])) != 0 for i, j in pairs):
        return None
    phi: sp.Expr = sp.Integer(0)
    for f, c in zip(forcing, coords, strict=True):
        rest = sp.simplify(f - sp.diff(phi, c))
        term = sp.integrate(rest, c)
        if term.has(sp.Integral):
            return None
        phi += term
    phi = sp.simplify(phi)
    if any(sp.simplify(sp.diff(phi, c) - f) != 0 for f, c in zip(forcing, coords, strict=True)):
        return None
    return phi


def zero_velocity_reason(
    forcing: Sequence[object], walls: Sequence[Sequence[object]], open_segments: Sequence[tuple[Point, Point]]
) -> str | None:
    """Why the record's velocity is zero (its own defect), or None when its data does not make it
    so. `forcing` as published; `walls`: each Dirichlet piece's velocity components;
    `open_segments`: the (a, b) ends of each do-nothing piece (zero data: the open edges a
    per-edge list leaves out)."""
    if any(not sp.sympify(str(c), locals=NAMES).is_zero for wall in walls for c in wall):
        return None
    phi = potential([sp.sympify(str(f), locals=NAMES) for f in forcing])
    if phi is None:
        return None
    levels = []
    for a, b in open_segments:
        along = sp.simplify(phi.subs({c: a[k] + S * (b[k] - a[k]) for k, c in enumerate(COORDINATES[: len(a)])}))
        if along.has(S):
            return None  # the open piece's zero traction needs p = 0 there: phi must be constant on it
        levels.append(along)
    if any(sp.simplify(level - levels[0]) != 0 for level in levels[1:]):
        return None
    shown = [str(f) for f in forcing]
    balanced = (
        "the pressure phi + c balances it" if not open_segments else "the pressure phi - phi(open pieces) balances it"
    )
    return (
        f"record defect: its scored field, the velocity magnitude u, is zero: the velocity data is zero on every "
        f"wall{' and the traction data on the open pieces' if open_segments else ''}, and the forcing {shown} is the "
        f"gradient of phi = {phi}{', constant on the open pieces' if open_segments else ''}, so u = 0 and "
        f"{balanced}; no relative error of u is defined"
    )

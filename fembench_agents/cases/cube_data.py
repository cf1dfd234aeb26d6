"""Symbolic data on the unit cube (cube.py): a manufactured solution's traces on
the six faces, their transfinite (Coons) blend, and the forcing each family's
operator gives a solution in 3D. Used by the import of the published cube
records (published.py) and by our own cube cases (cube_cases.py), with the flux a natural
face's data is made of."""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from fembench_agents.cases.case_spec import Face
from fembench_agents.cases.conditions import FLOWS, FLUX_COEFFICIENT, FLUX_WORDS

X, Y, Z, T, U = sp.symbols("x y z t u")
AXIS = {"x": X, "y": Y, "z": Z}
NAMES = {"x": X, "y": Y, "z": Z, "t": T, "u": U, "pi": sp.pi, "E": sp.E}


def face_trace(u: sp.Expr, face: Face) -> sp.Expr:
    """u on the face, as a function of the two coordinates along it."""
    return sp.simplify(u.subs(AXIS[face.axis], sp.nsimplify(face.at)))


def _project(u: sp.Expr, s: sp.Symbol) -> sp.Expr:
    """The linear blend in s of u's values on the faces s = 0 and s = 1."""
    return (1 - s) * u.subs(s, 0) + s * u.subs(s, 1)


def coons_blend(u: sp.Expr) -> sp.Expr:
    """The transfinite blend of u's traces on the six faces (the Boolean sum of the
    three face projectors): faces minus edges plus corners. Every term reads u on a
    face, an edge or a corner only, so it is a function of the face traces alone,
    and it equals u on every face (each projector reproduces u on its two faces)."""
    px, py, pz = (_project(u, s) for s in (X, Y, Z))
    pxy, pyz, pxz = _project(px, Y), _project(py, Z), _project(px, Z)
    pxyz = _project(pxy, Z)
    return px + py + pz - pxy - pyz - pxz + pxyz


def _grad(u: sp.Expr) -> list[sp.Expr]:
    return [sp.diff(u, s) for s in (X, Y, Z)]


def _div(v: list[sp.Expr]) -> sp.Expr:
    return sum((sp.diff(a, s) for a, s in zip(v, (X, Y, Z), strict=True)), sp.Integer(0))


def _sym(value: Any) -> sp.Expr:
    return sp.sympify(str(value), locals=NAMES)


def _stress(coefficients: dict[str, Any], u: list[sp.Expr]) -> sp.Matrix:
    """sigma(u) = 2 mu eps(u) + lambda tr(eps(u)) I of a 3D displacement (Lame from E and nu)."""
    E, nu = _sym(coefficients["E"]), _sym(coefficients["nu"])
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    grad = sp.Matrix([_grad(ui) for ui in u])
    eps = (grad + grad.T) / 2
    return 2 * mu * eps + lam * eps.trace() * sp.eye(3)


def forcing(family: str, coefficients: dict[str, Any], u: list[sp.Expr], p: sp.Expr | None = None) -> list[sp.Expr]:
    """f = L u for a 3D solution (the sign conventions of manufactured.EQUATIONS; elasticity
    in 3D, not plane strain), one entry per component. A steady family's solution does not
    depend on t, so its du/dt term (the transient variant's) vanishes."""
    c = coefficients
    if family in ("poisson", "heat"):
        k = _sym(c["k"])
        f = -_div([k * g for g in _grad(u[0])])
        return [f + sp.diff(u[0], T)] if family == "heat" else [f]
    if family == "helmholtz":
        return [-_div(_grad(u[0])) - _sym(c["k"]) ** 2 * u[0]]
    if family == "convection_diffusion":
        b = [_sym(e) for e in c["b"]]
        convection = sum(bi * g for bi, g in zip(b, _grad(u[0]), strict=True))
        return [-_sym(c["eps"]) * _div(_grad(u[0])) + convection + sp.diff(u[0], T)]
    if family == "reaction_diffusion":
        reaction = _sym(c["R"]).subs(U, u[0])
        return [-_sym(c["D"]) * _div(_grad(u[0])) + reaction + sp.diff(u[0], T)]
    if family == "elasticity":
        sigma = _stress(c, u)
        return [-_div([sigma[i, j] for j in range(3)]) for i in range(3)]
    if family == "stokes":
        if p is None:
            raise ValueError("a Stokes forcing needs the pressure p")
        nu = _sym(c["nu"])
        return [-nu * _div(_grad(ui)) + sp.diff(p, s) for ui, s in zip(u, (X, Y, Z), strict=True)]
    raise ValueError(
        f"no 3D operator for family {family!r}; expected one of poisson, heat, helmholtz, "
        "convection_diffusion, reaction_diffusion, elasticity, stokes"
    )


def face_flux(family: str, coefficients: dict[str, Any], u: list[sp.Expr], face: Face) -> list[sp.Expr]:
    """The family's flux of u through a face of the cube (conditions.py: k du/dn, eps du/dn,
    D du/dn, du/dn; sigma(u) n for elasticity), the outward normal -e or +e along the face's axis."""
    sign = 1 if face.at == 1.0 else -1
    axis = "xyz".index(face.axis)
    if family == "elasticity":
        sigma = _stress(coefficients, u)
        return [sign * sigma[i, axis] for i in range(3)]
    if family not in FLUX_WORDS or family in FLOWS:
        raise ValueError(f"no natural faces for family {family!r} on the cube")
    k = _sym(coefficients[FLUX_COEFFICIENT[family]]) if family in FLUX_COEFFICIENT else sp.Integer(1)
    return [sign * k * sp.diff(u[0], AXIS[face.axis])]


# Where two forcings are compared: fixed points inside the cube and times, never random.
_SAMPLES = [
    (0.13 + 0.29 * i, 0.21 + 0.23 * j, 0.17 + 0.31 * k, 0.05 * (i + j + k))
    for i in range(3)
    for j in range(3)
    for k in range(3)
]


def disagree(a: list[sp.Expr], b: list[sp.Expr]) -> bool:
    """Whether two forcings differ at the sample points (relative 1e-8 of the largest value)."""
    if len(a) != len(b):
        return True
    fa = [sp.lambdify((X, Y, Z, T), e, "numpy") for e in a]
    fb = [sp.lambdify((X, Y, Z, T), e, "numpy") for e in b]
    va = np.array([[float(f(*pt)) for pt in _SAMPLES] for f in fa])
    vb = np.array([[float(f(*pt)) for pt in _SAMPLES] for f in fb])
    scale = max(float(np.abs(va).max(initial=0.0)), float(np.abs(vb).max(initial=0.0)), 1e-300)
    return bool(np.abs(va - vb).max() > 1e-8 * scale)

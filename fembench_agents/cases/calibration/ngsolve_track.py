"""Calibration solvers of the NGSolve track: P2 on a netgen mesh of the domain
(maxh = two grid spacings, the same resolution as the scikit-fem calibration),
every boundary piece a named boundary, the output evaluated at the in-domain grid points.

- poisson, convection_diffusion, helmholtz: one Galerkin solve.
- heat: Crank-Nicolson, one step per grid spacing, Dirichlet data set at each step.
- elasticity: vector P2, plane-strain Lame parameters.
- biharmonic: two Dirichlet problems (w = lap u, with its boundary data).
- stokes: Taylor-Hood P2-P1, the pressure's mean fixed by a Lagrange multiplier.
Reaction-diffusion, Navier-Stokes, Burgers and wave have no solver here: the track
declares them unsupported.
"""

from __future__ import annotations

import math
from typing import Any

import ngsolve as ng
import numpy as np
from netgen.geom2d import SplineGeometry

from fembench_agents.cases.calibration import ngsolve_cube
from fembench_agents.cases.calibration.common import components, grid_problem, inside_polygon_closed
from fembench_agents.cases.expressions import check_expr

FUNCTIONS: dict[str, Any] = {
    "sin": ng.sin,
    "cos": ng.cos,
    "tan": ng.tan,
    "exp": ng.exp,
    "log": ng.log,
    "sqrt": ng.sqrt,
    "sinh": ng.sinh,
    "cosh": ng.cosh,
    "tanh": lambda s: 1 - 2 / (ng.exp(2 * s) + 1),
    "atan": ng.atan,
    "step": lambda s: ng.IfPos(s, 1.0, ng.IfPos(-s, 0.0, 0.5)),
}
SUPPORTED = ("poisson", "heat", "convection_diffusion", "helmholtz", "elasticity", "biharmonic", "stokes")


def cf(expr: Any, t: Any = 0.0) -> Any:
    """An expression of the case as an NGSolve coefficient function (t a number or a Parameter)."""
    code = compile(check_expr(str(expr)), "<case expression>", "eval")
    env = {**FUNCTIONS, "pi": math.pi, "E": math.e, "x": ng.x, "y": ng.y, "z": ng.z, "t": t}  # ** needs builtins
    return ng.CoefficientFunction(eval(code, env))  # noqa: S307 - the syntax tree was checked


def mesh(spec: dict[str, Any]) -> ng.Mesh:
    """A netgen mesh whose boundary edges carry the names of the spec's boundary pieces."""
    geo = SplineGeometry()
    points: dict[tuple[float, float], int] = {}

    def point(p: list[float]) -> int:
        key = (float(p[0]), float(p[1]))
        if key not in points:
            points[key] = geo.AppendPoint(*key)
        return points[key]

    for piece in spec["boundary"]:
        a, b = piece["segment"]
        mid, d = np.array([(a[0] + b[0]) / 2, (a[1] + b[1]) / 2]), np.array([b[0] - a[0], b[1] - a[1]])
        left = mid + 1e-6 * np.array([-d[1], d[0]]) / np.linalg.norm(d)
        inside_left = bool(inside_polygon_closed(spec, np.array([left[0]]), np.array([left[1]]))[0])
        geo.Append(
            ["line", point(a), point(b)],
            bc=piece["name"],
            leftdomain=1 if inside_left else 0,
            rightdomain=0 if inside_left else 1,
        )
    h = 2.0 / (spec["grid"]["nx"] - 1)
    return ng.Mesh(geo.GenerateMesh(maxh=h))


def _boundary(m: ng.Mesh, spec: dict[str, Any], comp: int, t: Any = 0.0) -> Any:
    return m.BoundaryCF({p["name"]: cf(components(p["value"])[comp], t) for p in spec["boundary"]})


def _sample(gf: Any, m: ng.Mesh, p: Any) -> np.ndarray:
    ncomp = gf.dim
    out = np.full((ncomp, p.ny, p.nx), np.nan)
    vals = np.asarray(gf(m(p.X[p.inside], p.Y[p.inside]))).reshape(-1, ncomp)
    for c in range(ncomp):
        out[c][p.inside] = vals[:, c]
    return out if ncomp > 1 else out[0]


def _dirichlet_solve(a: Any, f: Any, gf: Any, fes: Any) -> None:
    r = f.vec - a.mat * gf.vec
    gf.vec.data += a.mat.Inverse(fes.FreeDofs(), inverse="umfpack") * r


def _info(spec: dict[str, Any], fes: Any, method: str, **extra: Any) -> dict[str, Any]:
    return {"mesh_resolution": (spec["grid"]["nx"] - 1) // 2, "element_degree": 2, "method": method,
            "dofs": fes.ndof, "ksp_type": "preonly", "pc_type": "lu", "rtol": 0.0, **extra}  # fmt: skip


def solve(case_spec: dict[str, Any]) -> dict[str, Any]:
    fam, c = case_spec["family"], case_spec["coefficients"]
    if fam not in SUPPORTED:
        raise ValueError(f"the NGSolve calibration has no solver for {fam}")
    if case_spec["grid"].get("nz") is not None:  # the unit cube: a netgen box of its own
        return ngsolve_cube.solve(case_spec, cf)
    p = grid_problem(case_spec)
    m = mesh(case_spec)
    names = "|".join(piece["name"] for piece in case_spec["boundary"])
    if fam == "stokes":
        return _stokes(case_spec, m, p, names)
    if fam == "elasticity":
        fes = ng.VectorH1(m, order=2, dirichlet=names)
        u, v = fes.TnT()
        E, nu = float(c["E"]), float(c["nu"])
        lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
        eps_u, eps_v = ng.Sym(ng.Grad(u)), ng.Sym(ng.Grad(v))
        a = ng.BilinearForm(fes)
        a += (2 * mu * ng.InnerProduct(eps_u, eps_v) + lam * ng.Trace(eps_u) * ng.Trace(eps_v)) * ng.dx
        fx, fy = (cf(e) for e in case_spec["forcing"])
        f = ng.LinearForm(fes)
        f += (fx * v[0] + fy * v[1]) * ng.dx
        a.Assemble()
        f.Assemble()
        gf = ng.GridFunction(fes)
        gf.Set(ng.CoefficientFunction((_boundary(m, case_spec, 0), _boundary(m, case_spec, 1))), ng.BND)
        _dirichlet_solve(a, f, gf, fes)
        return {"u": _sample(gf, m, p), "solver_info": _info(case_spec, fes, "ngsolve-p2-vector")}
    fes = ng.H1(m, order=2, dirichlet=names)
    u, v = fes.TnT()
    if fam == "heat":
        return _heat(case_spec, m, p, fes)
    a = ng.BilinearForm(fes)
    if fam == "poisson":
        a += cf(c["k"]) * ng.grad(u) * ng.grad(v) * ng.dx
    elif fam == "helmholtz":
        a += (ng.grad(u) * ng.grad(v) - float(c["k"]) ** 2 * u * v) * ng.dx
    elif fam == "convection_diffusion":
        b = ng.CoefficientFunction((cf(c["b"][0]), cf(c["b"][1])))
        a += (cf(c["eps"]) * ng.grad(u) * ng.grad(v) + b * ng.grad(u) * v) * ng.dx
    else:  # biharmonic: lap w = f (w = h), lap u = w (u = g)
        a += ng.grad(u) * ng.grad(v) * ng.dx
    a.Assemble()
    f = ng.LinearForm(fes)
    f += cf(case_spec["forcing"]) * v * ng.dx
    f.Assemble()
    gf = ng.GridFunction(fes)
    if fam == "biharmonic":
        w = ng.GridFunction(fes)
        w.Set(_boundary(m, case_spec, 1), ng.BND)
        f.vec.data = -f.vec
        _dirichlet_solve(a, f, w, fes)
        f2 = ng.LinearForm(-w * v * ng.dx).Assemble()
        gf.Set(_boundary(m, case_spec, 0), ng.BND)
        _dirichlet_solve(a, f2, gf, fes)
        return {"u": _sample(gf, m, p), "solver_info": _info(case_spec, fes, "ngsolve-p2-split-biharmonic")}
    gf.Set(_boundary(m, case_spec, 0), ng.BND)
    _dirichlet_solve(a, f, gf, fes)
    return {"u": _sample(gf, m, p), "solver_info": _info(case_spec, fes, "ngsolve-p2")}


def _heat(spec: dict[str, Any], m: ng.Mesh, p: Any, fes: Any) -> dict[str, Any]:
    t0, t1 = spec["time"]["t0"], spec["time"]["t_end"]
    steps = max(1, math.ceil((t1 - t0) * (spec["grid"]["nx"] - 1)))
    dt = (t1 - t0) / steps
    u, v = fes.TnT()
    k = cf(spec["coefficients"]["k"])
    mass = ng.BilinearForm(u * v * ng.dx).Assemble()
    stiff = ng.BilinearForm(k * ng.grad(u) * ng.grad(v) * ng.dx).Assemble()
    mstar = ng.BilinearForm(u * v * ng.dx + dt / 2 * k * ng.grad(u) * ng.grad(v) * ng.dx).Assemble()
    inv = mstar.mat.Inverse(fes.FreeDofs(), inverse="umfpack")
    tp = ng.Parameter(t0)
    load = ng.LinearForm(cf(spec["forcing"], tp) * v * ng.dx)
    gf = ng.GridFunction(fes)
    gf.Set(cf(spec["initial"], t0))
    f_old = load.Assemble().vec.CreateVector()
    f_old.data = load.vec
    rhs = gf.vec.CreateVector()
    for n in range(1, steps + 1):
        tp.Set(t0 + n * dt)
        load.Assemble()
        rhs.data = mass.mat * gf.vec - dt / 2 * (stiff.mat * gf.vec) + dt / 2 * (f_old + load.vec)
        gf.Set(_boundary(m, spec, 0, tp), ng.BND)  # the new step's Dirichlet values; interior kept
        rhs.data -= mstar.mat * gf.vec
        gf.vec.data += inv * rhs
        f_old.data = load.vec
    info = _info(spec, fes, "ngsolve-p2-crank-nicolson", time_steps=steps, dt=dt)
    return {"u": _sample(gf, m, p), "solver_info": info}


def _stokes(spec: dict[str, Any], m: ng.Mesh, p: Any, names: str) -> dict[str, Any]:
    V = ng.VectorH1(m, order=2, dirichlet=names)
    Q = ng.H1(m, order=1)
    N = ng.NumberSpace(m)
    X = V * Q * N
    (u, q_p, lam), (v, q, mu) = X.TnT()
    nu = float(spec["coefficients"]["nu"])
    a = ng.BilinearForm(X)
    a += (nu * ng.InnerProduct(ng.Grad(u), ng.Grad(v)) - ng.div(v) * q_p - ng.div(u) * q) * ng.dx
    a += (q_p * mu + q * lam) * ng.dx
    a.Assemble()
    fx, fy = (cf(e) for e in spec["forcing"])
    f = ng.LinearForm(X)
    f += ng.InnerProduct(ng.CoefficientFunction((fx, fy)), v) * ng.dx
    f.Assemble()
    gf = ng.GridFunction(X)
    gf.components[0].Set(ng.CoefficientFunction((_boundary(m, spec, 0), _boundary(m, spec, 1))), ng.BND)
    _dirichlet_solve(a, f, gf, X)
    out_u, out_p = _sample(gf.components[0], m, p), _sample(gf.components[1], m, p)
    return {"u": out_u, "p": out_p, "solver_info": _info(spec, X, "ngsolve-taylor-hood")}

"""Calibration solvers of the NGSolve track: P2 on a netgen mesh of the domain
(maxh = two grid spacings, the same resolution as the scikit-fem calibration),
every boundary piece a named boundary, the output evaluated at the in-domain grid points.

- poisson, convection_diffusion, helmholtz: one Galerkin solve.
- heat: Crank-Nicolson, one step per grid spacing, Dirichlet data set at each step.
- elasticity: vector P2, plane-strain Lame parameters.
- biharmonic: two Dirichlet problems (w = lap u, with its boundary data).
- stokes: Taylor-Hood P2-P1, the pressure's mean fixed by a Lagrange multiplier.
- reaction_diffusion: NGSolve's Newton on the symbolic form; its transient variant
  Crank-Nicolson with Newton per step.
Neumann and Robin pieces enter as integrals over their named boundaries; periodic pieces
through ng.Periodic spaces; curved domains through the curved netgen mesh (ngsolve_geometry.py);
the unit cube through a netgen box whose faces are its pieces (ngsolve_cube.py), the same
forms in x, y, z (every family here but Stokes and the biharmonic).
Navier-Stokes, Burgers and wave have no solver here: the track declares them unsupported.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from functools import partial
from typing import Any

import ngsolve as ng

from fembench_agents.cases.calibration import ngsolve_cube
from fembench_agents.cases.calibration.common import components, grid_problem, time_steps
from fembench_agents.cases.calibration.ngsolve_geometry import mesh, sample
from fembench_agents.cases.expressions import check_expr
from fembench_agents.cases.model import GridSpec

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
SUPPORTED = (
    "poisson",
    "heat",
    "convection_diffusion",
    "reaction_diffusion",
    "helmholtz",
    "elasticity",
    "biharmonic",
    "stokes",
)
NEWTON_MAX = 40
Sampler = Callable[[Any], Any]  # a grid function -> its values on the evaluation grid (NaN outside)


def cf(expr: Any, t: Any = 0.0, u: Any = None) -> Any:
    """An expression of the case as an NGSolve coefficient function (t a number or a Parameter;
    u, in a reaction term, a trial function or a grid function)."""
    tree = check_expr(str(expr))
    for node in ast.walk(tree):  # NGSolve's a ** 2.0 is NaN for a < 0 (a power through log): use 2
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant):
            if isinstance(node.right.value, float) and node.right.value.is_integer():
                node.right.value = int(node.right.value)
    code = compile(tree, "<case expression>", "eval")
    # ** needs builtins
    env = {**FUNCTIONS, "pi": math.pi, "E": math.e, "x": ng.x, "y": ng.y, "z": ng.z, "t": t, "u": u}
    return ng.CoefficientFunction(eval(code, env))  # noqa: S307 - the syntax tree was checked


def _dirichlet(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in spec["boundary"] if p.get("kind", "dirichlet") == "dirichlet"]


def _boundary(m: ng.Mesh, spec: dict[str, Any], comp: int, t: Any = 0.0) -> Any:
    """The Dirichlet pieces' data (component comp) as one boundary coefficient, 0 elsewhere."""
    return m.BoundaryCF({p["name"]: cf(components(p["value"])[comp], t) for p in _dirichlet(spec)}, default=0)


def _vector_boundary(m: ng.Mesh, spec: dict[str, Any], dim: int) -> Any:
    return ng.CoefficientFunction(tuple(_boundary(m, spec, c) for c in range(dim)))


def _space(spec: dict[str, Any], fes: Any) -> Any:
    """The space, its periodic pieces' dofs identified (the mesh carries the identification)."""
    return ng.Periodic(fes) if any(p.get("kind") == "periodic" for p in spec["boundary"]) else fes


def _natural(spec: dict[str, Any], v: Any, t: Any = 0.0) -> Any:
    """sum over natural pieces of (g, v) on the piece (g the flux data the weak form puts there); None if none."""
    form = None
    for piece in spec["boundary"]:
        if piece.get("kind", "dirichlet") not in ("neumann", "robin"):
            continue
        g = [cf(e, t) for e in components(piece["value"])]
        term = (ng.InnerProduct(ng.CoefficientFunction(tuple(g)), v) if len(g) > 1 else g[0] * v) * ng.ds(piece["name"])
        form = term if form is None else form + term
    return form


def _robin(spec: dict[str, Any], u: Any, v: Any) -> Any:
    """sum over robin pieces of alpha u v on the piece; None if none."""
    form = None
    for piece in spec["boundary"]:
        if piece.get("kind") == "robin":
            term = cf(piece["alpha"]) * u * v * ng.ds(piece["name"])
            form = term if form is None else form + term
    return form


def _dirichlet_solve(a: Any, f: Any, gf: Any, fes: Any) -> None:
    r = f.vec - a.mat * gf.vec
    gf.vec.data += a.mat.Inverse(fes.FreeDofs(), inverse="umfpack") * r


def _info(spec: dict[str, Any], fes: Any, method: str, **extra: Any) -> dict[str, Any]:
    return {"mesh_resolution": (spec["grid"]["nx"] - 1) // 2, "element_degree": 2, "method": method,
            "dofs": fes.ndof, "ksp_type": "preonly", "pc_type": "lu", "rtol": 0.0, **extra}  # fmt: skip


def _set_dirichlet(gf: Any, m: ng.Mesh, spec: dict[str, Any], value: Any) -> None:
    """gf's dofs on the Dirichlet pieces set to value; every other dof kept."""
    names = "|".join(p["name"] for p in _dirichlet(spec))
    if names:
        gf.Set(value, definedon=m.Boundaries(names))


def solve(case_spec: dict[str, Any]) -> dict[str, Any]:
    fam, c = case_spec["family"], case_spec["coefficients"]
    if fam not in SUPPORTED:
        raise ValueError(f"the NGSolve calibration has no solver for {fam}")
    out: Sampler
    if case_spec["grid"].get("nz") is not None:  # the unit cube: a netgen box of its own
        if fam in ("stokes", "biharmonic"):
            raise ValueError(f"the NGSolve calibration has no {fam} solver on the unit cube")
        grid = GridSpec.model_validate(case_spec["grid"])
        m = ngsolve_cube.box_mesh(grid)
        out = partial(ngsolve_cube.sample, m=m, grid=grid)
    else:
        m = mesh(case_spec)
        out = partial(sample, m=m, p=grid_problem(case_spec))
    names = "|".join(piece["name"] for piece in _dirichlet(case_spec))
    if fam == "stokes":
        return _stokes(case_spec, m, out, names)
    if fam == "elasticity":
        fes = _space(case_spec, ng.VectorH1(m, order=2, dirichlet=names))
        u, v = fes.TnT()
        E, nu = float(c["E"]), float(c["nu"])
        lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
        eps_u, eps_v = ng.Sym(ng.Grad(u)), ng.Sym(ng.Grad(v))
        a = ng.BilinearForm(fes)
        a += (2 * mu * ng.InnerProduct(eps_u, eps_v) + lam * ng.Trace(eps_u) * ng.Trace(eps_v)) * ng.dx
        f = ng.LinearForm(fes)
        f += ng.InnerProduct(ng.CoefficientFunction(tuple(cf(e) for e in case_spec["forcing"])), v) * ng.dx
        traction = _natural(case_spec, v)
        if traction is not None:
            f += traction
        a.Assemble()
        f.Assemble()
        gf = ng.GridFunction(fes)
        _set_dirichlet(gf, m, case_spec, _vector_boundary(m, case_spec, m.dim))
        _dirichlet_solve(a, f, gf, fes)
        return {"u": out(gf), "solver_info": _info(case_spec, fes, "ngsolve-p2-vector")}
    fes = _space(case_spec, ng.H1(m, order=2, dirichlet=names))
    u, v = fes.TnT()
    transient = case_spec.get("time") is not None
    if fam == "heat" or (fam == "convection_diffusion" and transient):
        return _heat(case_spec, m, out, fes)
    if fam == "reaction_diffusion":
        return _reaction(case_spec, m, out, fes)
    a = ng.BilinearForm(fes)
    if fam == "poisson":
        a += cf(c["k"]) * ng.grad(u) * ng.grad(v) * ng.dx
    elif fam == "helmholtz":
        a += (ng.grad(u) * ng.grad(v) - float(c["k"]) ** 2 * u * v) * ng.dx
    elif fam == "convection_diffusion":
        a += _convection_diffusion(c, u, v)
    else:  # biharmonic: lap w = f (w = h), lap u = w (u = g)
        a += ng.grad(u) * ng.grad(v) * ng.dx
    robin = _robin(case_spec, u, v)
    if robin is not None:
        a += robin
    a.Assemble()
    f = ng.LinearForm(fes)
    f += cf(case_spec["forcing"]) * v * ng.dx
    flux = _natural(case_spec, v)
    if flux is not None:
        f += flux
    f.Assemble()
    gf = ng.GridFunction(fes)
    if fam == "biharmonic":
        w = ng.GridFunction(fes)
        _set_dirichlet(w, m, case_spec, _boundary(m, case_spec, 1))
        f.vec.data = -f.vec
        _dirichlet_solve(a, f, w, fes)
        f2 = ng.LinearForm(-w * v * ng.dx).Assemble()
        _set_dirichlet(gf, m, case_spec, _boundary(m, case_spec, 0))
        _dirichlet_solve(a, f2, gf, fes)
        return {"u": out(gf), "solver_info": _info(case_spec, fes, "ngsolve-p2-split-biharmonic")}
    _set_dirichlet(gf, m, case_spec, _boundary(m, case_spec, 0))
    _dirichlet_solve(a, f, gf, fes)
    return {"u": out(gf), "solver_info": _info(case_spec, fes, "ngsolve-p2")}


def _convection_diffusion(c: dict[str, Any], u: Any, v: Any) -> Any:
    b = ng.CoefficientFunction(tuple(cf(e) for e in c["b"]))
    return (cf(c["eps"]) * ng.grad(u) * ng.grad(v) + b * ng.grad(u) * v) * ng.dx


def _heat(spec: dict[str, Any], m: ng.Mesh, out: Sampler, fes: Any) -> dict[str, Any]:
    """Crank-Nicolson for heat and the transient convection-diffusion; natural pieces' data at
    both ends of a step, a Robin piece's alpha u v in the operator."""
    t0, _, steps, dt = time_steps(spec)
    u, v = fes.TnT()
    c = spec["coefficients"]
    if spec["family"] == "heat":
        operator = cf(c["k"]) * ng.grad(u) * ng.grad(v) * ng.dx
    else:
        operator = _convection_diffusion(c, u, v)
    robin = _robin(spec, u, v)
    if robin is not None:
        operator = operator + robin
    mass = ng.BilinearForm(u * v * ng.dx).Assemble()
    stiff = ng.BilinearForm(operator).Assemble()
    mstar = ng.BilinearForm(u * v * ng.dx + dt / 2 * operator).Assemble()
    inv = mstar.mat.Inverse(fes.FreeDofs(), inverse="umfpack")
    tp = ng.Parameter(t0)
    load = ng.LinearForm(cf(spec["forcing"], tp) * v * ng.dx)
    flux = _natural(spec, v, tp)
    if flux is not None:
        load += flux
    gf = ng.GridFunction(fes)
    gf.Set(cf(spec["initial"], t0))
    f_old = load.Assemble().vec.CreateVector()
    f_old.data = load.vec
    rhs = gf.vec.CreateVector()
    for n in range(1, steps + 1):
        tp.Set(t0 + n * dt)
        load.Assemble()
        rhs.data = mass.mat * gf.vec - dt / 2 * (stiff.mat * gf.vec) + dt / 2 * (f_old + load.vec)
        _set_dirichlet(gf, m, spec, _boundary(m, spec, 0, tp))  # the new step's Dirichlet values; the rest kept
        rhs.data -= mstar.mat * gf.vec
        gf.vec.data += inv * rhs
        f_old.data = load.vec
    info = _info(spec, fes, "ngsolve-p2-crank-nicolson", time_steps=steps, dt=dt)
    return {"u": out(gf), "solver_info": info}


def _reaction(spec: dict[str, Any], m: ng.Mesh, out: Sampler, fes: Any) -> dict[str, Any]:
    """-D lap u + R(u) = f by Newton (the symbolic form's own linearisation); the transient variant
    Crank-Nicolson, one Newton solve per step from the previous step. The forcing and the natural
    pieces' data are assembled as vectors, once per time: a manufactured forcing is a long
    expression, slow to evaluate inside every Newton assembly."""
    u, v = fes.TnT()
    c = spec["coefficients"]
    operator = (cf(c["D"]) * ng.grad(u) * ng.grad(v) + cf(c["R"], u=u) * v) * ng.dx
    robin = _robin(spec, u, v)
    if robin is not None:
        operator += robin
    tp = ng.Parameter(spec["time"]["t0"] if spec.get("time") else 0.0)
    load = ng.LinearForm(cf(spec["forcing"], tp) * v * ng.dx)
    flux = _natural(spec, v, tp)
    if flux is not None:
        load += flux
    gf = ng.GridFunction(fes)
    if spec.get("time") is None:
        _set_dirichlet(gf, m, spec, _boundary(m, spec, 0))
        its = _newton(ng.BilinearForm(operator), gf, load.Assemble().vec, fes)
        return {"u": out(gf), "solver_info": _info(spec, fes, "ngsolve-p2-newton", iterations=its)}
    t0, _, steps, dt = time_steps(spec)
    mass = ng.BilinearForm(u * v * ng.dx).Assemble()
    steady = ng.BilinearForm(operator)
    step = ng.BilinearForm(u * v / dt * ng.dx + 0.5 * operator)
    gf.Set(cf(spec["initial"], t0))
    f_old = load.Assemble().vec.CreateVector()
    f_old.data = load.vec
    rhs, applied = gf.vec.CreateVector(), gf.vec.CreateVector()
    for n in range(1, steps + 1):
        tp.Set(t0 + n * dt)
        load.Assemble()
        steady.Apply(gf.vec, applied)
        rhs.data = 1 / dt * (mass.mat * gf.vec) - 0.5 * applied + 0.5 * (f_old + load.vec)
        _set_dirichlet(gf, m, spec, _boundary(m, spec, 0, tp))
        _newton(step, gf, rhs, fes)
        f_old.data = load.vec
    info = _info(spec, fes, "ngsolve-p2-crank-nicolson-newton", time_steps=steps, dt=dt)
    return {"u": out(gf), "solver_info": info}


def _newton(a: Any, gf: Any, rhs: Any, fes: Any) -> int:
    """a(gf) = rhs on the free dofs (the others keep gf's values), Newton from gf; the iterations."""
    residual, update = gf.vec.CreateVector(), gf.vec.CreateVector()
    for n in range(1, NEWTON_MAX + 1):
        a.Apply(gf.vec, residual)
        residual.data -= rhs
        a.AssembleLinearization(gf.vec)
        update.data = a.mat.Inverse(fes.FreeDofs(), inverse="umfpack") * residual
        gf.vec.data -= update
        if ng.Norm(update) <= 1e-12 * max(1.0, ng.Norm(gf.vec)):
            return n
    raise RuntimeError(f"Newton did not converge in {NEWTON_MAX} iterations")


def _stokes(spec: dict[str, Any], m: ng.Mesh, out: Sampler, names: str) -> dict[str, Any]:
    V = _space(spec, ng.VectorH1(m, order=2, dirichlet=names))
    Q = _space(spec, ng.H1(m, order=1))
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
    _set_dirichlet(gf.components[0], m, spec, _vector_boundary(m, spec, 2))
    _dirichlet_solve(a, f, gf, X)
    return {
        "u": out(gf.components[0]),
        "p": out(gf.components[1]),
        "solver_info": _info(spec, X, "ngsolve-taylor-hood"),
    }

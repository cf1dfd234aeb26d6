"""Hand-written records in the published shape for the boundary and time data of the
import (tests/test_cases_import_bc.py): transient reaction- and convection-diffusion,
per-edge Dirichlet lists that leave edges out (their oracle's natural condition),
a biharmonic record without a solution, a transient numerical reference over the
import's budget, and a published-contract program for a transient
reaction-diffusion record."""

from __future__ import annotations

import json
from typing import Any

import sympy as sp
from published_records import _record

x, y, t, U = sp.symbols("x y t u")
GRID = {"bbox": [0, 1, 0, 1], "nx": 25, "ny": 25}
# not separable in t (the initial field is no multiple of the final one), not a Coons blend of its edges
RD_U = sp.exp(-t) * sp.sin(sp.pi * x) * sp.cos(2 * y) + t * x**2 * y**2
CD_U = sp.exp(-t) * sp.cos(sp.pi * x / 2) * sp.sin(sp.pi * y) + t * x * y**2
SEPARABLE_U = sp.exp(-t) * sp.sin(sp.pi * x) * sp.sin(sp.pi * y)
TIME = {"t0": 0.0, "t_end": 0.2, "dt": 0.01, "scheme": "backward_euler"}
CUBIC = {"type": "cubic", "alpha": 1.0, "beta": 2.0}


def _lap(u: sp.Expr) -> sp.Expr:
    return sp.diff(u, x, 2) + sp.diff(u, y, 2)


def reaction_diffusion(rid: str, u: sp.Expr, eps: float, reaction: dict[str, Any], R: sp.Expr) -> dict[str, Any]:
    f = sp.diff(u, t) - eps * _lap(u) + R.subs(U, u)
    pde = {
        "type": "reaction_diffusion",
        "pde_params": {"epsilon": eps, "reaction": reaction},
        "time": TIME,
        "source_term": str(sp.expand(f)),
        "initial_condition": str(u.subs(t, 0)),
        "manufactured_solution": {"u": str(u)},
    }
    return _record(rid, pde, grid=GRID)


def reaction_diffusion_numerical(rid: str, n: int) -> dict[str, Any]:
    """An Allen-Cahn record without a solution on an n x n grid of the unit square."""
    pde = {
        "type": "reaction_diffusion",
        "pde_params": {"epsilon": 0.05, "reaction": {"type": "allen_cahn", "lambda": 2.0}},
        "time": {"t0": 0.0, "t_end": 0.25, "dt": 0.005},
        "source_term": "3*cos(3*pi*x)*sin(2*pi*y)",
        "initial_condition": "0.2*sin(3*pi*x)*sin(2*pi*y)",
    }
    grid = {"bbox": [0, 1, 0, 1], "nx": n, "ny": n}
    return _record(rid, pde, bc={"dirichlet": {"on": "all", "value": "0.0"}}, grid=grid)


def convection_diffusion(rid: str, u: sp.Expr, eps: float, beta: list[float]) -> dict[str, Any]:
    f = sp.diff(u, t) - eps * _lap(u) + beta[0] * sp.diff(u, x) + beta[1] * sp.diff(u, y)
    pde = {
        "type": "convection_diffusion",
        "pde_params": {"epsilon": eps, "beta": beta, "stabilization": "none"},
        "time": TIME,
        "source_term": str(sp.expand(f)),
        "initial_condition": str(u.subs(t, 0)),
        "manufactured_solution": {"u": str(u)},
    }
    return _record(rid, pde, grid=GRID)


def _edges(*listed: tuple[str, list[str]]) -> dict[str, Any]:
    return {"dirichlet": [{"on": e, "value": v} for e, v in listed]}


def records() -> list[str]:
    rows = [
        reaction_diffusion("rd_cubic", RD_U, 0.1, CUBIC, 1.0 * U + 2.0 * U**3),
        reaction_diffusion("rd_separable", SEPARABLE_U, 0.1, {"type": "logistic", "rho": 3.0}, 3.0 * U * (1 - U)),
        convection_diffusion("cd_transient", CD_U, 0.1, [1.0, 0.5]),
        reaction_diffusion_numerical("rd_numerical_long", 200),
        _record(
            "stokes_channel",
            {"type": "stokes", "pde_params": {"nu": 1.0}, "source_term": ["0.0", "0.0"]},
            bc=_edges(("x0", ["4*y*(1-y)", "0.0"]), ("y0", ["0.0", "0.0"]), ("y1", ["0.0", "0.0"])),
            field="velocity_magnitude",
            grid=GRID,
        ),
        _record(
            "elasticity_compression",
            {"type": "linear_elasticity", "pde_params": {"E": 1.0, "nu": 0.3}, "source_term": ["0.0", "0.0"]},
            bc=_edges(("y0", ["0.0", "0.0"]), ("y1", ["0.0", "-0.05"])),
            field="displacement_magnitude",
            grid=GRID,
        ),
        _record(
            "biharmonic_simply_supported",
            {"type": "biharmonic", "source_term": "10*exp(-20*((x-0.4)**2 + (y-0.6)**2))"},
            bc={"dirichlet": {"on": "all", "value": "0.0"}},
            grid=GRID,
        ),
    ]
    return [json.dumps(r) for r in rows]


# A program written for the published contract of a transient reaction-diffusion record, as its
# models write them: it reads pde_params (epsilon, reaction), pde.time, the source term and the
# initial condition, the Dirichlet value on `all` (a function of x, y, t), and the output grid.
PUBLISHED_TRANSIENT_RD = """
from mpi4py import MPI
import numpy as np
import sympy as sp
import ufl
from dolfinx import fem, geometry, mesh
from dolfinx.fem.petsc import NonlinearProblem


def solve(case_spec):
    pde = case_spec["pde"]
    eps = pde["pde_params"]["epsilon"]
    reaction = pde["pde_params"]["reaction"]
    t0, t_end = pde["time"]["t0"], pde["time"]["t_end"]
    steps = int(round((t_end - t0) / (pde["time"]["dt"] / 2)))
    dt = (t_end - t0) / steps
    n = 32
    domain = mesh.create_unit_square(MPI.COMM_WORLD, n, n)
    V = fem.functionspace(domain, ("Lagrange", 2))
    X = ufl.SpatialCoordinate(domain)
    sx, sy, st = sp.symbols("x y t")
    names = {"sin": ufl.sin, "cos": ufl.cos, "exp": ufl.exp, "pi": np.pi}
    t_now = fem.Constant(domain, t0)
    t_old = fem.Constant(domain, t0)
    f_text = sp.sympify(pde["source_term"])
    f_new = sp.lambdify((sx, sy, st), f_text, names)(X[0], X[1], t_now)
    f_old = sp.lambdify((sx, sy, st), f_text, names)(X[0], X[1], t_old)
    g_expr = sp.lambdify((sx, sy, st), sp.sympify(case_spec["bc"]["dirichlet"]["value"]), "numpy")
    u0_expr = sp.lambdify((sx, sy), sp.sympify(pde["initial_condition"]), "numpy")

    def R(w):
        if reaction["type"] == "cubic":
            return reaction["alpha"] * w + reaction["beta"] * w**3
        if reaction["type"] == "logistic":
            return reaction["rho"] * w * (1 - w)
        if reaction["type"] == "allen_cahn":
            return reaction["lambda"] * (w**3 - w)
        return reaction["alpha"] * w

    u_old = fem.Function(V)
    u_old.interpolate(lambda p: np.broadcast_to(u0_expr(p[0], p[1]), p[0].shape))
    u = fem.Function(V)
    u.x.array[:] = u_old.x.array
    v = ufl.TestFunction(V)
    g = fem.Function(V)
    domain.topology.create_connectivity(1, 2)
    dofs = fem.locate_dofs_topological(V, 1, mesh.exterior_facet_indices(domain.topology))
    bc = fem.dirichletbc(g, dofs)
    half = lambda w: eps * ufl.inner(ufl.grad(w), ufl.grad(v)) + R(w) * v
    F = ((u - u_old) / dt * v + 0.5 * (half(u) + half(u_old)) - 0.5 * (f_new + f_old) * v) * ufl.dx
    opts = {"snes_type": "newtonls", "snes_rtol": 1e-10, "ksp_type": "preonly", "pc_type": "lu"}
    problem = NonlinearProblem(F, u, bcs=[bc], petsc_options_prefix="pub_rd_", petsc_options=opts)
    for k in range(1, steps + 1):
        t_old.value, t_now.value = t0 + (k - 1) * dt, t0 + k * dt
        tk = t0 + k * dt
        g.interpolate(lambda p: np.broadcast_to(g_expr(p[0], p[1], tk), p[0].shape))
        problem.solve()
        u_old.x.array[:] = u.x.array
    grid = case_spec["output"]["grid"]
    nx, ny, bbox = grid["nx"], grid["ny"], grid["bbox"]
    XX, YY = np.meshgrid(np.linspace(bbox[0], bbox[1], nx), np.linspace(bbox[2], bbox[3], ny))
    points = np.column_stack([XX.ravel(), YY.ravel(), np.zeros(XX.size)])
    tree = geometry.bb_tree(domain, 2)
    cells = geometry.compute_colliding_cells(domain, geometry.compute_collisions_points(tree, points), points)
    first = np.array([cells.links(i)[0] for i in range(points.shape[0])], dtype=np.int32)
    u_grid = u.eval(points, first).reshape(ny, nx)
    return {"u": u_grid, "solver_info": {"mesh_resolution": n, "element_degree": 2, "ksp_type": "preonly",
                                         "pc_type": "lu", "rtol": 1e-10, "time_steps": steps}}
"""

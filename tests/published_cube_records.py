"""Hand-written unit-cube records in the shape of the published benchmark's 3D
records (domain type unit_cube, an output grid with nz, the vector families'
output `u_mag`), and a program written for the published 3D contract: it reads
case_spec["pde"], case_spec["bc"]["dirichlet"]["value"] and
case_spec["output"]["grid"] and returns u of shape (nz, ny, nx)."""

from __future__ import annotations

from typing import Any

import sympy as sp

from tests.published_records import _record

x, y, z, t = sp.symbols("x y z t")
XYZ = (x, y, z)
CUBE_GRID = {"bbox": [0, 1, 0, 1, 0, 1], "nx": 9, "ny": 9, "nz": 9}
# An interior bump (zero on every face) plus data on the faces: the face traces, and so the
# published blend, know nothing of the bump. A smooth solution without one can be close to
# its own blend (the 3D blend is exact wherever u is linear in one coordinate).
BUMP = sp.sin(sp.pi * x) * sp.sin(sp.pi * y) * sp.sin(sp.pi * z)
SMOOTH_U = BUMP + sp.exp(x) * y * z
HEAT_U = sp.exp(-5 * t) * BUMP + (1 + t) * sp.exp(x / 2) * y * z
STREAM3 = (BUMP, x * BUMP, sp.exp(x) * y * z)  # u = curl of this: divergence-free
PRESSURE3 = x * y + sp.cos(z)


def _grad(u: sp.Expr) -> list[sp.Expr]:
    return [sp.diff(u, s) for s in XYZ]


def _div(v: list[sp.Expr]) -> sp.Expr:
    return sum((sp.diff(a, s) for a, s in zip(v, XYZ, strict=True)), sp.Integer(0))


def _cube(rid: str, pde: dict[str, Any], field: str = "u", grid: dict[str, Any] | None = None) -> dict[str, Any]:
    record = _record(rid, pde, domain="unit_cube", grid=grid or CUBE_GRID, field=field)
    record["oracle_config"]["mesh"] = {"resolution": 8, "cell_type": "tetrahedron"}
    record["oracle_config"]["fem"] = {"family": "Lagrange", "degree": 2}
    return record


def poisson3(rid: str, u: sp.Expr = SMOOTH_U, kappa: Any = 1, forcing: sp.Expr | None = None) -> dict[str, Any]:
    kappa = sp.sympify(kappa)
    f = forcing if forcing is not None else -_div([kappa * g for g in _grad(u)])
    coef = {"type": "constant", "value": float(kappa)} if kappa.is_number else {"type": "expr", "expr": str(kappa)}
    pde = {
        "type": "poisson",
        "coefficients": {"kappa": coef},
        "source_term": str(sp.expand(f)),
        "manufactured_solution": {"u": str(u)},
    }
    return _cube(rid, pde)


def heat3(rid: str, u: sp.Expr = HEAT_U, kappa: float = 1.0) -> dict[str, Any]:
    f = sp.diff(u, t) - kappa * _div(_grad(u))
    pde = {
        "type": "heat",
        "coefficients": {"kappa": {"type": "constant", "value": kappa}},
        "source_term": str(sp.expand(f)),
        "initial_condition": str(u.subs(t, 0)),
        "manufactured_solution": {"u": str(u)},
        "time": {"t0": 0.0, "t_end": 0.1, "dt": 0.01, "scheme": "backward_euler"},
    }
    return _cube(rid, pde)


def elasticity_forcing(u: list[sp.Expr], E: float = 10.0, nu: float = 0.3) -> list[sp.Expr]:
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    grad = sp.Matrix([_grad(c) for c in u])
    eps = (grad + grad.T) / 2
    sigma = 2 * mu * eps + lam * eps.trace() * sp.eye(3)
    return [sp.expand(-_div([sigma[i, j] for j in range(3)])) for i in range(3)]


def elasticity3(rid: str, E: float = 10.0, nu: float = 0.3) -> dict[str, Any]:
    u = [BUMP + sp.sin(x) * sp.exp(y) * z, x * y * sp.cos(z) - BUMP, 2 * BUMP + y**2]
    f = elasticity_forcing(u, E, nu)
    pde = {
        "type": "linear_elasticity",
        "pde_params": {"E": E, "nu": nu},
        "source_term": [str(sp.expand(c)) for c in f],
        "manufactured_solution": {"u": [str(c) for c in u]},
    }
    return _cube(rid, pde, field="u_mag")


def stokes3(rid: str, nu: float = 1.0) -> dict[str, Any]:
    a, b, c = STREAM3
    u = [sp.diff(c, y) - sp.diff(b, z), sp.diff(a, z) - sp.diff(c, x), sp.diff(b, x) - sp.diff(a, y)]
    f = [-nu * _div(_grad(ui)) + sp.diff(PRESSURE3, s) for ui, s in zip(u, XYZ, strict=True)]
    pde = {
        "type": "stokes",
        "pde_params": {"nu": nu},
        "source_term": [str(sp.expand(e)) for e in f],
        "manufactured_solution": {"u": [str(e) for e in u], "p": str(PRESSURE3)},
    }
    return _cube(rid, pde, field="u_mag")


def helmholtz3(rid: str, k: float = 2.0, u: sp.Expr = SMOOTH_U) -> dict[str, Any]:
    pde = {
        "type": "helmholtz",
        "pde_params": {"k": k},
        "source_term": str(sp.expand(-_div(_grad(u)) - k**2 * u)),
        "manufactured_solution": {"u": str(u)},
    }
    return _cube(rid, pde)


def convection3(
    rid: str, eps: float = 0.1, beta: tuple[float, ...] = (1.0, 0.5, 0.25), t_end: float | None = None
) -> dict[str, Any]:
    """Steady, or with `t_end` the transient variant (u_t - eps lap u + b . grad u = f) of HEAT_U."""
    u = SMOOTH_U if t_end is None else HEAT_U
    f = -eps * _div(_grad(u)) + sum(bi * g for bi, g in zip(beta, _grad(u), strict=True)) + sp.diff(u, t)
    pde: dict[str, Any] = {
        "type": "convection_diffusion",
        "pde_params": {"epsilon": eps, "beta": list(beta)},
        "source_term": str(sp.expand(f)),
        "manufactured_solution": {"u": str(u)},
    }
    if t_end is not None:
        pde["time"] = {"t0": 0.0, "t_end": t_end, "dt": 0.01}
    return _cube(rid, pde)


# A program for the published 3D contract, as docs/pde_import.md shows it (the test checks the
# text is there verbatim): Poisson on the unit cube, P2 tetrahedra, u sampled on the (nz, ny, nx) grid.
PUBLISHED_CUBE_PROGRAM = """
from mpi4py import MPI
import numpy as np
import sympy as sp
import ufl
from dolfinx import fem, geometry, mesh
from dolfinx.fem.petsc import LinearProblem


def solve(case_spec):
    pde = case_spec["pde"]
    n = 12
    domain = mesh.create_unit_cube(MPI.COMM_WORLD, n, n, n, mesh.CellType.tetrahedron)
    V = fem.functionspace(domain, ("Lagrange", 2))
    X = ufl.SpatialCoordinate(domain)
    sx, sy, sz = sp.symbols("x y z")
    to_ufl = {"sin": ufl.sin, "cos": ufl.cos, "exp": ufl.exp, "pi": np.pi}
    kappa = pde["coefficients"]["kappa"]
    k = kappa["value"] if kappa["type"] == "constant" else sp.lambdify((sx, sy, sz), sp.sympify(kappa["expr"]), to_ufl)(*X)
    f = sp.lambdify((sx, sy, sz), sp.sympify(pde["source_term"]), to_ufl)(*X)
    g_expr = sp.lambdify((sx, sy, sz), sp.sympify(case_spec["bc"]["dirichlet"]["value"]), "numpy")
    g = fem.Function(V)
    g.interpolate(lambda p: np.broadcast_to(g_expr(p[0], p[1], p[2]), p[0].shape))
    domain.topology.create_connectivity(2, 3)
    dofs = fem.locate_dofs_topological(V, 2, mesh.exterior_facet_indices(domain.topology))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    problem = LinearProblem(k * ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx, f * v * ufl.dx,
                            bcs=[fem.dirichletbc(g, dofs)], petsc_options_prefix="pub_",
                            petsc_options={"ksp_type": "preonly", "pc_type": "lu"})
    uh = problem.solve()
    grid = case_spec["output"]["grid"]
    nx, ny, nz, bbox = grid["nx"], grid["ny"], grid["nz"], grid["bbox"]
    ZZ, YY, XX = np.meshgrid(np.linspace(bbox[4], bbox[5], nz), np.linspace(bbox[2], bbox[3], ny),
                             np.linspace(bbox[0], bbox[1], nx), indexing="ij")
    points = np.column_stack([XX.ravel(), YY.ravel(), ZZ.ravel()])
    tree = geometry.bb_tree(domain, 3)
    cells = geometry.compute_colliding_cells(domain, geometry.compute_collisions_points(tree, points), points)
    first = np.array([cells.links(i)[0] for i in range(points.shape[0])], dtype=np.int32)
    u_grid = uh.eval(points, first).reshape(nz, ny, nx)
    return {"u": u_grid, "solver_info": {"mesh_resolution": n, "element_degree": 2, "ksp_type": "preonly",
                                         "pc_type": "lu", "rtol": 1e-12}}
"""

# Hands in the published boundary value, evaluated on the whole grid, as the answer.
PUBLISHED_CUBE_BC_ANSWER = """
import numpy as np
import sympy as sp


def solve(case_spec):
    grid = case_spec["output"]["grid"]
    nx, ny, nz, bbox = grid["nx"], grid["ny"], grid["nz"], grid["bbox"]
    ZZ, YY, XX = np.meshgrid(np.linspace(bbox[4], bbox[5], nz), np.linspace(bbox[2], bbox[3], ny),
                             np.linspace(bbox[0], bbox[1], nx), indexing="ij")
    g = sp.lambdify(sp.symbols("x y z"), sp.sympify(case_spec["bc"]["dirichlet"]["value"]), "numpy")
    u = np.broadcast_to(g(XX, YY, ZZ), XX.shape).astype(float)
    return {"u": u, "solver_info": {"mesh_resolution": 0, "element_degree": 0, "ksp_type": "none",
                                    "pc_type": "none", "rtol": 0.0}}
"""

"""Hand-written records in the published shape for the axis-parallel domains (T-junction,
L-shapes anywhere, rectangular holes of any size, rectangles in any box) and the periodic
boundaries of periodic_square, and a published-contract program for the T-junction."""

from __future__ import annotations

import json
from typing import Any

import published_records as pr
import sympy as sp

x, y, t = pr.x, pr.y, pr.t

T_BAR, T_STEM = [0, 1, 0.7, 1.0], [0.4, 0.6, 0, 0.7]
T_JUNCTION = {"type": "t_junction", "geometry_params": {"horizontal_rect": T_BAR, "vertical_rect": T_STEM}}
L_WIDE = {
    "type": "l_shape",
    "geometry_params": {"vertices": [[0, 0], [2, 0], [2, 0.5], [0.5, 0.5], [0.5, 1.5], [0, 1.5]]},
}
HOLE_035 = {
    "type": "square_with_hole",
    "geometry_params": {"inner_hole": {"type": "rect", "bbox": [0.35, 0.65, 0.35, 0.65]}, "outer": [0, 1, 0, 1]},
}
GRID_T = {"bbox": [0, 1, 0, 1], "nx": 41, "ny": 41}  # lines every 0.025: 0.4, 0.6 and 0.7 are grid lines
GRID_L_WIDE = {"bbox": [0, 2, 0, 1.5], "nx": 100, "ny": 75}
# smooth, neither linear in x nor in y anywhere (Gordon's blend reproduces those)
U_SMOOTH = sp.exp(x) * y**2 + x**2 * sp.sin(2 * y) + sp.cos(x * y)


def periodic(rid: str, bc: dict[str, Any], u: sp.Expr, extents: list[float], grid: dict[str, Any]) -> dict[str, Any]:
    """A Helmholtz record (k = 1) on periodic_square: -lap u - u = f."""
    f = -(sp.diff(u, x, 2) + sp.diff(u, y, 2)) - u
    pde = {
        "type": "helmholtz",
        "pde_params": {"k": 1.0},
        "source_term": str(sp.expand(f)),
        "manufactured_solution": {"u": str(u)},
    }
    domain = {"type": "periodic_square", "geometry_params": {"extents": extents}}
    return pr._record(rid, pde, domain=domain, grid=grid, bc=bc)


def stokes_channel(rid: str, extents: list[float], grid: dict[str, Any]) -> dict[str, Any]:
    """The published x-periodic channel: periodic in x, the velocity given on y0 and y1 per edge."""
    stream = sp.sin(2 * sp.pi * x) * sp.sin(2 * sp.pi * y) + y**3 / 3
    p = sp.cos(2 * sp.pi * x) * y
    record = pr.flow(rid, "stokes", stream, p, 1.0)
    ux, uy = sp.diff(stream, y), -sp.diff(stream, x)
    oc = record["oracle_config"]
    oc["domain"] = {"type": "periodic_square", "geometry_params": {"extents": extents}}
    oc["output"]["grid"] = grid
    oc["bc"] = {
        "periodic": {"direction": "x", "extents": extents},
        "dirichlet": [
            {"on": e, "value": [str(ux.subs(y, v)), str(uy.subs(y, v))]}
            for e, v in (("y0", extents[2]), ("y1", extents[3]))
        ],
    }
    return json.loads(json.dumps(record))


def burgers_periodic(rid: str) -> dict[str, Any]:
    """Periodic in x and y on the unit square, no Dirichlet data at all (as the published Burgers
    records), with the time interval stated."""
    u = sp.exp(-t) * sp.sin(2 * sp.pi * x) * sp.cos(2 * sp.pi * y) + sp.sin(2 * sp.pi * (x + y)) / 2
    record = pr.burgers(rid, u, 0.1, {"t0": 0.0, "t_end": 0.1, "dt": 0.01})
    oc = record["oracle_config"]
    oc["domain"] = {"type": "periodic_square", "geometry_params": {"bounds": [0, 1, 0, 1]}}
    oc["bc"] = {"periodic": {"on": ["x", "y"]}}
    oc["output"]["grid"] = {"bbox": [0, 1, 0, 1], "nx": 41, "ny": 41}
    return record


# A program written for the published contract on the T-junction: it reads the geometry the record
# gives (domain.geometry_params), meshes the grid's box, keeps the cells in the T, applies the
# published bc value on the boundary and samples u on the output grid (NaN outside).
PUBLISHED_T_PROGRAM = """
from mpi4py import MPI
import numpy as np
import sympy as sp
import ufl
from dolfinx import fem, geometry, mesh
from dolfinx.fem.petsc import LinearProblem


def solve(case_spec):
    params = case_spec["domain"]["geometry_params"]
    bar, stem = params["horizontal_rect"], params["vertical_rect"]
    grid = case_spec["output"]["grid"]
    nx, ny, bbox = grid["nx"], grid["ny"], grid["bbox"]
    n = 80
    box = mesh.create_rectangle(MPI.COMM_WORLD, [[bbox[0], bbox[2]], [bbox[1], bbox[3]]], [n, n])

    def in_t(p):
        inside = lambda r: (p[0] > r[0]) & (p[0] < r[1]) & (p[1] > r[2]) & (p[1] < r[3])
        return inside(bar) | inside(stem)

    cells = mesh.locate_entities(box, 2, lambda p: np.ones(p.shape[1], dtype=bool))
    mid = mesh.compute_midpoints(box, 2, cells)
    msh = mesh.create_submesh(box, 2, cells[in_t(mid.T)])[0]
    V = fem.functionspace(msh, ("Lagrange", 2))
    sx, sy = sp.symbols("x y")
    X = ufl.SpatialCoordinate(msh)
    to_ufl = {{"sin": ufl.sin, "cos": ufl.cos, "exp": ufl.exp, "pi": np.pi}}
    f = sp.lambdify((sx, sy), sp.sympify(case_spec["pde"]["source_term"]), to_ufl)(X[0], X[1])
    g_expr = sp.lambdify((sx, sy), sp.sympify(case_spec["bc"]["dirichlet"]["value"]), "numpy")
    g = fem.Function(V)
    g.interpolate(lambda p: {sign}np.broadcast_to(g_expr(p[0], p[1]), p[0].shape))
    msh.topology.create_connectivity(1, 2)
    dofs = fem.locate_dofs_topological(V, 1, mesh.exterior_facet_indices(msh.topology))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    problem = LinearProblem(ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx, f * v * ufl.dx,
                            bcs=[fem.dirichletbc(g, dofs)], petsc_options_prefix="pub_t_",
                            petsc_options={{"ksp_type": "preonly", "pc_type": "lu"}})
    uh = problem.solve()
    XX, YY = np.meshgrid(np.linspace(bbox[0], bbox[1], nx), np.linspace(bbox[2], bbox[3], ny))
    points = np.column_stack([XX.ravel(), YY.ravel(), np.zeros(XX.size)])
    tree = geometry.bb_tree(msh, 2)
    found = geometry.compute_colliding_cells(msh, geometry.compute_collisions_points(tree, points), points)
    values = np.full(points.shape[0], np.nan)
    hit = [i for i in range(points.shape[0]) if len(found.links(i))]
    cells_hit = np.array([found.links(i)[0] for i in hit], dtype=np.int32)
    values[hit] = uh.eval(points[hit], cells_hit).ravel()
    return {{"u": values.reshape(ny, nx), "solver_info": {{"mesh_resolution": n, "element_degree": 2,
             "ksp_type": "preonly", "pc_type": "lu", "rtol": 1e-12}}}}
"""
PUBLISHED_T_CORRECT = PUBLISHED_T_PROGRAM.format(sign="")
PUBLISHED_T_WRONG_SIGN = PUBLISHED_T_PROGRAM.format(sign="-")

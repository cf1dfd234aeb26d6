"""Hand-written records in the published shape on the domains given by their geometry
(circle, annulus, eccentric annulus, sector, dumbbell in both dialects, multi-hole, square
with a circular or polygonal hole, star, gear), with the parameters and grids the published
file uses, and a published-contract program for a disk that meshes it with gmsh."""

from __future__ import annotations

import json
from typing import Any

import published_records as pr
import sympy as sp

x, y = pr.x, pr.y
U = sp.exp(x) * y**2 + x * sp.sin(2 * y) + sp.cos(3 * x * y)  # no multiple of it is its own Laplacian

DOMAINS: dict[str, dict[str, Any]] = {
    "circle": {"type": "circle", "geometry_params": {"center": [0.5, 0.5], "radius": 0.5}, "char_length": 0.02},
    "annulus": {"type": "annulus", "geometry_params": {"center": [0, 0], "inner_r": 0.3, "outer_r": 0.8}},
    "eccentric_annulus": {
        "type": "eccentric_annulus",
        "geometry_params": {"outer_circle": {"c": [0.5, 0.5], "r": 0.5}, "inner_circle": {"c": [0.65, 0.5], "r": 0.2}},
    },
    "sector": {"type": "sector", "geometry_params": {"center": [0, 0], "radius": 1.0, "angle": 120}},
    "dumbbell": {
        "type": "dumbbell",
        "geometry_params": {"left_center": [0.25, 0.5], "right_center": [0.75, 0.5], "radius": 0.2, "bar_width": 0.18},
    },
    "dumbbell_bridge": {
        "type": "dumbbell",
        "geometry_params": {
            "left_circle": {"c": [0.25, 0.5], "r": 0.25},
            "right_circle": {"c": [0.75, 0.5], "r": 0.25},
            "bridge": {"x_min": 0.25, "x_max": 0.75, "y_min": 0.4, "y_max": 0.6},
        },
    },
    "multi_hole": {
        "type": "multi_hole",
        "geometry_params": {
            "outer": [0, 1, 0, 1],
            "holes": [{"c": [0.3, 0.3], "r": 0.1}, {"c": [0.7, 0.3], "r": 0.08}, {"c": [0.5, 0.7], "r": 0.12}],
        },
    },
    "circle_hole": {
        "type": "square_with_hole",
        "geometry_params": {
            "outer": [0, 1, 0, 1],
            "inner_hole": {"type": "circle", "center": [0.5, 0.5], "radius": 0.2},
        },
    },
    "polygon_hole": {
        "type": "square_with_hole",
        "geometry_params": {
            "outer": [0, 1, 0, 1],
            "inner_hole": {"type": "polygon", "vertices": [[0.3, 0.3], [0.6, 0.35], [0.55, 0.65], [0.35, 0.6]]},
        },
    },
    "notched_hole": {
        "type": "square_with_hole",
        "geometry_params": {
            "outer": [-1, 1, -1, 1],
            "inner_hole": {
                "type": "polygon",
                "vertices": [[-0.3, -0.3], [0.3, -0.3], [0.3, 0.3], [0, 0.15], [-0.3, 0.3]],
            },
        },
    },
    "star": {"type": "star", "geometry_params": {"points": 5, "inner_r": 0.35, "outer_r": 0.8}},
    "gear": {"type": "gear", "geometry_params": {"center": [0, 0], "teeth": 8, "base_r": 0.5, "tooth_h": 0.2}},
}
GRIDS: dict[str, dict[str, Any]] = {
    "circle": {"bbox": [0, 1, 0, 1], "nx": 50, "ny": 50},
    "annulus": {"bbox": [-0.8, 0.8, -0.8, 0.8], "nx": 50, "ny": 50},
    "eccentric_annulus": {"bbox": [0, 1, 0, 1], "nx": 50, "ny": 50},
    "sector": {"bbox": [-0.55, 1.05, -0.05, 1.05], "nx": 50, "ny": 50},
    "dumbbell": {"bbox": [0.0, 1.0, 0.25, 0.75], "nx": 50, "ny": 50},
    "dumbbell_bridge": {"bbox": [0, 1, 0.25, 0.75], "nx": 50, "ny": 50},
    "multi_hole": {"bbox": [0, 1, 0, 1], "nx": 50, "ny": 50},
    "circle_hole": {"bbox": [0, 1, 0, 1], "nx": 50, "ny": 50},
    "polygon_hole": {"bbox": [0, 1, 0, 1], "nx": 50, "ny": 50},
    "notched_hole": {"bbox": [-1, 1, -1, 1], "nx": 50, "ny": 50},
    "star": {"bbox": [-0.85, 0.85, -0.85, 0.85], "nx": 50, "ny": 50},
    "gear": {"bbox": [-0.7, 0.7, -0.7, 0.7], "nx": 50, "ny": 50},
}
IMPORTED = ("circle", "annulus", "star", "circle_hole")  # solved by the calibration in the tests


def poisson_on(kind: str) -> dict[str, Any]:
    return pr.poisson(f"poisson_{kind}", U, domain=DOMAINS[kind], grid=GRIDS[kind])


def records() -> list[str]:
    rows = [poisson_on(k) for k in IMPORTED]
    bad = dict(DOMAINS["annulus"], geometry_params={"center": [0, 0], "inner_r": 0.9, "outer_r": 0.8})
    rows.append(pr.poisson("poisson_inverted_annulus", U, domain=bad, grid=GRIDS["annulus"]))
    rows.append(pr.biharmonic("biharmonic_circle", U) | {})
    rows[-1]["oracle_config"]["domain"] = DOMAINS["circle"]
    return [json.dumps(r) for r in rows]


# A program written for the published contract on a disk: gmsh meshes domain.geometry_params,
# the published bc value is applied on the boundary dofs, the grid is sampled by point evaluation.
PUBLISHED_DISK = """
from mpi4py import MPI
import gmsh
import numpy as np
import sympy as sp
import ufl
from dolfinx import fem, geometry, mesh
from dolfinx.fem.petsc import LinearProblem
from dolfinx.io import gmsh as gmshio


def solve(case_spec):
    params = case_spec["domain"]["geometry_params"]
    (cx, cy), r = params["center"], params["radius"]
    gmsh.initialize()
    gmsh.option.setNumber("General.Terminal", 0)
    gmsh.model.add("disk")
    disk = gmsh.model.occ.addDisk(cx, cy, 0, r, r)
    gmsh.model.occ.synchronize()
    gmsh.model.addPhysicalGroup(2, [disk], 1)
    gmsh.option.setNumber("Mesh.MeshSizeMax", 0.03)
    gmsh.model.mesh.generate(2)
    gmsh.model.mesh.setOrder(2)
    domain = gmshio.model_to_mesh(gmsh.model, MPI.COMM_WORLD, 0, gdim=2).mesh
    gmsh.finalize()
    V = fem.functionspace(domain, ("Lagrange", 2))
    X = ufl.SpatialCoordinate(domain)
    sx, sy = sp.symbols("x y")
    to_ufl = {"sin": ufl.sin, "cos": ufl.cos, "exp": ufl.exp, "pi": np.pi}
    pde = case_spec["pde"]
    f = sp.lambdify((sx, sy), sp.sympify(pde["source_term"]), to_ufl)(X[0], X[1])
    g_expr = sp.lambdify((sx, sy), sp.sympify(case_spec["bc"]["dirichlet"]["value"]), "numpy")
    g = fem.Function(V)
    g.interpolate(lambda p: np.broadcast_to(g_expr(p[0], p[1]), p[0].shape))
    domain.topology.create_connectivity(1, 2)
    dofs = fem.locate_dofs_topological(V, 1, mesh.exterior_facet_indices(domain.topology))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    problem = LinearProblem(ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx, f * v * ufl.dx,
                            bcs=[fem.dirichletbc(g, dofs)], petsc_options_prefix="pub_",
                            petsc_options={"ksp_type": "preonly", "pc_type": "lu"})
    uh = problem.solve()
    grid = case_spec["output"]["grid"]
    nx, ny, bbox = grid["nx"], grid["ny"], grid["bbox"]
    XX, YY = np.meshgrid(np.linspace(bbox[0], bbox[1], nx), np.linspace(bbox[2], bbox[3], ny))
    points = np.column_stack([XX.ravel(), YY.ravel(), np.zeros(XX.size)])
    tree = geometry.bb_tree(domain, 2)
    cells = geometry.compute_colliding_cells(domain, geometry.compute_collisions_points(tree, points), points)
    first = np.array([cells.links(i)[0] if len(cells.links(i)) else -1 for i in range(points.shape[0])], dtype=np.int32)
    # a point of the disk between the circle and the mesh's curved edges: its closest cell
    lost = np.flatnonzero((first < 0) & ((XX.ravel() - cx) ** 2 + (YY.ravel() - cy) ** 2 <= r * r))
    if lost.size:
        count = domain.topology.index_map(2).size_local
        mids = geometry.create_midpoint_tree(domain, 2, np.arange(count, dtype=np.int32))
        first[lost] = geometry.compute_closest_entity(tree, mids, domain, points[lost])
    u_grid = np.full(points.shape[0], np.nan)
    keep = first >= 0
    u_grid[keep] = uh.eval(points[keep], first[keep])[:, 0]
    return {"u": u_grid.reshape(ny, nx), "solver_info": {"mesh_resolution": 33, "element_degree": 2,
            "ksp_type": "preonly", "pc_type": "lu", "rtol": 1e-12}}
"""

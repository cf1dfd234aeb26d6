"""Hand-written records in the shape of the published benchmark's
benchmark_v2.jsonl (one per import rule), and solver programs written for the
published contract, as its models wrote them: they read case_spec["pde"],
case_spec["bc"]["dirichlet"]["value"] and case_spec["output"]["grid"] and
return u of shape (ny, nx) with a solver_info (FIRST_CONTRACT: (nx, ny), as the
first contract asked and its published programs return)."""

from __future__ import annotations

import json
from typing import Any

import sympy as sp

x, y, t = sp.symbols("x y t")

EVAL = {
    "target_metric": "rel_L2_grid",
    "timeout_sec": 300,
    "tolerance": 10,
    "accuracy_tolerance": 10,
    "time_tolerance": 3,
}
KNOBS = [
    {"name": "mesh_resolution", "description": "Grid resolution"},
    {"name": "pc_type", "description": "jacobi/ilu/hypre"},
]


def _record(
    rid: str,
    pde: dict[str, Any],
    *,
    domain: str | dict[str, Any] = "unit_square",
    grid: dict[str, Any] | None = None,
    bc: Any = None,
    evaluation: dict[str, Any] | None = None,
    nested: bool = False,
    field: str = "scalar",
) -> dict[str, Any]:
    u = (pde.get("manufactured_solution") or {}).get("u", "0.0")
    oc = {
        "pde": pde,
        "domain": domain if isinstance(domain, dict) else {"type": domain},
        "mesh": {"resolution": 120, "cell_type": "triangle"},
        "fem": {"family": "Lagrange", "degree": 1},
        "bc": bc if bc is not None else {"dirichlet": {"on": "all", "value": u}},
        "output": {"format": "npz", "field": field, "grid": grid or {"bbox": [0, 1, 0, 1], "nx": 50, "ny": 50}},
        "oracle_solver": {"ksp_type": "cg", "pc_type": "hypre", "rtol": 1e-10},
    }
    record: dict[str, Any] = {
        "id": rid,
        "pde_classification": {"equation_type": pde["type"], "math_type": ["elliptic"]},
        "oracle_config": oc,
        "agent_knobs": KNOBS,
        "supported_libraries": ["dolfinx"],
    }
    if nested:
        oc["evaluation_config"] = evaluation or EVAL
    else:
        record["evaluation_config"] = evaluation or EVAL
    return record


def poisson(rid: str, u: sp.Expr, kappa: Any = 1, **kw: Any) -> dict[str, Any]:
    kappa = sp.sympify(kappa)
    f = -(sp.diff(kappa * sp.diff(u, x), x) + sp.diff(kappa * sp.diff(u, y), y))
    coef = {"type": "constant", "value": float(kappa)} if kappa.is_number else {"type": "expr", "expr": str(kappa)}
    pde = {
        "type": "poisson",
        "coefficients": {"kappa": coef},
        "source_term": str(sp.simplify(f)),
        "manufactured_solution": {"u": str(u)},
    }
    return _record(rid, pde, **kw)


def elasticity(rid: str, ux: sp.Expr, uy: sp.Expr, E: float = 10.0, nu: float = 0.3) -> dict[str, Any]:
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    grad = sp.Matrix([[sp.diff(ux, x), sp.diff(ux, y)], [sp.diff(uy, x), sp.diff(uy, y)]])
    eps = (grad + grad.T) / 2
    sigma = 2 * mu * eps + lam * eps.trace() * sp.eye(2)
    f = [-(sp.diff(sigma[i, 0], x) + sp.diff(sigma[i, 1], y)) for i in range(2)]
    pde = {
        "type": "linear_elasticity",
        "pde_params": {"E": E, "nu": nu},
        "source_term": [str(sp.simplify(c)) for c in f],
        "manufactured_solution": {"u": [str(ux), str(uy)]},
    }
    return _record(rid, pde, field="displacement_magnitude")


def heat(rid: str, u: sp.Expr) -> dict[str, Any]:
    f = sp.diff(u, t) - (sp.diff(u, x, 2) + sp.diff(u, y, 2))
    pde = {
        "type": "heat",
        "coefficients": {"kappa": {"type": "constant", "value": 1.0}},
        "time": {"t0": 0.0, "t_end": 0.2, "dt": 0.02, "scheme": "backward_euler"},
        "source_term": str(sp.simplify(f)),
        "initial_condition": str(u.subs(t, 0)),
        "manufactured_solution": {"u": str(u)},
    }
    return _record(rid, pde)


def flow(rid: str, family: str, stream: sp.Expr, p: sp.Expr, nu: float) -> dict[str, Any]:
    """Stokes or steady Navier-Stokes with the velocity of a stream function (divergence-free)."""
    ux, uy = sp.diff(stream, y), -sp.diff(stream, x)
    f = [-nu * (sp.diff(c, x, 2) + sp.diff(c, y, 2)) + sp.diff(p, v) for c, v in ((ux, x), (uy, y))]
    if family == "navier_stokes":
        f = [fc + ux * sp.diff(c, x) + uy * sp.diff(c, y) for fc, c in zip(f, (ux, uy), strict=True)]
    pde = {
        "type": family,
        "pde_params": {"nu": nu},
        "source_term": [str(sp.expand(c)) for c in f],
        "manufactured_solution": {"u": [str(ux), str(uy)], "p": str(p)},
    }
    return _record(rid, pde, field="velocity_magnitude")


def biharmonic(rid: str, u: sp.Expr) -> dict[str, Any]:
    lap = sp.diff(u, x, 2) + sp.diff(u, y, 2)
    f = sp.diff(lap, x, 2) + sp.diff(lap, y, 2)
    return _record(rid, {"type": "biharmonic", "source_term": str(f), "manufactured_solution": {"u": str(u)}})


def burgers(rid: str, u: sp.Expr, nu: float, time: dict[str, float] | None) -> dict[str, Any]:
    f = sp.diff(u, t) + u * (sp.diff(u, x) + sp.diff(u, y)) - nu * (sp.diff(u, x, 2) + sp.diff(u, y, 2))
    pde: dict[str, Any] = {
        "type": "burgers",
        "pde_params": {"nu": nu},
        "source_term": str(sp.expand(f)),
        "initial_condition": str(u.subs(t, 0)),
        "manufactured_solution": {"u": str(u)},
    }
    if time is not None:
        pde["time"] = time
    return _record(rid, pde)


def wave(rid: str, u: sp.Expr, c: float) -> dict[str, Any]:
    f = sp.diff(u, t, 2) - c**2 * (sp.diff(u, x, 2) + sp.diff(u, y, 2))
    pde = {
        "type": "wave",
        "pde_params": {"c": c},
        "time": {"t0": 0.0, "t_end": 0.2, "dt": 0.005},
        "source_term": str(sp.expand(f)),
        "initial_condition": str(u.subs(t, 0)),
        "initial_velocity": str(sp.diff(u, t).subs(t, 0)),
        "manufactured_solution": {"u": str(u)},
    }
    return _record(rid, pde)


SMOOTH_U = sp.exp(x) * y**2 + x * sp.sin(2 * y)
STREAM = sp.exp(x) * sp.sin(y) + x**2 * y**3 / 3
PRESSURE = sp.cos(x) * y + x**2
BURGERS_U = sp.exp(-t) * sp.sin(2 * x) * y**2 + x**2 * y**2 / 4
WAVE_U = sp.cos(t) * sp.exp(x) * y**2 + x**2 * sp.sin(t)


GRID_100 = {"bbox": [0, 1, 0, 1], "nx": 100, "ny": 100}
# per-edge Dirichlet data that agrees at the corners, listed as the published lid-driven cavities
# list theirs (top first): the traces of the harmonic exp(x) cos(y), which no record states
EDGE_VALUES = {"y1": "exp(x)*cos(1)", "y0": "exp(x)", "x0": "cos(y)", "x1": "E*cos(y)"}


def lshape(corner: float) -> dict[str, Any]:
    """The published L-shape: the unit square without its upper-right part beyond `corner`."""
    c = corner
    return {"type": "l_shape", "geometry_params": {"vertices": [[0, 0], [1, 0], [1, c], [c, c], [c, 1], [0, 1]]}}


def records() -> list[str]:
    from tests.published_cube_records import poisson3  # it builds on _record above

    """One line per import rule; expected outcomes in tests/test_cases_import.py."""
    rows = [
        poisson("poisson_smooth", SMOOTH_U, kappa=1 + x * y / 2),
        poisson("poisson_eigen", sp.sin(sp.pi * x) * sp.sin(sp.pi * y)),
        poisson(
            "poisson_legacy_tolerance",
            x**3 * y + sp.cos(y) * x**2,
            evaluation={"target_metric": "rel_L2_grid", "tolerance": 0.05, "timeout_sec": 300},
        ),
        poisson("poisson_nested_config", sp.exp(x + y / 2) * x, nested=True),
        poisson3("poisson_cube"),
        poisson("poisson_lshape", SMOOTH_U, domain=lshape(0.5), grid=GRID_100),
        poisson("poisson_lshape_corner", SMOOTH_U, domain=lshape(0.4), grid=GRID_100),
        _record(
            "poisson_edges",
            {"type": "poisson", "coefficients": {"kappa": {"type": "constant", "value": 1.0}}, "source_term": "0"},
            bc={"dirichlet": [{"on": e, "value": v} for e, v in EDGE_VALUES.items()]},
        ),
        _record(
            "stokes_three_edges",
            {"type": "stokes", "pde_params": {"nu": 1.0}, "source_term": ["0.0", "0.0"]},
            bc={"dirichlet": [{"on": e, "value": ["0.0", "0.0"]} for e in ("x0", "y0", "y1")]},
            field="velocity_magnitude",
        ),
        poisson(
            "poisson_mixed_bc",
            SMOOTH_U,
            bc={"dirichlet": {"on": "x0", "value": "0"}, "neumann": {"on": "x1", "value": "1"}},
        ),
        _record(
            "poisson_numerical",
            {"type": "poisson", "coefficients": {"kappa": {"type": "constant", "value": 1.0}}, "source_term": "1.0"},
            bc={"dirichlet": {"on": "all", "value": "0.0"}},
        ),
        _record(
            "stokes_flow",
            {
                "type": "stokes",
                "pde_params": {"nu": 1.0},
                "source_term": ["0", "0"],
                "manufactured_solution": {"u": ["y", "0"], "p": "0"},
            },
        ),
        _record(
            "rd_transient",
            {
                "type": "reaction_diffusion",
                "pde_params": {"epsilon": 0.1},
                "time": {"t0": 0.0, "t_end": 0.5, "dt": 0.01},
                "source_term": "0",
                "initial_condition": "0",
                "manufactured_solution": {"u": "exp(-t)*x*y"},
            },
        ),
        elasticity("elasticity_smooth", sp.exp(x) * sp.sin(2 * y) / 5, x**2 * y**2 - sp.cos(x * y) / 4),
        heat("heat_mixed_modes", sp.exp(-t) * sp.sin(sp.pi * x) * sp.sin(sp.pi * y) + (1 - sp.exp(-t)) * (x**2 + y)),
        flow("stokes_stream", "stokes", STREAM, PRESSURE, 0.5),
        flow("ns_zero_pressure", "navier_stokes", STREAM, sp.Integer(0), 1.0),
        biharmonic("biharmonic_plate", x**2 * y**3 - x * y + sp.cos(x + 2 * y)),
        burgers("burgers_timed", BURGERS_U, 0.1, {"t0": 0.0, "t_end": 0.2, "dt": 0.01}),
        burgers("burgers_untimed", BURGERS_U, 0.1, None),
        wave("wave_travel", WAVE_U, 1.0),
    ]
    return [json.dumps(r) for r in rows] + ["{not json"]


_PROGRAM = """
from mpi4py import MPI
import numpy as np
import sympy as sp
import ufl
from dolfinx import fem, geometry, mesh
from dolfinx.fem.petsc import LinearProblem


def solve(case_spec):
    pde = case_spec["pde"]
    n = 48
    domain = mesh.create_unit_square(MPI.COMM_WORLD, n, n)
    V = fem.functionspace(domain, ("Lagrange", 2))
    X = ufl.SpatialCoordinate(domain)
    sx, sy = sp.symbols("x y")
    to_ufl = {{"sin": ufl.sin, "cos": ufl.cos, "exp": ufl.exp, "pi": np.pi}}
    kappa = pde["coefficients"]["kappa"]
    k = kappa["value"] if kappa["type"] == "constant" else sp.lambdify((sx, sy), sp.sympify(kappa["expr"]), to_ufl)(X[0], X[1])
    f = sp.lambdify((sx, sy), sp.sympify(pde["source_term"]), to_ufl)(X[0], X[1])
    g_expr = sp.lambdify((sx, sy), sp.sympify(case_spec["bc"]["dirichlet"]["value"]), "numpy")
    g = fem.Function(V)
    g.interpolate(lambda p: {sign}np.broadcast_to(g_expr(p[0], p[1]), p[0].shape))
    domain.topology.create_connectivity(1, 2)
    dofs = fem.locate_dofs_topological(V, 1, mesh.exterior_facet_indices(domain.topology))
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    problem = LinearProblem(k * ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx, f * v * ufl.dx,
                            bcs=[fem.dirichletbc(g, dofs)], petsc_options_prefix="pub_",
                            petsc_options={{"ksp_type": "{ksp}", "pc_type": "{pc}", "ksp_rtol": 1e-12}})
    uh = problem.solve()
    grid = case_spec["output"]["grid"]
    nx, ny, bbox = grid["nx"], grid["ny"], grid["bbox"]
    XX, YY = np.meshgrid(np.linspace(bbox[0], bbox[1], nx), np.linspace(bbox[2], bbox[3], ny){indexing})
    points = np.column_stack([XX.ravel(), YY.ravel(), np.zeros(XX.size)])
    tree = geometry.bb_tree(domain, 2)
    cells = geometry.compute_colliding_cells(domain, geometry.compute_collisions_points(tree, points), points)
    first = np.array([cells.links(i)[0] for i in range(points.shape[0])], dtype=np.int32)
    u_grid = uh.eval(points, first).reshape({rows}){transpose}
    return {{"u": u_grid, "solver_info": {{"mesh_resolution": n, "element_degree": 2, "ksp_type": "{ksp}",
                                          "pc_type": "{pc}", "rtol": 1e-12}}}}
"""

LU = {"ksp": "preonly", "pc": "lu"}
SECOND = {"indexing": "", "rows": "ny, nx"}  # the second contract's layout (and ours): rows are y
PUBLISHED_CORRECT = _PROGRAM.format(sign="", transpose="", **SECOND, **LU)
PUBLISHED_WRONG_BC_SIGN = _PROGRAM.format(sign="-", transpose="", **SECOND, **LU)
PUBLISHED_TRANSPOSED = _PROGRAM.format(sign="", transpose=".T", **SECOND, **LU)
PUBLISHED_HYPRE = _PROGRAM.format(sign="", transpose="", ksp="cg", pc="hypre", **SECOND)
# Written for the first contract (benchmark_v1: "u": numpy array with shape (nx, ny)), as its
# published programs sample: meshgrid(..., indexing="ij"), u[ix, iy].
FIRST_CONTRACT = _PROGRAM.format(sign="", transpose="", indexing=', indexing="ij"', rows="nx, ny", **LU)

"""Shared parts of the DOLFINx calibration solvers (dolfinx_fem.py, dolfinx_flow.py,
dolfinx_dynamics.py): the structured P2 mesh whose nodes are the in-domain grid
points, the `Setup` a family's function receives (spaces, the spec's expressions
as UFL, the Dirichlet data per boundary piece, the output read off the dofs), one
LU-solved linear problem, the time steps of the time-dependent families."""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # isort: skip

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import basix.ufl
import numpy as np
import ufl
from dolfinx import fem
from dolfinx import mesh as dmesh
from dolfinx.fem.petsc import LinearProblem
from petsc4py import PETSc

from fembench_agents.cases.calibration.common import (
    GridProblem,
    components,
    inside_polygon_closed,
    kept_cells_as_triangles,
)
from fembench_agents.cases.domains import on_segment
from fembench_agents.cases.expressions import check_expr, compile_expr

_C_INT_MAX = 2**31 - 1
LU = {"ksp_type": "preonly", "pc_type": "lu", "pc_factor_mat_solver_type": "mumps"}
_UFL_NAMES: dict[str, Any] = {
    "sin": ufl.sin,
    "cos": ufl.cos,
    "tan": ufl.tan,
    "exp": ufl.exp,
    "log": ufl.ln,
    "sqrt": ufl.sqrt,
    "sinh": ufl.sinh,
    "cosh": ufl.cosh,
    "tanh": ufl.tanh,
    "atan": ufl.atan,
    "pi": math.pi,
    "E": math.e,
}


@dataclass
class Setup:
    spec: dict[str, Any]
    grid: GridProblem | None  # None on the unit cube (dolfinx_cube.CubeSetup reads its own grid)
    domain: dmesh.Mesh
    cells: int  # cells per direction of the structured mesh

    def space(self, vector: bool = False) -> fem.FunctionSpace:
        dim = self.domain.geometry.dim
        return fem.functionspace(self.domain, ("Lagrange", 2, (dim,)) if vector else ("Lagrange", 2))

    def expr(self, text: Any, **values: Any) -> Any:
        """A spec expression (or number) as UFL in x, y (z in 3D) and the given values (t, u)."""
        X = ufl.SpatialCoordinate(self.domain)
        scope = {**_UFL_NAMES, **dict(zip("xyz", X, strict=False)), **values}
        tree = check_expr(str(text))
        for node in ast.walk(tree):  # ffcx writes integers as C integer literals: a large one overflows
            if isinstance(node, ast.Constant) and isinstance(node.value, int) and abs(node.value) > _C_INT_MAX:
                node.value = float(node.value)
        code = compile(tree, "<case expression>", "eval")
        value = eval(code, {"__builtins__": {}}, scope)  # noqa: S307 - syntax tree checked
        return value if isinstance(value, ufl.core.expr.Expr) else fem.Constant(self.domain, float(value))

    @property
    def dx(self) -> ufl.Measure:
        """The cell integral of the family's forms (the cube's caps its quadrature degree)."""
        return ufl.dx

    def time_steps(self) -> tuple[float, float, int, float]:
        """t0, t_end, the number of steps and dt (time_steps below)."""
        return time_steps(self.spec)

    def coefficient(self, name: str) -> Any:
        return self.expr(self.spec["coefficients"][name])

    def boundary(
        self, V: fem.FunctionSpace, t: float | None = None, component: int | None = None
    ) -> tuple[fem.Function, Callable[[float | None], None], fem.DirichletBC]:
        """The Dirichlet condition on every boundary dof, valued per boundary piece
        (the first piece listed wins at shared corners); `update(t)` re-evaluates it.
        `component`: a scalar space takes that component of each piece's value."""
        self.domain.topology.create_connectivity(1, 2)
        facets = dmesh.exterior_facet_indices(self.domain.topology)
        dofs = fem.locate_dofs_topological(V, 1, facets)
        coords = V.tabulate_dof_coordinates()[dofs]
        x, y = coords[:, 0], coords[:, 1]
        g = fem.Function(V)
        ncomp = V.dofmap.index_map_bs
        values = g.x.array.reshape(-1, ncomp)

        def update(t: float | None = None) -> None:
            filled = np.zeros(dofs.size, dtype=bool)
            for piece in reversed(self.spec["boundary"]):
                a, b = piece["segment"]
                sel = on_segment(x, y, tuple(a), tuple(b))
                filled |= sel
                texts = components(piece["value"])
                for c, text in enumerate(texts if component is None else [texts[component]]):
                    values[dofs[sel], c] = compile_expr(text)(x=x[sel], y=y[sel], t=t)
            if not filled.all():
                raise RuntimeError("a boundary dof lies on no boundary piece")

        update(t)
        return g, update, fem.dirichletbc(g, dofs)

    def output(self, u: fem.Function) -> np.ndarray:
        """Nodal values on the grid (P2 nodes are grid points), NaN outside the domain."""
        g = self.spec["grid"]
        x0, x1, y0, y1 = g["bbox"]
        nx, ny = g["nx"], g["ny"]
        coords = u.function_space.tabulate_dof_coordinates()
        fi = (coords[:, 0] - x0) / (x1 - x0) * (nx - 1)
        fj = (coords[:, 1] - y0) / (y1 - y0) * (ny - 1)
        i, j = np.rint(fi).astype(int), np.rint(fj).astype(int)
        at = (np.abs(fi - i) < 1e-8) & (np.abs(fj - j) < 1e-8)  # dofs that sit on grid points
        ncomp = u.function_space.dofmap.index_map_bs
        values = u.x.array.reshape(-1, ncomp)[: coords.shape[0]]
        out = np.full((ncomp, ny, nx), np.nan)
        for c in range(ncomp):
            out[c, j[at], i[at]] = values[at, c]
        if self.grid is None:
            raise ValueError("Setup.output reads a 2D grid; a cube's setup reads its own (dolfinx_cube.py)")
        out[:, ~self.grid.inside] = np.nan
        if ncomp > 1 and self.spec["output"].get("field") in ("displacement_magnitude", "velocity_magnitude"):
            return np.sqrt((out**2).sum(axis=0))  # an imported case keeps the published output
        return out if ncomp > 1 else out[0]


def structured_mesh(spec: dict[str, Any]) -> tuple[dmesh.Mesh, int]:
    """Triangles on a structured grid of the bbox whose nodes include every grid point: half the
    grid's resolution where P2 midpoints then land on grid points (nx - 1 even), the grid itself
    otherwise. A cell is kept if its centre is in the domain. A domain corner off those lines (an
    imported case's 100 x 100 grid on the L-shape: (0.5, 0.5)) gets a line of its own, so the mesh
    is the domain; the grid points stay nodes (the grid itself is the mesh there: nx - 1 odd)."""
    g = spec["grid"]
    x0, x1, y0, y1 = g["bbox"]
    nx, ny = g["nx"], g["ny"]
    cx = (nx - 1) // 2 if (nx - 1) % 2 == 0 else nx - 1
    cy = (ny - 1) // 2 if (ny - 1) % 2 == 0 else ny - 1
    xs, ys = np.linspace(x0, x1, cx + 1), np.linspace(y0, y1, cy + 1)
    corners = [p for poly in (spec["domain"]["outer"], *spec["domain"]["holes"]) for p in poly]
    xs, ys = (_with_lines(v, [float(p[k]) for p in corners]) for k, v in ((0, xs), (1, ys)))
    Xc, Yc = np.meshgrid((xs[:-1] + xs[1:]) / 2, (ys[:-1] + ys[1:]) / 2)
    points, triangles = kept_cells_as_triangles(inside_polygon_closed(spec, Xc, Yc), xs, ys)
    coordinate_element = ufl.Mesh(basix.ufl.element("Lagrange", "triangle", 1, shape=(2,)))
    return dmesh.create_mesh(MPI.COMM_SELF, triangles, coordinate_element, points), cx


def _with_lines(nodes: np.ndarray, at: list[float]) -> np.ndarray:
    """The sorted nodes plus each coordinate in `at` inside their range that is no node yet."""
    extra = [v for v in at if nodes[0] < v < nodes[-1] and np.abs(nodes - v).min() > 1e-9]
    return np.unique(np.concatenate([nodes, extra])) if extra else nodes


def linear(a: Any, L: Any, bcs: list[fem.DirichletBC], u: fem.Function) -> fem.Function:
    problem = LinearProblem(a, L, bcs=bcs, u=u, petsc_options_prefix="calibration_", petsc_options=LU)
    problem.solve()
    return u


def time_steps(spec: dict[str, Any]) -> tuple[float, float, int, float]:
    """t0, t_end, the number of steps (one per grid spacing, as the other tracks take) and dt."""
    t0, t1 = float(spec["time"]["t0"]), float(spec["time"]["t_end"])
    steps = max(1, math.ceil((t1 - t0) * (spec["grid"]["nx"] - 1)))
    return t0, t1, steps, (t1 - t0) / steps


def lu_solver(A: PETSc.Mat) -> PETSc.KSP:
    """preonly + MUMPS LU on A (factorised at the first solve)."""
    ksp = PETSc.KSP().create(PETSc.COMM_SELF)
    ksp.setOperators(A)
    ksp.setType("preonly")
    ksp.getPC().setType("lu")
    ksp.getPC().setFactorSolverType("mumps")
    return ksp


def nodal(V: fem.FunctionSpace, text: Any, t: float | None = None) -> np.ndarray:
    """A spec expression at the dofs of a scalar space (its nodal interpolant); the dof
    coordinates always have three columns (z = 0 on a 2D mesh)."""
    coords = V.tabulate_dof_coordinates()
    value = compile_expr(text)(x=coords[:, 0], y=coords[:, 1], z=coords[:, 2], t=t)
    return np.broadcast_to(value, coords.shape[:1]).copy()

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
from dolfinx.cpp import mesh as cpp_mesh
from dolfinx.fem.petsc import LinearProblem, apply_lifting, assemble_matrix, assemble_vector, set_bc
from petsc4py import PETSc

from fembench_agents.cases.calibration.common import (
    READ_EVERY,
    GridProblem,
    components,
    inside_polygon_closed,
    kept_cells_as_triangles,
    nearest_piece,
    time_steps,
)
from fembench_agents.cases.calibration.dolfinx_periodic import (
    FACTORISATIONS,
    LinearSolver,
    Reduction,
    direct_solver,
    reduction,
)
from fembench_agents.cases.case_spec import NATURAL_KINDS
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
    cells: int  # cells per direction of the structured mesh (per unit length of an unstructured one)
    # an unstructured mesh's output: point evaluation at the in-domain grid points (dolfinx_gmsh.py)
    sampler: Callable[[fem.Function], np.ndarray] | None = None
    _facets: tuple[np.ndarray, np.ndarray] | None = None
    _ds: ufl.Measure | None = None

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
        """t0, t_end, the number of steps and dt (common.time_steps)."""
        return time_steps(self.spec)

    @property
    def stepped_factorisation(self) -> str:
        """How a time loop factorises its symmetric positive definite matrix, solved every step:
        PETSc's Cholesky in 2D (its triangular solves are fast), MUMPS LU in 3D, where PETSc's
        own factorisation fills in far more (16 s for 36,000 P2 unknowns on the cube)."""
        return "cholesky" if self.domain.geometry.dim == 2 else "lu"

    def coefficient(self, name: str) -> Any:
        return self.expr(self.spec["coefficients"][name])

    def piece_facets(self) -> tuple[np.ndarray, np.ndarray]:
        """The exterior facets and, per facet, the index of the boundary piece it lies on (the
        first piece listed wins, as at shared corners; on an unstructured mesh the nearest piece)."""
        if self._facets is None:
            self.domain.topology.create_connectivity(1, 2)
            facets = dmesh.exterior_facet_indices(self.domain.topology)
            mid = dmesh.compute_midpoints(self.domain, 1, facets)
            index = np.full(facets.size, -1, dtype=np.int32)
            if self.sampler is not None:
                # an unstructured mesh of a published geometry: a facet on a curved piece lies on its
                # arc only up to the mesh's geometry, so each facet goes to its nearest piece (the
                # distance to the segment, or to the arc's circle)
                index[:] = nearest_piece(self.spec["boundary"], mid[:, 0], mid[:, 1])
            else:
                for k in reversed(range(len(self.spec["boundary"]))):
                    a, b = self.spec["boundary"][k]["segment"]
                    index[on_segment(mid[:, 0], mid[:, 1], tuple(a), tuple(b))] = k
            if (index < 0).any():
                raise RuntimeError("a boundary facet lies on no boundary piece")
            self._facets = (facets, index)
        return self._facets

    def kinds(self) -> list[str]:
        return [piece.get("kind", "dirichlet") for piece in self.spec["boundary"]]

    def dirichlet_facets(self) -> np.ndarray:
        facets, index = self.piece_facets()
        on_dirichlet = np.array([k == "dirichlet" for k in self.kinds()])
        return facets[on_dirichlet[index]]

    def has_natural(self) -> bool:
        """A piece whose condition is natural (a flux, Robin or do-nothing), not a Dirichlet or periodic one."""
        return any(k in NATURAL_KINDS for k in self.kinds())

    def ds(self) -> ufl.Measure:
        """The boundary measure, ds(k + 1) on piece k (one per setup: a form's integrals must
        share their facet tags)."""
        if self._ds is None:
            facets, index = self.piece_facets()
            order = np.argsort(facets)
            fdim = self.domain.topology.dim - 1
            tags = dmesh.meshtags(self.domain, fdim, facets[order], (index[order] + 1).astype(np.int32))
            self._ds = ufl.Measure("ds", domain=self.domain, subdomain_data=tags)
        return self._ds

    def natural_load(self, v: Any, t: Any = None) -> Any:
        """sum over natural pieces of (g, v) on the piece: the flux data g a family's weak form
        puts on its boundary (k du/dn, sigma n, nu du/dn - p n); 0 (a number) when none."""
        ds = self.ds()
        form: Any = 0
        for k, piece in enumerate(self.spec["boundary"]):
            if piece.get("kind", "dirichlet") not in NATURAL_KINDS:
                continue
            texts = components(piece["value"])
            g = [self.expr(e, t=t) if t is not None else self.expr(e) for e in texts]
            form = form + (ufl.dot(ufl.as_vector(g), v) if len(g) > 1 else g[0] * v) * ds(k + 1)
        return form

    def robin_mass(self, u: Any, v: Any) -> Any:
        """sum over robin pieces of alpha u v on the piece; 0 (a number) when none."""
        ds = self.ds()
        form: Any = 0
        for k, piece in enumerate(self.spec["boundary"]):
            if piece.get("kind") == "robin":
                form = form + self.expr(piece["alpha"]) * u * v * ds(k + 1)
        return form

    def boundary(
        self, V: fem.FunctionSpace, t: float | None = None, component: int | None = None
    ) -> tuple[fem.Function, Callable[[float | None], None], fem.DirichletBC]:
        """The Dirichlet condition on every dof of a Dirichlet piece's facets, valued per piece
        (the first Dirichlet piece listed wins at shared corners); `update(t)` re-evaluates it.
        `component`: a scalar space takes that component of each piece's value."""
        dofs = fem.locate_dofs_topological(V, self.domain.topology.dim - 1, self.dirichlet_facets())
        coords = V.tabulate_dof_coordinates()[dofs]
        x, y = coords[:, 0], coords[:, 1]
        g = fem.Function(V)
        ncomp = V.dofmap.index_map_bs
        values = g.x.array.reshape(-1, ncomp)

        owner = None
        if self.sampler is not None:  # an unstructured mesh: each dof goes to its nearest Dirichlet piece
            kept = [k for k, kind in enumerate(self.kinds()) if kind == "dirichlet"]
            owner = np.asarray(kept)[nearest_piece([self.spec["boundary"][k] for k in kept], x, y)]

        def update(t: float | None = None) -> None:
            filled = np.zeros(dofs.size, dtype=bool)
            for k, piece in reversed(list(enumerate(self.spec["boundary"]))):
                if piece.get("kind", "dirichlet") != "dirichlet":
                    continue
                if owner is None:
                    a, b = piece["segment"]
                    sel = on_segment(x, y, tuple(a), tuple(b))
                else:
                    sel = owner == k
                filled |= sel
                texts = components(piece["value"])
                for c, text in enumerate(texts if component is None else [texts[component]]):
                    values[dofs[sel], c] = compile_expr(text)(x=x[sel], y=y[sel], t=t)
            if not filled.all():
                raise RuntimeError("a boundary dof lies on no boundary piece")

        update(t)
        return g, update, fem.dirichletbc(g, dofs)

    @property
    def periodic(self) -> bool:
        return any(p.get("kind") == "periodic" for p in self.spec["boundary"])

    def refuse_periodic(self, what: str) -> None:
        if self.periodic:
            raise ValueError(
                f"periodic pieces: the DOLFINx calibration reduces linear solves only, not the {what} of "
                f"{self.spec['family']}"
            )

    def reduction(self, V: fem.FunctionSpace, bcs: list[fem.DirichletBC]) -> Reduction | None:
        """The reduction of V's systems to the periodic pieces' sources, None without periodic pieces."""
        return reduction(self.spec, V, bcs)

    def output(self, u: fem.Function) -> np.ndarray:
        """Nodal values on the grid (P2 nodes are grid points), or the sampler's point values on an
        unstructured mesh; NaN outside the domain."""
        if self.sampler is not None:
            return _published_output(self.spec, self.sampler(u))
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
        return _published_output(self.spec, out)


def _published_output(spec: dict[str, Any], out: np.ndarray) -> np.ndarray:
    if out.shape[0] > 1 and spec["output"].get("field") in ("displacement_magnitude", "velocity_magnitude"):
        return np.sqrt((out**2).sum(axis=0))  # an imported case keeps the published output
    return out if out.shape[0] > 1 else out[0]


def structured_mesh(spec: dict[str, Any]) -> tuple[dmesh.Mesh, int]:
    """Triangles on a structured grid of the bbox whose nodes include every grid point: half the
    grid's resolution where P2 midpoints then land on grid points (nx - 1 even), the grid itself
    otherwise. A cell is kept if its centre is in the domain. A domain corner off those lines (an
    imported case's 100 x 100 grid on the L-shape: (0.5, 0.5)) gets a line of its own, so the mesh
    is the domain; the grid points stay nodes (the grid itself is the mesh there: nx - 1 odd).
    A refined solve's grid (common.refined) is read at every r-th point only: those stay nodes."""
    g = spec["grid"]
    x0, x1, y0, y1 = g["bbox"]
    corners = [p for poly in (spec["domain"]["outer"], *spec["domain"]["holes"]) for p in poly]
    every = int(spec.get(READ_EVERY, 1))
    xs, cx = _mesh_lines(x0, x1, g["nx"], [float(p[0]) for p in corners], every)
    ys, _ = _mesh_lines(y0, y1, g["ny"], [float(p[1]) for p in corners], every)
    Xc, Yc = np.meshgrid((xs[:-1] + xs[1:]) / 2, (ys[:-1] + ys[1:]) / 2)
    points, triangles = kept_cells_as_triangles(inside_polygon_closed(spec, Xc, Yc), xs, ys)
    coordinate_element = ufl.Mesh(basix.ufl.element("Lagrange", "triangle", 1, shape=(2,)))
    return dmesh.create_mesh(MPI.COMM_SELF, triangles, coordinate_element, points), cx


def _mesh_lines(lo: float, hi: float, n: int, corners: list[float], every: int = 1) -> tuple[np.ndarray, int]:
    """The mesh lines along one axis of n grid points and the cell count of its rule: every other
    grid line where n - 1 is even, else every one, plus a line through each corner off them. A
    corner line splits a cell, whose P2 midpoints then miss the grid row it held (burgers_lshape_v3:
    the corner y = 0.5 on 75 points of [0, 1.5], the row y = 0.507 left without a node, 25 NaN
    points): where a grid point that is read (every `every`-th) is then no P2 node, every grid line
    is taken instead. A refined solve's other points are never read: the L-shape's corner 0.4 on
    100 points refined 4x splits a cell about the refined point 159, not one of the 100 read, and
    taking every line there would make four times the unknowns."""
    cells = (n - 1) // 2 if (n - 1) % 2 == 0 else n - 1
    lines = _with_lines(np.linspace(lo, hi, cells + 1), corners)
    nodes = np.concatenate([lines, (lines[:-1] + lines[1:]) / 2])
    read = np.linspace(lo, hi, n)[::every]
    if np.abs(read[:, None] - nodes[None, :]).min(axis=1).max() > 1e-9 * (hi - lo):
        cells = n - 1
        lines = _with_lines(np.linspace(lo, hi, n), corners)
    return lines, cells


def _with_lines(nodes: np.ndarray, at: list[float]) -> np.ndarray:
    """The sorted nodes plus each coordinate in `at` inside their range that is no node yet."""
    extra = [v for v in at if nodes[0] < v < nodes[-1] and np.abs(nodes - v).min() > 1e-9]
    return np.unique(np.concatenate([nodes, extra])) if extra else nodes


def linear(
    a: Any,
    L: Any,
    bcs: list[fem.DirichletBC],
    u: fem.Function,
    reduced: Reduction | None = None,
    factorisation: str = "lu",
) -> fem.Function:
    """One direct solve into u (dolfinx_periodic.FACTORISATIONS); with periodic pieces, of the
    reduced system."""
    if reduced is None:
        pc_type, package = FACTORISATIONS[factorisation]
        options = {**LU, "pc_type": pc_type, "pc_factor_mat_solver_type": package}
        problem = LinearProblem(a, L, bcs=bcs, u=u, petsc_options_prefix="calibration_", petsc_options=options)
        problem.solve()
        return u
    form_a, form_L = fem.form(a), fem.form(L)
    A = assemble_matrix(form_a, bcs=bcs)
    A.assemble()
    b = assemble_vector(form_L)
    apply_lifting(b, [form_a], [bcs])
    set_bc(b, bcs)  # one rank (an MPI singleton): no ghost values to exchange
    solver = reduced.solver(A, factorisation)
    solver.solve(b, u.x.petsc_vec)
    u.x.scatter_forward()
    solver.destroy()
    A.destroy()
    b.destroy()
    return u


def matrix(form: Any, bcs: list[fem.DirichletBC] | None = None) -> PETSc.Mat:
    """A bilinear form (UFL) assembled into a new matrix."""
    A = assemble_matrix(fem.form(form), bcs=bcs or [])
    A.assemble()
    return A


def streamline_weight(s: Setup, v: Any) -> Any | None:
    """SUPG's weight tau b . grad v of convection-diffusion (coefficients b and eps), which the
    strong residual multiplies (a consistent term: the exact solution's residual is zero), or None
    where every cell's Peclet number |b| h / (2 eps) is at most 1: Galerkin is stable there and
    stays as it was. Past 1 its oscillations spread upstream from an unresolved layer over the
    whole domain (epsilon 0.005 against |b| 16.6 on the 50-point grid: 0.22 off its own 8x
    solve). tau is Shakib's, 1 / sqrt((2 |b| / h)^2 + 9 (4 eps / h^2)^2), with P2's element length
    h = diameter / 2: h / (2 |b|) where convection dominates, h^2 / (12 eps) where diffusion does.
    The diameter is a cell-wise function (ufl's CellDiameter has no code for a curved geometry)."""
    V = s.space()
    texts = s.spec["coefficients"]["b"]
    speed = np.sqrt(sum(nodal(V, e) ** 2 for e in texts))
    tdim = s.domain.topology.dim
    cells = np.arange(s.domain.topology.index_map(tdim).size_local, dtype=np.int32)
    diameters = cpp_mesh.h(s.domain._cpp_object, tdim, cells)
    if float(speed.max()) * float(diameters.max()) / 2 <= 2 * float(nodal(V, s.spec["coefficients"]["eps"]).min()):
        return None
    h = fem.Function(fem.functionspace(s.domain, ("DG", 0)))
    h.x.array[: cells.size] = diameters / 2
    b, eps = ufl.as_vector([s.expr(e) for e in texts]), s.coefficient("eps")
    tau = 1 / ufl.sqrt((2 * ufl.sqrt(ufl.dot(b, b)) / h) ** 2 + 9 * (4 * eps / h**2) ** 2)
    return tau * ufl.dot(b, ufl.grad(v))


def lu_solver(A: PETSc.Mat, reduced: Reduction | None = None, factorisation: str = "lu") -> LinearSolver:
    """preonly + a direct factorisation of A (MUMPS LU unless named: dolfinx_periodic.FACTORISATIONS),
    factorised at the first solve; with periodic pieces, of the reduced A."""
    if reduced is not None:
        return reduced.solver(A, factorisation)
    return direct_solver(A, factorisation)


def nodal_in_time(V: fem.FunctionSpace, text: Any) -> Callable[[float | None], np.ndarray]:
    """A spec expression at the dofs of a scalar space (its nodal interpolant) as a function of t:
    the dof coordinates and the compiled expression are made once for every step of a time loop.
    The coordinates always have three columns (z = 0 on a 2D mesh)."""
    coords = V.tabulate_dof_coordinates()
    expression = compile_expr(text)

    def at(t: float | None = None) -> np.ndarray:
        value = expression(x=coords[:, 0], y=coords[:, 1], z=coords[:, 2], t=t)
        return np.broadcast_to(value, coords.shape[:1]).copy()

    return at


def nodal(V: fem.FunctionSpace, text: Any, t: float | None = None) -> np.ndarray:
    """A spec expression at the dofs of a scalar space at time t (nodal_in_time)."""
    return nodal_in_time(V, text)(t)

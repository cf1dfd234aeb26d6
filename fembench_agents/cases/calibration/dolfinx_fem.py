"""Calibration solvers of the DOLFINx track (DOLFINx 0.11): P2 triangles on a
structured mesh of half the grid's resolution, as the scikit-fem track does,
so that the P2 nodes are exactly the in-domain grid points and the output is
read off the degrees of freedom (no point evaluation).

Each family is one function of a `Setup` (mesh, spaces, the spec's
expressions as UFL, the Dirichlet data per boundary piece) returning the
solution and what to add to solver_info: adding a family is adding one
function to FAMILIES. Linear solves are PETSc `preonly` + LU (MUMPS, the
build has no hypre); the nonlinear family uses SNES Newton.
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # isort: skip

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import basix.ufl
import numpy as np
import ufl
from dolfinx import fem
from dolfinx import mesh as dmesh
from dolfinx.fem.petsc import LinearProblem, NonlinearProblem, apply_lifting, assemble_matrix, assemble_vector, set_bc
from petsc4py import PETSc

from fembench_agents.cases.calibration.common import GridProblem, components, grid_problem, inside_polygon_closed
from fembench_agents.cases.domains import on_segment
from fembench_agents.cases.expressions import check_expr, compile_expr

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
    grid: GridProblem
    domain: dmesh.Mesh
    cells: int  # cells per direction of the structured mesh

    def space(self, vector: bool = False) -> fem.FunctionSpace:
        return fem.functionspace(self.domain, ("Lagrange", 2, (2,)) if vector else ("Lagrange", 2))

    def expr(self, text: Any, **values: Any) -> Any:
        """A spec expression (or number) as UFL in x, y and the given values (t, u)."""
        X = ufl.SpatialCoordinate(self.domain)
        scope = {**_UFL_NAMES, "x": X[0], "y": X[1], **values}
        code = compile(check_expr(str(text)), "<case expression>", "eval")
        value = eval(code, {"__builtins__": {}}, scope)  # noqa: S307 - syntax tree checked
        return value if isinstance(value, ufl.core.expr.Expr) else fem.Constant(self.domain, float(value))

    def coefficient(self, name: str) -> Any:
        return self.expr(self.spec["coefficients"][name])

    def boundary(
        self, V: fem.FunctionSpace, t: float | None = None
    ) -> tuple[fem.Function, Callable[[float | None], None], fem.DirichletBC]:
        """The Dirichlet condition on every boundary dof, valued per boundary piece
        (the first piece listed wins at shared corners); `update(t)` re-evaluates it."""
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
                for c, text in enumerate(components(piece["value"])):
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
        out[:, ~self.grid.inside] = np.nan
        if ncomp > 1 and self.spec["output"].get("field") == "displacement_magnitude":
            return np.sqrt((out**2).sum(axis=0))  # an imported case keeps the published output
        return out if ncomp > 1 else out[0]


def structured_mesh(spec: dict[str, Any]) -> tuple[dmesh.Mesh, int]:
    """Triangles on a structured grid of the bbox whose nodes include every grid point: half the
    grid's resolution where P2 midpoints then land on grid points (nx - 1 even), the grid itself
    otherwise. A cell is kept if its centre is in the domain."""
    g = spec["grid"]
    x0, x1, y0, y1 = g["bbox"]
    nx, ny = g["nx"], g["ny"]
    cx = (nx - 1) // 2 if (nx - 1) % 2 == 0 else nx - 1
    cy = (ny - 1) // 2 if (ny - 1) % 2 == 0 else ny - 1
    xs, ys = np.linspace(x0, x1, cx + 1), np.linspace(y0, y1, cy + 1)
    Xc, Yc = np.meshgrid((xs[:-1] + xs[1:]) / 2, (ys[:-1] + ys[1:]) / 2)
    keep = inside_polygon_closed(spec, Xc, Yc)
    used = np.zeros((cy + 1, cx + 1), dtype=bool)
    for dj in (0, 1):
        for di in (0, 1):
            used[dj : dj + cy, di : di + cx] |= keep
    vid = np.full((cy + 1, cx + 1), -1, dtype=np.int64)
    vid[used] = np.arange(int(used.sum()))
    X, Y = np.meshgrid(xs, ys)
    points = np.column_stack([X[used], Y[used]])
    j, i = np.nonzero(keep)
    a, b, c, d = vid[j, i], vid[j, i + 1], vid[j + 1, i + 1], vid[j + 1, i]
    triangles = np.vstack([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    coordinate_element = ufl.Mesh(basix.ufl.element("Lagrange", "triangle", 1, shape=(2,)))
    return dmesh.create_mesh(MPI.COMM_SELF, triangles, coordinate_element, points), cx


def _linear(s: Setup, a: Any, L: Any, bcs: list[fem.DirichletBC], u: fem.Function) -> fem.Function:
    problem = LinearProblem(a, L, bcs=bcs, u=u, petsc_options_prefix="calibration_", petsc_options=LU)
    problem.solve()
    return u


def poisson(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, _, bc = s.boundary(V)
    a = s.coefficient("k") * ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx
    L = s.expr(s.spec["forcing"]) * v * ufl.dx
    return _linear(s, a, L, [bc], fem.Function(V)), {}


def helmholtz(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, _, bc = s.boundary(V)
    k = s.coefficient("k")
    a = (ufl.inner(ufl.grad(u), ufl.grad(v)) - k * k * u * v) * ufl.dx
    L = s.expr(s.spec["forcing"]) * v * ufl.dx
    return _linear(s, a, L, [bc], fem.Function(V)), {}


def convection_diffusion(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, _, bc = s.boundary(V)
    bx, by = (s.expr(e) for e in s.spec["coefficients"]["b"])
    b = ufl.as_vector([bx, by])
    a = (s.coefficient("eps") * ufl.inner(ufl.grad(u), ufl.grad(v)) + ufl.dot(b, ufl.grad(u)) * v) * ufl.dx
    L = s.expr(s.spec["forcing"]) * v * ufl.dx
    return _linear(s, a, L, [bc], fem.Function(V)), {}


def elasticity(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space(vector=True)
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, _, bc = s.boundary(V)
    E, nu = float(s.spec["coefficients"]["E"]), float(s.spec["coefficients"]["nu"])
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))

    def sigma(w: Any) -> Any:
        eps = ufl.sym(ufl.grad(w))
        return 2 * mu * eps + lam * ufl.tr(eps) * ufl.Identity(2)

    f = ufl.as_vector([s.expr(e) for e in s.spec["forcing"]])
    a = ufl.inner(sigma(u), ufl.sym(ufl.grad(v))) * ufl.dx
    L = ufl.dot(f, v) * ufl.dx
    return _linear(s, a, L, [bc], fem.Function(V)), {}


def reaction_diffusion(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    u, v = fem.Function(V), ufl.TestFunction(V)
    g, _, bc = s.boundary(V)
    u.x.array[:] = g.x.array  # a start that satisfies the boundary data (0 inside)
    R = s.expr(s.spec["coefficients"]["R"], u=u)
    F = (s.coefficient("D") * ufl.inner(ufl.grad(u), ufl.grad(v)) + R * v - s.expr(s.spec["forcing"]) * v) * ufl.dx
    options = {"snes_type": "newtonls", "snes_linesearch_type": "basic", "snes_rtol": 1e-12, "snes_atol": 1e-13, **LU}
    problem = NonlinearProblem(F, u, bcs=[bc], petsc_options_prefix="calibration_rd_", petsc_options=options)
    problem.solve()
    snes = problem.solver
    reason: int = snes.getConvergedReason()  # type: ignore[assignment]  # an int enum at run time
    if reason <= 0:
        raise RuntimeError(f"Newton did not converge (SNES reason {reason})")
    return u, {"iterations": int(snes.getIterationNumber())}


def heat(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    """Crank-Nicolson, one step per grid spacing; the matrix is factorised once."""
    V = s.space()
    t0, t1 = float(s.spec["time"]["t0"]), float(s.spec["time"]["t_end"])
    steps = max(1, math.ceil((t1 - t0) * (s.spec["grid"]["nx"] - 1)))
    dt = (t1 - t0) / steps
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, update, bc = s.boundary(V, t0)
    coords = V.tabulate_dof_coordinates()
    u_old = fem.Function(V)
    u_old.x.array[:] = compile_expr(s.spec["initial"])(x=coords[:, 0], y=coords[:, 1], t=t0)
    t_old, t_new = fem.Constant(s.domain, t0), fem.Constant(s.domain, t0)
    k = s.coefficient("k")
    f_mid = (s.expr(s.spec["forcing"], t=t_old) + s.expr(s.spec["forcing"], t=t_new)) / 2
    a = fem.form((u * v / dt + k / 2 * ufl.inner(ufl.grad(u), ufl.grad(v))) * ufl.dx)
    L = fem.form((u_old * v / dt - k / 2 * ufl.inner(ufl.grad(u_old), ufl.grad(v)) + f_mid * v) * ufl.dx)
    A = assemble_matrix(a, bcs=[bc])
    A.assemble()
    ksp = PETSc.KSP().create(PETSc.COMM_SELF)
    ksp.setOperators(A)
    ksp.setType("preonly")
    ksp.getPC().setType("lu")
    ksp.getPC().setFactorSolverType("mumps")
    u_new = fem.Function(V)
    for n in range(1, steps + 1):
        t_old.value, t_new.value = t0 + (n - 1) * dt, t0 + n * dt
        update(t0 + n * dt)
        b = assemble_vector(L)
        apply_lifting(b, [a], [[bc]])
        # one rank (an MPI singleton): no ghost values to exchange
        set_bc(b, [bc])
        ksp.solve(b, u_new.x.petsc_vec)
        u_new.x.scatter_forward()
        u_old.x.array[:] = u_new.x.array
        b.destroy()
    ksp.destroy()
    A.destroy()
    return u_new, {"time_steps": steps, "dt": dt}


def stokes(s: Setup) -> tuple[dict[str, fem.Function], dict[str, Any]]:
    """Taylor-Hood (P2 velocity, P1 pressure), one monolithic LU solve; the pressure is
    pinned at one vertex (it is compared up to its constant) and read off in P2."""
    P2 = basix.ufl.element("Lagrange", "triangle", 2, shape=(2,))
    P1 = basix.ufl.element("Lagrange", "triangle", 1)
    W = fem.functionspace(s.domain, basix.ufl.mixed_element([P2, P1]))
    V, _ = W.sub(0).collapse()
    Q, _ = W.sub(1).collapse()
    g, _, _ = s.boundary(V)
    facets = dmesh.exterior_facet_indices(s.domain.topology)
    velocity_bc = fem.dirichletbc(g, fem.locate_dofs_topological((W.sub(0), V), 1, facets), W.sub(0))
    corner = s.domain.geometry.x[0, :2]
    pinned = fem.locate_dofs_geometrical(
        (W.sub(1), Q), lambda x: np.isclose(x[0], corner[0]) & np.isclose(x[1], corner[1])
    )
    pressure_bc = fem.dirichletbc(fem.Function(Q), pinned, W.sub(1))
    (u, p), (v, q) = ufl.TrialFunctions(W), ufl.TestFunctions(W)
    nu = s.coefficient("nu")
    f = ufl.as_vector([s.expr(e) for e in s.spec["forcing"]])
    a = (nu * ufl.inner(ufl.grad(u), ufl.grad(v)) - p * ufl.div(v) - q * ufl.div(u)) * ufl.dx
    L = ufl.dot(f, v) * ufl.dx
    w = _linear(s, a, L, [velocity_bc, pressure_bc], fem.Function(W))
    velocity = w.sub(0).collapse()
    pressure = fem.Function(s.space())
    pressure.interpolate(w.sub(1).collapse())
    return {"u": velocity, "p": pressure}, {}


FAMILIES: dict[str, Callable[[Setup], tuple[fem.Function | dict[str, fem.Function], dict[str, Any]]]] = {
    "poisson": poisson,
    "heat": heat,
    "convection_diffusion": convection_diffusion,
    "reaction_diffusion": reaction_diffusion,
    "elasticity": elasticity,
    "helmholtz": helmholtz,
    "stokes": stokes,
}


def solve(case_spec: dict[str, Any]) -> dict[str, Any]:
    family = case_spec["family"]
    if family not in FAMILIES:
        raise ValueError(f"the DOLFINx calibration has no solver for family {family!r}")
    p = grid_problem(case_spec)
    domain, cells = structured_mesh(case_spec)
    setup = Setup(spec=case_spec, grid=p, domain=domain, cells=cells)
    solved, extra = FAMILIES[family](setup)
    fields = solved if isinstance(solved, dict) else {"u": solved}
    info = {
        "mesh_resolution": cells,
        "element_degree": 2,
        "method": f"dolfinx-p2-{family}",
        "dofs": sum(int(f.x.array.size) for f in fields.values()),
        "ksp_type": "preonly",
        "pc_type": "lu",
        "rtol": 0.0,
        **extra,
    }
    return {**{name: setup.output(f) for name, f in fields.items()}, "solver_info": info}

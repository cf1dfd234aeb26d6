"""Stokes and steady Navier-Stokes calibration solvers of the DOLFINx track, as the
scikit-fem track solves them (scikit_fem_flow.py): Taylor-Hood (P2 velocity, P1
pressure) in one mixed space on the structured mesh whose P2 nodes are the in-domain
grid points. The pressure is pinned at one vertex (it is compared up to a constant)
unless a do-nothing piece fixes it, and read off in P2. A do-nothing piece is the
Laplacian form's natural boundary: nu du/dn - p n = g there.

- stokes: -nu lap(u) + grad p = f, div u = 0: one monolithic LU solve, or above
  ITERATIVE_UNKNOWNS (a reference's refined solve) by its pressure Schur complement
  (dolfinx_taylor_hood.py: half the LU's memory at 1.4 million unknowns, less CPU).
- navier_stokes: -nu lap(u) + (u . grad) u + grad p = f, div u = 0: SNES Newton
  (full step, no line search) from the Stokes solution.
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

from typing import Any

import basix.ufl
import numpy as np
import ufl
from dolfinx import fem
from dolfinx.fem.petsc import NonlinearProblem

from fembench_agents.cases.calibration.dolfinx_common import LU, Setup, linear
from fembench_agents.cases.calibration.dolfinx_taylor_hood import ITERATIVE_UNKNOWNS, schur_complement_cg

NEWTON_MAX = 25  # as scikit-fem's


def _taylor_hood(
    s: Setup, iterative: bool = False
) -> tuple[fem.Function, list[fem.DirichletBC], Any, Any, dict[str, Any]]:
    """The Stokes solution in the mixed space, its boundary conditions, nu, the load form (f, plus
    the data of do-nothing pieces) and what its solve adds to solver_info. `iterative`: a system of
    more than ITERATIVE_UNKNOWNS without periodic pieces is solved by its Schur complement."""
    dim, cell = s.domain.geometry.dim, s.domain.topology.cell_name()
    P2 = basix.ufl.element("Lagrange", cell, 2, shape=(dim,))
    P1 = basix.ufl.element("Lagrange", cell, 1)
    W = fem.functionspace(s.domain, basix.ufl.mixed_element([P2, P1]))
    V, _ = W.sub(0).collapse()
    Q, _ = W.sub(1).collapse()
    g, _, _ = s.boundary(V)
    facets = s.dirichlet_facets()
    velocity_bc = fem.dirichletbc(g, fem.locate_dofs_topological((W.sub(0), V), dim - 1, facets), W.sub(0))
    bcs = [velocity_bc]
    pressure_pinned = None  # the pinned dofs in the collapsed pressure space
    if not s.has_natural():  # the pressure is free up to a constant: pinned at one vertex
        # a vertex: on a second-order (curved) mesh the first geometry node may be an edge's midpoint
        corner = s.domain.geometry.x[0, :dim] if s.sampler is None else Q.tabulate_dof_coordinates()[0, :dim]
        if s.periodic:  # pinned off the periodic sides: a pinned source would leave its image's row unpaired
            x = s.domain.geometry.x[:, :dim]
            corner = x[np.argmin(np.linalg.norm(x - x.mean(axis=0), axis=1))]
        pinned = fem.locate_dofs_geometrical(
            (W.sub(1), Q), lambda x: np.all([np.isclose(x[k], corner[k]) for k in range(dim)], axis=0)
        )
        bcs.append(fem.dirichletbc(fem.Function(Q), pinned, W.sub(1)))
        pressure_pinned = pinned[1]
    (u, p), (v, q) = ufl.TrialFunctions(W), ufl.TestFunctions(W)
    nu = s.coefficient("nu")
    # f and the do-nothing pieces' data (nu du/dn - p n = g, the Laplacian form's natural condition)
    f = ufl.dot(ufl.as_vector([s.expr(e) for e in s.spec["forcing"]]), v) * s.dx + s.natural_load(v)
    a = (nu * ufl.inner(ufl.grad(u), ufl.grad(v)) - p * ufl.div(v) - q * ufl.div(u)) * s.dx
    reduced = s.reduction(W, bcs)
    if iterative and reduced is None and W.dofmap.index_map.size_local > ITERATIVE_UNKNOWNS:
        w, info = schur_complement_cg(a, f, bcs, fem.Function(W), nu, (facets, pressure_pinned), s.dx)
        return w, bcs, nu, f, info
    return linear(a, f, bcs, fem.Function(W), reduced), bcs, nu, f, {}


def _fields(s: Setup, w: fem.Function) -> dict[str, fem.Function]:
    velocity = w.sub(0).collapse()
    pressure = fem.Function(s.space())
    pressure.interpolate(w.sub(1).collapse())
    return {"u": velocity, "p": pressure}


def stokes(s: Setup) -> tuple[dict[str, fem.Function], dict[str, Any]]:
    w, _, _, _, info = _taylor_hood(s, iterative=True)
    return _fields(s, w), info


def navier_stokes(s: Setup) -> tuple[dict[str, fem.Function], dict[str, Any]]:
    s.refuse_periodic("Newton (SNES) solve")
    w, bcs, nu, load, _ = _taylor_hood(s)  # the Stokes solution: Newton's start, on the boundary data
    u, p = ufl.split(w)
    v, q = ufl.TestFunctions(w.function_space)
    # `load` is a form in the same test function (arguments of one space compare equal)
    F = (
        nu * ufl.inner(ufl.grad(u), ufl.grad(v)) + ufl.dot(ufl.grad(u) * u, v) - p * ufl.div(v) - q * ufl.div(u)
    ) * s.dx - load
    options = {
        "snes_type": "newtonls",
        "snes_linesearch_type": "basic",
        "snes_rtol": 1e-12,
        "snes_atol": 1e-13,
        "snes_stol": 1e-11,
        "snes_max_it": NEWTON_MAX,
        **LU,
    }
    problem = NonlinearProblem(F, w, bcs=bcs, petsc_options_prefix="calibration_ns_", petsc_options=options)
    problem.solve()
    snes = problem.solver
    reason: int = snes.getConvergedReason()  # type: ignore[assignment]  # an int enum at run time
    if reason <= 0:
        raise RuntimeError(f"Newton did not converge (SNES reason {reason})")
    return _fields(s, w), {"iterations": int(snes.getIterationNumber())}

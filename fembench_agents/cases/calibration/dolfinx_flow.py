"""Stokes and steady Navier-Stokes calibration solvers of the DOLFINx track, as the
scikit-fem track solves them (scikit_fem_flow.py): Taylor-Hood (P2 velocity, P1
pressure) in one mixed space on the structured mesh whose P2 nodes are the in-domain
grid points. The pressure is pinned at one vertex (it is compared up to a constant)
and read off in P2.

- stokes: -nu lap(u) + grad p = f, div u = 0: one monolithic LU solve.
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
from dolfinx import mesh as dmesh
from dolfinx.fem.petsc import NonlinearProblem

from fembench_agents.cases.calibration.dolfinx_common import LU, Setup, linear

NEWTON_MAX = 25  # as scikit-fem's


def _taylor_hood(s: Setup) -> tuple[fem.Function, list[fem.DirichletBC], Any, Any]:
    """The Stokes solution in the mixed space, its boundary conditions, nu and f (as UFL)."""
    dim, cell = s.domain.geometry.dim, s.domain.topology.cell_name()
    P2 = basix.ufl.element("Lagrange", cell, 2, shape=(dim,))
    P1 = basix.ufl.element("Lagrange", cell, 1)
    W = fem.functionspace(s.domain, basix.ufl.mixed_element([P2, P1]))
    V, _ = W.sub(0).collapse()
    Q, _ = W.sub(1).collapse()
    g, _, _ = s.boundary(V)
    facets = dmesh.exterior_facet_indices(s.domain.topology)
    velocity_bc = fem.dirichletbc(g, fem.locate_dofs_topological((W.sub(0), V), dim - 1, facets), W.sub(0))
    corner = s.domain.geometry.x[0, :dim]
    pinned = fem.locate_dofs_geometrical(
        (W.sub(1), Q), lambda x: np.all([np.isclose(x[k], corner[k]) for k in range(dim)], axis=0)
    )
    pressure_bc = fem.dirichletbc(fem.Function(Q), pinned, W.sub(1))
    (u, p), (v, q) = ufl.TrialFunctions(W), ufl.TestFunctions(W)
    nu = s.coefficient("nu")
    f = ufl.as_vector([s.expr(e) for e in s.spec["forcing"]])
    a = (nu * ufl.inner(ufl.grad(u), ufl.grad(v)) - p * ufl.div(v) - q * ufl.div(u)) * s.dx
    L = ufl.dot(f, v) * s.dx
    bcs = [velocity_bc, pressure_bc]
    return linear(a, L, bcs, fem.Function(W)), bcs, nu, f


def _fields(s: Setup, w: fem.Function) -> dict[str, fem.Function]:
    velocity = w.sub(0).collapse()
    pressure = fem.Function(s.space())
    pressure.interpolate(w.sub(1).collapse())
    return {"u": velocity, "p": pressure}


def stokes(s: Setup) -> tuple[dict[str, fem.Function], dict[str, Any]]:
    w, _, _, _ = _taylor_hood(s)
    return _fields(s, w), {}


def navier_stokes(s: Setup) -> tuple[dict[str, fem.Function], dict[str, Any]]:
    w, bcs, nu, f = _taylor_hood(s)  # the Stokes solution: Newton's start, on the boundary data
    u, p = ufl.split(w)
    v, q = ufl.TestFunctions(w.function_space)
    F = (
        nu * ufl.inner(ufl.grad(u), ufl.grad(v))
        + ufl.dot(ufl.grad(u) * u, v)
        - p * ufl.div(v)
        - q * ufl.div(u)
        - ufl.dot(f, v)
    ) * ufl.dx
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

"""Calibration solvers of the DOLFINx track (DOLFINx 0.11): P2 triangles on a
structured mesh of half the grid's resolution, as the scikit-fem track does,
so that the P2 nodes are exactly the in-domain grid points and the output is
read off the degrees of freedom (no point evaluation).

Each family is one function of a `Setup` (dolfinx_common.py: mesh, spaces, the
spec's expressions as UFL, the Dirichlet data per boundary piece) returning the
solution and what to add to solver_info: adding a family is adding one
function to FAMILIES. Linear solves are PETSc `preonly` + LU (MUMPS, the
build has no hypre); the nonlinear families use SNES Newton.

- poisson, helmholtz, convection_diffusion, elasticity: one linear solve.
- reaction_diffusion: SNES Newton; its transient variant dolfinx_reaction.py. heat and the
  transient convection-diffusion: dolfinx_transient.py.
- biharmonic: two Dirichlet problems (w = lap u, with its boundary data).
- stokes, navier_stokes: dolfinx_flow.py; wave, burgers: dolfinx_dynamics.py.
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

from collections.abc import Callable
from typing import Any

import ufl
from dolfinx import fem
from dolfinx.fem.petsc import NonlinearProblem

from fembench_agents.cases.calibration import dolfinx_cube, dolfinx_reaction
from fembench_agents.cases.calibration import dolfinx_dynamics as dynamics
from fembench_agents.cases.calibration import dolfinx_flow as flow
from fembench_agents.cases.calibration import dolfinx_gmsh as unstructured
from fembench_agents.cases.calibration import dolfinx_transient as transient
from fembench_agents.cases.calibration.common import grid_problem
from fembench_agents.cases.calibration.dolfinx_common import (
    LU,
    Setup,
    linear,
    streamline_weight,
    structured_mesh,
)
from fembench_agents.cases.published_shapes import given_by_geometry


def poisson(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, _, bc = s.boundary(V)
    a = s.coefficient("k") * ufl.inner(ufl.grad(u), ufl.grad(v)) * s.dx + s.robin_mass(u, v)
    L = s.expr(s.spec["forcing"]) * v * s.dx + s.natural_load(v)
    return linear(a, L, [bc], fem.Function(V), s.reduction(V, [bc])), {}


def helmholtz(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, _, bc = s.boundary(V)
    k = s.coefficient("k")
    a = (ufl.inner(ufl.grad(u), ufl.grad(v)) - k * k * u * v) * s.dx + s.robin_mass(u, v)
    L = s.expr(s.spec["forcing"]) * v * s.dx + s.natural_load(v)
    return linear(a, L, [bc], fem.Function(V), s.reduction(V, [bc])), {}


def convection_diffusion(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    if s.spec.get("time"):
        return transient.convection_diffusion(s)
    V = s.space()
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, _, bc = s.boundary(V)
    b = ufl.as_vector([s.expr(e) for e in s.spec["coefficients"]["b"]])
    eps, f = s.coefficient("eps"), s.expr(s.spec["forcing"])
    a = (eps * ufl.inner(ufl.grad(u), ufl.grad(v)) + ufl.dot(b, ufl.grad(u)) * v) * s.dx + s.robin_mass(u, v)
    L = f * v * s.dx + s.natural_load(v)
    w = streamline_weight(s, v)
    if w is not None:
        a = a + (-ufl.div(eps * ufl.grad(u)) + ufl.dot(b, ufl.grad(u))) * w * s.dx
        L = L + f * w * s.dx
    return linear(a, L, [bc], fem.Function(V), s.reduction(V, [bc])), {}


def elasticity(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space(vector=True)
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, _, bc = s.boundary(V)
    E, nu = float(s.spec["coefficients"]["E"]), float(s.spec["coefficients"]["nu"])
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))

    def sigma(w: Any) -> Any:
        eps = ufl.sym(ufl.grad(w))
        return 2 * mu * eps + lam * ufl.tr(eps) * ufl.Identity(s.domain.geometry.dim)

    f = ufl.as_vector([s.expr(e) for e in s.spec["forcing"]])
    a = ufl.inner(sigma(u), ufl.sym(ufl.grad(v))) * s.dx
    L = ufl.dot(f, v) * s.dx + s.natural_load(v)
    return linear(a, L, [bc], fem.Function(V), s.reduction(V, [bc])), {}


def reaction_diffusion(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    if s.spec.get("time"):
        return dolfinx_reaction.reaction_diffusion(s)
    V = s.space()
    s.refuse_periodic("Newton (SNES) solve")
    u, v = fem.Function(V), ufl.TestFunction(V)
    g, _, bc = s.boundary(V)
    u.x.array[:] = g.x.array  # a start that satisfies the boundary data (0 inside)
    R = s.expr(s.spec["coefficients"]["R"], u=u)
    F = (s.coefficient("D") * ufl.inner(ufl.grad(u), ufl.grad(v)) + R * v - s.expr(s.spec["forcing"]) * v) * s.dx
    F = F + s.robin_mass(u, v) - s.natural_load(v)
    options = {"snes_type": "newtonls", "snes_linesearch_type": "basic", "snes_rtol": 1e-12, "snes_atol": 1e-13, **LU}
    problem = NonlinearProblem(F, u, bcs=[bc], petsc_options_prefix="calibration_rd_", petsc_options=options)
    problem.solve()
    snes = problem.solver
    reason: int = snes.getConvergedReason()  # type: ignore[assignment]  # an int enum at run time
    if reason <= 0:
        raise RuntimeError(f"Newton did not converge (SNES reason {reason})")
    return u, {"iterations": int(snes.getIterationNumber())}


def biharmonic(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    """lap(lap u) = f as two Dirichlet problems, as the scikit-fem track solves it: lap w = f
    with w = h (the second boundary component), then lap u = w with u = g (the first)."""
    V = s.space()
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, _, w_bc = s.boundary(V, component=1)
    _, _, u_bc = s.boundary(V, component=0)
    a = ufl.inner(ufl.grad(u), ufl.grad(v)) * s.dx
    w = linear(a, -s.expr(s.spec["forcing"]) * v * s.dx, [w_bc], fem.Function(V), s.reduction(V, [w_bc]))
    return linear(a, -w * v * s.dx, [u_bc], fem.Function(V), s.reduction(V, [u_bc])), {}


FAMILIES: dict[str, Callable[[Setup], tuple[fem.Function | dict[str, fem.Function], dict[str, Any]]]] = {
    "poisson": poisson,
    "heat": transient.heat,
    "convection_diffusion": convection_diffusion,
    "reaction_diffusion": reaction_diffusion,
    "elasticity": elasticity,
    "helmholtz": helmholtz,
    "stokes": flow.stokes,
    "biharmonic": biharmonic,
    "navier_stokes": flow.navier_stokes,
    "burgers": dynamics.burgers,
    "wave": dynamics.wave,
}


def solve_graded(case_spec: dict[str, Any]) -> dict[str, Any]:
    """`solve` on an axis-parallel domain meshed by gmsh, graded toward its re-entrant corners
    (dolfinx_gmsh.graded_mesh_for), the output by point evaluation: the numerical references whose
    uniform refinements a corner singularity slows (published_import.py), not the calibration."""
    return solve(case_spec, graded=True)


def solve(case_spec: dict[str, Any], graded: bool = False) -> dict[str, Any]:
    family = case_spec["family"]
    if family not in FAMILIES:
        raise ValueError(f"the DOLFINx calibration has no solver for family {family!r}")
    setup: Setup
    if case_spec["grid"].get("nz") is not None:  # the unit cube (dolfinx_cube.py)
        setup, cells = dolfinx_cube.setup(case_spec)
    elif graded or given_by_geometry(case_spec["domain"]):  # a published curved or slanted domain
        p = grid_problem(case_spec)
        size = unstructured.mesh_size(case_spec)
        domain = unstructured.graded_mesh_for(case_spec) if graded else unstructured.mesh_for(case_spec)
        cells = round(1 / size)
        sampler = unstructured.PointSampler(domain, p.X, p.Y, p.inside)
        setup = Setup(spec=case_spec, grid=p, domain=domain, cells=cells, sampler=sampler)
    else:
        domain, cells = structured_mesh(case_spec)
        setup = Setup(spec=case_spec, grid=grid_problem(case_spec), domain=domain, cells=cells)
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

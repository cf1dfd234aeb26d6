"""The transient variants of convection-diffusion and reaction-diffusion (a case with
a time interval) on the DOLFINx track: Crank-Nicolson, one step per grid spacing
(dolfinx_common.time_steps), P2 on the grid-node mesh, as heat.

- convection_diffusion: du/dt - eps lap(u) + b . grad u = f: linear, the matrix
  factorised once.
- reaction_diffusion: du/dt - D lap(u) + R(u) = f: the trapezoid rule on the whole
  right-hand side, R(u) included, so each step is a nonlinear problem solved by SNES
  Newton from the previous step.
Natural pieces enter through their flux data at both ends of a step; Robin pieces'
alpha u likewise.
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

from typing import Any

import numpy as np
import ufl
from dolfinx import fem
from dolfinx.fem.petsc import NonlinearProblem, apply_lifting, assemble_matrix, assemble_vector, set_bc

from fembench_agents.cases.calibration.dolfinx_common import LU, Setup, lu_solver, nodal


def _clock(s: Setup) -> tuple[float, int, float, fem.Constant, fem.Constant]:
    t0, _, steps, dt = s.time_steps()
    return t0, steps, dt, fem.Constant(s.domain, t0), fem.Constant(s.domain, t0)


def _start(s: Setup, V: fem.FunctionSpace, t0: float) -> fem.Function:
    u_old = fem.Function(V)
    u_old.x.array[:] = nodal(V, s.spec["initial"], t0)
    return u_old


def convection_diffusion(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    t0, steps, dt, t_old, t_new = _clock(s)
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, update, bc = s.boundary(V, t0)
    u_old = _start(s, V, t0)
    eps = s.coefficient("eps")
    b = ufl.as_vector([s.expr(e) for e in s.spec["coefficients"]["b"]])

    def operator(w: Any) -> Any:
        return (eps * ufl.inner(ufl.grad(w), ufl.grad(v)) + ufl.dot(b, ufl.grad(w)) * v) * s.dx + s.robin_mass(w, v)

    f_mid = 0.5 * (s.expr(s.spec["forcing"], t=t_old) + s.expr(s.spec["forcing"], t=t_new))
    g_mid = 0.5 * (s.natural_load(v, t=t_old) + s.natural_load(v, t=t_new))
    a = fem.form(u * v / dt * s.dx + 0.5 * operator(u))
    L = fem.form((u_old * v / dt + f_mid * v) * s.dx - 0.5 * operator(u_old) + g_mid)
    A = assemble_matrix(a, bcs=[bc])
    A.assemble()
    ksp = lu_solver(A)
    u_new = fem.Function(V)
    for n in range(1, steps + 1):
        t_old.value, t_new.value = np.asarray(t0 + (n - 1) * dt), np.asarray(t0 + n * dt)
        update(t0 + n * dt)
        rhs = assemble_vector(L)
        apply_lifting(rhs, [a], [[bc]])
        set_bc(rhs, [bc])  # one rank (an MPI singleton): no ghost values to exchange
        ksp.solve(rhs, u_new.x.petsc_vec)
        u_new.x.scatter_forward()
        u_old.x.array[:] = u_new.x.array
        rhs.destroy()
    ksp.destroy()
    A.destroy()
    return u_new, {"time_steps": steps, "dt": dt}


def reaction_diffusion(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    t0, steps, dt, t_old, t_new = _clock(s)
    v = ufl.TestFunction(V)
    _, update, bc = s.boundary(V, t0)
    u_old = _start(s, V, t0)
    u = fem.Function(V)
    u.x.array[:] = u_old.x.array
    D = s.coefficient("D")

    def operator(w: Any) -> Any:
        R = s.expr(s.spec["coefficients"]["R"], u=w)
        return (D * ufl.inner(ufl.grad(w), ufl.grad(v)) + R * v) * s.dx + s.robin_mass(w, v)

    f_mid = 0.5 * (s.expr(s.spec["forcing"], t=t_old) + s.expr(s.spec["forcing"], t=t_new))
    g_mid = 0.5 * (s.natural_load(v, t=t_old) + s.natural_load(v, t=t_new))
    F = ((u - u_old) / dt * v - f_mid * v) * s.dx + 0.5 * (operator(u) + operator(u_old)) - g_mid
    options = {"snes_type": "newtonls", "snes_linesearch_type": "basic", "snes_rtol": 1e-10, "snes_atol": 1e-12, **LU}
    problem = NonlinearProblem(F, u, bcs=[bc], petsc_options_prefix="calibration_rdt_", petsc_options=options)
    iterations = 0
    for n in range(1, steps + 1):
        t_old.value, t_new.value = np.asarray(t0 + (n - 1) * dt), np.asarray(t0 + n * dt)
        update(t0 + n * dt)
        problem.solve()
        snes = problem.solver
        reason: int = snes.getConvergedReason()  # type: ignore[assignment]  # an int enum at run time
        if reason <= 0:
            raise RuntimeError(f"Newton did not converge at step {n} (SNES reason {reason})")
        iterations += int(snes.getIterationNumber())
        u_old.x.array[:] = u.x.array
    return u, {"time_steps": steps, "dt": dt, "iterations": iterations}

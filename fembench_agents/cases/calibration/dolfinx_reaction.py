"""The transient reaction-diffusion family on the DOLFINx track: du/dt - D lap(u) + R(u) = f,
the theta rule on the whole right-hand side (dolfinx_transient.schedule), R(u) included, so each
step is a nonlinear problem, solved from the previous step by the chord method: SNES Newton
whose Jacobian (and its LU) is kept across iterations and steps, refreshed where the step's
length or theta changes and after a step that took more than CHORD_ITERATIONS. The reaction
moves the Jacobian little within a step (dt R'(u) is small beside the mass matrix), so each step
converges to the same tolerance as Newton's, with one back-substitution per iteration instead
of a factorisation.

The residual is the step's form F, evaluated without assembling F: its cell integrand is one sum
whose quadrature degree UFL estimates from its costliest term, the forcing (a product of sines
asks for degree 20 to 28), so assembling F at every iteration evaluated the forcing at both ends
of the step at every iteration (half of a solve's CPU). Here, with every term on that same
quadrature rule: the mass and diffusion terms are matrices assembled once, times vectors; the
forcing is a vector assembled once per time point (a step's end is the next step's start); only
the reaction (and the boundary pieces' terms) is assembled per iteration. The same numbers as
assembling F, up to rounding.
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

from typing import Any

import ufl
from dolfinx import fem
from dolfinx.fem.petsc import NonlinearProblem, apply_lifting, assemble_vector, set_bc
from petsc4py import PETSc

from fembench_agents.cases.calibration.dolfinx_common import LU, Setup, matrix
from fembench_agents.cases.calibration.dolfinx_forcing import ForcingLoad, cell_quadrature_degree, exact_rule
from fembench_agents.cases.calibration.dolfinx_periodic import FACTORISATIONS
from fembench_agents.cases.calibration.dolfinx_transient import Clock, jumps, schedule, start

CHORD_ITERATIONS = 6  # a step that took more refreshes the Jacobian for the next one


def _refresh_jacobian(snes: Any) -> None:
    """The chord's next iteration computes and factorises its Jacobian afresh, then keeps it
    (SNESSetLagJacobian -2, which petsc4py does not wrap: through the options, read and removed)."""
    options, key = PETSc.Options(), f"{snes.getOptionsPrefix()}snes_lag_jacobian"
    options.setValue(key, -2)
    snes.setFromOptions()
    options.delValue(key)


def reaction_diffusion(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    D = s.coefficient("D")
    t0 = s.time_steps()[0]
    v, w = ufl.TestFunction(V), ufl.TrialFunction(V)
    g0, update, bc = s.boundary(V, t0)
    u_old = start(s, V, t0)
    steps, plan = schedule(s, D, jump=jumps(u_old, g0, bc))
    clock = Clock(s, t0)
    u = fem.Function(V)
    u.x.array[:] = u_old.x.array

    def reaction(z: Any) -> Any:
        return s.expr(s.spec["coefficients"]["R"], u=z) * v

    def diffusion(z: Any) -> Any:
        return D * ufl.inner(ufl.grad(z), ufl.grad(v))

    def operator(z: Any) -> Any:
        return (diffusion(z) + reaction(z)) * s.dx + s.robin_mass(z, v)

    f = clock.blend(lambda t: s.expr(s.spec["forcing"], t=t))
    g = clock.blend(lambda t: s.natural_load(v, t=t))
    F = ((u - u_old) / clock.dt * v - f * v) * s.dx + clock.theta * operator(u) + (1 - clock.theta) * operator(u_old)
    F = F - g
    # F's parts on F's own rule (module docstring): per iteration the reaction (on a rule exact for
    # it) and the boundary pieces' terms; per time point the forcing; once the mass and diffusion.
    degree = cell_quadrature_degree(F)
    dx = ufl.dx(domain=s.domain, metadata={"quadrature_degree": degree})
    dx_reaction = exact_rule(s, clock.theta * reaction(u) + (1 - clock.theta) * reaction(u_old), degree)
    robin = clock.theta * s.robin_mass(u, v) + (1 - clock.theta) * s.robin_mass(u_old, v)
    per_iteration = (clock.theta * reaction(u) + (1 - clock.theta) * reaction(u_old)) * dx_reaction + robin - g
    forcing = ForcingLoad(s, v, dx, s.spec["forcing"])
    M, K = matrix(w * v * dx), matrix(diffusion(w) * dx)
    options = {
        "snes_type": "newtonls",
        "snes_linesearch_type": "basic",
        "snes_rtol": 1e-10,
        "snes_atol": 1e-12,
        "snes_max_it": 100,
        # the chord: a Jacobian (and its LU) is kept across iterations and steps (refreshed below)
        "snes_lag_jacobian": -2,
        "snes_lag_jacobian_persists": True,
        **LU,
        # the Jacobian M / dt + theta (K + R'(u) M) is symmetric, positive definite where dt R'(u)
        # is above -2 (every record's): its back-substitutions, one per iteration, are the solve
        "pc_type": FACTORISATIONS[s.stepped_factorisation][0],
        "pc_factor_mat_solver_type": FACTORISATIONS[s.stepped_factorisation][1],
    }
    problem = NonlinearProblem(
        per_iteration,
        u,
        bcs=[bc],
        J=ufl.derivative(F, u, w),  # F's Jacobian, as Newton on F has it
        petsc_options_prefix="calibration_rdt_",
        petsc_options=options,
    )
    snes = problem.solver
    # the residual holds the compiled forms, not the problem: SNES holds the residual, and a
    # cycle through a PETSc object is never collected (its factors stayed resident)
    reaction_form, jacobian = problem.F, problem.J
    forced = M.createVecRight()  # the step's forcing: (1 - theta) F(t_old) + theta F(t_new)
    rate, state = M.createVecRight(), M.createVecRight()  # (u - u_old) / dt, theta u + (1 - theta) u_old

    def residual(_snes: Any, x: PETSc.Vec, b: PETSc.Vec) -> None:
        """F at x into b, lifted and set on the Dirichlet dofs as dolfinx's assemble_residual does."""
        x.copy(u.x.petsc_vec)
        dt, theta = float(clock.dt.value), float(clock.theta.value)
        rate.array[:] = (u.x.array - u_old.x.array) / dt
        state.array[:] = theta * u.x.array + (1 - theta) * u_old.x.array
        M.mult(rate, b)
        K.multAdd(state, b, b)
        b.axpy(-1.0, forced)
        assemble_vector(b, reaction_form)  # type: ignore[arg-type]  # adds into b
        apply_lifting(b, [jacobian], bcs=[[bc]], x0=[x], alpha=-1.0)  # type: ignore[arg-type]
        set_bc(b, [bc], x0=x, alpha=-1.0)  # one rank (an MPI singleton): no ghost values to exchange

    snes.setFunction(residual, problem.b)
    iterations, factorisations = 0, 0
    slow = False
    for n, (step, changed) in enumerate(clock.run(plan), 1):
        if changed or slow:
            _refresh_jacobian(snes)
            factorisations += 1
        update(step.t_new)
        theta = float(clock.theta.value)
        forced.array[:] = (1 - theta) * forcing(step.t_old) + theta * forcing(step.t_new)
        problem.solve()
        reason: int = snes.getConvergedReason()  # type: ignore[assignment]  # an int enum at run time
        if reason <= 0:
            raise RuntimeError(f"Newton did not converge at step {n} (SNES reason {reason})")
        iterations += int(snes.getIterationNumber())
        slow = snes.getIterationNumber() > CHORD_ITERATIONS
        u_old.x.array[:] = u.x.array
    for obj in (M, K, forced, rate, state):
        obj.destroy()
    info = {"iterations": iterations, "factorisations": factorisations}
    return u, {"time_steps": steps, "dt": (plan[-1].t_new - t0) / steps, **info}

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ufl
from dolfinx import fem
from dolfinx.fem.petsc import NonlinearProblem, apply_lifting, assemble_vector, set_bc
from petsc4py import PETSc

from fembench_agents.cases.calibration.dolfinx_common import LU, Setup, matrix
from fembench_agents.cases.calibration.dolfinx_forcing import ForcingLoad, cell_quadrature_degree, exact_rule
from fembench_agents.cases.calibration.dolfinx_periodic import FACTORISATIONS
from fembench_agents.cases.calibration.dolfinx_transient import Clock, Step, jumps, schedule, start

CHORD_ITERATIONS = 6  # a step that took more refreshes the Jacobian for the next one
CHORD = {
    "snes_type": "newtonls",
    "snes_linesearch_type": "basic",
    "snes_rtol": 1e-10,
    "snes_atol": 1e-12,
    "snes_max_it": 100,
    # the chord: a Jacobian (and its factorisation) is kept across iterations and steps (refreshed
    # where the step changes or after a slow step)
    "snes_lag_jacobian": -2,
    "snes_lag_jacobian_persists": True,
    **LU,
}


def _refresh_jacobian(snes: Any) -> None:
    """The chord's next iteration computes and factorises its Jacobian afresh, then keeps it
    (SNESSetLagJacobian -2, which petsc4py does not wrap: through the options, read and removed)."""
    options, key = PETSc.Options(), f"{snes.getOptionsPrefix()}snes_lag_jacobian"
    options.setValue(key, -2)
    snes.setFromOptions()
    options.delValue(key)


@dataclass
class StepForm:
    """A step's nonlinear problem F(u) = 0 of the schedule: the unknown, the previous step, the
    constants of the step (`clock`), the step form F and its parts."""

    s: Setup
    u: fem.Function
    u_old: fem.Function
    bc: fem.DirichletBC
    update: Callable[[float | None], None]
    steps: int
    plan: list[Step]
    clock: Clock
    F: ufl.Form
    natural: Any  # the natural pieces' load of the step (0 where none)
    reaction: Callable[[Any], Any]  # R(z) v
    diffusion: Callable[[Any], Any]  # D grad z . grad v


def step_form(s: Setup) -> StepForm:
    V = s.space()
    D = s.coefficient("D")
    t0 = s.time_steps()[0]
    v = ufl.TestFunction(V)
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
    return StepForm(s, u, u_old, bc, update, steps, plan, clock, F - g, g, reaction, diffusion)


def march(p: StepForm, problem: NonlinearProblem, prepare: Callable[[Step], None] | None = None) -> dict[str, Any]:
    """Every step of the schedule by the chord (module docstring), `prepare` called before each
    step's solve; what solver_info reports of it."""
    snes = problem.solver
    iterations, factorisations = 0, 0
    slow = False
    for n, (step, changed) in enumerate(p.clock.run(p.plan), 1):
        if changed or slow:
            _refresh_jacobian(snes)
            factorisations += 1
        p.update(step.t_new)
        if prepare is not None:
            prepare(step)
        problem.solve()
        reason: int = snes.getConvergedReason()  # type: ignore[assignment]  # an int enum at run time
        if reason <= 0:
            raise RuntimeError(f"Newton did not converge at step {n} (SNES reason {reason})")
        iterations += int(snes.getIterationNumber())
        slow = snes.getIterationNumber() > CHORD_ITERATIONS
        p.u_old.x.array[:] = p.u.x.array
    t0 = p.plan[0].t_old
    return {
        "time_steps": p.steps,
        "dt": (p.plan[-1].t_new - t0) / p.steps,
        "iterations": iterations,
        "factorisations": factorisations,
    }


def reaction_diffusion(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    p = step_form(s)
    u, u_old, clock, reaction = p.u, p.u_old, p.clock, p.reaction
    V = u.function_space
    v, w = ufl.TestFunction(V), ufl.TrialFunction(V)
    # F's parts on F's own rule (module docstring): per iteration the reaction at u (on a rule exact
    # for it) and the boundary pieces' terms; per step the reaction at u_old; per time point the
    # forcing; once the mass and diffusion.
    degree = cell_quadrature_degree(p.F)
    dx = ufl.dx(domain=s.domain, metadata={"quadrature_degree": degree})
    reacting, before = clock.theta * reaction(u), (1 - clock.theta) * reaction(u_old)
    robin = clock.theta * s.robin_mass(u, v) + (1 - clock.theta) * s.robin_mass(u_old, v)
    per_iteration = reacting * exact_rule(s, reacting, degree) + robin - p.natural
    per_step = fem.form(before * exact_rule(s, before, degree))  # the reaction at the step's start
    forcing = ForcingLoad(s, v, dx, s.spec["forcing"])
    M, K = matrix(w * v * dx), matrix(p.diffusion(w) * dx)
    options = {
        **CHORD,
        # the Jacobian M / dt + theta (K + R'(u) M) is symmetric, positive definite where dt R'(u)
        # is above -2 (every record's): its back-substitutions, one per iteration, are the solve
        "pc_type": FACTORISATIONS[s.stepped_factorisation][0],
        "pc_factor_mat_solver_type": FACTORISATIONS[s.stepped_factorisation][1],
    }
    problem = NonlinearProblem(
        per_iteration,
        u,
        bcs=[p.bc],
        J=ufl.derivative(p.F, u, w),  # F's Jacobian, as Newton on F has it
        petsc_options_prefix="calibration_rdt_",
        petsc_options=options,
    )
    # the residual holds the compiled forms, not the problem: SNES holds the residual, and a
    # cycle through a PETSc object is never collected (its factors stayed resident)
    reaction_form, jacobian, bc = problem.F, problem.J, p.bc
    # the step's constant load: (1 - theta) F(t_old) + theta F(t_new) - (1 - theta) R(u_old), F the forcing's
    forced = M.createVecRight()
    rate, state = M.createVecRight(), M.createVecRight()  # (u - u_old) / dt, theta u + (1 - theta) u_old
    reacted = M.createVecRight()  # (1 - theta) R(u_old)

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

    def prepare(step: Step) -> None:
        theta = float(clock.theta.value)
        reacted.zeroEntries()
        assemble_vector(reacted, per_step)  # type: ignore[arg-type]  # adds into it
        forced.array[:] = (1 - theta) * forcing(step.t_old) + theta * forcing(step.t_new) - reacted.array

    problem.solver.setFunction(residual, problem.b)
    info = march(p, problem, prepare)
    for obj in (M, K, forced, rate, state, reacted):
        obj.destroy()
    return u, info

"""The parabolic families on the DOLFINx track (a case with a time interval): heat and the
transient variants of convection-diffusion and reaction-diffusion, P2 on the grid-node mesh.

Time stepping (`schedule`): Crank-Nicolson, one step per grid spacing (dolfinx_common.time_steps)
and never fewer than MIN_STEPS_PER_INTERVAL steps per grid interval (the refinements of a
numerical reference then refine time with space: a published interval of 0.005 got one step on
the 50-point grid and one on its 4x refinement). Crank-Nicolson does not damp what its step
cannot resolve (its amplification tends to -1): initial data or a forcing that switches on at t0
with content whose decay rate lambda the step does not resolve (a Gaussian of width 0.06,
sin(9 pi x) sin(7 pi y)) rings through the whole interval (1.6 times the solution's size for a
Gaussian initial field on the published 50-point grid). Where lambda dt exceeds STIFF, lambda
the data's Rayleigh quotient k |grad g|^2 / g^2, the first STARTUP steps are each taken as two
backward-Euler half steps (Rannacher's start), which damp it and keep the second order; so are
they where the initial field disagrees with the Dirichlet data at t0 (`jumps`). Smooth, compatible
data (lambda dt below 1 on every case of ours) keeps plain Crank-Nicolson, whose error there is
smaller.

- heat: du/dt - div(k grad u) = f; linear, the matrix factorised once per step length (PETSc's
  Cholesky in 2D: it is symmetric positive definite), the right-hand side from matrices and the
  forcing's load (`_right_hand_side`).
- convection_diffusion: du/dt - eps lap(u) + b . grad u = f; likewise (MUMPS LU), with SUPG's
  residual term (dolfinx_common.streamline_weight) on the whole step's residual, whose right-hand
  side is assembled each step.
- reaction_diffusion: du/dt - D lap(u) + R(u) = f by the same schedule, each step a nonlinear
  problem (dolfinx_reaction.py).
Natural pieces enter through their flux data at both ends of a step; Robin pieces' alpha u
likewise.
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import ufl
from dolfinx import fem
from dolfinx.fem.petsc import apply_lifting, assemble_matrix, assemble_vector, create_matrix, set_bc
from petsc4py import PETSc

from fembench_agents.cases.calibration.dolfinx_common import Setup, lu_solver, matrix, nodal, streamline_weight
from fembench_agents.cases.calibration.dolfinx_forcing import (
    ForcingLoad,
    cell_part,
    cell_quadrature_degree,
    facet_part,
    on_rule,
)

MIN_STEPS_PER_INTERVAL = 0.3  # 15 steps on a 50-point grid
STARTUP = 2  # Crank-Nicolson steps taken as twice as many backward-Euler half steps
STIFF = 1.0  # lambda dt of the data above which the start is damped
COURANT = 2.0  # grid spacings a convection may carry the solution per step


@dataclass(frozen=True)
class Step:
    theta: float  # 1 backward Euler, 1/2 Crank-Nicolson
    t_old: float
    t_new: float


def schedule(s: Setup, diffusivity: Any, speed: float = 0.0, jump: bool = False) -> tuple[int, list[Step]]:
    """The step count and each step of the interval (module docstring); a convection of largest
    `speed` moves at most COURANT grid spacings per step (Crank-Nicolson's phase error grows with
    that Courant number: 0.05 at 3 for a Gaussian source carried by b = (6, 3) on the 50-point
    grid). `jump`: the initial data disagrees with the Dirichlet data at t0, content no step
    resolves, so the start is damped."""
    t0, t1, steps, _ = s.time_steps()
    intervals = s.spec["grid"]["nx"] - 1
    fewest = max(MIN_STEPS_PER_INTERVAL, (t1 - t0) * speed / COURANT) * intervals
    steps = max(steps, math.ceil(fewest - 1e-9))
    dt = (t1 - t0) / steps
    start = min(STARTUP, steps) if jump or data_decay_rate(s, diffusivity, t0) * dt > STIFF else 0
    halves = [Step(1.0, t0 + k * dt / 2, t0 + (k + 1) * dt / 2) for k in range(2 * start)]
    rest = [Step(0.5, t0 + n * dt, t0 + (n + 1) * dt) for n in range(start, steps)]
    return steps, halves + rest


def data_decay_rate(s: Setup, diffusivity: Any, t0: float) -> float:
    """The largest Rayleigh quotient int k |grad g|^2 / int g^2 of the initial data and the forcing
    at t0 (a field that vanishes has none): the rate at which diffusion changes that content."""
    rates = [0.0]
    for key in ("initial", "forcing"):
        text = s.spec.get(key)
        if text is None or isinstance(text, list):
            continue
        g = s.expr(text, t=fem.Constant(s.domain, t0))
        if isinstance(g, fem.Constant):  # no gradient: nothing decays
            continue
        size = float(np.real(fem.assemble_scalar(fem.form(g * g * s.dx))))
        if size > 0:
            energy = fem.assemble_scalar(fem.form(diffusivity * ufl.inner(ufl.grad(g), ufl.grad(g)) * s.dx))
            rates.append(float(np.real(energy)) / size)
    return max(rates)


class Clock:
    """The constants a theta-step form reads: the ends of the step, its length and its theta."""

    def __init__(self, s: Setup, t0: float) -> None:
        self.t_old, self.t_new = fem.Constant(s.domain, t0), fem.Constant(s.domain, t0)
        self.dt, self.theta = fem.Constant(s.domain, 1.0), fem.Constant(s.domain, 0.5)

    def blend(self, at: Callable[[Any], Any]) -> Any:
        """(1 - theta) at(t_old) + theta at(t_new): a step's data (0 where `at` is the number 0:
        no natural piece)."""
        old, new = at(self.t_old), at(self.t_new)
        if isinstance(old, int) and isinstance(new, int) and old == new == 0:
            return 0
        return (1 - self.theta) * old + self.theta * new

    def run(self, steps: list[Step]) -> Iterator[tuple[Step, bool]]:
        """Each step with the constants set; True where its length or theta changed."""
        last: tuple[float, float] | None = None
        for step in steps:
            self.t_old.value, self.t_new.value = np.asarray(step.t_old), np.asarray(step.t_new)
            now = (step.theta, step.t_new - step.t_old)
            changed = last is None or not math.isclose(now[1], last[1], rel_tol=1e-9) or now[0] != last[0]
            if changed:
                self.theta.value, self.dt.value = np.asarray(now[0]), np.asarray(now[1])
            last = now
            yield step, changed


def start(s: Setup, V: fem.FunctionSpace, t0: float) -> fem.Function:
    u_old = fem.Function(V)
    u_old.x.array[:] = nodal(V, s.spec["initial"], t0)
    return u_old


def jumps(u_old: fem.Function, g: fem.Function, bc: fem.DirichletBC) -> bool:
    """Whether the initial field differs from the Dirichlet data at t0 on the boundary (0.4 +
    0.1 sin(pi x) sin(pi y) inside a boundary held at 0)."""
    dofs = bc.dof_indices()[0]
    gap = np.abs(u_old.x.array[dofs] - g.x.array[dofs])
    return bool(gap.size) and float(gap.max()) > 1e-9 * max(1.0, float(np.abs(u_old.x.array).max()))


def _linear(
    s: Setup,
    V: fem.FunctionSpace,
    operator: Callable[[Any, Any], Any],
    streamline: tuple[Callable[[Any], Any], Any] | None = None,
    speed: float = 0.0,
    diffusivity: Any = None,
    factorisation: str = "lu",
) -> tuple[fem.Function, dict]:
    """du/dt + operator(u) = f by the schedule: the matrix reassembled and refactorised where the
    step's length or theta changes (twice), the right-hand side each step (`_right_hand_side`).
    `streamline`: the strong operator and the SUPG weight of the test function, whose residual
    term is added."""
    t0 = s.time_steps()[0]
    u, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    g0, update, bc = s.boundary(V, t0)
    u_old = start(s, V, t0)
    steps, plan = schedule(s, diffusivity, speed, jumps(u_old, g0, bc))
    clock = Clock(s, t0)
    f = clock.blend(lambda t: s.expr(s.spec["forcing"], t=t))
    g = clock.blend(lambda t: s.natural_load(v, t=t))
    a_form = u * v / clock.dt * s.dx + clock.theta * operator(u, v)
    L_form = (u_old * v / clock.dt + f * v) * s.dx - (1 - clock.theta) * operator(u_old, v) + g
    if streamline is not None:
        strong, w = streamline
        a_form = a_form + (u / clock.dt + clock.theta * strong(u)) * w * s.dx
        L_form = L_form + (u_old / clock.dt - (1 - clock.theta) * strong(u_old) + f) * w * s.dx
    a = fem.form(a_form)
    A = create_matrix(a)
    ksp = lu_solver(A, s.reduction(V, [bc]), factorisation)
    rhs = (
        _assembled(fem.form(L_form))
        if streamline is not None
        else _right_hand_side(s, V, operator, u_old, clock, L_form)
    )
    u_new = fem.Function(V)
    for step, changed in clock.run(plan):
        if changed:
            A.zeroEntries()
            assemble_matrix(A, a, bcs=[bc])  # type: ignore[misc, arg-type]  # the overload into an existing matrix
            A.assemble()
            ksp.setOperators(A)
        update(step.t_new)
        b = rhs(step)
        apply_lifting(b, [a], [[bc]])
        set_bc(b, [bc])  # one rank (an MPI singleton): no ghost values to exchange
        ksp.solve(b, u_new.x.petsc_vec)
        u_new.x.scatter_forward()
        u_old.x.array[:] = u_new.x.array
        b.destroy()
    ksp.destroy()
    A.destroy()
    return u_new, {"time_steps": steps, "dt": (plan[-1].t_new - t0) / steps}


def _assembled(L: fem.Form) -> Callable[[Step], PETSc.Vec]:
    return lambda _: assemble_vector(L)


def _right_hand_side(
    s: Setup, V: fem.FunctionSpace, operator: Callable[[Any, Any], Any], u_old: fem.Function, clock: Clock, L_form: Any
) -> Callable[[Step], PETSc.Vec]:
    """A step's right-hand side L without assembling L's cell integral, whose one rule UFL
    estimates from its costliest term, the forcing (degree 20 and more for products of sines):
    on that rule, M u_old / dt - (1 - theta) K u_old with the mass and the operator's cell part
    assembled once, plus the forcing's load (dolfinx_forcing.ForcingLoad) at the step's ends, plus
    the boundary pieces' terms assembled as L has them. The same numbers as assembling L, up to
    rounding."""
    w, v = ufl.TrialFunction(V), ufl.TestFunction(V)
    dx = ufl.dx(domain=s.domain, metadata={"quadrature_degree": cell_quadrature_degree(L_form)})
    M = matrix(w * v * dx)
    K = matrix(on_rule(cell_part(operator(w, v)), dx))
    forcing = ForcingLoad(s, v, dx, s.spec["forcing"])
    boundary = facet_part(L_form)
    pieces = fem.form(boundary) if boundary.integrals() else None
    old, scaled = M.createVecRight(), M.createVecRight()

    def at(step: Step) -> PETSc.Vec:
        dt, theta = float(clock.dt.value), float(clock.theta.value)
        b = M.createVecRight()
        old.array[:] = u_old.x.array / dt
        scaled.array[:] = -(1 - theta) * u_old.x.array
        M.mult(old, b)
        K.multAdd(scaled, b, b)
        b.array[:] += (1 - theta) * forcing(step.t_old) + theta * forcing(step.t_new)
        if pieces is not None:
            assemble_vector(b, pieces)  # type: ignore[arg-type]  # adds into b
        return b

    return at


def heat(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    k = s.coefficient("k")

    def operator(w: Any, v: Any) -> Any:
        return k * ufl.inner(ufl.grad(w), ufl.grad(v)) * s.dx + s.robin_mass(w, v)

    # M / dt + theta (K + the Robin mass) is symmetric positive definite
    return _linear(s, s.space(), operator, diffusivity=k, factorisation=s.stepped_factorisation)


def convection_diffusion(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    eps = s.coefficient("eps")
    b = ufl.as_vector([s.expr(e) for e in s.spec["coefficients"]["b"]])

    def operator(w: Any, v: Any) -> Any:
        return (eps * ufl.inner(ufl.grad(w), ufl.grad(v)) + ufl.dot(b, ufl.grad(w)) * v) * s.dx + s.robin_mass(w, v)

    def strong(w: Any) -> Any:
        return -ufl.div(eps * ufl.grad(w)) + ufl.dot(b, ufl.grad(w))

    V = s.space()
    speed = float(np.sqrt(sum(nodal(V, e) ** 2 for e in s.spec["coefficients"]["b"])).max())
    weight = streamline_weight(s, ufl.TestFunction(V))
    return _linear(s, V, operator, None if weight is None else (strong, weight), speed, eps)

"""Time-dependent calibration solvers of the DOLFINx track (wave, burgers), with the
schemes of the scikit-fem track (scikit_fem_dynamics.py): P2 on the grid-node mesh,
one time step per grid spacing (dolfinx_common.time_steps).

- wave: d2u/dt2 - c^2 lap(u) = f, initial = [u0, v0]. Crank-Nicolson on (u, du/dt)
  (Newmark average acceleration): second order, energy-conserving, no numerical
  damping; the matrix M + dt^2/4 c^2 K is factorised once (Cholesky); the velocity follows
  from the trapezoid rule, v^(n+1) = 2 (u^(n+1) - u^n) / dt - v^n.
- burgers: du/dt + u (du/dx + du/dy) - nu lap(u) = f. Crank-Nicolson with the
  convecting velocity extrapolated to the half step, (3 u^n - u^(n-1)) / 2 (u^0 at
  the first step): one linear solve per step, second order.
The forcing enters through its P2 interpolant at both ends of each step, as scikit-fem's does.
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

from collections.abc import Callable
from typing import Any

import ufl
from dolfinx import fem
from dolfinx.fem.petsc import apply_lifting, assemble_matrix, assemble_vector, create_matrix, set_bc

from fembench_agents.cases.calibration.common import components
from fembench_agents.cases.calibration.dolfinx_common import Setup, lu_solver, matrix, nodal, nodal_in_time
from fembench_agents.cases.calibration.dolfinx_periodic import LinearSolver


def _step(
    ksp: LinearSolver,
    a: fem.Form,
    L: fem.Form,
    bc: fem.DirichletBC,
    update: Callable[[float | None], None],
    t: float,
    u: fem.Function,
) -> None:
    """One solve of a time step into u: the boundary data at t, the right-hand side lifted."""
    update(t)
    b = assemble_vector(L)
    apply_lifting(b, [a], [[bc]])
    set_bc(b, [bc])  # one rank (an MPI singleton): no ghost values to exchange
    ksp.solve(b, u.x.petsc_vec)
    u.x.scatter_forward()
    b.destroy()


def _forcing(s: Setup, V: fem.FunctionSpace, t0: float) -> tuple[fem.Function, fem.Function]:
    """The forcing at both ends of a step, through its P2 interpolant (M f_h, as scikit-fem's)."""
    f_old, f_new = fem.Function(V), fem.Function(V)
    f_old.x.array[:] = nodal(V, s.spec["forcing"], t0)
    return f_old, f_new


def wave(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    """Every right-hand side is linear in the state and the P2 interpolants, so it is the mass
    and stiffness matrices, assembled once, times vectors: the same numbers as assembling it
    each step (the quadrature is exact for P2 x P2), at a fraction of a cell loop's cost. The
    Dirichlet data g is lifted by hand: b = M (y - g) - k c^2 K (u^n + g), where the system
    matrix is M + k c^2 K, then b = g on the Dirichlet dofs."""
    V = s.space()
    t0, _, steps, dt = s.time_steps()
    c2 = float(s.spec["coefficients"]["c"]) ** 2
    u, w = ufl.TrialFunction(V), ufl.TestFunction(V)
    g, update, bc = s.boundary(V, t0)
    u0, v0 = components(s.spec["initial"])
    u_n, v_n = fem.Function(V), fem.Function(V)
    u_n.x.array[:] = nodal(V, u0, t0)
    v_n.x.array[:] = nodal(V, v0, t0)
    forcing = nodal_in_time(V, s.spec["forcing"])
    f_old = forcing(t0)
    k = dt * dt / 4
    M, K = matrix(u * w * s.dx), matrix(ufl.inner(ufl.grad(u), ufl.grad(w)) * s.dx)
    A = matrix((u * w + k * c2 * ufl.inner(ufl.grad(u), ufl.grad(w))) * s.dx, [bc])
    ksp = lu_solver(A, s.reduction(V, [bc]), s.stepped_factorisation)  # M + k K
    u_new = fem.Function(V)
    y, z, b = M.createVecRight(), M.createVecRight(), M.createVecRight()
    for n in range(1, steps + 1):
        f_new = forcing(t0 + n * dt)
        update(t0 + n * dt)
        y.array[:] = u_n.x.array + dt * v_n.x.array + k * (f_old + f_new) - g.x.array
        z.array[:] = -k * c2 * (u_n.x.array + g.x.array)
        M.mult(y, b)
        K.multAdd(z, b, b)
        set_bc(b, [bc])  # one rank (an MPI singleton): no ghost values to exchange
        ksp.solve(b, u_new.x.petsc_vec)
        u_new.x.scatter_forward()
        v_n.x.array[:] = 2 * (u_new.x.array - u_n.x.array) / dt - v_n.x.array
        u_n.x.array[:] = u_new.x.array
        f_old = f_new
    for obj in (ksp, A, M, K, y, z, b):
        obj.destroy()
    return u_n, {"time_steps": steps, "dt": dt}


def burgers(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    V = s.space()
    t0, _, steps, dt = s.time_steps()
    u, w = ufl.TrialFunction(V), ufl.TestFunction(V)
    _, update, bc = s.boundary(V, t0)
    u_n, u_prev, star = fem.Function(V), fem.Function(V), fem.Function(V)
    u_n.x.array[:] = nodal(V, s.spec["initial"], t0)
    u_prev.x.array[:] = u_n.x.array
    f_old, f_new = _forcing(s, V, t0)
    forcing = nodal_in_time(V, s.spec["forcing"])
    nu = s.coefficient("nu")

    def operator(z: Any) -> Any:  # nu K z + N(star) z, against the test function
        return nu * ufl.inner(ufl.grad(z), ufl.grad(w)) + star * (z.dx(0) + z.dx(1)) * w

    a = fem.form((u * w / dt + operator(u) / 2) * s.dx)
    L = fem.form((u_n * w / dt - operator(u_n) / 2 + (f_old + f_new) / 2 * w) * s.dx)
    A = create_matrix(a)
    ksp = lu_solver(A, s.reduction(V, [bc]))
    u_new = fem.Function(V)
    for n in range(1, steps + 1):
        f_new.x.array[:] = forcing(t0 + n * dt)
        star.x.array[:] = 1.5 * u_n.x.array - 0.5 * u_prev.x.array if n > 1 else u_n.x.array
        A.zeroEntries()
        assemble_matrix(A, a, bcs=[bc])  # type: ignore[misc, arg-type]  # the overload into an existing matrix
        A.assemble()
        ksp.setOperators(A)  # refactorised: the convecting velocity changed
        _step(ksp, a, L, bc, update, t0 + n * dt, u_new)
        u_prev.x.array[:] = u_n.x.array
        u_n.x.array[:] = u_new.x.array
        f_old.x.array[:] = f_new.x.array
    ksp.destroy()
    A.destroy()
    return u_n, {"time_steps": steps, "dt": dt}

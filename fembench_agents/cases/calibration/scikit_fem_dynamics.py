"""Time-dependent calibration solvers of the scikit-fem track (P2 on the grid-node
mesh, one time step per grid spacing, forcing through its P2 interpolant M f_h).

- wave: Crank-Nicolson on (u, du/dt) (Newmark average acceleration): second order,
  no numerical damping; the velocity follows from the trapezoid rule.
- burgers: Crank-Nicolson with the convecting velocity extrapolated to the half
  step, (3 u^n - u^(n-1)) / 2: one linear solve per step, second order.
- reaction: the transient variant of reaction-diffusion, Crank-Nicolson with Newton per step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse.linalg as spla
from skfem import BilinearForm, asm
from skfem.helpers import grad

from fembench_agents.cases.calibration import scikit_fem_common as p2
from fembench_agents.cases.calibration.common import components, time_steps
from fembench_agents.cases.expressions import compile_expr


@BilinearForm
def _convection(u: Any, v: Any, w: Any) -> Any:
    return w["prev"] * (grad(u)[0] + grad(u)[1]) * v


def wave(spec: dict[str, Any], basis: Any, M: Any, K: Any, D: np.ndarray, p: Any, nx: int, ny: int) -> dict[str, Any]:
    t0, t1, steps, dt = time_steps(spec)
    c2 = float(spec["coefficients"]["c"]) ** 2
    locs = basis.doflocs
    fexpr = compile_expr(spec["forcing"])
    inn = np.setdiff1d(np.arange(basis.N), D)
    A = (M + dt * dt / 4 * c2 * K).tocsr()
    lu = spla.splu(A[inn][:, inn].tocsc())
    AID = A[inn][:, D]
    u0, v0 = components(spec["initial"])
    u = compile_expr(u0)(x=locs[0], y=locs[1], t=t0)
    v = compile_expr(v0)(x=locs[0], y=locs[1], t=t0)
    F_old = M @ fexpr(x=locs[0], y=locs[1], t=t0)
    for n in range(1, steps + 1):
        t = t0 + n * dt
        F_new = M @ fexpr(x=locs[0], y=locs[1], t=t)
        rhs = M @ (u + dt * v) + dt * dt / 4 * (F_old + F_new - c2 * (K @ u))
        gD = p2.dirichlet(spec, locs, D, 0, t)
        u_new = np.empty_like(u)
        u_new[D] = gD
        u_new[inn] = lu.solve(rhs[inn] - AID @ gD)
        v = 2 * (u_new - u) / dt - v
        u, F_old = u_new, F_new
    cells = (nx - 1) // 2
    info = p2.info(cells, basis.N, "p2-newmark", time_steps=steps, dt=dt)
    return {"u": p2.out(u, basis, p, nx, ny), "solver_info": info}


def burgers(
    spec: dict[str, Any], basis: Any, M: Any, K: Any, D: np.ndarray, p: Any, nx: int, ny: int
) -> dict[str, Any]:
    t0, t1, steps, dt = time_steps(spec)
    nu = float(spec["coefficients"]["nu"])
    locs = basis.doflocs
    fexpr = compile_expr(spec["forcing"])
    inn = np.setdiff1d(np.arange(basis.N), D)
    u = compile_expr(spec["initial"])(x=locs[0], y=locs[1], t=t0)
    u_old = u
    F_old = M @ fexpr(x=locs[0], y=locs[1], t=t0)
    for n in range(1, steps + 1):
        t = t0 + n * dt
        star = 1.5 * u - 0.5 * u_old if n > 1 else u
        N = asm(_convection, basis, prev=basis.interpolate(star))
        L = (M / dt + (nu * K + N) / 2).tocsr()
        F_new = M @ fexpr(x=locs[0], y=locs[1], t=t)
        rhs = M @ u / dt - (nu * K + N) @ u / 2 + (F_old + F_new) / 2
        gD = p2.dirichlet(spec, locs, D, 0, t)
        u_new = np.empty_like(u)
        u_new[D] = gD
        u_new[inn] = spla.spsolve(L[inn][:, inn].tocsc(), rhs[inn] - L[inn][:, D] @ gD)
        u_old, u, F_old = u, u_new, F_new
    cells = (nx - 1) // 2
    info = p2.info(cells, basis.N, "p2-crank-nicolson-extrapolated", time_steps=steps, dt=dt)
    return {"u": p2.out(u, basis, p, nx, ny), "solver_info": info}


def reaction(
    spec: dict[str, Any], basis: Any, M: Any, K: Any, D: np.ndarray, boundary: Callable[[float], np.ndarray]
) -> tuple[np.ndarray, dict[str, Any]]:
    """The transient variant of reaction-diffusion, du/dt - D lap u + R(u) = f: Crank-Nicolson on
    the whole right-hand side (the trapezoid rule on R too, as the DOLFINx track's), Newton per
    step from the previous one with R'(u) by central differences; natural pieces' flux data at
    both ends of a step. `boundary(t)`: the values at the Dirichlet dofs D. In 2D or 3D (the
    unit cube's tetrahedra): the dofs' coordinates are x, y (, z). The dofs' values at t_end and
    what to add to solver_info."""
    t0, _, steps, dt = time_steps(spec)
    at = dict(zip("xyz", basis.doflocs, strict=False))
    fexpr = compile_expr(spec["forcing"])
    react, jac = p2.reaction_forms(spec)
    g_old, robin = p2.natural(spec, basis.mesh, basis.elem, t0)
    K = K if robin is None else K + robin
    u = compile_expr(spec["initial"])(**at, t=t0) * np.ones(basis.N)
    f_old = M @ fexpr(**at, t=t0)
    its = 0
    for n in range(1, steps + 1):
        t = t0 + n * dt
        f_new = M @ fexpr(**at, t=t)
        g_new, _ = p2.natural(spec, basis.mesh, basis.elem, t)
        explicit = M @ u / dt - 0.5 * (K @ u + asm(react, basis, prev=basis.interpolate(u))) + 0.5 * (f_old + f_new)
        if g_new is not None and g_old is not None:
            explicit = explicit + 0.5 * (g_old + g_new)
        w = u.copy()
        w[D] = boundary(t)
        for _ in range(40):
            its += 1
            prev = basis.interpolate(w)
            r = M @ w / dt + 0.5 * (K @ w + asm(react, basis, prev=prev)) - explicit
            J = M / dt + 0.5 * (K + asm(jac, basis, prev=prev))
            dw = p2.solve_dirichlet(J, -r, D, np.zeros(D.size))
            w += dw
            if np.linalg.norm(dw) <= 1e-12 * max(1.0, float(np.linalg.norm(w))):
                break
        u, f_old, g_old = w, f_new, g_new
    return u, {"method": "p2-crank-nicolson-newton", "time_steps": steps, "dt": dt, "iterations": its}

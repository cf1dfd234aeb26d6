"""Time-dependent calibration solvers of the numpy-scipy track (5-point finite
differences on the evaluation grid, one time step per grid spacing).

- wave: Newmark average acceleration (Crank-Nicolson on (u, du/dt)), second order,
  unconditionally stable, no numerical damping.
- burgers: Crank-Nicolson with the convecting velocity extrapolated to the half
  step (3 u^n - u^(n-1)) / 2, so each step is one linear solve and the scheme stays
  second order; central differences for the convection term.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from fembench_agents.cases.calibration import finite_differences as fd
from fembench_agents.cases.calibration.common import GridProblem, components, time_steps
from fembench_agents.cases.expressions import compile_expr


def _result(p: GridProblem, uI: np.ndarray, t1: float, method: str, steps: int, dt: float) -> dict[str, Any]:
    u = p.dirichlet(t1)[0].ravel()
    u[p.interior.ravel()] = uI
    info = fd.info(p, uI.size, method, time_steps=steps, dt=dt)
    return {"u": p.as_output(u.reshape(p.ny, p.nx)), "solver_info": info}


def wave(p: GridProblem, lap: sps.csr_matrix, spec: dict[str, Any]) -> dict[str, Any]:
    t0, t1, steps, dt = time_steps(spec)
    c2 = float(spec["coefficients"]["c"]) ** 2
    inn = p.interior.ravel()
    AII, rows = fd.split((c2 * lap).tocsr(), p.interior)
    lu = spla.splu((sps.identity(int(inn.sum()), format="csc") + dt * dt / 4 * AII).tocsc())
    fexpr = compile_expr(spec["forcing"])
    XI, YI = p.X.ravel()[inn], p.Y.ravel()[inn]
    u0, v0 = components(spec["initial"])

    def accel(u: np.ndarray, t: float) -> np.ndarray:
        return fexpr(x=XI, y=YI, t=t) - AII @ u - fd.boundary_term(p, rows, t)

    u, v = p.field(u0, t=t0).ravel()[inn], p.field(v0, t=t0).ravel()[inn]
    a = accel(u, t0)
    for n in range(1, steps + 1):
        t = t0 + n * dt
        rhs = u + dt * v + dt * dt / 4 * (a + fexpr(x=XI, y=YI, t=t) - fd.boundary_term(p, rows, t))
        u_new = lu.solve(rhs)
        a_new = accel(u_new, t)
        v = v + dt / 2 * (a + a_new)
        u, a = u_new, a_new
    return _result(p, u, t1, "fd5-newmark", steps, dt)


def burgers(
    p: GridProblem, ops: dict[str, sps.csr_matrix], lap: sps.csr_matrix, spec: dict[str, Any]
) -> dict[str, Any]:
    t0, t1, steps, dt = time_steps(spec)
    nu = float(spec["coefficients"]["nu"])
    inn = p.interior.ravel()
    idx = np.flatnonzero(inn)
    AII, rows = fd.split((nu * lap).tocsr(), p.interior)
    C = (ops["Cx"] + ops["Cy"]).tocsr()[idx]  # du/dx + du/dy at interior points, from the full grid
    CII = C[:, idx].tocsc()
    Id = sps.identity(idx.size, format="csc")
    fexpr = compile_expr(spec["forcing"])
    XI, YI = p.X.ravel()[inn], p.Y.ravel()[inn]

    def full(uI: np.ndarray, t: float) -> np.ndarray:
        U = p.dirichlet(t)[0].ravel()
        U[inn] = uI
        return U

    U = full(p.field(spec["initial"], t=t0).ravel()[inn], t0)
    U_old = U
    for n in range(1, steps + 1):
        t_old, t = t0 + (n - 1) * dt, t0 + n * dt
        star = (1.5 * U - 0.5 * U_old)[idx] if n > 1 else U[idx]
        g_new = full(np.zeros(idx.size), t)  # boundary data only
        M = (Id / dt + AII / 2 + sps.diags(star / 2) @ CII).tocsc()
        rhs = (
            U[idx] / dt
            - (AII @ U[idx] + rows @ np.where(inn, 0.0, U) + rows @ g_new) / 2
            - star / 2 * (C @ U + C @ g_new)
            + (fexpr(x=XI, y=YI, t=t_old) + fexpr(x=XI, y=YI, t=t)) / 2
        )
        U_old, U = U, full(spla.spsolve(M, rhs), t)
    return _result(p, U[idx], t1, "fd5-crank-nicolson-extrapolated", steps, dt)

"""Calibration solvers of the numpy-scipy track: second-order finite
differences on the evaluation grid itself (every domain corner is a grid
node), Dirichlet data on boundary nodes, a sparse direct solve.

- poisson, heat: conservative 5-point -div(k grad u), k at cell-edge midpoints;
  heat with Crank-Nicolson, one step per grid spacing.
- convection_diffusion: central differences (mesh Peclet number < 1 in every case).
- reaction_diffusion: Newton on -D lap(u) + R(u) = f, R' by central differences.
- elasticity: the Navier form for constant E, nu, central mixed derivatives.
- helmholtz: 5-point Laplacian minus k^2.
- biharmonic: two Dirichlet Poisson solves (w = lap u with its boundary data).
- wave, burgers: numpy_scipy_dynamics.py.
No solver for Stokes and Navier-Stokes: the track declares them unsupported.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from fembench_agents.cases.calibration import finite_differences as fd
from fembench_agents.cases.calibration import numpy_scipy_dynamics as dynamics
from fembench_agents.cases.calibration.common import GridProblem, grid_problem, time_steps
from fembench_agents.cases.expressions import compile_expr


def solve(case_spec: dict[str, Any]) -> dict[str, Any]:
    p = grid_problem(case_spec)
    fam, c = case_spec["family"], case_spec["coefficients"]
    ops = fd.ops(p)
    n_int = int(p.interior.sum())
    if fam == "elasticity":
        return _elasticity(p, ops, case_spec)
    if fam == "heat":
        return _heat(p, ops, case_spec)
    lap = fd.div_k_grad(p, ops, 1.0)
    if fam == "wave":
        return dynamics.wave(p, lap, case_spec)
    if fam == "burgers":
        return dynamics.burgers(p, ops, lap, case_spec)
    f = p.field(case_spec["forcing"])
    g = p.dirichlet()[0]
    if fam == "poisson":
        u = fd.steady(p, fd.div_k_grad(p, ops, c["k"]), f, g)
    elif fam == "helmholtz":
        k = float(c["k"])
        u = fd.steady(p, (lap - k * k * sps.identity(p.nx * p.ny)).tocsr(), f, g)
    elif fam == "convection_diffusion":
        eps, (bx, by) = c["eps"], c["b"]
        A = (
            sps.diags(p.field(eps).ravel()) @ lap
            + sps.diags(p.field(bx).ravel()) @ ops["Cx"]
            + sps.diags(p.field(by).ravel()) @ ops["Cy"]
        ).tocsr()
        u = fd.steady(p, A, f, g)
    elif fam == "reaction_diffusion":
        return _reaction(p, lap, case_spec, f, g)
    elif fam == "biharmonic":
        # lap(lap u) = f split into two Dirichlet problems: lap w = f (w = h), lap u = w (u = g)
        g, h = p.dirichlet()
        w = fd.steady(p, lap, -f, h)
        u = fd.steady(p, lap, -w, g)
    else:
        raise ValueError(f"unknown family {fam}")
    return {"u": p.as_output(u), "solver_info": fd.info(p, n_int, "fd5")}


def _reaction(
    p: GridProblem, lap: sps.csr_matrix, spec: dict[str, Any], f: np.ndarray, g: np.ndarray
) -> dict[str, Any]:
    D = float(spec["coefficients"]["D"])
    R = compile_expr(spec["coefficients"]["R"])
    inn = p.interior.ravel()
    A = (D * lap).tocsr()
    AII, rows = fd.split(A, p.interior)
    gb = g.ravel().copy()
    gb[inn] = 0.0
    base = rows @ gb - f.ravel()[inn]
    uI = np.zeros(int(inn.sum()))
    its = 0
    for n in range(1, 41):
        its = n
        r = AII @ uI + R(u=uI) + base
        d = 1e-6 * np.maximum(1.0, np.abs(uI))
        dR = (R(u=uI + d) - R(u=uI - d)) / (2 * d)
        du = spla.spsolve((AII + sps.diags(dR)).tocsc(), -r)
        uI += du
        if np.linalg.norm(du) <= 1e-12 * max(1.0, float(np.linalg.norm(uI))):
            break
    u = gb
    u[inn] = uI
    return {"u": p.as_output(u.reshape(p.ny, p.nx)), "solver_info": fd.info(p, uI.size, "fd5-newton", iterations=its)}


def _heat(p: GridProblem, ops: dict[str, sps.csr_matrix], spec: dict[str, Any]) -> dict[str, Any]:
    t0, t1, steps, dt = time_steps(spec)
    A = fd.div_k_grad(p, ops, spec["coefficients"]["k"])
    inn = p.interior.ravel()
    AII, rows = fd.split(A, p.interior)
    Id = sps.identity(int(inn.sum()), format="csc")
    lu = spla.splu((Id + dt / 2 * AII).tocsc())
    fexpr = compile_expr(spec["forcing"])

    def bterm(t: float) -> np.ndarray:
        (g,) = p.dirichlet(t)
        gb = g.ravel()
        gb[inn] = 0.0
        return rows @ gb

    uI = p.field(spec["initial"], t=t0).ravel()[inn]
    XI, YI = p.X.ravel()[inn], p.Y.ravel()[inn]
    t, f_old, b_old = t0, fexpr(x=XI, y=YI, t=t0), bterm(t0)
    for n in range(1, steps + 1):
        t = t0 + n * dt
        f_new, b_new = fexpr(x=XI, y=YI, t=t), bterm(t)
        rhs = uI - dt / 2 * (AII @ uI) + dt / 2 * (f_old + f_new) - dt / 2 * (b_old + b_new)
        uI = lu.solve(rhs)
        f_old, b_old = f_new, b_new
    (g,) = p.dirichlet(t1)
    u = g.ravel()
    u[inn] = uI
    return {
        "u": p.as_output(u.reshape(p.ny, p.nx)),
        "solver_info": fd.info(p, uI.size, "fd5-crank-nicolson", time_steps=steps, dt=dt),
    }


def _elasticity(p: GridProblem, ops: dict[str, sps.csr_matrix], spec: dict[str, Any]) -> dict[str, Any]:
    E, nu = float(spec["coefficients"]["E"]), float(spec["coefficients"]["nu"])
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))
    Dx, Dy, Cx, Cy = ops["Dx"], ops["Dy"], ops["Cx"], ops["Cy"]
    mxx, myy = (Dx.T @ Dx).tocsr(), (Dy.T @ Dy).tocsr()  # -d2/dx2, -d2/dy2
    mxy = (Cx @ Cy).tocsr()  # d2/dxdy
    A = sps.bmat(
        [[(lam + 2 * mu) * mxx + mu * myy, -(lam + mu) * mxy], [-(lam + mu) * mxy, mu * mxx + (lam + 2 * mu) * myy]],
        format="csr",
    )
    fx, fy = (p.field(e) for e in spec["forcing"])
    gx, gy = p.dirichlet()
    interior2 = np.concatenate([p.interior.ravel(), p.interior.ravel()])
    inn = interior2
    idx = np.flatnonzero(inn)
    rows = A[idx]
    AII = rows[:, idx].tocsc()
    g = np.concatenate([gx.ravel(), gy.ravel()])
    gb = g.copy()
    gb[inn] = 0.0
    rhs = np.concatenate([fx.ravel(), fy.ravel()])[inn] - rows @ gb
    u = gb
    u[inn] = spla.spsolve(AII, rhs)
    out = p.as_output(u.reshape(2, p.ny, p.nx))
    return {"u": out, "solver_info": fd.info(p, idx.size, "fd5-navier")}

"""Finite-difference building blocks of the numpy-scipy calibration solvers: operators
on the full evaluation grid, the split into interior unknowns and Dirichlet data."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from fembench_agents.cases.calibration.common import GridProblem
from fembench_agents.cases.expressions import compile_expr

Matrix = sps.csr_matrix


def d1(n: int, h: float) -> sps.csr_matrix:
    """Forward differences, (n-1) x n."""
    return sps.diags([-np.ones(n - 1), np.ones(n - 1)], [0, 1], shape=(n - 1, n), format="csr") / h


def c1(n: int, h: float) -> sps.csr_matrix:
    """Central first derivative (rows at the ends are unused)."""
    return sps.diags([-np.ones(n - 1), np.ones(n - 1)], [-1, 1], shape=(n, n), format="csr") / (2 * h)


def ops(p: GridProblem) -> dict[str, sps.csr_matrix]:
    Ix, Iy = sps.identity(p.nx, format="csr"), sps.identity(p.ny, format="csr")
    Dx, Dy = sps.kron(Iy, d1(p.nx, p.hx)), sps.kron(d1(p.ny, p.hy), Ix)
    Cx, Cy = sps.kron(Iy, c1(p.nx, p.hx)), sps.kron(c1(p.ny, p.hy), Ix)
    return {"Dx": Dx.tocsr(), "Dy": Dy.tocsr(), "Cx": Cx.tocsr(), "Cy": Cy.tocsr()}


def div_k_grad(p: GridProblem, ops: dict[str, sps.csr_matrix], k: Any) -> sps.csr_matrix:
    """-div(k grad .) on the full grid, k at cell-edge midpoints."""
    kf = compile_expr(k)
    xm, ym = (p.X[:, :-1] + p.X[:, 1:]) / 2, p.Y[:, :-1]
    kx = kf(x=xm, y=ym).ravel()
    xm2, ym2 = p.X[:-1, :], (p.Y[:-1, :] + p.Y[1:, :]) / 2
    ky = kf(x=xm2, y=ym2).ravel()
    Dx, Dy = ops["Dx"], ops["Dy"]
    return (Dx.T @ sps.diags(kx) @ Dx + Dy.T @ sps.diags(ky) @ Dy).tocsr()


def split(A: sps.csr_matrix, interior: np.ndarray) -> tuple[sps.csc_matrix, sps.csr_matrix]:
    idx = np.flatnonzero(interior.ravel())
    rows = A[idx]
    return rows[:, idx].tocsc(), rows


def info(p: GridProblem, dofs: int, method: str, **extra: Any) -> dict[str, Any]:
    return {
        "mesh_resolution": p.nx - 1,
        "element_degree": 0,
        "method": method,
        "dofs": dofs,
        "ksp_type": "preonly",
        "pc_type": "lu",
        "rtol": 0.0,
        **extra,
    }


def steady(p: GridProblem, A: sps.csr_matrix, f: np.ndarray, g: np.ndarray) -> np.ndarray:
    inn = p.interior.ravel()
    AII, rows = split(A, p.interior)
    rhs = f.ravel()[inn] - rows @ g.ravel() + AII @ g.ravel()[inn]
    u = g.ravel().copy()
    u[inn] = spla.spsolve(AII, rhs)
    return u.reshape(p.ny, p.nx)


def boundary_term(p: GridProblem, rows: sps.csr_matrix, t: float | None = None, comp: int = 0) -> np.ndarray:
    """rows @ g: what the Dirichlet data at time t add to the interior equations of `rows`."""
    gb = p.dirichlet(t)[comp].ravel()
    gb[p.interior.ravel()] = 0.0
    out: np.ndarray = rows @ gb
    return out

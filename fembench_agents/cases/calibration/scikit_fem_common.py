"""Shared parts of the scikit-fem calibration solvers: the structured P2 mesh whose
nodes are the in-domain grid points, Dirichlet data per boundary piece, the
output read off the degrees of freedom, one Dirichlet-constrained solve."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla
from skfem import MeshTri

from fembench_agents.cases.calibration.common import components
from fembench_agents.cases.domains import on_segment
from fembench_agents.cases.expressions import compile_expr


def mesh(spec: dict[str, Any], inside: np.ndarray) -> tuple[MeshTri, int, int]:
    g = spec["grid"]
    nx, ny = g["nx"], g["ny"]
    cx, cy = (nx - 1) // 2, (ny - 1) // 2  # cells per direction
    xs, ys = np.linspace(0.0, 1.0, cx + 1), np.linspace(0.0, 1.0, cy + 1)
    # a cell is in the domain if its centre grid point (a P2 node) is
    keep = inside[1::2, 1::2][:cy, :cx]
    vid = np.full((cy + 1, cx + 1), -1, dtype=int)
    used = np.zeros((cy + 1, cx + 1), dtype=bool)
    for dj in (0, 1):
        for di in (0, 1):
            used[dj : dj + cy, di : di + cx] |= keep
    vid[used] = np.arange(int(used.sum()))
    X, Y = np.meshgrid(xs, ys)
    p = np.vstack([X[used], Y[used]])
    j, i = np.nonzero(keep)
    a, b, c, d = vid[j, i], vid[j, i + 1], vid[j + 1, i + 1], vid[j + 1, i]
    t = np.hstack([np.vstack([a, b, c]), np.vstack([a, c, d])])
    return MeshTri(p, t), nx, ny


def grid_index(locs: np.ndarray, nx: int, ny: int) -> tuple[np.ndarray, np.ndarray]:
    return np.rint(locs[1] * (ny - 1)).astype(int), np.rint(locs[0] * (nx - 1)).astype(int)


def dirichlet(
    spec: dict[str, Any], locs: np.ndarray, dofs: np.ndarray, comp: int, t: float | None = None
) -> np.ndarray:
    x, y = locs[0, dofs], locs[1, dofs]
    vals = np.full(dofs.size, np.nan)
    for piece in reversed(spec["boundary"]):
        a, b = piece["segment"]
        sel = on_segment(x, y, tuple(a), tuple(b))
        vals[sel] = compile_expr(components(piece["value"])[comp])(x=x[sel], y=y[sel], t=t)
    if np.isnan(vals).any():
        raise RuntimeError("a boundary node lies on no boundary piece")
    return vals


def out(u_dofs: np.ndarray, basis: Any, p: Any, nx: int, ny: int) -> np.ndarray:
    out = np.full((ny, nx), np.nan)
    j, i = grid_index(basis.doflocs, nx, ny)
    out[j, i] = u_dofs
    out[~p.inside] = np.nan
    return out


def info(cells: int, dofs: int, method: str, **extra: Any) -> dict[str, Any]:
    return {
        "mesh_resolution": cells,
        "element_degree": 2,
        "method": method,
        "dofs": dofs,
        "ksp_type": "preonly",
        "pc_type": "lu",
        "rtol": 0.0,
        **extra,
    }


def solve_dirichlet(A: sps.spmatrix, rhs: np.ndarray, D: np.ndarray, uD: np.ndarray) -> np.ndarray:
    u = np.zeros(A.shape[0])
    u[D] = uD
    inn = np.setdiff1d(np.arange(A.shape[0]), D)
    A = A.tocsr()
    u[inn] = spla.spsolve(A[inn][:, inn].tocsc(), rhs[inn] - A[inn][:, D] @ uD)
    return u

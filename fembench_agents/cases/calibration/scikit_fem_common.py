"""Shared parts of the scikit-fem calibration solvers: the structured P2 mesh whose
nodes are the in-domain grid points, Dirichlet data per boundary piece, the
output read off the degrees of freedom, one Dirichlet-constrained solve."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla
from skfem import MeshTri

from fembench_agents.cases.calibration.common import components, kept_cells_as_triangles
from fembench_agents.cases.domains import on_segment
from fembench_agents.cases.expressions import compile_expr


def mesh(spec: dict[str, Any], inside: np.ndarray) -> tuple[MeshTri, int, int]:
    g = spec["grid"]
    nx, ny = g["nx"], g["ny"]
    cx, cy = (nx - 1) // 2, (ny - 1) // 2  # cells per direction
    xs, ys = np.linspace(0.0, 1.0, cx + 1), np.linspace(0.0, 1.0, cy + 1)
    # a cell is in the domain if its centre grid point (a P2 node) is
    points, triangles = kept_cells_as_triangles(inside[1::2, 1::2][:cy, :cx], xs, ys)
    return MeshTri(points.T, triangles.T), nx, ny


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

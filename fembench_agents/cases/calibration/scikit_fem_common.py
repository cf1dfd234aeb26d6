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
        if kind(piece) != "dirichlet":  # its data is a flux, not a value: it never sets a node
            continue
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


def piece_facets(spec: dict[str, Any], mesh: MeshTri) -> tuple[np.ndarray, np.ndarray]:
    """The boundary facets and, per facet, the index of the boundary piece it lies on (the first
    piece listed wins, as at shared corners)."""
    facets = mesh.boundary_facets()
    mid = mesh.p[:, mesh.facets[:, facets]].mean(axis=1)
    index = np.full(facets.size, -1)
    for k in reversed(range(len(spec["boundary"]))):
        a, b = spec["boundary"][k]["segment"]
        index[on_segment(mid[0], mid[1], tuple(a), tuple(b))] = k
    if (index < 0).any():
        raise RuntimeError("a boundary facet lies on no boundary piece")
    return facets, index


def kind(piece: dict[str, Any]) -> str:
    return str(piece.get("kind", "dirichlet"))


def dirichlet_facets(spec: dict[str, Any], mesh: MeshTri) -> np.ndarray:
    facets, index = piece_facets(spec, mesh)
    on_dirichlet = np.array([kind(p) == "dirichlet" for p in spec["boundary"]])
    return facets[on_dirichlet[index]]


def _flux_form(texts: list[Any], t: float | None) -> Any:
    from skfem import LinearForm

    g = [compile_expr(e) for e in texts]

    @LinearForm
    def flux(v: Any, w: Any) -> Any:
        X, Y = w.x[0], w.x[1]
        if len(g) == 1:
            return g[0](x=X, y=Y, t=t) * v
        return g[0](x=X, y=Y, t=t) * v[0] + g[1](x=X, y=Y, t=t) * v[1]

    return flux


def _robin_form(text: Any) -> Any:
    from skfem import BilinearForm

    alpha = compile_expr(text)

    @BilinearForm
    def mass(u: Any, v: Any, w: Any) -> Any:
        return alpha(x=w.x[0], y=w.x[1]) * u * v

    return mass


def natural(
    spec: dict[str, Any], mesh: MeshTri, element: Any, t: float | None = None
) -> tuple[np.ndarray | None, sps.spmatrix | None]:
    """The natural pieces' load (sum of (g, v) on each, g the piece's flux data at t) and the Robin
    pieces' alpha u v, assembled on the facets of each piece; None where there are none."""
    from skfem import FacetBasis, asm

    facets, index = piece_facets(spec, mesh)
    load: np.ndarray | None = None
    robin: sps.spmatrix | None = None
    for k, piece in enumerate(spec["boundary"]):
        if kind(piece) == "dirichlet" or not (index == k).any():
            continue
        fb = FacetBasis(mesh, element, facets=facets[index == k])
        part = asm(_flux_form(components(piece["value"]), t), fb)
        load = part if load is None else load + part
        if kind(piece) == "robin":
            part_m = asm(_robin_form(piece["alpha"]), fb)
            robin = part_m if robin is None else robin + part_m
    return load, robin

"""scikit-fem on a published domain given by its geometry (cases/published_shapes.py): a gmsh mesh of
the shape (cells of about two grid spacings, as the DOLFINx and NGSolve calibrations take)
made isoparametric (MeshTri2: the midpoint of each edge on an arc moved onto the arc), and
the solution read off at the in-domain grid points by point evaluation.

skfem 12 has no point location on a curved mesh (MeshTri2.element_finder raises), so it is
done here: each point in the straight triangle that contains it, or (a point of the exact
domain in the sliver between a chord and its arc) in the nearest one; the isoparametric map
is inverted by Newton from the straight triangle's barycentric coordinates, which never
leaves a curved cell's neighbourhood, and the reference basis is evaluated there."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.spatial import cKDTree
from skfem import ElementTriP2, MeshTri1, MeshTri2

from fembench_agents.cases.calibration.common import nearest_piece
from fembench_agents.cases.calibration.gmsh_shapes import triangles
from fembench_agents.cases.case_spec import Arc
from fembench_agents.cases.published_shapes import published_shape

CELLS_PER_SPACING = 2.0
NEWTON_STEPS = 8


def mesh_size(spec: dict[str, Any]) -> float:
    g = spec["grid"]
    x0, x1, y0, y1 = g["bbox"][:4]
    return CELLS_PER_SPACING * min((x1 - x0) / (g["nx"] - 1), (y1 - y0) / (g["ny"] - 1))


def mesh(spec: dict[str, Any]) -> MeshTri2:
    d = spec["domain"]
    key = json.dumps({"type": d["type"], "geometry_params": d["geometry_params"]}, sort_keys=True)
    return _cached(key, json.dumps(spec["boundary"], sort_keys=True), round(mesh_size(spec), 12))


@lru_cache(maxsize=2)  # a case's repeated solves; a refinement is another size
def _cached(key: str, pieces: str, size: float) -> MeshTri2:
    points, tri = triangles(published_shape(json.loads(key)), size)
    # from_mesh lays out its arrays column-major and skfem says so on every mesh over 1000 cells:
    # a layout note, not a fault, kept out of the calibration's output
    quiet = logging.getLogger("skfem.mesh.mesh")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        curved = MeshTri2.from_mesh(MeshTri1(np.ascontiguousarray(points.T), np.ascontiguousarray(tri.T)))
    finally:
        quiet.setLevel(level)
    boundary = curved.boundary_facets()
    mids = curved.dofs.get_facet_dofs(boundary).flatten()  # one P2 node per boundary edge: its midpoint
    doflocs = curved.doflocs.copy()
    loops = json.loads(pieces)
    owner = nearest_piece(loops, doflocs[0, mids], doflocs[1, mids])
    for k, piece in enumerate(loops):
        if piece.get("arc") is None:
            continue
        arc = Arc.model_validate(piece["arc"])
        sel = mids[owner == k]
        (cx, cy), r = arc.center, arc.radius
        rho = np.hypot(doflocs[0, sel] - cx, doflocs[1, sel] - cy)
        doflocs[0, sel] = cx + r * (doflocs[0, sel] - cx) / rho
        doflocs[1, sel] = cy + r * (doflocs[1, sel] - cy) / rho
    return replace(curved, doflocs=np.ascontiguousarray(doflocs), t=np.ascontiguousarray(curved.t))


class GridSampler:
    """The reference coordinates of each in-domain grid point in its cell of a MeshTri2."""

    def __init__(self, m: MeshTri2, X: np.ndarray, Y: np.ndarray, inside: np.ndarray) -> None:
        self.inside = inside
        points = np.vstack([X[inside], Y[inside]])
        self.cells = _straight_cells(m, points)
        self.ref = _invert(m, self.cells, points)

    def __call__(self, basis: Any, values: np.ndarray) -> np.ndarray:
        """A scalar basis's dof values at the grid points (ny, nx), NaN outside the domain."""
        elem = basis.elem
        dofs = basis.element_dofs[:, self.cells]
        phi = np.stack([elem.lbasis(self.ref, k)[0] for k in range(dofs.shape[0])])
        out = np.full(self.inside.shape, np.nan)
        out[self.inside] = (phi * values[dofs]).sum(axis=0)
        return out


def _straight_cells(m: MeshTri2, points: np.ndarray) -> np.ndarray:
    """Per point, a straight triangle that contains it, else the one it is least outside of."""
    p, t = m.p, m.t
    _, near = cKDTree(p[:, t].mean(axis=1).T).query(points.T, min(8, t.shape[1]))
    a, b, c = p[:, t[0]], p[:, t[1]], p[:, t[2]]
    best = np.full(points.shape[1], -1)
    score = np.full(points.shape[1], -np.inf)
    for e in near.T:
        e0, e1, d = b[:, e] - a[:, e], c[:, e] - a[:, e], points - a[:, e]
        det = e0[0] * e1[1] - e0[1] * e1[0]
        l1 = (d[0] * e1[1] - d[1] * e1[0]) / det
        l2 = (e0[0] * d[1] - e0[1] * d[0]) / det
        least = np.minimum(np.minimum(l1, l2), 1 - l1 - l2)
        better = least > score + 1e-14
        best[better], score[better] = e[better], least[better]
    return best


def _invert(m: MeshTri2, cells: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Reference coordinates (2, n) of the points under each cell's quadratic map."""
    elem = ElementTriP2()
    nodes = m.doflocs[:, m.dofs.element_dofs[:, cells]]  # (2, 6, n)
    p, t = m.p, m.t[:, cells]
    a, b, c = p[:, t[0]], p[:, t[1]], p[:, t[2]]
    e0, e1, d = b - a, c - a, points - a
    det = e0[0] * e1[1] - e0[1] * e1[0]
    ref = np.vstack([(d[0] * e1[1] - d[1] * e1[0]) / det, (e0[0] * d[1] - e0[1] * d[0]) / det])
    for _ in range(NEWTON_STEPS):
        phi, dphi = zip(*(elem.lbasis(ref, k) for k in range(6)), strict=True)
        F = np.einsum("ikn,kn->in", nodes, np.stack(phi)) - points
        J = np.einsum("ikn,kjn->ijn", nodes, np.stack(dphi))
        det_j = J[0, 0] * J[1, 1] - J[0, 1] * J[1, 0]
        ref = ref - np.vstack([(J[1, 1] * F[0] - J[0, 1] * F[1]) / det_j, (-J[1, 0] * F[0] + J[0, 0] * F[1]) / det_j])
    return ref

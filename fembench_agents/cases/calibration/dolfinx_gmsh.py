"""Unstructured meshes of the published domains given by their geometry (cases/shapes.py) for
the DOLFINx calibration: gmsh's OpenCASCADE kernel builds the shape (disks, boxes, polygons, a
sector, fused or cut), meshes it with cells of about `size` and second-order geometry (the
curved edges' midpoints on the curve), and the mesh is read off by point evaluation at the
in-domain grid points. A mesh is cached in-process by (shape, size): a numerical reference
solves the same case at several refinements, calibration reruns it."""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # isort: skip

import json
import math
import threading
from functools import lru_cache
from typing import Any

import numpy as np
from dolfinx import fem, geometry
from dolfinx import mesh as dmesh

from fembench_agents.cases.shapes import Box, Disk, Polygon, Shape, Wedge, published_shape

CELLS_PER_SPACING = 2.0  # cell size: this many grid spacings (the NGSolve track's rule)
_LOCK = threading.Lock()  # gmsh is one global model per process


def mesh_size(spec: dict[str, Any]) -> float:
    g = spec["grid"]
    x0, x1, y0, y1 = g["bbox"][:4]
    return CELLS_PER_SPACING * min((x1 - x0) / (g["nx"] - 1), (y1 - y0) / (g["ny"] - 1))


def shape_of(spec: dict[str, Any]) -> Shape:
    d = spec["domain"]
    return published_shape({"type": d["type"], "geometry_params": d["geometry_params"]})


def mesh_for(spec: dict[str, Any]) -> dmesh.Mesh:
    d = spec["domain"]
    key = json.dumps({"type": d["type"], "geometry_params": d["geometry_params"]}, sort_keys=True)
    return _cached(key, round(mesh_size(spec), 12))


@lru_cache(maxsize=2)  # a case's repeated solves; a refinement is another size
def _cached(key: str, size: float) -> dmesh.Mesh:
    return build_mesh(published_shape(json.loads(key)), size)


def _add(occ: Any, p: Any) -> tuple[int, int]:
    if isinstance(p, Disk):
        return 2, occ.addDisk(p.center[0], p.center[1], 0, p.radius, p.radius)
    if isinstance(p, Box):
        return 2, occ.addRectangle(p.x0, p.y0, 0, p.x1 - p.x0, p.y1 - p.y0)
    if isinstance(p, Polygon):
        pts = [occ.addPoint(x, y, 0) for x, y in p.vertices]
        lines = [occ.addLine(pts[k], pts[(k + 1) % len(pts)]) for k in range(len(pts))]
        return 2, occ.addPlaneSurface([occ.addCurveLoop(lines)])
    assert isinstance(p, Wedge)
    (cx, cy), r = p.center, p.radius
    c = occ.addPoint(cx, cy, 0)
    n = 2 if p.angle > math.pi / 2 + 1e-9 else 1  # OCC arcs below pi: halve a wide one
    ends = [
        occ.addPoint(cx + r * math.cos(p.start + k * p.angle / n), cy + r * math.sin(p.start + k * p.angle / n), 0)
        for k in range(n + 1)
    ]
    curves = [occ.addLine(c, ends[0])]
    curves += [occ.addCircleArc(ends[k], c, ends[k + 1]) for k in range(n)]
    curves.append(occ.addLine(ends[-1], c))
    return 2, occ.addPlaneSurface([occ.addCurveLoop(curves)])


def build_mesh(shape: Shape, size: float) -> dmesh.Mesh:
    import gmsh
    from dolfinx.io import gmsh as gmshio

    with _LOCK:
        if not gmsh.isInitialized():
            gmsh.initialize(interruptible=False)
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add("calibration")
        try:
            occ = gmsh.model.occ
            joined = [_add(occ, p) for p in shape.joined]
            if len(joined) > 1:
                joined, _ = occ.fuse(joined[:1], joined[1:])
            if shape.removed:
                joined, _ = occ.cut(joined, [_add(occ, p) for p in shape.removed])
            occ.synchronize()
            gmsh.model.addPhysicalGroup(2, [tag for _, tag in joined], 1)
            gmsh.option.setNumber("Mesh.MeshSizeMax", size)
            gmsh.option.setNumber("Mesh.MeshSizeMin", size / 4)
            gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", 24)
            gmsh.option.setNumber("Mesh.Algorithm", 6)
            gmsh.model.mesh.generate(2)
            gmsh.model.mesh.setOrder(2)
            data = gmshio.model_to_mesh(gmsh.model, MPI.COMM_SELF, 0, gdim=2)
        finally:
            gmsh.model.remove()
    return data.mesh


class PointSampler:
    """Evaluates functions on a mesh at the in-domain grid points: each point in the first cell
    that contains it, or (a point of the exact domain just outside the mesh's curved edges) in
    the closest cell."""

    def __init__(self, domain: dmesh.Mesh, X: np.ndarray, Y: np.ndarray, inside: np.ndarray) -> None:
        self.inside = inside
        points = np.column_stack([X[inside], Y[inside], np.zeros(int(inside.sum()))])
        tree = geometry.bb_tree(domain, 2)
        found = geometry.compute_colliding_cells(domain, geometry.compute_collisions_points(tree, points), points)
        cells = np.full(points.shape[0], -1, dtype=np.int32)
        for i in range(points.shape[0]):
            links = found.links(i)
            if links.size:
                cells[i] = links[0]
        lost = np.flatnonzero(cells < 0)
        if lost.size:
            domain.topology.create_entities(2)
            count = domain.topology.index_map(2).size_local
            mids = geometry.create_midpoint_tree(domain, 2, np.arange(count, dtype=np.int32))
            cells[lost] = geometry.compute_closest_entity(tree, mids, domain, points[lost])
        self.points, self.cells = points, cells

    def __call__(self, u: fem.Function) -> np.ndarray:
        ncomp = u.function_space.dofmap.index_map_bs
        values = u.eval(self.points, self.cells).reshape(-1, ncomp)
        out = np.full((ncomp, *self.inside.shape), np.nan)
        out[:, self.inside] = values.T
        return out

"""A published domain given by its geometry (cases/published_shapes.py) as a gmsh OpenCASCADE model:
its primitives (disks, boxes, polygons, a sector) added, fused and cut, meshed with cells of
about `size`. Shared by the DOLFINx calibration (dolfinx_gmsh.py, which reads the model
itself) and the scikit-fem one (scikit_fem_curved.py, which takes the triangles)."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from fembench_agents.cases.shapes import Box, Disk, Point, Polygon, Shape, Wedge

LOCK = threading.Lock()  # gmsh is one global model per process


def add_primitive(occ: Any, p: Any) -> tuple[int, int]:
    """The (dimension, tag) of one primitive added to the OCC kernel."""
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


# A mesh graded toward points (the re-entrant corners of a polygon, where u ~ r^(2/3)): cells of
# size*r/GRADED_RADIUS at distance r from the nearest, down to size*GRADED_FINEST, `size` from
# GRADED_RADIUS out (gmsh's Threshold field: linear in r). Cells growing with r resolve r^lambda
# at P2's rate with a logarithmic number of extra cells.
GRADED_RADIUS = 0.25
GRADED_FINEST = 1 / 64


@contextmanager
def meshed(shape: Shape, size: float, order: int = 1, graded_at: tuple[Point, ...] = ()) -> Iterator[Any]:
    """gmsh's model of the shape, meshed (cells of about `size`, geometry of this order; finer
    toward the points `graded_at`), with its surfaces as physical group 1; removed when the block
    ends."""
    import gmsh

    with LOCK:
        if not gmsh.isInitialized():
            gmsh.initialize(interruptible=False)
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add("calibration")
        try:
            occ = gmsh.model.occ
            joined = [add_primitive(occ, p) for p in shape.joined]
            if len(joined) > 1:
                joined, _ = occ.fuse(joined[:1], joined[1:])
            if shape.removed:
                joined, _ = occ.cut(joined, [add_primitive(occ, p) for p in shape.removed])
            occ.synchronize()
            gmsh.model.addPhysicalGroup(2, [tag for _, tag in joined], 1)
            gmsh.option.setNumber("Mesh.MeshSizeMax", size)
            gmsh.option.setNumber("Mesh.MeshSizeMin", size * GRADED_FINEST if graded_at else size / 4)
            if graded_at:
                _grade(gmsh, occ, graded_at, size)
            gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", 24)
            gmsh.option.setNumber("Mesh.Algorithm", 6)
            gmsh.model.mesh.generate(2)
            if order > 1:
                gmsh.model.mesh.setOrder(order)
            yield gmsh.model
        finally:
            gmsh.model.remove()


def _grade(gmsh: Any, occ: Any, points: tuple[Point, ...], size: float) -> None:
    """The background size field of `meshed(graded_at=...)`: the distance to the points, through
    a Threshold from size * GRADED_FINEST to size over GRADED_RADIUS."""
    near = 1e-9
    tags = [
        tag
        for x, y in points
        for _, tag in gmsh.model.getEntitiesInBoundingBox(x - near, y - near, -near, x + near, y + near, near, 0)
    ]
    if len(tags) != len(points):
        raise ValueError(f"a mesh graded toward {points}: not every point is a vertex of the shape")
    field = gmsh.model.mesh.field
    distance = field.add("Distance")
    field.setNumbers(distance, "PointsList", tags)
    threshold = field.add("Threshold")
    field.setNumber(threshold, "InField", distance)
    field.setNumber(threshold, "SizeMin", size * GRADED_FINEST)
    field.setNumber(threshold, "SizeMax", size)
    field.setNumber(threshold, "DistMin", GRADED_RADIUS * GRADED_FINEST)
    field.setNumber(threshold, "DistMax", GRADED_RADIUS)
    field.setAsBackgroundMesh(threshold)


def triangles(shape: Shape, size: float) -> tuple[np.ndarray, np.ndarray]:
    """The vertices (n, 2) and straight triangles (m, 3) of the shape's gmsh mesh (vertices of
    a curved edge lie on its curve), only the vertices some triangle uses."""
    with meshed(shape, size) as model:
        tags, coords, _ = model.mesh.getNodes()
        _, _, nodes = model.mesh.getElements(2)
    index = np.zeros(int(tags.max()) + 1, dtype=np.int64)
    index[tags.astype(np.int64)] = np.arange(tags.size)
    tri = index[np.concatenate(nodes).astype(np.int64)].reshape(-1, 3)
    used = np.unique(tri)
    renumber = np.full(tags.size, -1, dtype=np.int64)
    renumber[used] = np.arange(used.size)
    return coords.reshape(-1, 3)[used, :2], renumber[tri]

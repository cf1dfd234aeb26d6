"""Unstructured meshes of the published domains given by their geometry (cases/published_shapes.py) for
the DOLFINx calibration: gmsh's OpenCASCADE kernel builds the shape (disks, boxes, polygons, a
sector, fused or cut), meshes it with cells of about `size` and second-order geometry (the
curved edges' midpoints on the curve), and the mesh is read off by point evaluation at the
in-domain grid points. A mesh is cached in-process by (shape, size): a numerical reference
solves the same case at several refinements, calibration reruns it."""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # isort: skip

import json
from functools import lru_cache
from typing import Any

import numpy as np
from dolfinx import fem, geometry
from dolfinx import mesh as dmesh

from fembench_agents.cases.calibration.gmsh_shapes import meshed
from fembench_agents.cases.domains import reentrant_corners
from fembench_agents.cases.published_shapes import published_shape
from fembench_agents.cases.shapes import Point, Polygon, Shape

CELLS_PER_SPACING = 2.0  # cell size: this many grid spacings (the NGSolve track's rule)


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


def graded_mesh_for(spec: dict[str, Any]) -> dmesh.Mesh:
    """An axis-parallel (polygonal) domain of a case_spec meshed by gmsh, graded toward its
    re-entrant corners (gmsh_shapes.meshed), cells of mesh_size elsewhere: the numerical
    references whose uniform refinements the corner's singularity slows (published_import.py)."""
    d = spec["domain"]
    key = json.dumps({"outer": d["outer"], "holes": d["holes"]}, sort_keys=True)
    return _graded(key, round(mesh_size(spec), 12))


@lru_cache(maxsize=2)
def _graded(key: str, size: float) -> dmesh.Mesh:
    loops = json.loads(key)
    outer = tuple((float(x), float(y)) for x, y in loops["outer"])
    holes = tuple(tuple((float(x), float(y)) for x, y in h) for h in loops["holes"])
    shape = Shape("polygon", {}, "", (Polygon(outer),), tuple(Polygon(h) for h in holes))
    return build_mesh(shape, size, reentrant_corners(outer, holes))


def build_mesh(shape: Shape, size: float, graded_at: tuple[Point, ...] = ()) -> dmesh.Mesh:
    from dolfinx.io import gmsh as gmshio

    with meshed(shape, size, order=2, graded_at=graded_at) as model:
        data = gmshio.model_to_mesh(model, MPI.COMM_SELF, 0, gdim=2)
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

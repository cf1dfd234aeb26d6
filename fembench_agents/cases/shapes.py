"""Plane shapes made of primitives: a `Shape` is closed primitives joined (disks, boxes, convex
polygons, sectors) minus open primitives removed (holes), with its boundary as named pieces
(straight segments and circular arcs, counter-clockwise along the outer loop). Which points are
in the domain is decided from the primitives exactly, never from a mesh: a point on the boundary
(within TOL) is in, a point strictly inside a hole is out.

The published domains given by their geometry are read into shapes by cases/published_shapes.py;
our own drawn domains (cases/own_geometry.py) are shapes too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fembench_agents.cases.case_spec import Arc, DomainSpec
from fembench_agents.cases.domains import crossings
from fembench_agents.cases.domains import on_segment as on_axis_segment

TOL = 1e-12
Point = tuple[float, float]
Segment = tuple[Point, Point]


class GeometryError(ValueError):
    """Geometry parameters that do not describe a domain of their kind; the message says which."""


@dataclass(frozen=True)
class Disk:
    center: Point
    radius: float

    def contains(self, x: np.ndarray, y: np.ndarray, closed: bool) -> np.ndarray:
        gap = np.hypot(x - self.center[0], y - self.center[1]) - self.radius
        return gap <= TOL if closed else gap < -TOL


@dataclass(frozen=True)
class Box:
    x0: float
    x1: float
    y0: float
    y1: float

    def contains(self, x: np.ndarray, y: np.ndarray, closed: bool) -> np.ndarray:
        t = TOL if closed else -TOL
        return (x >= self.x0 - t) & (x <= self.x1 + t) & (y >= self.y0 - t) & (y <= self.y1 + t)

    @property
    def corners(self) -> tuple[Point, ...]:
        return ((self.x0, self.y0), (self.x1, self.y0), (self.x1, self.y1), (self.x0, self.y1))


@dataclass(frozen=True)
class Polygon:
    vertices: tuple[Point, ...]  # counter-clockwise

    def contains(self, x: np.ndarray, y: np.ndarray, closed: bool) -> np.ndarray:
        inside = crossings(self.vertices, x, y)
        on_edge = np.zeros(np.shape(x), dtype=bool)
        n = len(self.vertices)
        for k in range(n):
            on_edge |= segment_distance(x, y, self.vertices[k], self.vertices[(k + 1) % n]) <= TOL
        return inside | on_edge if closed else inside & ~on_edge


@dataclass(frozen=True)
class Wedge:
    """The closed sector of a disk between the angles 0 < `angle` <= pi from `start` (convex)."""

    center: Point
    radius: float
    start: float
    angle: float

    def contains(self, x: np.ndarray, y: np.ndarray, closed: bool) -> np.ndarray:
        dx, dy = x - self.center[0], y - self.center[1]
        a, b = self.start, self.start + self.angle
        t = TOL if closed else -TOL
        after_start = math.cos(a) * dy - math.sin(a) * dx >= -t
        before_end = dx * math.sin(b) - dy * math.cos(b) >= -t
        return (np.hypot(dx, dy) <= self.radius + t) & after_start & before_end


Primitive = Disk | Box | Polygon | Wedge


def segment_distance(x: np.ndarray, y: np.ndarray, a: Point, b: Point) -> np.ndarray:
    (ax, ay), (bx, by) = a, b
    ex, ey = bx - ax, by - ay
    s = np.clip(((x - ax) * ex + (y - ay) * ey) / (ex * ex + ey * ey), 0.0, 1.0)
    return np.hypot(x - ax - s * ex, y - ay - s * ey)


def arc_distance(x: np.ndarray, y: np.ndarray, arc: Arc) -> np.ndarray:
    (cx, cy), r = arc.center, arc.radius
    dx, dy = x - cx, y - cy
    rho = np.hypot(dx, dy)
    angle = np.mod(np.arctan2(dy, dx) - arc.start, 2 * math.pi)
    ends = [(cx + r * math.cos(a), cy + r * math.sin(a)) for a in (arc.start, arc.end)]
    to_ends = np.minimum(*(np.hypot(x - px, y - py) for px, py in ends))
    return np.where(angle <= arc.end - arc.start + 1e-12, np.abs(rho - r), to_ends)


def piece_distance(x: np.ndarray, y: np.ndarray, piece: dict[str, Any]) -> np.ndarray:
    """Distance from each point to a boundary piece of a case_spec (its segment or arc)."""
    if piece.get("arc") is not None:
        return arc_distance(x, y, Arc.model_validate(piece["arc"]))
    a, b = piece["segment"]
    return segment_distance(x, y, (float(a[0]), float(a[1])), (float(b[0]), float(b[1])))


def on_piece(x: np.ndarray, y: np.ndarray, piece: dict[str, Any]) -> np.ndarray:
    if piece.get("arc") is None:
        a, b = piece["segment"]
        if a[0] == b[0] or a[1] == b[1]:  # the axis-parallel test every existing case was built with
            return on_axis_segment(x, y, tuple(a), tuple(b))
    return piece_distance(x, y, piece) <= 1e-9


@dataclass(frozen=True)
class Shape:
    kind: str
    params: dict[str, Any]
    description: str
    joined: tuple[Primitive, ...]  # closed
    removed: tuple[Primitive, ...] = ()  # open
    pieces: tuple[tuple[str, Segment | Arc], ...] = ()
    outer: tuple[Point, ...] = ()  # the outer loop where it is a polygon
    holes: tuple[tuple[Point, ...], ...] = ()  # the polygonal holes
    extras: dict[str, Any] = field(default_factory=dict)  # what a blend needs (dumbbell junctions)

    def inside(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        ok = np.zeros(np.broadcast(x, y).shape, dtype=bool)
        for p in self.joined:
            ok |= p.contains(x, y, closed=True)
        for p in self.removed:
            ok &= ~p.contains(x, y, closed=False)
        return ok

    def extent(self) -> tuple[float, float, float, float]:
        """A box around the domain (for meshing and sampling)."""
        xs, ys = [], []
        for p in self.joined:
            if isinstance(p, Disk | Wedge):
                xs += [p.center[0] - p.radius, p.center[0] + p.radius]
                ys += [p.center[1] - p.radius, p.center[1] + p.radius]
            elif isinstance(p, Box):
                xs += [p.x0, p.x1]
                ys += [p.y0, p.y1]
            else:
                xs += [v[0] for v in p.vertices]
                ys += [v[1] for v in p.vertices]
        return min(xs), max(xs), min(ys), max(ys)

    def spec(self) -> DomainSpec:
        return DomainSpec(
            name=self.kind,  # type: ignore[arg-type]  # a published kind, checked by published_shape
            description=self.description,
            outer=list(self.outer),
            holes=[list(h) for h in self.holes],
            type=self.kind,  # type: ignore[arg-type]
            geometry_params=self.params,
        )

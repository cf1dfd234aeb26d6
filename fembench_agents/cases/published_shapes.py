"""The published domains given by their geometry (circle, annulus, eccentric_annulus, sector,
dumbbell, multi_hole, square_with_hole with a circular or polygonal hole, star, gear), read from
their `geometry_params` exactly as published, in each of the dialects the published file uses,
into shapes (cases/shapes.py); and the in-domain points of a case's evaluation grid, whichever
way its domain is given.

Where the published oracle approximates a curve (its sector's arc is a polygon through 15
points), the geometry here is the curve the parameters describe; where the oracle ignores a
parameter (a star's or gear's `center`), it is honoured (every published one is the origin).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from fembench_agents.cases import cube
from fembench_agents.cases.case_spec import Arc, DomainSpec
from fembench_agents.cases.domains import grid_mask, grid_points, spec_domain
from fembench_agents.cases.model import GridSpec, PublishedDomainName
from fembench_agents.cases.shapes import Box, Disk, GeometryError, Point, Polygon, Segment, Shape, Wedge

PUBLISHED_DOMAINS: tuple[str, ...] = PublishedDomainName.__args__  # type: ignore[attr-defined]


def given_by_geometry(domain: dict[str, Any]) -> bool:
    """Whether a case_spec's domain (plain data, perhaps merged with its published view, whose
    L-shape has geometry_params too) is a published domain given by its geometry."""
    return domain.get("name") in PUBLISHED_DOMAINS


def domain_mask(domain: DomainSpec, grid: GridSpec, boundary: Sequence[Any]) -> np.ndarray:
    """The in-domain grid points of a case's domain: a published one given by its geometry
    (`geometry_params`), else the polygons and pieces of the case_spec (domains.spec_domain: ours,
    or an imported axis-parallel one); on a 3D grid the unit cube, the one 3D domain (cube.py)."""
    if grid.nz is not None:
        return cube.grid_mask(grid)
    if domain.geometry_params is None:
        return grid_mask(spec_domain(domain, list(boundary)), grid)
    X, Y = grid_points(grid)
    return published_shape({"type": domain.type, "geometry_params": domain.geometry_params}).inside(X, Y)


def _point(v: Any, what: str) -> Point:
    try:
        x, y = (float(c) for c in v)
    except (TypeError, ValueError):
        raise GeometryError(f"{what} must be a point [x, y]; got {v!r}") from None
    return x, y


def _positive(v: Any, what: str) -> float:
    try:
        r = float(v)
    except (TypeError, ValueError):
        raise GeometryError(f"{what} must be a number; got {v!r}") from None
    if not r > 0:
        raise GeometryError(f"{what} must be positive; got {v!r}")
    return r


def _box(v: Any, what: str) -> Box:
    try:
        x0, x1, y0, y1 = (float(c) for c in v)
    except (TypeError, ValueError):
        raise GeometryError(f"{what} must be [x0, x1, y0, y1]; got {v!r}") from None
    if not (x0 < x1 and y0 < y1):
        raise GeometryError(f"{what} must have x0 < x1 and y0 < y1; got {v!r}")
    return Box(x0, x1, y0, y1)


def _circle(v: Any, what: str) -> Disk:
    if not isinstance(v, dict) or "c" not in v or "r" not in v:
        raise GeometryError(f"{what} must be {{c: [x, y], r: radius}}; got {v!r}")
    return Disk(_point(v["c"], f"{what}.c"), _positive(v["r"], f"{what}.r"))


def _full(name: str, disk: Disk) -> tuple[str, Arc]:
    return name, Arc(center=disk.center, radius=disk.radius, start=0.0, end=2 * math.pi)


def _box_pieces(box: Box) -> tuple[tuple[str, Segment], ...]:
    c = box.corners
    return tuple((n, (c[k], c[(k + 1) % 4])) for k, n in enumerate(("bottom", "right", "top", "left")))


def _disk_in_box(disk: Disk, box: Box, what: str) -> None:
    (cx, cy), r = disk.center, disk.radius
    if not (box.x0 < cx - r and cx + r < box.x1 and box.y0 < cy - r and cy + r < box.y1):
        raise GeometryError(f"{what} (centre {disk.center}, radius {r}) must lie strictly inside the square")


def _ccw(vertices: list[Point]) -> tuple[Point, ...]:
    n = len(vertices)
    area = sum(vertices[k][0] * vertices[(k + 1) % n][1] - vertices[(k + 1) % n][0] * vertices[k][1] for k in range(n))
    return tuple(vertices if area > 0 else vertices[::-1])


def _star_points(center: Point, radii: tuple[float, float], n: int, offset: float) -> tuple[Point, ...]:
    """2n vertices at angles offset + k pi / n, radius radii[k % 2] (the published oracle's order)."""
    return tuple(
        (
            center[0] + radii[k % 2] * math.cos(offset + k * math.pi / n),
            center[1] + radii[k % 2] * math.sin(offset + k * math.pi / n),
        )
        for k in range(2 * n)
    )


def _edges(vertices: tuple[Point, ...], prefix: str) -> tuple[tuple[str, Segment], ...]:
    n = len(vertices)
    return tuple((f"{prefix}{k + 1}", (vertices[k], vertices[(k + 1) % n])) for k in range(n))


def _teeth(params: dict[str, Any], kind: str) -> tuple[Point, int]:
    center = _point(params.get("center", [0, 0]), f"{kind}.center")
    key = "points" if kind == "star" else "teeth"
    n = params.get(key)
    if not isinstance(n, int) or n < 3:
        raise GeometryError(f"{kind}.{key} must be an integer of at least 3; got {n!r}")
    return center, n


def published_shape(domain: dict[str, Any]) -> Shape:
    """The shape of a published domain of a kind in model.PublishedDomainName; raises
    GeometryError naming the parameter that does not describe one."""
    kind = domain.get("type")
    params = domain.get("geometry_params") or {}
    builder = _BUILDERS.get(str(kind))
    if builder is None:
        raise GeometryError(f"not a domain given by its geometry: {kind!r}")
    return builder(params)


def _circle_shape(p: dict[str, Any]) -> Shape:
    disk = Disk(_point(p.get("center"), "circle.center"), _positive(p.get("radius"), "circle.radius"))
    return Shape(
        "circle", p, f"the disk of radius {disk.radius:g} about {disk.center}", (disk,), (), (_full("circle", disk),)
    )


def _annulus(p: dict[str, Any]) -> Shape:
    c = _point(p.get("center"), "annulus.center")
    inner, outer = _positive(p.get("inner_r"), "annulus.inner_r"), _positive(p.get("outer_r"), "annulus.outer_r")
    if not inner < outer:
        raise GeometryError(f"annulus.inner_r must be below outer_r; got {inner}, {outer}")
    big, small = Disk(c, outer), Disk(c, inner)
    words = f"the annulus about {c} between the radii {inner:g} and {outer:g} (the inner disk's interior removed)"
    return Shape("annulus", p, words, (big,), (small,), (_full("outer", big), _full("inner", small)))


def _eccentric(p: dict[str, Any]) -> Shape:
    big = _circle(p.get("outer_circle"), "eccentric_annulus.outer_circle")
    small = _circle(p.get("inner_circle"), "eccentric_annulus.inner_circle")
    if math.dist(big.center, small.center) + small.radius >= big.radius:
        raise GeometryError("eccentric_annulus.inner_circle must lie strictly inside outer_circle")
    words = (
        f"the disk of radius {big.radius:g} about {big.center} without the open disk of radius "
        f"{small.radius:g} about {small.center}"
    )
    return Shape("eccentric_annulus", p, words, (big,), (small,), (_full("outer", big), _full("inner", small)))


def _sector(p: dict[str, Any]) -> Shape:
    c = _point(p.get("center"), "sector.center")
    r = _positive(p.get("radius"), "sector.radius")
    degrees = _positive(p.get("angle"), "sector.angle")
    if degrees > 180:
        raise GeometryError(f"sector.angle above 180 degrees (a non-convex sector) is not read; got {degrees}")
    a = math.radians(degrees)
    tip0, tip1 = (c[0] + r, c[1]), (c[0] + r * math.cos(a), c[1] + r * math.sin(a))
    words = f"the sector of the disk of radius {r:g} about {c} between the angles 0 and {degrees:g} degrees"
    pieces = (
        ("radius_start", (c, tip0)),
        ("arc", Arc(center=c, radius=r, start=0.0, end=a)),
        ("radius_end", (tip1, c)),
    )
    return Shape("sector", p, words, (Wedge(c, r, 0.0, a),), (), pieces)


def _square_with_hole(p: dict[str, Any]) -> Shape:
    box = _box(p.get("outer", [0, 1, 0, 1]), "square_with_hole.outer")
    hole = p.get("inner_hole") or {}
    if hole.get("type") == "circle":
        disk = Disk(_point(hole.get("center"), "inner_hole.center"), _positive(hole.get("radius"), "inner_hole.radius"))
        _disk_in_box(disk, box, "inner_hole")
        words = f"the box {list(p.get('outer', [0, 1, 0, 1]))} without the open disk of radius {disk.radius:g} about {disk.center}"
        pieces: tuple[tuple[str, Segment | Arc], ...] = (*_box_pieces(box), _full("hole", disk))
        return Shape("square_with_hole", p, words, (box,), (disk,), pieces, box.corners)
    if hole.get("type") == "polygon":
        try:
            vertices = _ccw([_point(v, "inner_hole.vertices[]") for v in hole.get("vertices") or []])
        except TypeError:
            raise GeometryError(f"inner_hole.vertices must be a list of points; got {hole.get('vertices')!r}") from None
        poly = Polygon(vertices)
        vx, vy = np.array(vertices, dtype=float).reshape(-1, 2).T
        if len(vertices) < 3 or not box.contains(vx, vy, closed=False).all():
            raise GeometryError(
                f"inner_hole.vertices must be 3 or more points strictly inside the square; got {vertices}"
            )
        words = f"the box {list(p.get('outer', [0, 1, 0, 1]))} without the open polygon {[list(v) for v in vertices]}"
        pieces = (*_box_pieces(box), *_edges(vertices, "hole_edge_"))  # type: ignore[assignment]
        return Shape("square_with_hole", p, words, (box,), (poly,), pieces, box.corners, (vertices,))
    raise GeometryError(f"square_with_hole.inner_hole of type {hole.get('type')!r} is not curved or slanted")


def _multi_hole(p: dict[str, Any]) -> Shape:
    box = _box(p.get("outer", [0, 1, 0, 1]), "multi_hole.outer")
    holes = p.get("holes")
    if not isinstance(holes, list) or not holes:
        raise GeometryError(f"multi_hole.holes must be a list of {{c, r}}; got {holes!r}")
    disks = tuple(_circle(h, f"multi_hole.holes[{k}]") for k, h in enumerate(holes))
    for k, d in enumerate(disks):
        _disk_in_box(d, box, f"multi_hole.holes[{k}]")
        for j in range(k):
            if math.dist(d.center, disks[j].center) <= d.radius + disks[j].radius:
                raise GeometryError(f"multi_hole.holes[{j}] and [{k}] overlap or touch")
    words = f"the box {list(p.get('outer', [0, 1, 0, 1]))} without {len(disks)} open disks " + ", ".join(
        f"(radius {d.radius:g} about {d.center})" for d in disks
    )
    pieces: tuple[tuple[str, Segment | Arc], ...] = (
        *_box_pieces(box),
        *(_full(f"hole_{k + 1}", d) for k, d in enumerate(disks)),
    )
    return Shape("multi_hole", p, words, (box,), disks, pieces, box.corners)


def _star(p: dict[str, Any]) -> Shape:
    center, n = _teeth(p, "star")
    inner, outer = _positive(p.get("inner_r"), "star.inner_r"), _positive(p.get("outer_r"), "star.outer_r")
    if not inner < outer:
        raise GeometryError(f"star.inner_r must be below outer_r; got {inner}, {outer}")
    vertices = _star_points(center, (outer, inner), n, -math.pi / 2)
    words = (
        f"the {n}-point star about {center}: tips at radius {outer:g} (the first straight down), notches at {inner:g}"
    )
    return Shape("star", p, words, _kites(center, vertices), (), _edges(vertices, "edge_"), vertices)


def _gear(p: dict[str, Any]) -> Shape:
    center, n = _teeth(p, "gear")
    base, tooth = _positive(p.get("base_r"), "gear.base_r"), _positive(p.get("tooth_h"), "gear.tooth_h")
    vertices = _star_points(center, (base + tooth, base), n, 0.0)
    words = f"the {n}-tooth gear about {center}: tips at radius {base + tooth:g} (the first on the x-axis), roots at {base:g}"
    return Shape("gear", p, words, _kites(center, vertices), (), _edges(vertices, "edge_"), vertices)


def _kites(center: Point, vertices: tuple[Point, ...]) -> tuple[Polygon, ...]:
    """A star-shaped polygon whose tips (even vertices) are convex and notches reflex, as the
    union of the convex quadrilaterals centre - notch - tip - notch (closed)."""
    n = len(vertices)
    return tuple(Polygon((center, vertices[k - 1], vertices[k], vertices[(k + 1) % n])) for k in range(0, n, 2))


def _dumbbell(p: dict[str, Any]) -> Shape:
    if "left_circle" in p:  # dialect 1: two circles and a bridge box
        left, right = (
            _circle(p.get("left_circle"), "dumbbell.left_circle"),
            _circle(p.get("right_circle"), "dumbbell.right_circle"),
        )
        b = p.get("bridge") or {}
        try:
            bar = Box(float(b["x_min"]), float(b["x_max"]), float(b["y_min"]), float(b["y_max"]))
        except (KeyError, TypeError, ValueError):
            raise GeometryError(f"dumbbell.bridge must be {{x_min, x_max, y_min, y_max}}; got {b!r}") from None
    else:  # dialect 2: two centres, one radius, a bar between the centres
        r = _positive(p.get("radius"), "dumbbell.radius")
        c1, c2 = (
            _point(p.get("left_center"), "dumbbell.left_center"),
            _point(p.get("right_center"), "dumbbell.right_center"),
        )
        w = _positive(p.get("bar_width"), "dumbbell.bar_width")
        if c1[1] != c2[1]:
            raise GeometryError(f"dumbbell centres must share their y (the bar is horizontal); got {c1}, {c2}")
        left, right = Disk(c1, r), Disk(c2, r)
        bar = Box(c1[0], c2[0], c1[1] - w / 2, c1[1] + w / 2)
    (lx, ly), lr = left.center, left.radius
    (rx, ry), rr = right.center, right.radius
    if not (ly == ry and abs((bar.y0 + bar.y1) / 2 - ly) < 1e-12 and bar.y1 - ly < min(lr, rr)):
        raise GeometryError("dumbbell: the bar must be centred on the circles' common axis and narrower than them")
    h = bar.y1 - ly
    xl, xr = lx + math.sqrt(lr * lr - h * h), rx - math.sqrt(rr * rr - h * h)
    if not (bar.x0 <= xl < xr <= bar.x1):
        raise GeometryError("dumbbell: the bar must join the two circles and leave a stretch between them")
    a = math.asin(h / lr)
    b = math.asin(h / rr)
    pieces = (
        ("left_arc", Arc(center=left.center, radius=lr, start=a, end=2 * math.pi - a)),
        ("bar_bottom", ((xl, bar.y0), (xr, bar.y0))),
        ("right_arc", Arc(center=right.center, radius=rr, start=-math.pi + b, end=math.pi - b)),
        ("bar_top", ((xr, bar.y1), (xl, bar.y1))),
    )
    words = (
        f"two disks (radius {lr:g} about {left.center}, radius {rr:g} about {right.center}) joined by the bar "
        f"[{bar.x0:g}, {bar.x1:g}] x [{bar.y0:g}, {bar.y1:g}]"
    )
    extras = {"junctions": (xl, xr), "bar": (bar.y0, bar.y1)}
    return Shape("dumbbell", p, words, (left, right, bar), (), pieces, extras=extras)


_BUILDERS = {
    "circle": _circle_shape,
    "annulus": _annulus,
    "eccentric_annulus": _eccentric,
    "sector": _sector,
    "square_with_hole": _square_with_hole,
    "multi_hole": _multi_hole,
    "star": _star,
    "gear": _gear,
    "dumbbell": _dumbbell,
}

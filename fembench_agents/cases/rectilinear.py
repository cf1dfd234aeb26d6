"""Axis-parallel regions from their published description (a union of boxes, a box less
boxes, a polygon's vertices) as a `Domain`: the outer loop counter-clockwise, the holes,
and one named boundary piece per maximal straight edge.

The region is decided on the compressed grid of every coordinate the description names:
each cell of that grid lies wholly inside or wholly outside, so the loops are exact (no
tolerance, no meshing), whatever box the region lies in.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fembench_agents.cases.domains import Domain, Piece, Point

Box = tuple[float, float, float, float]  # x0, x1, y0, y1
Namer = Callable[[Point, Point, str, Box], str]  # edge, the side of the region it bounds, bbox -> name
SIDES = {(0, -1): "bottom", (1, 0): "right", (0, 1): "top", (-1, 0): "left"}  # outward normal -> side
OPPOSITE = {"bottom": "top", "top": "bottom", "left": "right", "right": "left"}


class GeometryError(ValueError):
    """A published geometry that is no axis-parallel region with one outer loop."""


def _cells(xs: np.ndarray, ys: np.ndarray, inside: Callable[[float, float], bool]) -> np.ndarray:
    cx, cy = (xs[:-1] + xs[1:]) / 2, (ys[:-1] + ys[1:]) / 2
    return np.array([[inside(float(a), float(b)) for a in cx] for b in cy], dtype=bool)


def _loops(xs: np.ndarray, ys: np.ndarray, cells: np.ndarray) -> list[list[Point]]:
    """The boundary of the marked cells as closed loops, the region on the left of every edge,
    collinear edges merged (a vertex is a corner)."""
    ny, nx = cells.shape

    def filled(j: int, i: int) -> bool:
        return 0 <= j < ny and 0 <= i < nx and bool(cells[j, i])

    nxt: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for j in range(ny):
        for i in range(nx):
            if not cells[j, i]:
                continue
            # counter-clockwise round the cell; an edge shared with another filled cell is interior
            for (a, b), (dj, di) in (
                (((i, j), (i + 1, j)), (-1, 0)),
                (((i + 1, j), (i + 1, j + 1)), (0, 1)),
                (((i + 1, j + 1), (i, j + 1)), (1, 0)),
                (((i, j + 1), (i, j)), (0, -1)),
            ):
                if not filled(j + dj, i + di):
                    nxt.setdefault(a, []).append(b)
    loops: list[list[Point]] = []
    while nxt:
        start = min(nxt, key=lambda v: (v[1], v[0]))
        ring, v = [start], start
        while True:
            options = nxt[v]
            w = options.pop(0)  # a vertex shared by two loops (touching corners) is left as met
            if not options:
                del nxt[v]
            if w == start:
                break
            ring.append(w)
            v = w
        corners = [
            p
            for k, p in enumerate(ring)
            if (ring[k - 1][0] == p[0]) != (p[0] == ring[(k + 1) % len(ring)][0])
            or (ring[k - 1][1] == p[1]) != (p[1] == ring[(k + 1) % len(ring)][1])
        ]
        loops.append([(float(xs[i]), float(ys[j])) for i, j in corners])
    return loops


def _area(loop: list[Point]) -> float:
    n = len(loop)
    return 0.5 * sum(loop[k][0] * loop[(k + 1) % n][1] - loop[(k + 1) % n][0] * loop[k][1] for k in range(n))


def _side(a: Point, b: Point) -> str:
    """The side of the region this edge bounds (the region is on its left)."""
    dx, dy = np.sign(b[0] - a[0]), np.sign(b[1] - a[1])
    return SIDES[(int(dy), int(-dx))]


def default_name(a: Point, b: Point, side: str, bbox: Box) -> str:
    """An edge on the region's bounding box is named by its side (bottom, right, top, left); an
    edge inside it bounds a notch, named by the notch's side it is (the L-shape's notch_bottom
    faces up)."""
    coordinate = {"bottom": bbox[2], "top": bbox[3], "left": bbox[0], "right": bbox[1]}[side]
    on_box = (a[1] if side in ("bottom", "top") else a[0]) == coordinate
    return side if on_box else f"notch_{OPPOSITE[side]}"


def region(
    name: str,
    description: str,
    coordinates: tuple[list[float], list[float]],
    inside: Callable[[float, float], bool],
    namer: Namer = default_name,
) -> Domain:
    """The region whose cells on the grid of the given x and y coordinates `inside` marks (at
    their centres): one outer loop and any holes, its pieces named by `namer` (holes' edges by
    their side of the hole: hole_bottom, ...), numbered in loop order where a name repeats."""
    xs, ys = (np.unique(np.asarray(c, dtype=float)) for c in coordinates)
    cells = _cells(xs, ys, inside)
    if not cells.any():
        raise GeometryError(f"{name}: the region is empty")
    loops = _loops(xs, ys, cells)
    outer = [loop for loop in loops if _area(loop) > 0]
    if len(outer) != 1:
        raise GeometryError(f"{name}: the region has {len(outer)} outer boundaries; expected one connected region")
    holes = [loop[:1] + loop[1:][::-1] for loop in loops if _area(loop) < 0]  # each counter-clockwise
    pts = np.asarray(outer[0])
    bbox = (float(pts[:, 0].min()), float(pts[:, 0].max()), float(pts[:, 1].min()), float(pts[:, 1].max()))
    pieces: list[Piece] = []
    for loop in outer:
        pieces += [(namer(a, b, _side(a, b), bbox), a, b) for a, b in zip(loop, loop[1:] + loop[:1], strict=True)]
    for hole in holes:  # counter-clockwise round the hole: the hole is on the left, its side names the edge
        pieces += [(f"hole_{_side(a, b)}", a, b) for a, b in zip(hole, hole[1:] + hole[:1], strict=True)]
    return Domain(name, description, tuple(outer[0]), tuple(tuple(h) for h in holes), _numbered(pieces))


def _numbered(pieces: list[Piece]) -> tuple[Piece, ...]:
    count: dict[str, int] = {}
    for n, _, _ in pieces:
        count[n] = count.get(n, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for n, a, b in pieces:
        if count[n] > 1:
            seen[n] = seen.get(n, 0) + 1
            n = f"{n}_{seen[n]}"
        out.append((n, a, b))
    return tuple(out)


def in_box(box: Box, x: float, y: float) -> bool:
    return box[0] < x < box[1] and box[2] < y < box[3]


def num(v: float) -> str:
    return f"{float(v):g}"


def box_text(b: Box) -> str:
    return f"[{num(b[0])}, {num(b[1])}] x [{num(b[2])}, {num(b[3])}]"

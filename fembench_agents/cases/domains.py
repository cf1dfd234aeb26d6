"""The domains of the track: closed regions bounded by axis-parallel segments,
an outer polygon with polygonal holes, each boundary segment a named piece.

Our own five lie inside the unit square with their corners at multiples of 1/8,
so that every evaluation grid with (n - 1) divisible by 8 has nodes on every
corner. An imported case's domain is built from its published geometry
(published_domains.py: any L-shape, a rectangle in any box, a rectangular hole
of any size, the T-junction) and its grid need not meet its corners: which grid
points are in the domain is decided from the polygons themselves.

A domain is closed: points on its boundary (including a hole's edges) are in
the domain; points strictly inside a removed region are outside (NaN).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fembench_agents.cases import cube
from fembench_agents.cases.case_spec import DomainSpec
from fembench_agents.cases.model import GridSpec

TOL = 1e-12
Point = tuple[float, float]
Piece = tuple[str, Point, Point]


@dataclass(frozen=True)
class Domain:
    name: str
    description: str
    outer: tuple[Point, ...]  # counter-clockwise
    holes: tuple[tuple[Point, ...], ...]  # removed open polygons
    pieces: tuple[Piece, ...]  # named boundary segments, covering the outer loop and every hole

    def inside(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """True on the closed domain: inside the outer polygon and outside every hole by the
        even-odd rule (exact for points off the boundary), and on any of its edges within TOL."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        ok = crossings(self.outer, x, y)
        for hole in self.holes:
            ok &= ~crossings(hole, x, y)
        for loop in (self.outer, *self.holes):
            for k, a in enumerate(loop):
                ok |= on_segment(x, y, a, loop[(k + 1) % len(loop)])
        return ok

    def piece_index(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Index of the first boundary piece each point lies on, -1 if none."""
        idx = np.full(np.shape(x), -1, dtype=int)
        for k, (_, a, b) in reversed(list(enumerate(self.pieces))):
            idx[on_segment(x, y, a, b)] = k
        return idx

    def spec(self) -> DomainSpec:
        return DomainSpec(
            name=self.name,  # type: ignore[arg-type]  # a DomainSpec name, checked by pydantic
            description=self.description,
            outer=list(self.outer),
            holes=[list(h) for h in self.holes],
        )


def crossings(poly: tuple[Point, ...], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Even-odd rule: an odd number of the polygon's edges cross the ray from (x, y) towards +x."""
    inside = np.zeros(np.shape(x), dtype=bool)
    n = len(poly)
    for i in range(n):
        (x1, y1), (x2, y2) = poly[i], poly[(i + 1) % n]
        if y1 == y2:
            continue  # a horizontal edge crosses no horizontal ray
        cond = (y1 > y) != (y2 > y)
        xc = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
        inside ^= cond & (x < xc)
    return inside


def reentrant_corners(outer: tuple[Point, ...], holes: tuple[tuple[Point, ...], ...]) -> tuple[Point, ...]:
    """The corners where the domain's interior angle exceeds pi: the outer loop's reflex vertices
    and every convex vertex of a hole (either orientation)."""

    def turns(loop: tuple[Point, ...]) -> list[tuple[Point, float]]:
        n = len(loop)
        area = sum(loop[k][0] * loop[(k + 1) % n][1] - loop[(k + 1) % n][0] * loop[k][1] for k in range(n))
        out = []
        for k in range(n):
            (ax, ay), (bx, by), (cx, cy) = loop[k - 1], loop[k], loop[(k + 1) % n]
            out.append((loop[k], ((bx - ax) * (cy - by) - (by - ay) * (cx - bx)) * math.copysign(1.0, area)))
        return out

    corners = [p for p, turn in turns(outer) if turn < 0]
    corners += [p for h in holes for p, turn in turns(h) if turn > 0]
    return tuple(corners)


def spec_domain(domain: DomainSpec | dict[str, Any], boundary: list[Any]) -> Domain:
    """The domain a case_spec describes: its polygons and its boundary pieces (a BoundaryPiece
    or its JSON), whichever domain it is, ours or an imported one."""
    data = domain.model_dump() if isinstance(domain, DomainSpec) else domain
    pieces = []
    for p in boundary:
        q = p if isinstance(p, dict) else p.model_dump()
        a, b = q["segment"]
        pieces.append((q["name"], (float(a[0]), float(a[1])), (float(b[0]), float(b[1]))))
    return Domain(
        name=data["name"],
        description=data["description"],
        outer=tuple((float(a), float(b)) for a, b in data["outer"]),
        holes=tuple(tuple((float(a), float(b)) for a, b in h) for h in data.get("holes", [])),
        pieces=tuple(pieces),
    )


def on_segment(x: np.ndarray, y: np.ndarray, a: Point, b: Point) -> np.ndarray:
    (ax, ay), (bx, by) = a, b
    if ax == bx:
        return (np.abs(x - ax) <= TOL) & (y >= min(ay, by) - TOL) & (y <= max(ay, by) + TOL)
    return (np.abs(y - ay) <= TOL) & (x >= min(ax, bx) - TOL) & (x <= max(ax, bx) + TOL)


def _square_pieces() -> tuple[Piece, ...]:
    return (
        ("bottom", (0.0, 0.0), (1.0, 0.0)),
        ("right", (1.0, 0.0), (1.0, 1.0)),
        ("top", (1.0, 1.0), (0.0, 1.0)),
        ("left", (0.0, 1.0), (0.0, 0.0)),
    )


def _chain(names: tuple[str, ...], outer: tuple[Point, ...]) -> tuple[Piece, ...]:
    """Named pieces along a closed polygon, piece k from vertex k to vertex k+1."""
    return tuple((n, outer[k], outer[(k + 1) % len(outer)]) for k, n in enumerate(names))


# a channel of height 1/2 (y in [1/4, 3/4]) whose inlet half is blocked by a backward-facing step
CHANNEL: tuple[Point, ...] = ((0, 0.5), (0.375, 0.5), (0.375, 0.25), (1, 0.25), (1, 0.75), (0, 0.75))
CROSS: tuple[Point, ...] = (
    (0.25, 0),
    (0.75, 0),
    (0.75, 0.25),
    (1, 0.25),
    (1, 0.75),
    (0.75, 0.75),
    (0.75, 1),
    (0.25, 1),
    (0.25, 0.75),
    (0, 0.75),
    (0, 0.25),
    (0.25, 0.25),
)
H0, H1 = 0.375, 0.625
DOMAINS: dict[str, Domain] = {
    "unit_square": Domain(
        "unit_square", "the unit square [0, 1] x [0, 1]", ((0, 0), (1, 0), (1, 1), (0, 1)), (), _square_pieces()
    ),
    "l_shape": Domain(
        "l_shape",
        "L-shape: [0, 1] x [0, 1] without the open quarter (0.5, 1] x (0.5, 1]",
        ((0, 0), (1, 0), (1, 0.5), (0.5, 0.5), (0.5, 1), (0, 1)),
        (),
        (
            ("bottom", (0.0, 0.0), (1.0, 0.0)),
            ("right", (1.0, 0.0), (1.0, 0.5)),
            ("notch_bottom", (1.0, 0.5), (0.5, 0.5)),
            ("notch_left", (0.5, 0.5), (0.5, 1.0)),
            ("top", (0.5, 1.0), (0.0, 1.0)),
            ("left", (0.0, 1.0), (0.0, 0.0)),
        ),
    ),
    "square_hole": Domain(
        "square_hole",
        "the unit square with the open square hole (0.375, 0.625) x (0.375, 0.625) removed",
        ((0, 0), (1, 0), (1, 1), (0, 1)),
        (((H0, H0), (H1, H0), (H1, H1), (H0, H1)),),
        (
            *_square_pieces(),
            ("hole_bottom", (H0, H0), (H1, H0)),
            ("hole_right", (H1, H0), (H1, H1)),
            ("hole_top", (H1, H1), (H0, H1)),
            ("hole_left", (H0, H1), (H0, H0)),
        ),
    ),
    "channel_with_step": Domain(
        "channel_with_step",
        "a channel [0, 1] x [0.25, 0.75] behind a backward-facing step: the part x < 0.375, y < 0.5 is removed",
        CHANNEL,
        (),
        _chain(("step_top", "step_face", "bottom", "outlet", "top", "inlet"), CHANNEL),
    ),
    "cross": Domain(
        "cross",
        "a plus-shaped cross: [0, 1] x [0, 1] without the four open corner squares of side 0.25",
        CROSS,
        (),
        _chain(
            (
                "south",
                "south_east_down",
                "south_east_right",
                "east",
                "north_east_right",
                "north_east_up",
                "north",
                "north_west_up",
                "north_west_left",
                "west",
                "south_west_left",
                "south_west_down",
            ),
            CROSS,
        ),
    ),
}


def grid_points(grid: GridSpec) -> tuple[np.ndarray, np.ndarray]:
    """X, Y of shape (ny, nx): rows are y, columns x (the output layout)."""
    x0, x1, y0, y1 = grid.bbox
    return np.meshgrid(np.linspace(x0, x1, grid.nx), np.linspace(y0, y1, grid.ny))


def grid_mask(domain: Domain, grid: GridSpec) -> np.ndarray:
    X, Y = grid_points(grid)
    return domain.inside(X, Y)


def grid_coordinates(grid: GridSpec) -> dict[str, np.ndarray]:
    """The grid's coordinates by name, each of the output's shape: x, y (ny, nx) in 2D,
    x, y, z (nz, ny, nx) in 3D; what compile_expr takes."""
    if grid.nz is not None:
        return cube.grid_coordinates(grid)
    X, Y = grid_points(grid)
    return {"x": X, "y": Y}

"""Each domain kind's size and placement, drawn: the case file's `domain` and `geometry`
(cases/own_geometry.py reads it) and the region the grammar's corner term is placed by.

Every number is a multiple of 1/16 written as a float (exact in binary), so the case file is
the same text on any machine. The ranges keep the meshes and the 65 x 65 grid sensible:
  l_shape           one quarter removed (which one drawn), its inner corner (a, b) with a, b in
                    {3/8, 1/2, 5/8}: corners on multiples of 1/8, grid nodes
  square_hole       a w x h hole, w, h in {1/4, 3/8}, its corners on multiples of 1/8 at least
                    1/8 from the outer boundary
  circle            radius r in {3/8, 7/16, 1/2}, centre on multiples of 1/16 with the disk in [0, 1]^2
  annulus           outer radius R in {3/8, 7/16, 1/2}, inner r in {1/8, 3/16, 1/4} with
                    R - r >= 3/16, centre as for the disk of radius R
  square_with_hole  a circular hole of radius r in {1/8, 3/16, 1/4}, centre on multiples of 1/16
                    with at least 1/8 between the hole and the square's sides
The unit square, the channel with its step and the cross keep their fixed geometry.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from fembench_agents.cases.domains import DOMAINS, Domain
from fembench_agents.cases.generate.grammar import Draw
from fembench_agents.cases.model import CURVED_DOMAINS, CaseFile, GridSpec
from fembench_agents.cases.own_geometry import curved, polygon
from fembench_agents.cases.shapes import Shape

# the kinds drawn from, in this order (part of the draw: a change draws other cases, a version bump)
KINDS: tuple[str, ...] = (*DOMAINS, *CURVED_DOMAINS)
POLYGONS: tuple[str, ...] = tuple(DOMAINS)  # where a numerical reference is solved (builder.make_spec)
GRID: GridSpec = CaseFile.model_fields["grid"].default  # a fresh case's grid, whose nodes the corners are

L_CORNERS = (Fraction(3, 8), Fraction(1, 2), Fraction(5, 8))
L_QUARTERS = ("north_east", "north_west", "south_west", "south_east")
HOLE_SIDES = (Fraction(1, 4), Fraction(3, 8))
HOLE_MARGIN = Fraction(1, 8)
DISK_RADII = (Fraction(3, 8), Fraction(7, 16), Fraction(1, 2))
ANNULUS_INNER = (Fraction(1, 8), Fraction(3, 16), Fraction(1, 4))
ANNULUS_WALL = Fraction(3, 16)  # R - r at least
CIRCULAR_HOLE_RADII = (Fraction(1, 8), Fraction(3, 16), Fraction(1, 4))
STEP = Fraction(1, 16)  # curved domains' centres lie on multiples of it


@dataclass(frozen=True)
class DrawnDomain:
    name: str  # the case file's domain
    geometry: dict[str, Any] | None  # the case file's geometry; None: the kind's fixed one
    region: Domain | Shape  # its corners and inside, for the corner term


def _between(lo: Fraction, hi: Fraction, step: Fraction) -> tuple[Fraction, ...]:
    """lo, lo + step, ..., up to hi."""
    n = int((hi - lo) / step)
    return tuple(lo + k * step for k in range(n + 1))


def _l_shape(d: Draw) -> dict[str, Any]:
    quarter, a, b = d.pick(L_QUARTERS), d.pick(L_CORNERS), d.pick(L_CORNERS)
    o, i = Fraction(0), Fraction(1)
    ring: tuple[tuple[Fraction, Fraction], ...] = {
        "north_east": ((o, o), (i, o), (i, b), (a, b), (a, i), (o, i)),
        "north_west": ((o, o), (i, o), (i, i), (a, i), (a, b), (o, b)),
        "south_west": ((a, o), (i, o), (i, i), (o, i), (o, b), (a, b)),
        "south_east": ((o, o), (a, o), (a, b), (i, b), (i, i), (o, i)),
    }[quarter]
    return {"vertices": [[float(x), float(y)] for x, y in ring]}


def _square_hole(d: Draw) -> dict[str, Any]:
    w, h = d.pick(HOLE_SIDES), d.pick(HOLE_SIDES)
    x0 = d.pick(_between(HOLE_MARGIN, 1 - HOLE_MARGIN - w, Fraction(1, 8)))
    y0 = d.pick(_between(HOLE_MARGIN, 1 - HOLE_MARGIN - h, Fraction(1, 8)))
    bbox = [float(x0), float(x0 + w), float(y0), float(y0 + h)]
    return {"outer": [0.0, 1.0, 0.0, 1.0], "inner_hole": {"type": "rect", "bbox": bbox}}


def _centre(d: Draw, reach: Fraction) -> list[float]:
    """A centre on multiples of STEP whose disk of radius `reach` lies in [0, 1]^2."""
    places = _between(reach, 1 - reach, STEP)
    return [float(d.pick(places)), float(d.pick(places))]


def _circle(d: Draw) -> dict[str, Any]:
    r = d.pick(DISK_RADII)
    return {"center": _centre(d, r), "radius": float(r)}


def _annulus(d: Draw) -> dict[str, Any]:
    outer = d.pick(DISK_RADII)
    inner = d.pick(tuple(r for r in ANNULUS_INNER if outer - r >= ANNULUS_WALL))
    return {"center": _centre(d, outer), "inner_r": float(inner), "outer_r": float(outer)}


def _square_with_hole(d: Draw) -> dict[str, Any]:
    r = d.pick(CIRCULAR_HOLE_RADII)
    hole = {"type": "circle", "center": _centre(d, r + HOLE_MARGIN), "radius": float(r)}
    return {"outer": [0.0, 1.0, 0.0, 1.0], "inner_hole": hole}


DRAWS = {
    "l_shape": _l_shape,
    "square_hole": _square_hole,
    "circle": _circle,
    "annulus": _annulus,
    "square_with_hole": _square_with_hole,
}


def draw_domain(d: Draw, kind: str) -> DrawnDomain:
    """The domain of this kind with its size and placement drawn (the fixed one for a kind without)."""
    geometry = DRAWS[kind](d) if kind in DRAWS else None
    region: Domain | Shape = curved(kind, geometry) if kind in CURVED_DOMAINS else polygon(kind, geometry, GRID)
    return DrawnDomain(kind, geometry, region)

"""Our own domains with a size and placement of the case's choosing: a case file's `geometry`
is the published `geometry_params` of its domain's kind, read by the importer's readers
(published_domains.track_domain for the L-shape's `vertices` and the rectangular hole,
published_shapes.published_shape for the disk, the annulus and the square with a circular hole). Without
`geometry` a domain is the fixed one of its name (domains.DOMAINS, CURVED below).

Our evaluation grid is [0, 1]^2 and a polygonal domain's corners must be grid nodes (the
numpy-scipy stencils need them there): a polygon's corners are checked against the case's grid,
a curved domain must lie in the unit square.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fembench_agents.cases.domains import DOMAINS, Domain, grid_mask, grid_points
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import GridSpec
from fembench_agents.cases.published_domains import Excluded, track_domain
from fembench_agents.cases.published_shapes import published_shape
from fembench_agents.cases.shapes import GeometryError, Shape

# our polygonal domain -> the published kind its geometry is given as
POLYGON_KINDS = {"l_shape": "l_shape", "square_hole": "square_with_hole"}
# what makes one: its outer loop's corners and its holes
SHAPES = {"l_shape": (6, 0), "square_hole": (4, 1)}
# name -> the published domain it is (type, geometry_params); the name is the published type
CURVED: dict[str, dict[str, Any]] = {
    "circle": {"type": "circle", "geometry_params": {"center": [0.5, 0.5], "radius": 0.5}},
    "annulus": {"type": "annulus", "geometry_params": {"center": [0.5, 0.5], "inner_r": 0.25, "outer_r": 0.5}},
    "square_with_hole": {
        "type": "square_with_hole",
        "geometry_params": {
            "outer": [0.0, 1.0, 0.0, 1.0],
            "inner_hole": {"type": "circle", "center": [0.5, 0.5], "radius": 0.25},
        },
    },
}
UNIT = (0.0, 1.0, 0.0, 1.0)


def polygon(name: str, geometry: dict[str, Any] | None, grid: GridSpec) -> Domain:
    """The polygonal domain `name` of the given geometry (its fixed one without), every corner a
    node of `grid` inside the unit square."""
    if geometry is None:
        return DOMAINS[name]
    try:
        found = track_domain({"type": POLYGON_KINDS[name], "geometry_params": geometry})
    except Excluded as exc:
        raise CaseDefinitionError(f"geometry of {name} {geometry}: {exc}") from None
    if not isinstance(found, Domain) or found.name != name or (len(found.outer), len(found.holes)) != SHAPES[name]:
        got = found if isinstance(found, str) else f"region of {len(found.outer)} corners and {len(found.holes)} holes"
        corners, holes = SHAPES[name]
        raise CaseDefinitionError(
            f"geometry of {name} {geometry} describes a {got}, not a {name} ({corners} corners, {holes} holes)"
        )
    for corner in (*found.outer, *(v for hole in found.holes for v in hole)):
        on_grid = all(
            lo <= c <= hi and float(c * (n - 1)).is_integer()
            for c, lo, hi, n in ((corner[0], *UNIT[:2], grid.nx), (corner[1], *UNIT[2:], grid.ny))
        )
        if not on_grid:
            raise CaseDefinitionError(
                f"geometry of {name}: corner {corner} is no node of the {grid.nx} x {grid.ny} grid on [0, 1]^2"
            )
    return found


def curved(name: str, geometry: dict[str, Any] | None) -> Shape:
    """The curved domain `name` of the given geometry (its fixed one without), inside the unit square."""
    params = CURVED[name]["geometry_params"] if geometry is None else geometry
    try:
        shape = published_shape({"type": CURVED[name]["type"], "geometry_params": params})
    except GeometryError as exc:
        raise CaseDefinitionError(f"geometry of {name} {params}: {exc}") from None
    x0, x1, y0, y1 = shape.extent()
    if x0 < UNIT[0] or x1 > UNIT[1] or y0 < UNIT[2] or y1 > UNIT[3]:
        raise CaseDefinitionError(f"geometry of {name} {params}: the domain leaves the unit square {[x0, x1, y0, y1]}")
    return shape


def mask(name: str, geometry: dict[str, Any] | None, grid: GridSpec) -> np.ndarray:
    """The closed domain's grid points of a 2D domain of ours, polygonal or curved."""
    if name in CURVED:
        X, Y = grid_points(grid)
        return curved(name, geometry).inside(X, Y)
    return grid_mask(polygon(name, geometry, grid), grid)

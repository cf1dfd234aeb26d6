"""A case file's `geometry` (cases/own_geometry.py): our L-shape, rectangular hole, disk, annulus
and circular hole at a size and placement of the case's choosing, read by the importer's
readers, refused with the reason where it is no such domain on our grid."""

from __future__ import annotations

import re

import numpy as np
import pytest
from pydantic import ValidationError

from fembench_agents.cases.builder import make_spec
from fembench_agents.cases.domains import DOMAINS
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import CaseFile, GridSpec
from fembench_agents.cases.own_curved import case_mask
from fembench_agents.cases.own_geometry import curved, mask, polygon

GRID = GridSpec(nx=65, ny=65)
L_SOUTH_WEST = {"vertices": [[0.375, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.625], [0.375, 0.625]]}


def _case(domain: str, geometry: dict | None) -> CaseFile:
    return CaseFile.model_validate(
        {
            "id": "g",
            "family": "poisson",
            "domain": domain,
            "coefficients": {"k": 1.0},
            "manufactured": {"u": "x*y**2 + 1"},
            "geometry": geometry,
        }
    )


def test_a_drawn_l_shape_and_hole_are_polygons_with_their_pieces_and_grid_points() -> None:
    l_shape = polygon("l_shape", L_SOUTH_WEST, GRID)
    assert l_shape.outer == ((0.375, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.0, 0.625), (0.375, 0.625))
    assert [p[0] for p in l_shape.pieces] == ["bottom", "right", "top", "left", "notch_top", "notch_right"]
    spec, _ = make_spec(_case("l_shape", L_SOUTH_WEST))
    assert spec.domain.outer == list(l_shape.outer) and [p.name for p in spec.boundary][-2:] == [
        "notch_top",
        "notch_right",
    ]
    # the removed quarter [0, 3/8) x [0, 5/8): 24 x 40 grid points off the domain, its edges in
    assert int((~mask("l_shape", L_SOUTH_WEST, GRID)).sum()) == 24 * 40
    hole = {"outer": [0.0, 1.0, 0.0, 1.0], "inner_hole": {"type": "rect", "bbox": [0.5, 0.75, 0.25, 0.625]}}
    square_hole = polygon("square_hole", hole, GRID)
    assert square_hole.holes == (((0.5, 0.25), (0.75, 0.25), (0.75, 0.625), (0.5, 0.625)),)
    assert int((~case_mask("square_hole", GRID, hole)).sum()) == 15 * 23
    assert polygon("square_hole", None, GRID) is DOMAINS["square_hole"]


def test_a_drawn_disk_annulus_and_circular_hole_keep_their_published_geometry() -> None:
    annulus = {"center": [0.5, 0.4375], "inner_r": 0.1875, "outer_r": 0.4375}
    spec, _ = make_spec(_case("annulus", annulus))
    assert (spec.domain.type, spec.domain.geometry_params) == ("annulus", annulus)
    assert [(p.name, p.arc and (p.arc.center, p.arc.radius)) for p in spec.boundary] == [
        ("outer", ((0.5, 0.4375), 0.4375)),
        ("inner", ((0.5, 0.4375), 0.1875)),
    ]
    inside = mask("annulus", annulus, GRID)
    assert bool(inside[48, 32]) and not inside[28 + 6, 32] and not inside[0, 0]  # (1/2, 7/16 + 3/32): in the hole
    assert curved("circle", None).params == {"center": [0.5, 0.5], "radius": 0.5}


@pytest.mark.parametrize(
    ("domain", "geometry", "message"),
    [
        (
            "l_shape",
            {"vertices": [[0, 0], [0.6, 0], [0.6, 0.5], [1, 0.5], [1, 1], [0, 1]]},
            "geometry of l_shape: corner (0.6, 0.0) is no node of the 65 x 65 grid on [0, 1]^2",
        ),
        (
            "l_shape",
            {"vertices": [[0, 0], [1, 0], [1, 1], [0, 1]]},
            "describes a region of 4 corners and 0 holes, not a l_shape (6 corners, 0 holes)",
        ),
        ("square_hole", {"inner_hole": {"type": "rect", "bbox": [0.5, 0.25, 0, 1]}}, "geometry of square_hole"),
        (
            "circle",
            {"center": [0.25, 0.5], "radius": 0.375},
            "the domain leaves the unit square [-0.125, 0.625, 0.125, 0.875]",
        ),
        ("annulus", {"center": [0.5, 0.5], "inner_r": 0.25, "outer_r": 0.125}, "annulus.inner_r must be below outer_r"),
    ],
)
def test_a_geometry_that_is_no_such_domain_of_ours_is_refused_naming_it(
    domain: str, geometry: dict, message: str
) -> None:
    with pytest.raises(CaseDefinitionError, match=re.escape(message)):
        make_spec(_case(domain, geometry))


def test_a_fixed_domain_takes_no_geometry() -> None:
    with pytest.raises(
        ValidationError, match="domain cross has a fixed geometry; `geometry` is for l_shape, square_hole, circle"
    ):
        _case("cross", {"vertices": []})
    assert np.array_equal(mask("cross", None, GRID), case_mask("cross", GRID))

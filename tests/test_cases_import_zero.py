"""A record whose scored field is zero is refused as its own defect: a flow's velocity decided
from its data before any solve (zero_flow.py), any other numerical reference by its scored field
u alone, whatever its pressure."""

from __future__ import annotations

import json

import numpy as np
import pytest
import sympy as sp

from fembench_agents.cases import published_import
from fembench_agents.cases.cube_data import NAMES
from fembench_agents.cases.published import ImportReport, convert
from fembench_agents.cases.published_domains import Excluded
from fembench_agents.cases.zero_flow import potential, zero_velocity_reason
from tests.published_records import _record

ANNULUS = {"type": "annulus", "geometry_params": {"center": [-0.15, 0.1], "inner_r": 0.55, "outer_r": 1.0}}
ANNULUS_GRID = {"bbox": [-1.15, 0.85, -0.9, 1.1], "nx": 41, "ny": 41}
GRADIENT = ["3*sin(pi*x)*sin(pi*y)", "-3*cos(pi*x)*cos(pi*y)"]  # grad of -(3/pi) cos(pi x) sin(pi y)
WALLS = [{"on": e, "value": ["0.0", "0.0"]} for e in ("x0", "y0", "y1")]  # x1 open (do-nothing)


def _stokes(rid: str, forcing: list[str], **kw: object) -> dict:
    pde = {"type": "stokes", "pde_params": {"nu": 0.4}, "source_term": forcing}
    kw.setdefault("bc", {"dirichlet": [{"on": "all", "value": ["0.0", "0.0"]}]})
    return _record(rid, pde, field="velocity_magnitude", **kw)  # type: ignore[arg-type]


def _reason(record: dict) -> str | None:
    try:
        convert(record, ImportReport())
    except Excluded as exc:
        return str(exc)
    return None


def test_a_gradient_forcing_with_walls_at_rest_is_refused_from_its_data_naming_the_scored_field() -> None:
    """stokes_exp_eccentric_annulus_narrow_source's data: u = 0, p = phi + c; before this rule its
    solves ran to a relative error of 143 (noise over zero) and it was refused as a calibration error."""
    record = _stokes("annulus_gradient", GRADIENT, domain=ANNULUS, grid=ANNULUS_GRID)
    assert _reason(record) == (
        "record defect: its scored field, the velocity magnitude u, is zero: the velocity data is zero on every "
        "wall, and the forcing ['3*sin(pi*x)*sin(pi*y)', '-3*cos(pi*x)*cos(pi*y)'] is the gradient of "
        "phi = -3*sin(pi*y)*cos(pi*x)/pi, so u = 0 and the pressure phi + c balances it; no relative error of u "
        "is defined"
    )


def test_an_open_edge_keeps_the_zero_velocity_only_where_the_potential_is_constant_on_it() -> None:
    """stokes_no_exact_constant_force_outflow: forcing (1, 0), x1 open: p = x - 1 meets the open
    edge's zero traction, u = 0. Forcing (0, 1) on the same walls is a gradient too (of y), but not
    constant on x = 1: the flow is driven out, not zero, and the record converts."""
    assert _reason(_stokes("pushed_out", ["1.0", "0.0"], bc={"dirichlet": WALLS})) == (
        "record defect: its scored field, the velocity magnitude u, is zero: the velocity data is zero on every "
        "wall and the traction data on the open pieces, and the forcing ['1.0', '0.0'] is the gradient of "
        "phi = 1.0*x, constant on the open pieces, so u = 0 and the pressure phi - phi(open pieces) balances it; "
        "no relative error of u is defined"
    )
    assert _reason(_stokes("driven_along", ["0.0", "1.0"], bc={"dirichlet": WALLS})) is None
    # (-y, x) has curl 2: no potential, a swirl
    assert _reason(_stokes("swirl", ["-y", "x"], domain=ANNULUS, grid=ANNULUS_GRID)) is None
    # a moving wall drives the flow whatever the forcing
    moving = [{"on": "all", "value": ["y*(1 - y)", "0.0"]}]
    assert _reason(_stokes("moving", GRADIENT, domain=ANNULUS, grid=ANNULUS_GRID, bc={"dirichlet": moving})) is None


@pytest.mark.parametrize(
    ("forcing", "phi"),
    [
        (["2*x*y", "x**2 + cos(y)"], "x**2*y + sin(y)"),
        (["0", "0", "-9.81"], "-9.81*z"),
        (["y", "-x"], None),
        (["0", "x", "0"], None),
    ],
)
def test_the_potential_is_found_and_checked(forcing: list[str], phi: str | None) -> None:
    found = potential([sp.sympify(f, locals=NAMES) for f in forcing])
    if phi is None:
        assert found is None
    else:
        assert found is not None and sp.simplify(found - sp.sympify(phi, locals=NAMES)) == 0


def test_three_open_edges_must_share_one_level_of_the_potential() -> None:
    # phi = x: x = 1 and x = 0 are both level lines, at different levels; p cannot vanish on both
    assert zero_velocity_reason(["1", "0"], [[0, 0]], [((1, 0), (1, 1)), ((0, 0), (0, 1))]) is None
    assert zero_velocity_reason(["1", "0"], [[0, 0]], [((1, 0), (1, 1)), ((1, 2), (1, 3))]) is not None


def test_the_numerical_rule_judges_the_scored_field_alone() -> None:
    """A pressure balancing a forcing is no reference: u zero to 1e-9 is refused whatever p is;
    u of 1e-8 is a field to score."""
    p = np.linspace(-1.0, 1.0, 9).reshape(3, 3)
    zero = {"u": np.full((3, 3), 4e-10), "p": p}
    assert published_import.zero_scored_field(zero) == (
        "record defect: its scored field u is zero on the grid (largest value 4.0e-10), so no relative error is defined"
    )
    assert published_import.zero_scored_field({"u": np.full((3, 3), 1e-8), "p": np.zeros((3, 3))}) is None


def test_a_numerical_poisson_reference_that_is_zero_is_refused_by_its_scored_field() -> None:
    pde = {"type": "poisson", "coefficients": {"kappa": {"type": "constant", "value": 1.0}}, "source_term": "0.0"}
    record = _record(
        "poisson_nothing",
        pde,
        grid={"bbox": [0, 1, 0, 1], "nx": 9, "ny": 9},
        bc={"dirichlet": {"on": "all", "value": "0.0"}},
    )
    _, _, report = published_import.import_records([json.dumps(record)])
    assert report.excluded == {
        "poisson_nothing": "record defect: its scored field u is zero on the grid (largest value 0.0e+00), "
        "so no relative error is defined"
    }

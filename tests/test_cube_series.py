"""The sine-series reference of a transient heat record on the unit cube without a manufactured
solution (cube_series.py): its values against independent computations, its truncation bound,
the data it refuses by name, and the record imported with it."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from fembench_agents.cases import cube_series, published_import
from fembench_agents.cases.published import ImportReport, convert
from tests.published_cube_records import _cube

GRID_21 = {"bbox": [0, 1, 0, 1, 0, 1], "nx": 21, "ny": 21, "nz": 21}  # 0.5 is a grid point
GAUSSIAN = "exp(-20*((x-0.5)**2+(y-0.5)**2+(z-0.5)**2))"


def _heat(rid: str, t_end: float, grid: dict[str, Any] | None = None, **pde: Any) -> dict[str, Any]:
    data = {
        "type": "heat",
        "coefficients": {"kappa": {"type": "constant", "value": 1.0}},
        "time": {"t0": 0.0, "t_end": t_end, "dt": t_end / 20},
        **pde,
    }
    record = _cube(rid, data, grid=grid or GRID_21)
    record["oracle_config"]["bc"] = {"dirichlet": {"on": "all", "value": "0.0"}}
    return record


def _spec(record: dict[str, Any]) -> Any:
    return convert(record, ImportReport())[0]


def test_a_gaussian_start_is_the_cube_of_its_one_dimensional_heat_solution() -> None:
    """heat_3d_gaussian_ic's data: the Gaussian is a product, so u = a(x) a(y) a(z) with a the 1D
    heat solution from exp(-20 (x - 1/2)^2); at x = 1/2 and tau = 0.05 finite-difference solves on
    2001 and 4001 points, exact in time (eigen-decomposition), extrapolated (Richardson, h^2) give
    0.4309273111."""
    series = cube_series.heat_series(_spec(_heat("gauss", 0.05, initial_condition=GAUSSIAN)))
    assert series.modes == 11  # kappa pi^2 tau = 0.49: e^{-0.49 n^2} below e^{-50} from n = 11
    assert series.relative_bound < 1e-29
    assert series.u[10, 10, 10] == pytest.approx(0.4309273111**3, rel=1e-8)
    a = series.u[10, 10, :] / series.u[10, 10, 10]
    assert np.allclose(series.u, series.u[10, 10, 10] * np.einsum("x,y,z->zyx", a, a, a), rtol=0, atol=1e-15)
    assert np.linalg.norm(series.u - series.coarser) / np.linalg.norm(series.u) < 1e-11  # 5 modes


def test_a_unit_source_from_zero_matches_the_triple_series_and_states_its_bound() -> None:
    """heat_3d_source_only's data: f = 1 from u = 0 to t = 0.1. At the centre the triple series
    of (1 - e^{-lambda t}) / lambda over odd modes up to 1601 gives 0.0526039632 (its own
    truncation below 1e-9); the steady part summed in x in closed form needs 4096 modes per
    axis for its bound (16/pi^4) (2 + ln N) / N^2 to be within 1e-5 of the grid's RMS."""
    series = cube_series.heat_series(_spec(_heat("unit_source", 0.1, source_term="1.0")))
    assert series.u[10, 10, 10] == pytest.approx(0.0526039632, abs=2e-9)
    assert series.modes == 4096
    rms = float(np.sqrt(np.mean(series.u**2)))
    assert series.relative_bound == pytest.approx(16 / np.pi**4 * (2 + np.log(4096)) / 4096**2 / rms, rel=1e-6)
    assert 4.5e-6 < series.relative_bound < 5.5e-6
    # the same source with conductivity 2 for twice the time... is (1/2) the kappa = 1 one at tau = 0.2
    twice = _heat("slow", 0.2, source_term="1.0")
    twice["oracle_config"]["pde"]["coefficients"]["kappa"]["value"] = 0.5
    doubled = cube_series.heat_series(_spec(twice))
    assert doubled.u[10, 10, 10] == pytest.approx(2 * 0.0526039632, abs=4e-9)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"source_term": "x"}, "its source x is not a constant"),
        (
            {"initial_condition": "sin(x*y)*z"},
            "its initial term z*sin(x*y) is not a product of functions of x, y and z",
        ),
        (
            {"source_term": "1", "time": {"t0": 0.0, "t_end": 1e-5}},
            "its interval is too short for the series: "
            "kappa pi^2 tau = 9.9e-05 needs 712 decaying modes per axis (at most 128)",
        ),
    ],
)
def test_data_the_series_does_not_solve_is_named(change: dict[str, Any], reason: str) -> None:
    assert cube_series.why_not(_spec(_heat("other", 0.1, **change))) == reason


def test_boundary_data_and_a_varying_conductivity_are_named() -> None:
    faces = _heat("warm_face", 0.1, source_term="1.0")
    faces["oracle_config"]["bc"] = {"dirichlet": {"on": "all", "value": "x"}}
    assert cube_series.why_not(_spec(faces)) == "its boundary data is not zero Dirichlet on faces x1, y0, y1, z0, z1"
    varying = _heat("varying", 0.1, source_term="1.0")
    varying["oracle_config"]["pde"]["coefficients"]["kappa"] = {"type": "expr", "expr": "1 + x"}
    assert cube_series.why_not(_spec(varying)) == "its conductivity 'x + 1' is not a constant"


def test_a_record_imports_with_the_series_as_its_checked_reference() -> None:
    record = _heat(
        "cube_gauss", 0.05, grid={"bbox": [0, 1, 0, 1, 0, 1], "nx": 9, "ny": 9, "nz": 9}, initial_condition=GAUSSIAN
    )
    built, _, report = published_import.import_records([json.dumps(record)])
    assert report.imported == ["cube_gauss"] and not report.excluded
    hidden = built[0].hidden
    check = hidden.reference_check
    assert hidden.reference_kind == "numerical" and check is not None
    assert check.solver == "series:cube-dirichlet-eigenfunctions@11modes"
    assert check.refinements == (5, 11) and check.distances_to_finest[1] == 0.0
    assert check.error_estimate < 1e-29 and check.threshold == pytest.approx(
        0.5 * hidden.calibration["dolfinx"].e_base, rel=1e-3
    )
    assert report.numerical == {"cube_gauss": check.error_estimate}

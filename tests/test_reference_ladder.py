"""The import's numerical references climb a ladder (cases/published_import.py): the 6x solve
after 4x when its bounded error passes the check, else 8x after 4x as before, reusing the
coarser solves; and the bound that lets a 6x solve stand (numerical.bound_factor)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import published_records as pr
import pytest

from fembench_agents.cases import numerical, published_import
from fembench_agents.cases.model import GateConfig
from fembench_agents.cases.published import ImportReport, convert
from fembench_agents.cases.published_domains import Excluded
from fembench_agents.cases.published_shapes import domain_mask


def test_the_bound_keeps_the_estimate_above_the_finest_error_at_any_rate_from_one() -> None:
    assert (numerical.bound_factor(2, 4), numerical.bound_factor(4, 8), numerical.bound_factor(4, 6)) == (1.0, 1.0, 2.0)
    assert numerical.bound_factor(2, 3) == 2.0 and numerical.bound_factor(6, 8) == pytest.approx(3.0)
    for p in (1.0, 1.5, 2.0, 3.0):  # e(r) = r^-p: the bound is at least e(6), equal at p = 1
        distance = 4**-p - 6**-p
        assert distance * numerical.bound_factor(4, 6) >= 6**-p * (1 - 1e-12)


def _case() -> tuple[Any, dict[str, Any], np.ndarray]:
    record = pr._record(
        "poisson_numerical",
        {"type": "poisson", "coefficients": {"kappa": {"type": "constant", "value": 1.0}}, "source_term": "1.0"},
        bc={"dirichlet": {"on": "all", "value": "0.0"}},
    )
    spec, view, _ = convert(record, ImportReport())
    data = json.loads(spec.model_dump_json())
    merged = {**view, **data, "domain": {**view["domain"], **data["domain"]}}
    return spec, merged, domain_mask(spec.domain, spec.grid, spec.boundary)


def _solver(offsets: dict[int, float], calls: list[int]) -> Any:
    """A solve on the grid refined r times: 1 + offsets[r] everywhere (the coarse-to-fine
    distances are then the offsets' differences, relative to about 1)."""

    def solve(spec: dict[str, Any]) -> dict[str, Any]:
        g = spec["grid"]
        r = (g["nx"] - 1) // 49
        calls.append(r)
        return {"u": np.full((g["ny"], g["nx"]), 1.0 + offsets[r]), "solver_info": {}}

    return solve


def test_a_reference_passing_at_6x_stops_there() -> None:
    spec, merged, mask = _case()
    calls: list[int] = []
    offsets = {1: 1e-3, 4: 1e-4, 6: 2e-5, 8: 0.0}
    ref, _, err, tau, check = published_import._numerical(spec, merged, mask, _solver(offsets, calls), GateConfig())
    assert calls == [1, 4, 6] and check.refinements == (1, 4, 6) and check.solver == "dolfinx:p2@refined6x"
    assert float(np.nanmax(ref["u"])) == 1.0 + 2e-5
    first, second, _ = check.distances_to_finest
    assert check.error_estimate == 2 * second and second == pytest.approx(8e-5 / (1 + 2e-5), rel=1e-3)
    assert err == pytest.approx(first, rel=1e-3) and tau == float(f"{10 * float(f'{err:.4e}'):.4e}")


def test_a_reference_failing_at_6x_climbs_to_8x_reusing_the_coarser_solves() -> None:
    """Distances 4x to 6x: 4e-4, doubled 8e-4, above 0.05 tau = 4.5e-4 (e_base 9e-4); 4x to 8x:
    4e-4, within 4.5e-4. The 1x and 4x solves are not repeated."""
    spec, merged, mask = _case()
    calls: list[int] = []
    offsets = {1: 1e-3, 4: 5e-4, 6: 1e-4, 8: 1e-4}
    _, _, _, _, check = published_import._numerical(spec, merged, mask, _solver(offsets, calls), GateConfig())
    assert calls == [1, 4, 6, 8] and check.refinements == (1, 4, 8)
    assert check.error_estimate == check.distances_to_finest[1]


def test_a_reference_failing_at_8x_too_is_refused_with_the_8x_verdict() -> None:
    spec, merged, mask = _case()
    offsets = {1: 1e-3, 4: 9e-4, 6: 8e-4, 8: 7e-4}
    with pytest.raises(Excluded, match=r"^numerical reference refused: the numerical reference's error estimate"):
        published_import._numerical(spec, merged, mask, _solver(offsets, []), GateConfig())

"""The three gates as pure functions, with hand-written solvers on one case:
a correct one, one with a wrong boundary condition, one that returns NaN
inside the domain, one that is 10x too slow; and the split between the
attempt's own facts and the hidden figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fembench_agents.cases import gates, store
from fembench_agents.cases.calibration import numpy_scipy
from fembench_agents.cases.model import GateConfig
from fembench_agents.cases.published_shapes import domain_mask

CASES = Path(__file__).resolve().parent.parent / "cases"
CASE = "poisson_lshape_smooth"


@pytest.fixture(scope="module")
def case() -> dict[str, Any]:
    spec = next(s for s in store.load_specs(CASES) if s.id == CASE)
    hidden, arrays = store.load_hidden(CASES, CASE)
    mask = domain_mask(spec.domain, spec.grid, spec.boundary)
    return {"spec": spec, "dict": json.loads(spec.model_dump_json()), "hidden": hidden, "ref": arrays, "mask": mask}


def _eval(case: dict[str, Any], output: Any, seconds: tuple[float, ...] = (0.01,), **kw: Any) -> gates.GateOutcome:
    lib = "numpy-scipy"
    return gates.evaluate(
        CASE,
        output,
        contract=case["spec"].output,
        reference=case["ref"],
        mask=case["mask"],
        library=lib,
        e_base=case["hidden"].calibration[lib].e_base,
        t_base=0.1,
        seconds=seconds,
        **kw,
    )


def correct_solver(spec: dict[str, Any]) -> dict[str, Any]:
    return numpy_scipy.solve(spec)


def wrong_bc_solver(spec: dict[str, Any]) -> dict[str, Any]:
    spec = json.loads(json.dumps(spec))
    for piece in spec["boundary"]:
        piece["value"] = "0"  # homogeneous Dirichlet instead of the given data
    return numpy_scipy.solve(spec)


def nan_inside_solver(spec: dict[str, Any]) -> dict[str, Any]:
    out = numpy_scipy.solve(spec)
    out["u"][10, 10] = np.nan  # (x, y) = (10/64, 10/64) is in the L-shape
    return out


def test_correct_solver_passes_all_gates(case: dict[str, Any]) -> None:
    out = _eval(case, correct_solver(case["dict"]), seconds=(0.05,))
    assert out.report.passed, out.report.stages
    assert [s.stage for s in out.report.stages] == ["executes", "accurate", "fast"]
    assert out.report.relative_l2_error is not None and out.report.relative_l2_error <= out.hidden.tau_acc
    assert out.report.diagnostics.solver_info["mesh_resolution"] == 64
    assert out.report.diagnostics.max_abs_error is not None


def test_wrong_boundary_condition_fails_accuracy(case: dict[str, Any]) -> None:
    out = _eval(case, wrong_bc_solver(case["dict"]))
    assert not out.report.passed
    assert out.report.failed_stage == "accurate"
    assert out.report.stages[-1].reason == "too_inaccurate"


def test_nan_inside_fails_executes_and_is_never_dropped(case: dict[str, Any]) -> None:
    bad = nan_inside_solver(case["dict"])
    out = _eval(case, bad)
    assert out.report.failed_stage == "executes"
    assert out.report.stages[0].reason == "non_finite"
    assert gates.relative_l2(bad["u"], case["ref"]["u"], case["mask"]) == float("inf")


def test_all_nan_but_one_point_does_not_score_zero(case: dict[str, Any]) -> None:
    u = np.full_like(case["ref"]["u"], np.nan)
    u[0, 0] = case["ref"]["u"][0, 0]
    out = _eval(case, {"u": u})
    assert out.report.failed_stage == "executes"


def test_nan_outside_domain_is_fine_and_values_there_are_ignored(case: dict[str, Any]) -> None:
    good = correct_solver(case["dict"])
    assert np.isnan(good["u"][~case["mask"]]).all()
    filled = dict(good, u=np.where(case["mask"], good["u"], 123.0))
    assert _eval(case, filled, seconds=(0.05,)).report.passed


def test_ten_times_too_slow_fails_fast(case: dict[str, Any]) -> None:
    t_base = 0.1
    out = _eval(case, correct_solver(case["dict"]), seconds=(10 * t_base,))
    assert out.report.failed_stage == "fast"
    assert out.report.stages[-1].reason == "too_slow"
    assert out.report.solve_seconds == pytest.approx(1.0)


def test_fast_uses_fastest_timing_and_floor() -> None:
    cfg = GateConfig()
    assert gates.tau_time(0.001, cfg) == pytest.approx(cfg.alpha_time * cfg.t_floor)
    stage, best = gates.fast([0.5, 0.12, 0.9], gates.tau_time(0.05, cfg))
    assert stage.passed and best == 0.12


@pytest.mark.parametrize(
    "output, reason",
    [
        ("not a dict", "not_a_dict"),
        ({}, "missing_field"),
        ({"u": [[0.0]]}, "wrong_type"),
        ({"u": np.zeros((3, 3))}, "wrong_shape"),
        ({"u": np.zeros((65, 65), dtype=int)}, "wrong_dtype"),
    ],
)
def test_malformed_outputs_fail_executes(case: dict[str, Any], output: Any, reason: str) -> None:
    out = _eval(case, output)
    assert out.report.failed_stage == "executes" and out.report.stages[0].reason == reason


def test_timeout_crash_and_imports_fail_executes(case: dict[str, Any]) -> None:
    assert _eval(case, None, ended="timeout").report.stages[0].reason == "timeout"
    assert _eval(case, None, ended="error", message="ZeroDivisionError").report.stages[0].reason == "runtime_error"
    bad = gates.disallowed_imports("import os\nimport numpy as np\nfrom scipy import sparse\n", ("numpy", "scipy"))
    assert bad == ["os"]
    out = _eval(case, correct_solver(case["dict"]), bad_imports=bad)
    assert out.report.stages[0].reason == "disallowed_import"


def test_without_machine_calibration_speed_is_not_judged(case: dict[str, Any]) -> None:
    lib = "numpy-scipy"
    out = gates.evaluate(
        CASE,
        correct_solver(case["dict"]),
        contract=case["spec"].output,
        reference=case["ref"],
        mask=case["mask"],
        library=lib,
        e_base=case["hidden"].calibration[lib].e_base,
        t_base=None,
        seconds=(0.01,),
    )
    assert not out.report.passed and out.report.stages[-1].reason == "not_timed"


def test_accuracy_threshold_uses_alpha_and_floor() -> None:
    cfg = GateConfig()
    assert gates.tau_acc(1e-9, cfg) == cfg.tau_min
    assert gates.tau_acc(1e-4, cfg) == pytest.approx(1e-3)
    assert gates.tau_acc(1e-4, GateConfig(alpha_acc=2)) == pytest.approx(2e-4)


def test_report_carries_no_hidden_figure(case: dict[str, Any]) -> None:
    """What feedback may read holds the attempt's own facts only."""
    for out in (_eval(case, wrong_bc_solver(case["dict"])), _eval(case, correct_solver(case["dict"]), seconds=(1.0,))):
        text = out.report.model_dump_json()
        h = out.hidden
        for figure in (h.e_base, h.tau_acc, h.t_base, h.tau_time):
            assert figure is not None
            for form in (repr(figure), f"{figure:.3e}", f"{figure:.3g}", f"{figure:.3f}"):
                assert form not in text, (form, text)
        for key in ("e_base", "tau", "t_base", "alpha", "reference"):
            assert key not in text

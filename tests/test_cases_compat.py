"""Scoring published programs as their authors meant, as pure functions (no
sandbox): the `published-v1` reading of the first published contract's layout
(u[ix, iy], shape (nx, ny)) on square and non-square grids and where it does
not apply; the published gates (each record's own multipliers, by the
published evaluator's rule) with exact thresholds; the published thresholds an
import keeps, and hidden records written before them, read and written as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fembench_agents.cases import compat, gates, store
from fembench_agents.cases.case_spec import FieldSpec, OutputContract
from fembench_agents.cases.model import GateConfig, GridSpec, HiddenRecord, PublishedThresholds
from fembench_agents.cases.outcomes import CaseThresholds, gate_labels
from fembench_agents.cases.published_domains import Excluded
from fembench_agents.cases.published_import import published_thresholds

CASES = Path(__file__).resolve().parent.parent / "cases"


def contract(*shape: int) -> OutputContract:
    return OutputContract(fields={"u": FieldSpec(shape=shape)}, layout="u[iy, ix]")


def solution(grid: GridSpec) -> np.ndarray:
    """exp(x) y^2 + x sin(2y): not symmetric in x and y, so its transpose is another field."""
    X, Y = np.meshgrid(np.linspace(0, 1, grid.nx), np.linspace(0, 1, grid.ny))  # (ny, nx), rows y: ours
    return np.exp(X) * Y**2 + X * np.sin(2 * Y)


def judge(output: Any, grid: GridSpec, reading: compat.Reading | None = None) -> gates.GateOutcome:
    ref = solution(grid)
    return gates.evaluate(
        "first_contract",
        reading.output if reading else output,
        contract=contract(grid.ny, grid.nx),
        reference={"u": ref},
        mask=np.ones(ref.shape, dtype=bool),
        library="dolfinx",
        e_base=1e-4,
        t_base=0.2,
        seconds=(0.1,),
        wrong_layout=reading.refused if reading else None,
    )


def stages(out: gates.GateOutcome) -> list[tuple[str, bool, str | None]]:
    return [(s.stage, s.passed, s.reason) for s in out.report.stages]


def test_a_first_contract_output_on_a_square_grid_is_judged_transposed_unless_read_as_published_v1() -> None:
    grid = GridSpec(nx=50, ny=50)
    first = {"u": solution(grid).T.copy(), "solver_info": {}}  # u[ix, iy], shape (nx, ny): the first contract's
    plain = judge(first, grid)
    assert stages(plain) == [("executes", True, None), ("accurate", False, "too_inaccurate")]
    assert plain.report.relative_l2_error == pytest.approx(0.3251, abs=1e-4)  # far above tau_acc = 1e-3
    reading = compat.read(("published-v1",), first, contract(50, 50), grid)
    assert reading.notes == (
        "published-v1: output['u'] read as u[ix, iy], shape (nx, ny) = (50, 50), transposed to (ny, nx)",
    )
    read = judge(first, grid, reading)
    assert stages(read) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    assert read.report.relative_l2_error == 0.0
    assert (
        first["u"].shape == (50, 50) and reading.output["u"][3, 7] == first["u"][7, 3]
    )  # the program's array untouched


def test_a_flat_array_is_reshaped_to_nx_ny_as_the_first_runner_did() -> None:
    grid = GridSpec(nx=50, ny=30, bbox=(0.0, 1.0, 0.0, 1.0))
    flat = {"u": solution(grid).T.ravel()}  # ix major: the first contract's reshape((nx, ny)) reads it back
    reading = compat.read(("published-v1",), flat, contract(30, 50), grid)
    assert reading.notes == (
        "published-v1: output['u'] read as u[ix, iy], a flat array of 1500 values, reshaped to (nx, ny) = (50, 30), "
        "transposed to (ny, nx)",
    )
    assert stages(judge(flat, grid, reading))[:2] == [("executes", True, None), ("accurate", True, None)]


def test_on_a_non_square_grid_the_first_layout_passes_only_with_the_option_and_ours_is_refused_by_it() -> None:
    grid = GridSpec(nx=100, ny=40)
    first = {"u": solution(grid).T.copy()}  # (100, 40)
    without = judge(first, grid)
    assert stages(without) == [("executes", False, "wrong_shape")]
    assert without.report.stages[0].detail == "output['u'] has shape (100, 40), expected (40, 100)"
    reading = compat.read(("published-v1",), first, contract(40, 100), grid)
    assert stages(judge(first, grid, reading))[:2] == [("executes", True, None), ("accurate", True, None)]
    ours = {"u": solution(grid)}  # (40, 100): our layout, which the first contract's runner refused
    refused = compat.read(("published-v1",), ours, contract(40, 100), grid)
    assert refused.notes == () and refused.output is ours
    out = judge(ours, grid, refused)
    assert stages(out) == [("executes", False, "wrong_shape")]
    assert out.report.stages[0].detail == (
        "output['u'] has shape (40, 100), expected (nx, ny) = (100, 40): the first published contract's layout, "
        "u[ix, iy] (compatibility option published-v1)"
    )
    assert stages(judge(ours, grid)) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]


def test_where_the_first_contract_had_no_layout_the_output_is_read_as_ours_and_the_note_says_so() -> None:
    vector = OutputContract(fields={"u": FieldSpec(shape=(2, 9, 9)), "p": FieldSpec(shape=(9, 9))}, layout="")
    out = {"u": np.zeros((2, 9, 9)), "p": np.ones((9, 9))}
    reading = compat.read(("published-v1",), out, vector, GridSpec(nx=9, ny=9))
    assert reading.notes == (
        "published-v1: output['u'] read as ours: the first contract has no layout for a field of shape (2, 9, 9)",
        "published-v1: output['p'] read as u[ix, iy], shape (nx, ny) = (9, 9), transposed to (ny, nx)",
    )
    assert reading.output["u"] is out["u"]
    cube = GridSpec(nx=9, ny=9, nz=9, bbox=(0.0, 1.0, 0.0, 1.0, 0.0, 1.0))
    three = compat.read(("published-v1",), {"u": np.zeros((9, 9, 9))}, contract(9, 9, 9), cube)
    assert three.notes == ("published-v1: output['u'] read as ours: the first contract has no layout for a 3D grid",)
    for odd in (None, [1.0], {"v": np.zeros((9, 9))}, {"u": [[0.0] * 9] * 9}):  # the executes gate names these
        left = compat.read(("published-v1",), odd, contract(9, 9), GridSpec(nx=9, ny=9))
        assert (left.notes, left.refused) == ((), None)


def test_options_are_checked_by_name_and_a_reading_leaves_the_code_alone() -> None:
    code = "def solve(case_spec):\n    return {'pc_type': 'hypre'}\n"
    assert compat.apply(("published-v1",), code) == (code, ())
    assert compat.KNOWN == ["hypre-as-gamg", "published-v1"]
    with pytest.raises(
        ValueError, match=r"unknown compatibility rewrite\(s\) \['v1'\]; known: \['hypre-as-gamg', 'published-v1'\]"
    ):
        compat.read(("v1",), {}, contract(9, 9), GridSpec(nx=9, ny=9))


# --- the published gates ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("evaluation_config", "alpha_acc", "alpha_time"),
    [
        ({"tolerance": 10, "accuracy_tolerance": 10, "time_tolerance": 3}, 10.0, 3.0),  # 539 records
        ({"tolerance": 0.05, "time_tolerance": 3}, 0.05, 3.0),  # 90 records: the legacy multiplier
        ({"tolerance": 0.1, "time_tolerance": 3}, 0.1, 3.0),  # 15 records
        ({"tolerance": 0.05}, 0.05, 0.05),  # legacy alone: the default of both
        ({"time_tolerance": 3}, 1.2, 3.0),  # advection_pure_supg's top level (its nested config is not read)
        ({}, 1.2, 1.2),  # nothing stated: the published evaluator's default 1.2
    ],
)
def test_the_published_rule_turns_a_records_thresholds_into_gates(
    evaluation_config: dict[str, float], alpha_acc: float, alpha_time: float
) -> None:
    record = {"id": "r", "evaluation_config": {"target_metric": "rel_L2_grid", **evaluation_config}}
    config = gates.published_config(published_thresholds(record), GateConfig())
    assert (config.alpha_acc, config.alpha_time, config.tau_min, config.t_floor) == (alpha_acc, alpha_time, 1e-6, 0.05)


def test_published_thresholds_on_our_e_base_and_t_base_exactly() -> None:
    ours = GateConfig()
    current = gates.published_config(PublishedThresholds(accuracy_tolerance=10, time_tolerance=3, tolerance=10), ours)
    assert gates.tau_acc(2.5e-4, current) == 2.5e-3 == gates.tau_acc(2.5e-4, ours)  # the same as ours
    assert gates.tau_time(0.2, current) == pytest.approx(0.6)
    legacy = gates.published_config(PublishedThresholds(tolerance=0.05, time_tolerance=3), ours)
    assert gates.tau_acc(2.5e-4, legacy) == pytest.approx(1.25e-5)  # 20x below our calibration's own error
    assert gates.tau_acc(1e-5, legacy) == 1e-6  # the published minimum error
    assert gates.tau_time(0.01, legacy) == pytest.approx(0.15)  # our noise floor stays: 3 x 0.05 s
    nested = gates.published_config(PublishedThresholds(time_tolerance=3), ours)
    assert gates.tau_acc(2.5e-4, nested) == pytest.approx(3e-4)


def test_the_import_keeps_the_top_level_config_as_published_and_refuses_an_unreadable_one() -> None:
    nested = {"id": "n", "oracle_config": {"evaluation_config": {"accuracy_tolerance": 10}}}
    assert published_thresholds(nested) == PublishedThresholds()
    top = {"id": "t", "evaluation_config": {"tolerance": 0.05, "time_tolerance": 3, "timeout_sec": 300}}
    assert published_thresholds(top) == PublishedThresholds(tolerance=0.05, time_tolerance=3.0)
    with pytest.raises(Excluded, match="record not read: evaluation_config"):
        published_thresholds({"id": "b", "evaluation_config": {"tolerance": "tight"}})
    with pytest.raises(Excluded, match="evaluation_config is list, expected an object"):
        published_thresholds({"id": "l", "evaluation_config": [10, 3]})


def test_hidden_records_without_published_thresholds_read_and_write_as_before() -> None:
    for path in sorted((CASES / store.HIDDEN).glob("*.json")):
        record = HiddenRecord.model_validate_json(path.read_text())
        assert record.published is None
        assert store.dumps(json.loads(record.model_dump_json())) == path.read_text(), path.name
    record = HiddenRecord.model_validate_json((CASES / store.HIDDEN / "bg_channel_decay.json").read_text())
    kept = record.model_copy(update={"published": PublishedThresholds(tolerance=0.05, time_tolerance=3)})
    data = json.loads(kept.model_dump_json())
    assert data["published"] == {"accuracy_tolerance": None, "time_tolerance": 3.0, "tolerance": 0.05}
    assert HiddenRecord.model_validate(data) == kept


def test_an_outcome_names_the_gates_that_judged_it() -> None:
    figures = {"e_base": 1e-4, "tau_acc": 1e-3, "t_base": 0.2, "tau_time": 0.6, "tau_min": 1e-6, "t_floor": 0.05}
    ours = CaseThresholds(alpha_acc=10, alpha_time=3, **figures)
    published = CaseThresholds(alpha_acc=0.05, alpha_time=3, gates="published", **figures)
    assert ours.label == "ours (alpha_acc 10, tau_min 1e-06, alpha_time 3, t_floor 0.05 s)"
    assert published.label == "published (per record)"
    old = CaseThresholds.model_validate({k: v for k, v in json.loads(ours.model_dump_json()).items() if k != "gates"})
    assert old.gates == "ours"  # a log written before the field was judged by ours
    assert gate_labels([]) == []

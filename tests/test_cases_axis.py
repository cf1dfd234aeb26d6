"""Axis-parallel published domains and periodic boundaries on hand-written records in the
published shape (tests/axis_records.py): the domains built from their geometry with exact
masks, the published boundary value u on every piece and no answer inside, periodic pieces
and their DOLFINx calibration, the exclusion reasons, and a published-contract program
scored unchanged on an imported T-junction case."""

from __future__ import annotations

import json
from pathlib import Path

import axis_records as ar
import numpy as np
import published_records as pr
import pytest
import sympy as sp
from typer.testing import CliRunner

from fembench_agents.cases import published, published_domains, published_import, timing
from fembench_agents.cases.blends import gordon_blend
from fembench_agents.cases.domains import grid_mask, spec_domain
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.model import GridSpec
from fembench_agents.cli import app

runner = CliRunner()
EPS = 1e-9


def test_the_t_junction_is_one_polygon_with_named_pieces_and_exact_in_domain_points() -> None:
    t = published_domains.track_domain(ar.T_JUNCTION)
    assert (t.name, t.holes) == ("t_junction", ())
    assert t.description == "T-junction: the union of the bar [0, 1] x [0.7, 1] and the stem [0.4, 0.6] x [0, 0.7]"
    assert [(n, a, b) for n, a, b in t.pieces] == [
        ("stem_bottom", (0.4, 0.0), (0.6, 0.0)),
        ("stem_right", (0.6, 0.0), (0.6, 0.7)),
        ("bar_bottom_right", (0.6, 0.7), (1.0, 0.7)),
        ("bar_right", (1.0, 0.7), (1.0, 1.0)),
        ("bar_top", (1.0, 1.0), (0.0, 1.0)),
        ("bar_left", (0.0, 1.0), (0.0, 0.7)),
        ("bar_bottom_left", (0.0, 0.7), (0.4, 0.7)),
        ("stem_left", (0.4, 0.7), (0.4, 0.0)),
    ]
    # corners, edges, the stem's line continued into the bar, just inside and just outside
    px = np.array([0.4, 0.6, 0.4, 0.4 - EPS, 0.5, 0.5, 0.2, 0.2, 1.0, 1.0 + EPS, 0.6 + EPS, 0.3])
    py = np.array([0.0, 0.0, 0.3, 0.3, 0.7, 0.0 - EPS, 0.7, 0.7 - EPS, 0.85, 0.85, 0.69, 1.0])
    assert t.inside(px, py).tolist() == [True, True, True, False, True, False, True, False, True, False, False, True]
    # the published 100 x 100 grid: 0.4, 0.6 and 0.7 are no grid lines (x_i = i / 99)
    mask = grid_mask(t, GridSpec(nx=100, ny=100))
    i, j = np.meshgrid(np.arange(100), np.arange(100))
    assert np.array_equal(mask, (j >= 70) | ((i >= 40) & (i <= 59)))
    assert int(mask.sum()) == 3000 + 20 * 70


def test_an_l_shape_in_a_wider_box_and_a_hole_of_another_size_decide_their_grid_points_exactly() -> None:
    wide = published_domains.track_domain(ar.L_WIDE)
    assert [n for n, _, _ in wide.pieces] == ["bottom", "right", "notch_bottom", "notch_left", "top", "left"]
    grid = GridSpec(nx=100, ny=75, bbox=(0.0, 2.0, 0.0, 1.5))
    i, j = np.meshgrid(np.arange(100), np.arange(75))  # x = 2 i / 99, y = 1.5 j / 74
    assert np.array_equal(grid_mask(wide, grid), (j <= 24) | (i <= 24))
    hole = published_domains.track_domain(ar.HOLE_035)
    assert (hole.name, hole.holes) == ("square_hole", (((0.35, 0.35), (0.65, 0.35), (0.65, 0.65), (0.35, 0.65)),))
    assert [n for n, _, _ in hole.pieces][4:] == ["hole_bottom", "hole_right", "hole_top", "hole_left"]
    assert hole.inside(np.array([0.35, 0.5, 0.35 + EPS, 0.65]), np.array([0.5, 0.65, 0.5, 0.65 + EPS])).tolist() == [
        True,
        True,
        False,
        True,
    ]
    i, j = np.meshgrid(np.arange(100), np.arange(100))
    within = lambda k: (k >= 35) & (k <= 64)  # noqa: E731 - 0.35 < k / 99 < 0.65
    assert np.array_equal(grid_mask(hole, GridSpec(nx=100, ny=100)), ~(within(i) & within(j)))
    # rebuilt from a case_spec alone, it is the same domain
    spec = hole.spec()
    assert spec_domain(spec, [{"name": n, "segment": [a, b]} for n, a, b in hole.pieces]) == hole


@pytest.mark.parametrize(
    ("domain", "grid"),
    [
        (ar.T_JUNCTION, {"bbox": [0, 1, 0, 1], "nx": 100, "ny": 100}),
        (ar.L_WIDE, ar.GRID_L_WIDE),
        (ar.HOLE_035, {"bbox": [0, 1, 0, 1], "nx": 80, "ny": 80}),
        (pr.lshape(0.4), pr.GRID_100),
    ],
)
def test_the_published_value_is_u_on_every_piece_one_expression_and_no_answer_inside(domain: dict, grid: dict) -> None:
    record = pr.poisson("blend", ar.U_SMOOTH, domain=domain, grid=grid)
    spec, view, _ = published.convert(record, published.ImportReport())
    value = view["bc"]["dirichlet"]["value"]
    assert view["bc"]["dirichlet"]["on"] == "all" and str(ar.U_SMOOTH) not in value
    blend = sp.lambdify((pr.x, pr.y), sp.sympify(value), "numpy")  # as published programs read it
    exact = compile_expr(str(ar.U_SMOOTH))
    s = np.linspace(0, 1, 33)
    for piece in spec.boundary:
        (ax, ay), (bx, by) = piece.segment
        px, py = ax + s * (bx - ax), ay + s * (by - ay)
        assert np.allclose(blend(px, py), exact(x=px, y=py), atol=1e-11), piece.name
        assert np.allclose(compile_expr(str(piece.value))(x=px, y=py), exact(x=px, y=py), atol=1e-11)
    ref, mask = published.reference(spec, [ar.U_SMOOTH])
    gap = published.blend_error(view, spec, ref["u"], mask)
    assert gap > 5e-4  # far above any threshold here (10 e_base is below 1e-5): no answer


def test_gordon_s_blend_is_the_solution_where_that_is_linear_in_x_and_the_probe_must_mark_it() -> None:
    t = published_domains.track_domain(ar.T_JUNCTION)
    px, py = np.meshgrid(np.linspace(0, 1, 21), np.linspace(0, 1, 21))

    def gap(u: sp.Expr) -> float:  # evaluated, not simplified: sympy takes minutes on the full blend
        diff = sp.lambdify((pr.x, pr.y), gordon_blend(u, t.pieces) - u, "numpy")(px, py)
        return float(np.max(np.abs(diff)))

    assert gap(pr.x * sp.exp(pr.y) + sp.sin(pr.y)) < 1e-12  # linear in x: reproduced
    assert gap(ar.U_SMOOTH) > 1e-3


def _import(records: list[dict]) -> tuple[list, published.ImportReport]:
    built, _, report = published_import.import_records([json.dumps(r) for r in records])
    return built, report


def test_periodic_records_get_periodic_pieces_and_a_dolfinx_calibration_that_passes_its_gates() -> None:
    # the P1 pressure of a channel two periods long is what limits e_base: 0.11 with 20 cells across, 0.011 with 40
    channel = ar.stokes_channel("stokes_channel", [0, 2, 0, 1], {"bbox": [0, 2, 0, 1], "nx": 81, "ny": 41})
    u_both = sp.cos(2 * sp.pi * pr.x) * sp.sin(2 * sp.pi * pr.y) + sp.sin(2 * sp.pi * pr.x) / 2
    both = ar.periodic("helmholtz_periodic", {"periodic": {"on": ["x", "y"]}}, u_both, [0, 1, 0, 1], ar.GRID_T)
    built, report = _import([channel, both, ar.burgers_periodic("burgers_periodic")])
    assert (report.imported, report.excluded, report.leaking) == (
        ["stokes_channel", "helmholtz_periodic", "burgers_periodic"],
        {},
        {},
    )
    specs = {b.spec.id: b for b in built}
    pieces = [(p.name, p.kind, p.partner, p.value is None) for p in specs["stokes_channel"].spec.boundary]
    assert pieces == [
        ("bottom", "dirichlet", None, False),
        ("right", "periodic", "left", True),
        ("top", "dirichlet", None, False),
        ("left", "periodic", "right", True),
    ]
    assert [p.kind for p in specs["helmholtz_periodic"].spec.boundary] == ["periodic"] * 4
    # a periodic piece serialises with its partner and no value; a Dirichlet one as before
    data = json.loads(specs["stokes_channel"].spec.model_dump_json())["boundary"]
    assert data[1] == {"name": "right", "kind": "periodic", "segment": [[2.0, 0.0], [2.0, 1.0]], "partner": "left"}
    assert sorted(data[0]) == ["kind", "name", "segment", "value"]
    errors = {k: b.hidden.calibration["dolfinx"].e_base for k, b in specs.items()}
    assert 0 < errors["stokes_channel"] < 2e-2 and 0 < errors["helmholtz_periodic"] < 1e-4
    assert 0 < errors["burgers_periodic"] < 5e-3
    for b in built:  # the calibration's accuracy gate: its own error against 10 e_base
        calibration = b.hidden.calibration["dolfinx"]
        assert calibration.tau_acc == float(f"{10 * calibration.e_base:.4e}")


def test_the_periodic_calibration_solution_is_periodic_and_better_than_ignoring_periodicity() -> None:
    from fembench_agents.cases.calibration import dolfinx_fem

    u = sp.cos(2 * sp.pi * pr.x) * sp.sin(2 * sp.pi * pr.y) + sp.sin(2 * sp.pi * pr.x) / 2
    record = ar.periodic("hp", {"periodic": {"on": ["x", "y"]}}, u, [0, 1, 0, 1], ar.GRID_T)
    spec, _, _ = published.convert(record, published.ImportReport())
    out = dolfinx_fem.solve(json.loads(spec.model_dump_json()))["u"]
    assert np.allclose(out[:, 0], out[:, -1], atol=1e-12) and np.allclose(out[0], out[-1], atol=1e-12)
    ref, _ = published.reference(spec, [u])
    assert np.linalg.norm(out - ref["u"]) / np.linalg.norm(ref["u"]) < 1e-4


def test_a_periodic_case_whose_forcing_is_a_multiple_of_u_is_marked_as_leaking() -> None:
    u = sp.sin(2 * sp.pi * pr.x) * sp.sin(2 * sp.pi * pr.y)  # -lap u - u = (8 pi^2 - 1) u
    record = ar.periodic("hp_eigen", {"periodic": {"on": ["x", "y"]}}, u, [0, 1, 0, 1], ar.GRID_T)
    _, report = _import([record])
    reason = report.leaking["hp_eigen"]
    assert reason.startswith("forcing passes the accuracy gate (error ") and float(reason[40:-1]) < 1e-12


def _excluded(record: dict) -> str:
    with pytest.raises(published_domains.Excluded) as err:
        published.convert(json.loads(json.dumps(record)), published.ImportReport())
    return str(err.value)


def test_periodic_records_are_read_as_they_state_them_or_excluded_for_their_own_defect() -> None:
    u = sp.sin(2 * sp.pi * pr.x) * sp.cos(2 * sp.pi * pr.y) + pr.y
    grid = ar.GRID_T
    assert _excluded(ar.periodic("p", {"periodic": {"on": ["x", "y"]}}, u, [0, 1, 0, 1], grid)) == (
        "record defect: the solution is not periodic in y on [0, 1] although the record states it periodic"
    )
    u_x = sp.sin(2 * sp.pi * pr.x) * sp.cos(sp.pi * pr.y)
    wrong_extents = {"periodic": {"direction": "x", "extents": [0, 2, 0, 1]}}
    assert _excluded(ar.periodic("p", wrong_extents, u_x, [0, 1, 0, 1], grid)) == (
        "record defect: periodic extents [0, 2, 0, 1] are not the domain's [0.0, 1.0, 0.0, 1.0]"
    )
    on_periodic_side = {
        "periodic": {"direction": "x"},
        "dirichlet": [{"on": e, "value": "0"} for e in ("x0", "y0", "y1")],
    }
    assert _excluded(ar.periodic("p", on_periodic_side, u_x, [0, 1, 0, 1], grid)) == (
        "boundary condition not read: Dirichlet on ['x0', 'y0', 'y1'] alongside periodic sides "
        "(expected one entry on each of ['y0', 'y1'])"
    )
    open_sides = {"periodic": {"direction": "x"}}
    assert _excluded(ar.periodic("p", open_sides, u_x, [0, 1, 0, 1], grid)) == (
        "boundary condition not read: sides ['y0', 'y1'] are neither periodic nor Dirichlet"
    )
    channel = ar.stokes_channel("c", [0, 1, 0, 1], grid)
    channel["oracle_config"]["bc"]["dirichlet"][0]["value"] = ["1.0", "0.0"]
    assert _excluded(channel) == "record defect: the Dirichlet data on y0 is not the manufactured solution there"
    beyond = ar.periodic("p", {"periodic": {"on": ["x"]}}, u_x, [0, 2, 0, 1], grid)
    assert _excluded(beyond) == (
        "domain beyond the output grid: the domain spans [0.0, 2.0, 0.0, 1.0], the grid [0, 1, 0, 1]"
    )
    # Dirichlet data only on periodic_square: a plain rectangle in the record's own box
    plain = ar.periodic(
        "p", {"dirichlet": {"on": "all", "value": str(u)}}, u, [0, 2, 0, 1], {**grid, "bbox": [0, 2, 0, 1]}
    )
    spec, view, _ = published.convert(plain, published.ImportReport())
    assert (spec.domain.name, spec.domain.description) == ("rectangle", "the rectangle [0, 2] x [0, 1]")
    assert [p.kind for p in spec.boundary] == ["dirichlet"] * 4 and str(u) not in view["bc"]["dirichlet"]["value"]


def test_a_newton_family_with_periodic_pieces_names_the_calibration_s_limit() -> None:
    record = ar.stokes_channel("ns_channel", [0, 1, 0, 1], ar.GRID_T)
    record["oracle_config"]["pde"]["type"] = "navier_stokes"
    _, report = _import([record])
    assert report.excluded["ns_channel"] == (
        "calibration solver failed: ValueError: periodic pieces: the DOLFINx calibration reduces linear "
        "solves only, not the Newton (SNES) solve of navier_stokes"
    )


def test_a_published_program_for_the_t_junction_scores_unchanged_on_the_imported_case(tmp_path: Path) -> None:
    u = sp.exp(pr.x) * pr.y**2 + pr.x**2 * sp.sin(2 * pr.y)
    source = tmp_path / "benchmark_v2.jsonl"
    records = [pr.poisson("poisson_t", u, domain=ar.T_JUNCTION, grid=ar.GRID_T), ar.burgers_periodic("burgers_p")]
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    cases = tmp_path / "cases"
    res = runner.invoke(app, ["cases", "import", str(source), "--out", str(cases)])
    assert res.exit_code == 0 and "imported 2 (2 leak-free" in res.output, res.output
    # the leak checks of `cases validate` on the folder: the T-junction's blend, the periodic case's data
    res = runner.invoke(app, ["cases", "validate", "--cases", str(cases), "--no-calibration"])
    assert res.exit_code == 0, res.output
    calibration = timing.MachineCalibration(
        machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={"poisson_t": {"dolfinx": 60.0}}
    )
    timing.save(cases, calibration)
    programs = tmp_path / "programs"
    programs.mkdir()
    (programs / "poisson_t_dolfinx_correct.py").write_text(ar.PUBLISHED_T_CORRECT)
    (programs / "poisson_t_dolfinx_wrongsign.py").write_text(ar.PUBLISHED_T_WRONG_SIGN)
    out = tmp_path / "scores.json"
    res = runner.invoke(app, ["score", str(programs), "--cases", "--cases-path", str(cases), "--json", str(out)])
    assert res.exit_code == 0, res.output
    outcomes = json.loads(out.read_text())["outcomes"]
    verdicts = {
        key.split("/")[0]: [(s["stage"], s["passed"], s["reason"]) for s in by_case["poisson_t"]["stages"]]
        for key, by_case in outcomes.items()
    }
    assert verdicts == {
        "correct": [("executes", True, None), ("accurate", True, None), ("fast", True, None)],
        "wrongsign": [("executes", True, None), ("accurate", False, "too_inaccurate")],
    }

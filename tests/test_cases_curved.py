"""The published domains given by their geometry (cases/published_shapes.py, cases/shape_blends.py) on
hand-written records in the published shape (tests/published_curved_records.py): exact masks
on and near the boundary, each boundary piece's data equal to u on its piece, the published
value u on the whole boundary and no answer inside, the import (calibration on gmsh meshes,
exclusion reasons), and a published-contract program scored unchanged."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import published_curved_records as cr
import published_records as pr
import pytest
import sympy as sp
from typer.testing import CliRunner

from fembench_agents.cases import published_import, shape_blends, store, timing
from fembench_agents.cases.case_spec import Arc
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.leak import best_multiple_error
from fembench_agents.cases.published_boundary import imported_boundary
from fembench_agents.cases.published_shapes import published_shape
from fembench_agents.cli import app

runner = CliRunner()
EPS = 1e-9
S2 = math.sqrt(0.5)
# (point, in the closed domain?) on and just beside each kind's boundary
POINTS = {
    "circle": [
        ((1.0, 0.5), True),
        ((1.0 + EPS, 0.5), False),
        ((0.5 + 0.5 * S2, 0.5 + 0.5 * S2), True),
        ((0.5, 0.5), True),
    ],
    "annulus": [((0.3, 0.0), True), ((0.3 - EPS, 0.0), False), ((0.0, -0.8), True), ((0.0, -0.8 - EPS), False)],
    "eccentric_annulus": [((0.85, 0.5), True), ((0.85 - EPS, 0.5), False), ((0.45, 0.5), True), ((0.1, 0.5), True)],
    "sector": [
        ((0.5, 0.0), True),
        ((0.5, -EPS), False),
        ((-0.25, 0.25 * math.sqrt(3)), True),
        ((-0.25 - EPS, 0.25 * math.sqrt(3)), False),
    ],
    "dumbbell": [((0.5, 0.59), True), ((0.5, 0.59 + EPS), False), ((0.05, 0.5), True), ((0.05 - EPS, 0.5), False)],
    "dumbbell_bridge": [((0.5, 0.6), True), ((0.5, 0.6 + EPS), False), ((0.5, 0.4), True), ((0.0, 0.5), True)],
    "multi_hole": [((0.4, 0.3), True), ((0.4 - EPS, 0.3), False), ((0.5, 0.82), True), ((0.0, 0.0), True)],
    "circle_hole": [((0.7, 0.5), True), ((0.7 - EPS, 0.5), False), ((1.0, 1.0), True), ((1.0 + EPS, 0.5), False)],
    "polygon_hole": [((0.45, 0.325), True), ((0.45, 0.325 + EPS), False), ((0.3, 0.3), True), ((0.45, 0.45), False)],
    "notched_hole": [((0.0, 0.15), True), ((0.0, 0.15 - EPS), False), ((0.0, 0.2), True), ((-1.0, -1.0), True)],
    "star": [((0.0, -0.8), True), ((0.0, -0.8 - EPS), False), ((0.0, 0.0), True), ((0.0, 0.35), True)],
    "gear": [
        ((0.7, 0.0), True),
        ((0.7 + EPS, 0.0), False),
        ((0.5 * math.cos(math.pi / 8), 0.5 * math.sin(math.pi / 8)), True),
    ],
}


@pytest.mark.parametrize("kind", sorted(POINTS))
def test_in_domain_points_are_decided_exactly_from_the_geometry(kind: str) -> None:
    shape = published_shape(cr.DOMAINS[kind])
    points, expected = zip(*POINTS[kind], strict=True)
    px, py = np.array(points).T
    assert shape.inside(px, py).tolist() == list(expected)


def _along(where: tuple | Arc, n: int = 41) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(where, Arc):
        a = np.linspace(where.start, where.end, n)
        return where.center[0] + where.radius * np.cos(a), where.center[1] + where.radius * np.sin(a)
    (ax, ay), (bx, by) = where
    s = np.linspace(0, 1, n)
    return ax + s * (bx - ax), ay + s * (by - ay)


def _boundary(kind: str) -> list[tuple[str, tuple | Arc]]:
    return list(published_shape(cr.DOMAINS[kind]).pieces)


U = compile_expr(str(cr.U))


@pytest.mark.parametrize("kind", sorted(cr.DOMAINS))
def test_each_piece_carries_u_restricted_to_it(kind: str) -> None:
    boundary = imported_boundary(cr.DOMAINS[kind]["type"], cr.DOMAINS[kind])
    assert boundary.spec.geometry_params == cr.DOMAINS[kind]["geometry_params"]
    for name, where in boundary.pieces:
        trace = compile_expr(str(boundary.trace(cr.U, where)))
        px, py = _along(where)
        assert np.allclose(trace(x=px, y=py), U(x=px, y=py), rtol=0, atol=1e-12), name


NAMES = {
    "sector": ["radius_start", "arc", "radius_end"],
    "dumbbell": ["left_arc", "bar_bottom", "right_arc", "bar_top"],
    "circle_hole": ["bottom", "right", "top", "left", "hole"],
    "multi_hole": ["bottom", "right", "top", "left", "hole_1", "hole_2", "hole_3"],
    "annulus": ["outer", "inner"],
}


@pytest.mark.parametrize("kind", sorted(NAMES))
def test_pieces_are_named_by_what_they_are(kind: str) -> None:
    assert [n for n, _ in _boundary(kind)] == NAMES[kind]


BLENDED = sorted(set(cr.DOMAINS) - {"star", "gear"})


@pytest.mark.parametrize("kind", BLENDED)
def test_the_published_value_is_u_on_the_whole_boundary_and_no_answer_inside(kind: str) -> None:
    shape = published_shape(cr.DOMAINS[kind])
    blend = compile_expr(shape_blends.published_blend(shape, cr.U))
    for _, where in shape.pieces:
        px, py = _along(where, 81)
        assert np.allclose(blend(x=px, y=py), U(x=px, y=py), rtol=0, atol=1e-12)
    g = cr.GRIDS[kind]
    X, Y = np.meshgrid(np.linspace(*g["bbox"][:2], g["nx"]), np.linspace(*g["bbox"][2:], g["ny"]))
    inside = shape.inside(X, Y)
    values = blend(x=X[inside], y=Y[inside])
    assert np.isfinite(values).all()  # corners, centres and junctions included
    assert best_multiple_error(values, U(x=X[inside], y=Y[inside])) > 1e-3  # far above any accuracy gate


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("curved")
    source = folder / "benchmark_v2.jsonl"
    source.write_text("\n".join(cr.records()) + "\n")
    res = runner.invoke(app, ["cases", "import", str(source), "--out", str(folder / "cases")])
    assert res.exit_code == 0, res.output
    return folder / "cases"


def test_curved_records_import_calibrated_on_unstructured_meshes_or_name_their_defect(imported: Path) -> None:
    report = json.loads((imported / published_import.REPORT_FILE).read_text())
    # a star's published value stays the solution (no compact blend: shape_blends._star): marked
    # the biharmonic record on the disk imports too (main's second condition: its arc carries
    # [u, lap u], the published view states lap u as the disk's blend)
    assert report["imported"] == 5 and report["marked_leaking"] == {
        "poisson_star": "the boundary blend passes the accuracy gate (error 0.00e+00)"
    }
    assert report["excluded_cases"] == {
        "poisson_inverted_annulus": "domain not read: annulus: annulus.inner_r must be below outer_r; got 0.9, 0.8",
    }
    biharmonic, _ = store.load_hidden(imported, "biharmonic_circle")
    assert 0 < biharmonic.calibration["dolfinx"].e_base < 1e-4 and biharmonic.leak is None
    for kind in cr.IMPORTED:
        hidden, arrays = store.load_hidden(imported, f"poisson_{kind}")
        shape = published_shape(cr.DOMAINS[kind])
        g = cr.GRIDS[kind]
        X, Y = np.meshgrid(np.linspace(*g["bbox"][:2], g["nx"]), np.linspace(*g["bbox"][2:], g["ny"]))
        assert np.array_equal(~np.isnan(arrays["u"]), shape.inside(X, Y)), kind
        assert hidden.in_domain_points == int(shape.inside(X, Y).sum())
        # our gmsh P2 calibration: far below the import's 0.05, its threshold 10 x that
        calibration = hidden.calibration["dolfinx"]
        assert 0 < calibration.e_base < 1e-4 and (hidden.leak is None) == (kind != "star"), (kind, calibration)
    res = runner.invoke(app, ["cases", "validate", "--cases", str(imported), "--no-calibration"])
    assert res.exit_code == 0, res.output


def test_a_published_contract_program_on_a_disk_scores_unchanged(imported: Path, tmp_path: Path) -> None:
    timing.save(
        imported,
        timing.MachineCalibration(
            machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={"poisson_circle": {"dolfinx": 60.0}}
        ),
    )
    programs = tmp_path / "programs"
    programs.mkdir()
    (programs / "poisson_circle_dolfinx_gmsh.py").write_text(cr.PUBLISHED_DISK)
    out = tmp_path / "scores.json"
    res = runner.invoke(app, ["score", str(programs), "--cases", "--cases-path", str(imported), "--json", str(out)])
    assert res.exit_code == 0, res.output
    outcome = json.loads(out.read_text())["outcomes"]["gmsh/dolfinx"]["poisson_circle"]
    assert [(s["stage"], s["passed"]) for s in outcome["stages"]] == [
        ("executes", True),
        ("accurate", True),
        ("fast", True),
    ], outcome["stages"]


def test_the_timed_and_flow_families_calibrate_on_a_gmsh_disk() -> None:
    """heat (Crank-Nicolson), Navier-Stokes (Newton, Taylor-Hood with the pressure pinned at a P1
    dof of the second-order mesh), Burgers and the wave equation, on the disk's unstructured mesh."""
    x, y, t = pr.x, pr.y, pr.t
    rows = [
        pr.heat("heat_disk", sp.exp(-t) * sp.sin(sp.pi * x) * sp.sin(sp.pi * y) + (1 - sp.exp(-t)) * (x**2 + y)),
        pr.flow("ns_disk", "navier_stokes", pr.STREAM, pr.PRESSURE, 1.0),
        pr.burgers("burgers_disk", pr.BURGERS_U, 0.1, {"t0": 0.0, "t_end": 0.2, "dt": 0.01}),
        pr.wave("wave_disk", pr.WAVE_U, 1.0),
    ]
    for r in rows:
        r["oracle_config"]["domain"], r["oracle_config"]["output"]["grid"] = cr.DOMAINS["circle"], cr.GRIDS["circle"]
    built, _, report = published_import.import_records([json.dumps(r) for r in rows])
    assert (report.imported, report.excluded, report.leaking) == ([r["id"] for r in rows], {}, {})
    errors = {b.spec.id: b.hidden.calibration["dolfinx"].e_base for b in built}
    assert all(0 < e < 1e-3 for e in errors.values()), errors
    assert {b.spec.id: "p" in b.spec.output.fields for b in built} == {
        "heat_disk": False,
        "ns_disk": True,
        "burgers_disk": False,
        "wave_disk": False,
    }

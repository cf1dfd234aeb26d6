"""`cases import` on hand-written records in the published shape
(tests/published_records.py; the published file itself never enters the
repository): what is imported, what is excluded and why, the quirks reported
as decisions, the leak-free boundary data (the published `bc` value is a blend
of the boundary data, not the solution), `cases validate` on the result, and
published-contract programs scored unchanged by `score DIR --cases`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import published_records as pr
import pytest
import sympy as sp
from typer.testing import CliRunner

from fembench_agents.cases import dolfinx_env, published, published_domains, published_import, store, timing
from fembench_agents.cases.domains import DOMAINS
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.problem import PUBLISHED_FILE, load_cases
from fembench_agents.cli import app
from fembench_agents.runs.selection import select_tasks

runner = CliRunner()
IMPORTED = [
    "biharmonic_plate",
    "burgers_timed",
    "burgers_untimed",
    "elasticity_smooth",
    "heat_mixed_modes",
    "ns_zero_pressure",
    "poisson_cube",
    "poisson_edges",
    "poisson_eigen",  # marked as leaking: its forcing is the answer
    "poisson_legacy_tolerance",
    "poisson_lshape",
    "poisson_lshape_corner",
    "poisson_nested_config",
    "poisson_numerical",
    "poisson_smooth",
    "stokes_stream",
    "wave_travel",
]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("import")
    source = folder / "benchmark_v2.jsonl"
    source.write_text("\n".join(pr.records()) + "\n")
    res = runner.invoke(app, ["cases", "import", str(source), "--out", str(folder / "cases")])
    assert res.exit_code == 0, res.output
    (folder / "output.txt").write_text(res.output)
    return folder / "cases"


def test_import_reports_counts_reasons_and_decisions(imported: Path) -> None:
    output = (imported.parent / "output.txt").read_text()
    assert output.splitlines()[:7] == [
        "read 22 records: imported 17 (16 leak-free, 1 marked as leaking; 2 with a numerical reference), excluded 5",
        "  marked as leaking, selected only by its id: poisson_eigen: " + report_leak(imported),
        "  excluded, boundary condition not read: 1",
        "  excluded, initial data disagrees with the manufactured solution at t0 = 0: 1",
        "  excluded, output not read: 1",
        "  excluded, record defect: 1",
        "  excluded, record not read: 1",
    ]
    assert (
        "  decision: legacy `tolerance` ignored by our gates (alpha_acc 10; `score --gates published` applies it): 1"
        in output
    )
    assert '  decision: evaluation_config read from inside oracle_config: 1 ["poisson_nested_config"]' in output
    assert "  decision: thresholds removed from the case_spec: 21" in output
    report = json.loads((imported / published_import.REPORT_FILE).read_text())
    assert (report["read"], report["imported"], report["leak_free"], report["excluded"]) == (22, 17, 16, 5)
    assert report["excluded_domains"] == {}
    excluded = report["excluded_cases"]
    eigen = report["marked_leaking"]["poisson_eigen"]  # f = 2 pi^2 u: the forcing is the answer, whatever the bc
    prefix = "forcing passes the accuracy gate (error "
    assert eigen.startswith(prefix) and float(eigen[len(prefix) : -1]) < 1e-12
    assert "poisson_eigen" not in excluded
    assert "poisson_cube" not in excluded  # on the unit cube (tests/test_cases_import_cube.py)
    assert "poisson_lshape_corner" not in excluded  # an L-shape with its corner at (0.4, 0.4): built from its vertices
    # x0, y0, y1 walls, x1 open (do-nothing) and no forcing: the flow is zero, no relative error exists
    assert excluded["stokes_three_edges"] == (
        "record defect: its scored field, the velocity magnitude u, is zero: the velocity data is zero on every "
        "wall and the traction data on the open pieces, and the forcing ['0.0', '0.0'] is the gradient of phi = 0, "
        "constant on the open pieces, so u = 0 and the pressure phi - phi(open pieces) balances it; no relative "
        "error of u is defined"
    )
    # every published family has a solver here now: a flow record whose output is not the velocity magnitude
    assert excluded["stokes_flow"] == "output not read: field 'scalar' for a stokes solution of 2 component(s)"
    # the oracle starts from the manufactured solution at t0 (x y), the record states 0
    assert excluded["rd_transient"] == (
        "initial data disagrees with the manufactured solution at t0 = 0: initial_condition '0', "
        "where the oracle starts from the solution"
    )
    assert excluded["poisson_mixed_bc"] == "boundary condition not read: only Dirichlet data on the whole boundary"
    assert excluded["line 22"].startswith("record not read: ")
    assert report["decisions"]["legacy_tolerance_ignored"] == 1


def report_leak(imported: Path) -> str:
    return str(json.loads((imported / published_import.REPORT_FILE).read_text())["marked_leaking"]["poisson_eigen"])


def test_a_case_leaking_two_ways_names_the_first_probe_and_views_are_written_by_id(tmp_path: Path) -> None:
    """heat_decay's forcing (u_t - lap u = (2 pi^2 - 1) u) and its initial data (u at t = 0) are
    both multiples of the answer: the reason names the forcing, the first probe. The published
    views are written sorted by id whatever the file's order."""
    decay = pr.heat("heat_decay", sp.exp(-pr.t) * sp.sin(sp.pi * pr.x) * sp.sin(sp.pi * pr.y))
    smooth = pr.poisson("poisson_smooth", pr.SMOOTH_U)
    built, views, report = published_import.import_records([json.dumps(smooth), json.dumps(decay)])
    assert report.imported == ["poisson_smooth", "heat_decay"] and list(report.leaking) == ["heat_decay"]
    reason = report.leaking["heat_decay"]
    prefix = "forcing passes the accuracy gate (error "
    assert reason.startswith(prefix) and reason.endswith(")") and float(reason[len(prefix) : -1]) < 1e-12
    assert [b.hidden.leak for b in built] == [None, reason]
    published_import.write(tmp_path, built, views, report)
    lines = (tmp_path / "published_views.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["heat_decay", "poisson_smooth"]
    # only the records asked for are read, and a line that cannot be read may have been one of them
    _, _, only = published_import.import_records([json.dumps(smooth), json.dumps(decay), "{cut"], {"heat_decay"})
    assert (only.read, only.imported, list(only.excluded)) == (2, ["heat_decay"], ["line 3"])


def test_a_leaking_case_is_kept_marked_and_selected_only_by_its_id(imported: Path) -> None:
    cases = load_cases(imported)
    assert [c.task_id for c in cases if c.leak] == ["poisson_eigen"]
    assert next(c for c in cases if c.leak).leak == report_leak(imported)
    without = [c for c in IMPORTED if c != "poisson_eigen"]
    assert [c.task_id for c in select_tasks(cases, "all")] == without
    assert [c.task_id for c in select_tasks(cases, "poisson_*")] == [c for c in without if c.startswith("poisson")]
    assert [c.task_id for c in select_tasks(cases, "poisson_eigen,heat_*")] == ["heat_mixed_modes", "poisson_eigen"]
    with pytest.raises(ValueError) as err:
        select_tasks(cases, "poisson_ei*")
    assert str(err.value) == (
        "task selector 'poisson_ei*' matches no task but cases marked as leaking (poisson_eigen: name them by id)"
    )


def test_imported_cases_keep_ids_families_and_parameters_and_carry_both_shapes(imported: Path) -> None:
    cases = {c.task_id: c for c in load_cases(imported)}
    assert sorted(cases) == IMPORTED
    poisson = cases["poisson_smooth"]
    assert (poisson.family, poisson.spec.libraries, poisson.spec.coefficients) == (
        "poisson",
        ("dolfinx",),
        {"k": "x*y/2 + 1"},
    )
    assert (poisson.spec.grid.nx, poisson.spec.grid.ny) == (50, 50)
    data = poisson.spec_data()
    # the published shape, with no threshold, no solution and no oracle settings
    assert data["pde"]["coefficients"]["kappa"] == {"type": "expr", "expr": "x*y/2 + 1"}
    assert data["output"]["grid"] == {"bbox": [0, 1, 0, 1], "nx": 50, "ny": 50}
    assert data["domain"]["type"] == "unit_square" and data["domain"]["name"] == "unit_square"
    assert data["agent_knobs"] == pr.KNOBS
    assert [k for k in ("evaluation_config", "oracle_solver", "mesh", "fem", "oracle_config") if k in data] == []
    assert "manufactured_solution" not in data["pde"] and str(pr.SMOOTH_U) not in json.dumps(data)
    # ours: data per boundary piece, each the solution restricted to its edge, simplified
    assert [(p["name"], p["value"]) for p in data["boundary"]] == [
        ("bottom", "0"),
        ("right", "E*y**2 + sin(2*y)"),
        ("top", "x*sin(2) + exp(x)"),
        ("left", "y**2"),
    ]
    assert cases["elasticity_smooth"].spec.output.fields["u"].shape == (50, 50)
    assert cases["heat_mixed_modes"].spec.time is not None and cases["heat_mixed_modes"].spec.time.t_end == 0.2


def test_a_record_without_manufactured_solution_gets_a_checked_fine_solve_as_reference(imported: Path) -> None:
    # -laplace(u) = 1 on the unit square, u = 0 on its boundary: no closed form
    case = next(c for c in load_cases(imported) if c.task_id == "poisson_numerical")
    data = case.spec_data()
    assert [(p["name"], p["value"]) for p in data["boundary"]] == [
        ("bottom", "0.0"),
        ("right", "0.0"),
        ("top", "0.0"),
        ("left", "0.0"),
    ]
    assert data["bc"] == {"dirichlet": {"on": "all", "value": "0.0"}}  # the published data: no answer in it
    hidden, arrays = store.load_hidden(imported, "poisson_numerical")
    assert (hidden.reference_kind, hidden.solution) == ("numerical", None)
    check = hidden.reference_check
    # the ladder's first rung passes: 6x after 4x, the distance doubled to bound the 6x solve's error
    assert check is not None and check.solver == "dolfinx:p2@refined6x" and check.refinements == (1, 4, 6)
    first, second, finest = check.distances_to_finest
    assert finest == 0.0 and second < first / 2 and check.error_estimate == 2 * second
    # e_base is the calibration solve's (refinement 1) distance to the reference; the estimate
    # lies at most 1/20 below the accuracy threshold 10 e_base
    calibration = hidden.calibration["dolfinx"]
    assert calibration.e_base == first and calibration.tau_acc == float(f"{10 * first:.4e}")
    assert check.threshold == float(f"{0.05 * calibration.tau_acc:.4e}") and 2 * second <= check.threshold
    report = json.loads((imported / published_import.REPORT_FILE).read_text())
    assert report["numerical_references"]["poisson_numerical"] == 2 * second
    # the torsion function of the unit square peaks at 0.07367 in its centre
    assert abs(float(np.nanmax(arrays["u"])) - 0.07367) < 2e-4


def test_the_published_boundary_value_is_the_solution_on_the_boundary_only(imported: Path) -> None:
    case = next(c for c in load_cases(imported) if c.task_id == "poisson_smooth")
    blend = compile_expr(case.spec_data()["bc"]["dirichlet"]["value"])
    exact = compile_expr(str(pr.SMOOTH_U))
    s = np.linspace(0, 1, 41)
    zeros, ones = np.zeros_like(s), np.ones_like(s)
    for bx, by in ((s, zeros), (s, ones), (zeros, s), (ones, s)):
        assert np.allclose(blend(x=bx, y=by), exact(x=bx, y=by), atol=1e-12)
    X, Y = np.meshgrid(s, s)
    gap = np.linalg.norm(blend(x=X, y=Y) - exact(x=X, y=Y)) / np.linalg.norm(exact(x=X, y=Y))
    assert gap > 1e-3  # far above any accuracy threshold: the blend is no answer


# the 100 x 100 grid of the published L-shape records: x = 0.5 and y = 0.5 are no grid lines
X_100, Y_100 = np.meshgrid(np.linspace(0, 1, 100), np.linspace(0, 1, 100))
# the published value of poisson_lshape minus its solution at (0.25, 0.25), inside the L-shape
GAP_AT_QUARTER = -0.0012742495753939


def test_an_l_shape_record_gets_our_l_shape_pieces_and_a_published_value_that_is_u_on_its_boundary_only(
    imported: Path,
) -> None:
    case = next(c for c in load_cases(imported) if c.task_id == "poisson_lshape")
    data = case.spec_data()
    assert (data["domain"]["name"], data["domain"]["type"]) == ("l_shape", "l_shape")
    assert data["domain"]["geometry_params"] == pr.lshape(0.5)["geometry_params"]  # the published one, kept
    assert (case.spec.grid.nx, case.spec.grid.ny) == (100, 100)
    # ours: the solution restricted to each piece of our l_shape, simplified
    assert [(p["name"], p["value"]) for p in data["boundary"]] == [
        ("bottom", "0"),
        ("right", "E*y**2 + sin(2*y)"),
        ("notch_bottom", "x*sin(1) + exp(x)/4"),
        ("notch_left", "y**2*exp(1/2) + sin(2*y)/2"),
        ("top", "x*sin(2) + exp(x)"),
        ("left", "y**2"),
    ]
    assert [tuple(map(tuple, p["segment"])) for p in data["boundary"]] == [
        (a, b) for _, a, b in DOMAINS["l_shape"].pieces
    ]
    # the published value: one expression, u on every segment, not u inside, read as published programs read it
    value = data["bc"]["dirichlet"]["value"]
    assert data["bc"]["dirichlet"]["on"] == "all" and str(pr.SMOOTH_U) not in value
    blend, exact = compile_expr(value), compile_expr(str(pr.SMOOTH_U))
    s = np.linspace(0, 1, 41)
    for _, (ax, ay), (bx, by) in DOMAINS["l_shape"].pieces:
        px, py = ax + s * (bx - ax), ay + s * (by - ay)
        assert np.allclose(blend(x=px, y=py), exact(x=px, y=py), atol=1e-12)
    x, y = sp.symbols("x y")
    published = sp.lambdify((x, y), sp.sympify(value), "numpy")
    X, Y = np.meshgrid(s, s)
    assert np.allclose(published(X, Y), blend(x=X, y=Y), atol=1e-12)
    assert float(blend(x=0.25, y=0.25) - exact(x=0.25, y=0.25)) == pytest.approx(GAP_AT_QUARTER, abs=1e-9)
    hidden, arrays = store.load_hidden(imported, "poisson_lshape")
    assert (hidden.reference_kind, hidden.solution, hidden.leak) == ("manufactured", str(pr.SMOOTH_U), None)
    # the 100 x 100 grid: x = 0.5 is no grid line, the points with x > 0.5 and y > 0.5 (50 x 50) are NaN
    outside = (X_100 > 0.5) & (Y_100 > 0.5)
    assert hidden.in_domain_points == 7500 and np.array_equal(np.isnan(arrays["u"]), outside)
    assert np.allclose(arrays["u"][~outside], exact(x=X_100, y=Y_100)[~outside], atol=1e-12)
    assert 0 < hidden.calibration["dolfinx"].e_base < 1e-5


def test_per_edge_dirichlet_data_on_all_four_edges_gives_each_piece_its_edge(imported: Path) -> None:
    case = next(c for c in load_cases(imported) if c.task_id == "poisson_edges")
    data = case.spec_data()
    assert [(p["name"], p["value"]) for p in data["boundary"]] == [
        ("bottom", "exp(x)"),
        ("right", "E*cos(y)"),
        ("top", "exp(x)*cos(1)"),
        ("left", "cos(y)"),
    ]
    # the published view keeps the list as published: it is data, not the answer
    assert data["bc"] == {"dirichlet": [{"on": e, "value": v} for e, v in pr.EDGE_VALUES.items()]}
    hidden, arrays = store.load_hidden(imported, "poisson_edges")
    assert (hidden.reference_kind, hidden.solution, hidden.leak) == ("numerical", None, None)
    check = hidden.reference_check
    assert check is not None and check.refinements == (1, 4, 6) and check.error_estimate <= check.threshold
    (harmonic,) = _on_grid("poisson_edges", imported, ["exp(x)*cos(y)"])  # the data's harmonic extension
    assert float(np.max(np.abs(arrays["u"] - harmonic))) < 1e-7


L_04 = ((0.0, 0.0), (1.0, 0.0), (1.0, 0.4), (0.4, 0.4), (0.4, 1.0), (0.0, 1.0))


@pytest.mark.parametrize(
    ("domain", "expected"),
    [
        ({"type": "unit_square"}, "unit_square"),
        (pr.lshape(0.5), "l_shape"),
        ({"type": "l_shape", "cutout_bbox": [0.5, 1, 0.5, 1], "outer_bbox": [0, 1, 0, 1]}, "l_shape"),
        # the same region, its ring closed, with a vertex on an edge, with a spike of no width: ours
        (
            {
                "type": "l_shape",
                "geometry_params": {
                    "vertices": [
                        [0, 0],
                        [1, 0],
                        [1, 0.5],
                        [0.5, 0.5],
                        [1, 0.5],
                        [0.5, 0.5],
                        [0.5, 1],
                        [0, 1],
                        [0, 0.5],
                        [0, 0],
                    ]
                },
            },
            "l_shape",
        ),
        (
            {
                "type": "square_with_hole",
                "geometry_params": {
                    "inner_hole": {"type": "rect", "bbox": [0.375, 0.625, 0.375, 0.625]},
                    "outer": [0, 1, 0, 1],
                },
            },
            "square_hole",
        ),
        # another L-shape is its own polygon, given either way
        ({"type": "l_shape", "cutout_bbox": [0.4, 1, 0.4, 1], "outer_bbox": [0, 1, 0, 1]}, L_04),
        (pr.lshape(0.4), L_04),
        (
            {
                "type": "l_shape",
                "geometry_params": {"vertices": [[0, 0], [1, 0], [1, 0.5], [0.5, 0.5], [0.5, 1], [0, 1], [0.2, 0.5]]},
            },
            "l_shape with an edge not axis-parallel: (0, 1), (0.2, 0.5)",
        ),
        (  # our six corners, one of them visited twice: a slanted edge back to it
            {
                "type": "l_shape",
                "geometry_params": {"vertices": [[0, 0], [1, 0], [1, 0.5], [0.5, 0.5], [0.5, 1], [0, 1], [0.5, 0.5]]},
            },
            "l_shape with an edge not axis-parallel: (0, 1), (0.5, 0.5)",
        ),
        (
            {
                "type": "square_with_hole",
                "geometry_params": {"inner_hole": {"type": "circle", "center": [0.5, 0.5], "radius": 0.2}},
            },
            "square_with_hole",
        ),
        ({"type": "circle", "geometry_params": {"center": [0.5, 0.5], "radius": 0.5}}, "circle"),
        ({"type": "annulus", "geometry_params": {"center": [0, 0], "inner_r": 0.3, "outer_r": 0.8}}, "annulus"),
        ({"type": "star", "geometry_params": {"points": 5, "inner_r": 0.35, "outer_r": 0.8}}, "star"),
        (
            {"type": "periodic_square", "geometry_params": {"extents": [0, 2, 0, 1], "bounds": [0, 1, 0, 1]}},
            "periodic_square with extents (0.0, 2.0, 0.0, 1.0) and bounds (0.0, 1.0, 0.0, 1.0)",
        ),
        ({"type": "t_junction"}, "t_junction given by [] (expected horizontal_rect, vertical_rect)"),
        (
            {"type": "t_junction", "geometry_params": {"horizontal_rect": [0, 1, 0.8, 0.7], "vertical_rect": [0, 1]}},
            "horizontal_rect is [0, 1, 0.8, 0.7], not [x0, x1, y0, y1] with x0 < x1, y0 < y1",
        ),
        (
            {
                "type": "t_junction",
                "geometry_params": {"horizontal_rect": [0, 1, 0.8, 1], "vertical_rect": [0, 1, 0, 0.5]},
            },
            "t_junction: the region has 2 outer boundaries; expected one connected region",
        ),
    ],
)
def test_a_published_domain_is_ours_exactly_its_own_polygon_or_excluded_with_what_differs(
    domain: dict, expected: str | tuple
) -> None:
    if isinstance(expected, tuple):
        built = published_domains.track_domain(domain)
        assert not isinstance(built, str)
        assert (built.name, built.outer, built.holes) == ("l_shape", expected, ())
    elif expected in DOMAINS:
        assert published_domains.track_domain(domain) is DOMAINS[expected]
    elif expected in published_domains.GEOMETRIC + ("square_with_hole",):
        assert published_domains.track_domain(domain) == expected  # a curved or slanted kind: its name
    else:
        with pytest.raises(published_domains.Excluded) as err:
            published_domains.track_domain(domain)
        assert str(err.value) == "domain not in the track: " + expected


def _flow_on_edges(values: dict[str, list[str]]) -> dict:
    pde = {"type": "stokes", "pde_params": {"nu": 1.0}, "source_term": ["0.0", "0.0"]}
    bc = {"dirichlet": [{"on": e, "value": v} for e, v in values.items()]}
    return json.loads(json.dumps(pr._record("lid", pde, bc=bc, field="velocity_magnitude")))


def test_a_lid_that_jumps_at_its_corners_leaves_the_pressure_uncompared() -> None:
    # the lid-driven cavity: u = (1, 0) on the top, 0 elsewhere; p ~ 1/r at the lid's corners is not in L2
    lid = _flow_on_edges({"y1": ["1.0", "0.0"], "y0": ["0.0", "0.0"], "x0": ["0.0", "0.0"], "x1": ["0.0", "0.0"]})
    spec, view, u = published.convert(lid, published.ImportReport())
    assert [(p.name, p.value) for p in spec.boundary] == [
        ("bottom", ["0.0", "0.0"]),
        ("right", ["0.0", "0.0"]),
        ("top", ["1.0", "0.0"]),
        ("left", ["0.0", "0.0"]),
    ]
    assert list(spec.output.fields) == ["u"] and spec.equation.endswith("(p is not compared)") and u == []
    assert view["bc"] == lid["oracle_config"]["bc"]
    # data that agrees at every corner: the numerical reference has its p, compared up to a constant
    shear = _flow_on_edges({"y1": ["x", "0"], "y0": ["0", "0"], "x0": ["0", "0"], "x1": ["y", "0"]})
    spec, _, _ = published.convert(shear, published.ImportReport())
    assert {k: f.up_to_constant for k, f in spec.output.fields.items()} == {"u": False, "p": True}


def test_validate_passes_on_the_imported_folder_and_catches_the_published_leak(imported: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["cases", "validate", "--cases", str(imported), "--no-calibration"])
    assert res.exit_code == 0, res.output
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in (store.SPECS_FILE, PUBLISHED_FILE):
        (copy / name).write_bytes((imported / name).read_bytes())
    (copy / store.HIDDEN).mkdir()
    for f in (imported / store.HIDDEN).iterdir():
        (copy / store.HIDDEN / f.name).write_bytes(f.read_bytes())
    lines = []
    for line in (copy / PUBLISHED_FILE).read_text().splitlines():
        view = json.loads(line)
        if view["id"] in ("poisson_smooth", "poisson_eigen"):  # the published track's own boundary data
            view["bc"]["dirichlet"]["value"] = json.loads((copy / store.HIDDEN / f"{view['id']}.json").read_text())[
                "solution"
            ]
        lines.append(json.dumps(view))
    (copy / PUBLISHED_FILE).write_text("\n".join(lines) + "\n")
    res = runner.invoke(app, ["cases", "validate", "--cases", str(copy), "--no-calibration"])
    assert res.exit_code == 1
    # the unmarked case is caught both ways; the case marked as leaking is known to leak: no problem
    assert [line for line in res.output.splitlines() if line.startswith("problem:")] == [
        "problem: poisson_smooth: the manufactured solution is given in the case_spec",
        "problem: poisson_smooth: the boundary blend passes the accuracy gate (error 0.00e+00)",
    ]


def test_published_contract_programs_run_unchanged_and_get_per_stage_verdicts(imported: Path, tmp_path: Path) -> None:
    timing.save(
        imported,
        timing.MachineCalibration(
            machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={"poisson_smooth": {"dolfinx": 60.0}}
        ),
    )
    programs = tmp_path / "programs"
    programs.mkdir()
    for label, source in (
        ("correct", pr.PUBLISHED_CORRECT),
        ("wrongsign", pr.PUBLISHED_WRONG_BC_SIGN),
        ("transposed", pr.PUBLISHED_TRANSPOSED),
        ("hypre", pr.PUBLISHED_HYPRE),
    ):
        (programs / f"poisson_smooth_dolfinx_{label}.py").write_text(source)
    out = tmp_path / "scores.json"
    res = runner.invoke(app, ["score", str(programs), "--cases", "--cases-path", str(imported), "--json", str(out)])
    assert res.exit_code == 0, res.output
    outcomes = json.loads(out.read_text())["outcomes"]
    verdicts = {
        key.split("/")[0]: [(s["stage"], s["passed"], s["reason"]) for s in by_case["poisson_smooth"]["stages"]]
        for key, by_case in outcomes.items()
    }
    assert verdicts == {
        "correct": [("executes", True, None), ("accurate", True, None), ("fast", True, None)],
        "wrongsign": [("executes", True, None), ("accurate", False, "too_inaccurate")],
        "transposed": [("executes", True, None), ("accurate", False, "too_inaccurate")],
        "hypre": [("executes", False, "runtime_error")],
    }
    info = outcomes["correct/dolfinx"]["poisson_smooth"]["solver_info"]
    assert info == {"mesh_resolution": 48, "element_degree": 2, "ksp_type": "preonly", "pc_type": "lu", "rtol": 1e-12}
    hypre = outcomes["hypre/dolfinx"]["poisson_smooth"]
    assert hypre["stages"][0]["detail"].endswith("; " + dolfinx_env.NO_HYPRE) and hypre["substitutions"] == []
    # re-scored with the recorded compatibility option: hypre becomes gamg, and the outcome says so
    for label in ("correct", "wrongsign", "transposed"):
        (programs / f"poisson_smooth_dolfinx_{label}.py").unlink()
    res = runner.invoke(
        app,
        [
            "score",
            str(programs),
            "--cases",
            "--cases-path",
            str(imported),
            "--json",
            str(out),
            "--compat",
            "hypre-as-gamg",
        ],
    )
    assert res.exit_code == 0, res.output
    again = json.loads(out.read_text())["outcomes"]["hypre/dolfinx"]["poisson_smooth"]
    assert [(s["stage"], s["passed"]) for s in again["stages"]] == [
        ("executes", True),
        ("accurate", True),
        ("fast", True),
    ]
    assert [n.split(": ", 1)[0] for n in again["substitutions"]] == ["hypre-as-gamg", "hypre-as-gamg"]
    assert all(n.endswith("'hypre' -> 'gamg'") for n in again["substitutions"])
    bad = runner.invoke(app, ["score", str(programs), "--cases", "--cases-path", str(imported), "--compat", "ml"])
    assert bad.exit_code == 2 and "unknown compatibility rewrite(s) ['ml']" in bad.output


def _on_grid(case_id: str, imported: Path, exprs: list[str], t: float = 0.0) -> list[np.ndarray]:
    case = next(c for c in load_cases(imported) if c.task_id == case_id)
    s = np.linspace(0, 1, case.spec.grid.nx)
    X, Y = np.meshgrid(s, s)
    return [compile_expr(e)(x=X, y=Y, t=t) * np.ones_like(X) for e in exprs]


def test_flow_records_keep_velocity_magnitude_and_pressure_up_to_a_constant(imported: Path) -> None:
    cases = {c.task_id: c for c in load_cases(imported)}
    stokes, ns = cases["stokes_stream"], cases["ns_zero_pressure"]
    assert (stokes.family, stokes.spec.coefficients, ns.family, ns.spec.coefficients) == (
        "stokes",
        {"nu": 0.5},
        "navier_stokes",
        {"nu": 1.0},
    )
    fields = {k: (f.shape, f.up_to_constant) for k, f in stokes.spec.output.fields.items()}
    assert fields == {"u": ((50, 50), False), "p": ((50, 50), True)}
    # p = 0: nothing to compare up to a constant, the velocity magnitude is the whole reference
    assert {k: (f.shape, f.up_to_constant) for k, f in ns.spec.output.fields.items()} == {"u": ((50, 50), False)}
    edges = [
        ("bottom", ["exp(x)", "0"]),
        ("right", ["y**2 + E*cos(y)", "-2*y**3/3 - E*sin(y)"]),
        ("top", ["x**2 + exp(x)*cos(1)", "-2*x/3 - exp(x)*sin(1)"]),
        ("left", ["cos(y)", "-sin(y)"]),
    ]
    for case in (stokes, ns):
        data = case.spec_data()
        assert [(p["name"], p["value"]) for p in data["boundary"]] == edges  # per edge, per component
        assert data["output"]["field"] == "velocity_magnitude" and "manufactured_solution" not in data["pde"]
        blend = data["bc"]["dirichlet"]["value"]
        assert blend == [
            "-x*y*(1 + E*cos(1)) - E*x*(1 - y) + x*(y**2 + E*cos(y)) - y*(1 - x)*cos(1) + y*(x**2 + exp(x)*cos(1))"
            " - (1 - x)*(1 - y) + (1 - x)*cos(y) + (1 - y)*exp(x)",
            "-x*y*(-E*sin(1) - 2/3) + x*(-2*y**3/3 - E*sin(y)) + y*(1 - x)*sin(1) + y*(-2*x/3 - exp(x)*sin(1))"
            " - (1 - x)*sin(y)",
        ]
    velocity = ["x**2*y**2 + exp(x)*cos(y)", "-2*x*y**3/3 - exp(x)*sin(y)"]
    ux, uy, p = _on_grid("stokes_stream", imported, [*velocity, "x**2 + y*cos(x)"])
    hidden, arrays = store.load_hidden(imported, "stokes_stream")
    assert (hidden.reference_kind, hidden.solution) == ("manufactured", [*velocity, "x**2 + y*cos(x)"])
    assert sorted(arrays) == ["p", "u"]
    assert np.allclose(arrays["u"], np.hypot(ux, uy), atol=1e-12) and np.allclose(arrays["p"], p, atol=1e-12)
    assert 0 < hidden.calibration["dolfinx"].e_base < 1e-3 and hidden.leak is None
    hidden, arrays = store.load_hidden(imported, "ns_zero_pressure")
    assert (hidden.solution, sorted(arrays)) == (velocity, ["u"])
    assert np.allclose(arrays["u"], np.hypot(ux, uy), atol=1e-12)
    assert 0 < hidden.calibration["dolfinx"].e_base < 1e-3 and hidden.leak is None


def test_a_pressure_varying_in_y_alone_is_compared_on_the_grid_as_published_rows_by_columns() -> None:
    """A published grid is ny rows of nx points; a pressure is compared whenever it varies at all."""
    stream = pr.x**2 * pr.y**3 / 3 + sp.sin(pr.x) * pr.y
    for p, compared in ((pr.y**2, True), (pr.x, True), (sp.Integer(3), False)):
        record = pr.flow("stokes_wide", "stokes", stream, p, 1.0)
        record["oracle_config"]["output"]["grid"] = {"bbox": [0, 1, 0, 1], "nx": 40, "ny": 20}
        spec, _, _ = published.convert(record, published.ImportReport())
        fields = {k: (f.shape, f.up_to_constant) for k, f in spec.output.fields.items()}
        assert fields == {"u": ((20, 40), False), **({"p": ((20, 40), True)} if compared else {})}, p


def test_burgers_and_wave_records_keep_their_interval_and_initial_data(imported: Path) -> None:
    cases = {c.task_id: c for c in load_cases(imported)}
    burgers, wave = cases["burgers_timed"], cases["wave_travel"]
    for case in (burgers, wave):
        assert case.spec.time is not None and (case.spec.time.t0, case.spec.time.t_end) == (0.0, 0.2)
        assert case.spec.output.fields["u"].shape == (50, 50)
    # the published dt stays in the published view only: ours steps with the grid, as heat does
    assert burgers.spec_data()["pde"]["time"] == {"t0": 0.0, "t_end": 0.2, "dt": 0.01}
    assert (burgers.spec.coefficients, burgers.spec.initial) == ({"nu": 0.1}, "x**2*y**2/4 + y**2*sin(2*x)")
    assert (wave.spec.coefficients, wave.spec.initial) == ({"c": 1.0}, ["y**2*exp(x)", "x**2"])
    assert [(p["name"], p["value"]) for p in burgers.spec_data()["boundary"]] == [
        ("bottom", "0"),
        ("right", "y**2*(exp(t)/4 + sin(2))*exp(-t)"),
        ("top", "x**2/4 + exp(-t)*sin(2*x)"),
        ("left", "0"),
    ]
    assert [(p["name"], p["value"]) for p in wave.spec_data()["boundary"]] == [
        ("bottom", "x**2*sin(t)"),
        ("right", "E*y**2*cos(t) + sin(t)"),
        ("top", "x**2*sin(t) + exp(x)*cos(t)"),
        ("left", "y**2*cos(t)"),
    ]
    for case_id, u in (
        ("burgers_timed", "x**2*y**2/4 + y**2*exp(-t)*sin(2*x)"),
        ("wave_travel", "x**2*sin(t) + y**2*exp(x)*cos(t)"),
    ):
        case = cases[case_id]
        hidden, arrays = store.load_hidden(imported, case_id)
        assert (hidden.reference_kind, hidden.solution, hidden.leak) == ("manufactured", u, None)
        (exact,) = _on_grid(case_id, imported, [u], t=0.2)
        assert np.allclose(arrays["u"], exact, atol=1e-12)
        assert 0 < hidden.calibration["dolfinx"].e_base < 1e-2
        # the published value is the blend of the edges: the solution on the boundary, at every t
        blend = compile_expr(case.spec_data()["bc"]["dirichlet"]["value"])
        s = np.linspace(0, 1, 21)
        for bx, by in ((s, 0 * s), (s, 0 * s + 1), (0 * s, s), (0 * s + 1, s)):
            assert np.allclose(blend(x=bx, y=by, t=0.1), compile_expr(u)(x=bx, y=by, t=0.1), atol=1e-12)


def test_the_import_report_counts_reasons_most_frequent_first_then_by_name() -> None:
    report = published.ImportReport(
        excluded={
            "a": "3D: the track's grids are 2D",
            "b": published_domains.DOMAIN_REASON + "circle (curved boundary)",
            "c": "transient heat: the track's family is steady",
            "d": published_domains.DOMAIN_REASON + "annulus (curved boundary)",
            "e": published_domains.DOMAIN_REASON + "circle (curved boundary)",
            "f": "3D: the track's grids are 2D",
            "g": published_domains.DOMAIN_REASON + "annulus (curved boundary)",
            "h": published_domains.DOMAIN_REASON + "circle (curved boundary)",
        }
    )
    assert list(report.reasons().items()) == [("domain not in the track", 5), ("3D", 2), ("transient heat", 1)]
    assert list(report.domains().items()) == [("circle (curved boundary)", 3), ("annulus (curved boundary)", 2)]


def test_a_timed_record_keeps_its_start_and_its_view_hides_knobs_naming_the_solution() -> None:
    record = pr.heat("heat_late", sp.exp(-pr.t) * pr.x * pr.y)
    record["oracle_config"]["pde"]["time"] = {"t0": 0.1, "t_end": 0.3, "dt": 0.02}
    # the oracle starts from the solution at t0: the record's initial field must be it
    record["oracle_config"]["pde"]["initial_condition"] = "exp(-0.1)*x*y"
    record["agent_knobs"] = [*pr.KNOBS, {"name": "manufactured_solution", "description": "the answer"}]
    spec, view, _ = published.convert(record, published.ImportReport())
    assert spec.time is not None and (spec.time.t0, spec.time.t_end) == (0.1, 0.3)
    assert view["agent_knobs"] == pr.KNOBS


def test_each_component_of_a_published_vector_value_is_tried_as_an_answer() -> None:
    """The magnitude of [x*y, 1] is no multiple of u = x*y, its first component is u itself."""
    spec, view, _ = published.convert(pr.elasticity("el", pr.x * pr.y, pr.y), published.ImportReport())
    X, Y = np.meshgrid(np.linspace(0, 1, 50), np.linspace(0, 1, 50))
    mask = np.ones_like(X, dtype=bool)
    view["bc"] = {"dirichlet": {"on": "all", "value": ["x*y", "1"]}}
    assert published.blend_error(view, spec, X * Y, mask) == 0.0
    view["bc"] = {"dirichlet": {"on": "all", "value": ["x*y + 1", "1"]}}
    assert published.blend_error(view, spec, X * Y, mask) > 0.1


def _published_on_edges(family: str, values: dict[str, str | list[str]]) -> dict:
    pde = {"type": family, "source_term": "1.0"}
    bc = {"dirichlet": [{"on": e, "value": v} for e, v in values.items()]}
    return json.loads(json.dumps(pr._record(f"{family}_edges", pde, bc=bc)))


def test_per_edge_data_is_read_only_as_one_entry_per_edge() -> None:
    twice = _published_on_edges("poisson", {"x0": "0", "x1": "1", "y0": "0", "y1": "y"})
    twice["oracle_config"]["bc"]["dirichlet"].append({"on": "x0", "value": "2"})
    with_all = _published_on_edges("poisson", {"all": "0", "x1": "1"})
    for record, names in ((twice, "['x0', 'x1', 'y0', 'y1', 'x0']"), (with_all, "['all', 'x1']")):
        with pytest.raises(published_domains.Excluded) as err:
            published.convert(record, published.ImportReport())
        assert str(err.value) == f"boundary condition not read: per-edge Dirichlet data on {names} of a unit_square"


def test_a_flow_on_the_square_with_a_hole_compares_its_pressure_when_no_corner_jumps() -> None:
    """The hole's loop follows the outer one: the data of (0, 0) is not compared with the hole's."""
    pde = {"type": "stokes", "pde_params": {"nu": 1.0}, "source_term": ["0.0", "0.0"]}
    hole = {
        "type": "square_with_hole",
        "geometry_params": {"inner_hole": {"type": "rect", "bbox": [0.375, 0.625, 0.375, 0.625]}},
    }
    bc = {"dirichlet": {"on": "all", "value": ["y", "0"]}}
    record = json.loads(json.dumps(pr._record("hole", pde, domain=hole, bc=bc, field="velocity_magnitude")))
    spec, _, _ = published.convert(record, published.ImportReport())
    assert spec.domain.name == "square_hole"
    assert {k: f.up_to_constant for k, f in spec.output.fields.items()} == {"u": False, "p": True}


def test_a_boundary_blend_at_the_accuracy_threshold_is_a_leak() -> None:
    spec, view, _ = published.convert(pr.elasticity("el", pr.x * pr.y, pr.y), published.ImportReport())
    X, Y = np.meshgrid(np.linspace(0, 1, 50), np.linspace(0, 1, 50))
    ref, mask = X * Y + 0.5, np.ones_like(X, dtype=bool)
    view["bc"] = {"dirichlet": {"on": "all", "value": ["x*y + 0.5 + 0.01*x", "0"]}}
    blended = published.blend_error(view, spec, ref, mask)
    assert 1e-3 < blended < 1e-1
    leak = published_import._leak(spec, view, {"u": ref}, mask, blended)
    assert leak == f"the boundary blend passes the accuracy gate (error {blended:.2e})"
    assert published_import._leak(spec, view, {"u": ref}, mask, blended * (1 - 1e-9)) is None


def test_a_numerical_reference_refused_is_excluded_with_the_check_s_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """An L-shaped plate under its own weight, clamped all round: the re-entrant corner's
    singularity keeps the 4x and 8x refinements too far apart for a 50 x 50 grid. (With the graded
    rung, which a corner singularity takes after the uniform ladder, it imports:
    tests/test_published_graded.py; here that rung is left out to see the ladder's own verdict.)"""
    monkeypatch.setattr(published_import.published_graded, "applies", lambda spec: False)
    pde = {"type": "linear_elasticity", "pde_params": {"E": 1.0, "nu": 0.3}, "source_term": ["0.0", "-1.0"]}
    bc = {"dirichlet": {"on": "all", "value": ["0.0", "0.0"]}}
    record = pr._record("plate_gravity", pde, domain=pr.lshape(0.5), bc=bc, field="displacement_magnitude")
    built, _, report = published_import.import_records([json.dumps(record)])
    reason = report.excluded["plate_gravity"]
    prefix = "numerical reference refused: the numerical reference's error estimate "
    assert built == [] and reason.startswith(prefix), reason
    estimate, _, rest = reason[len(prefix) :].partition(" is above ")
    threshold, _, why = rest.partition(" ")
    assert float(estimate) > float(threshold) > 0
    assert why == "(0.05 x the strictest accuracy threshold): refine the grid or choose smoother data"

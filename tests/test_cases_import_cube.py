"""`cases import` of unit-cube records in the published 3D shape
(tests/published_cube_records.py): each family imported on the DOLFINx track
with six face pieces and an (nz, ny, nx) output, the published `bc` value the 3D
transfinite blend of the face traces (u on every face, not inside), a stated
source term that is not the solution's replaced by the derived one (as the
published oracle solves), the exclusions, `cases validate`, and a
published-contract 3D program scored unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import published_cube_records as pc
import pytest
import sympy as sp
from typer.testing import CliRunner

from fembench_agents.cases import cube, gates, published, published_cube, published_import, store, timing
from fembench_agents.cases.case_spec import FieldSpec, OutputContract
from fembench_agents.cases.problem import load_cases
from fembench_agents.cli import app

runner = CliRunner()
x, y, z, t = pc.x, pc.y, pc.z, pc.t
FACE_NAMES = ["x0", "x1", "y0", "y1", "z0", "z1"]


def _records() -> list[dict]:
    numerical = pc.heat3("cube_heat_numerical")
    del numerical["oracle_config"]["pde"]["manufactured_solution"]
    transient = pc.convection3("cube_convection_transient", t_end=0.1)  # the transient variant, on the faces too
    still = pc.stokes3("cube_stokes_gravity")  # as stokes_3d_body_force: walls at rest, f = (0, 0, -1)
    still["oracle_config"]["pde"] = {"type": "stokes", "source_term": [0.0, 0.0, -1.0], "pde_params": {"nu": 1.0}}
    still["oracle_config"]["bc"] = {"dirichlet": {"on": "all", "value": [0.0, 0.0, 0.0]}}
    box = pc.poisson3("box_poisson")
    box["oracle_config"]["domain"] = {"type": "box"}
    flat = pc.poisson3("cube_poisson_2d_forcing")  # the published 3D records' defect: no z derivatives
    flat["oracle_config"]["pde"]["source_term"] = str(
        sp.expand(-sp.diff(pc.SMOOTH_U, x, 2) - sp.diff(pc.SMOOTH_U, y, 2))
    )
    divergent = pc.stokes3("cube_stokes_divergent")  # as stokes_3d_multifreq: its u is not divergence-free
    divergent["oracle_config"]["pde"]["manufactured_solution"]["u"] = [
        "2*sin(pi*x)*cos(2*pi*y)*cos(pi*z)",
        "-2*cos(pi*x)*sin(2*pi*y)*cos(pi*z)",
        "0",
    ]
    linear_in_z = pc.elasticity3("cube_elasticity_linear_in_z")  # as le_3d_asymmetric_mms: u_y is linear in z
    u = [x * (1 - x) * y * (1 - y) * z * (1 - z), x**2 * (1 - x) * y * (1 - y) * z, x * y**2 * (1 - y) * z * (1 - z)]
    linear_in_z["oracle_config"]["pde"]["manufactured_solution"]["u"] = [str(c) for c in u]
    linear_in_z["oracle_config"]["pde"]["source_term"] = [str(c) for c in pc.elasticity_forcing(u)]
    return [
        pc.poisson3("cube_poisson", kappa=1 + x * z / 2),
        flat,
        pc.poisson3("cube_poisson_linear_in_x", u=x * sp.exp(y) * sp.sin(z) + 1),
        pc.heat3("cube_heat"),
        pc.elasticity3("cube_elasticity"),
        pc.stokes3("cube_stokes"),
        pc.helmholtz3("cube_helmholtz"),
        pc.convection3("cube_convection"),
        numerical,
        still,
        transient,
        box,
        divergent,
        linear_in_z,
    ]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("import3d")
    source = folder / "benchmark_v2.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in _records()) + "\n")
    res = runner.invoke(app, ["cases", "import", str(source), "--out", str(folder / "cases")])
    assert res.exit_code == 0, res.output
    (folder / "output.txt").write_text(res.output)
    return folder / "cases"


def test_every_family_imports_on_the_cube_and_the_rest_is_excluded_with_its_reason(imported: Path) -> None:
    report = json.loads((imported / published_import.REPORT_FILE).read_text())
    assert (report["read"], report["imported"], report["leak_free"], report["excluded"]) == (14, 10, 8, 4)
    excluded = dict(report["excluded_cases"])
    div = excluded.pop("cube_stokes_divergent")
    assert (
        div
        == "manufactured velocity not divergence-free: div u = -2*pi*cos(pi*x)*cos(2*pi*y)*cos(pi*z); no flow solution has it"
    )
    assert excluded == {
        # no solution, and the series (cube_series.py) solves zero face data only
        "cube_heat_numerical": "numerical reference not built in 3D: its boundary data is not zero Dirichlet on "
        f"faces x0, x1, y1, z1; {published_cube.NUMERICAL_REASON_LIMIT}",
        # its velocity is zero by its own data: the pressure -z balances the forcing
        "cube_stokes_gravity": "record defect: its scored field, the velocity magnitude u, is zero: the velocity "
        "data is zero on every wall, and the forcing ['0.0', '0.0', '-1.0'] is the gradient of phi = -1.0*z, so "
        "u = 0 and the pressure phi + c balances it; no relative error of u is defined",
        "box_poisson": "domain not in the track: box in 3D (the track's one 3D domain is the unit cube)",
    }
    # linear in x: the blend is exact in x, so it is the solution itself; no face data can help that
    prefix = "the boundary blend passes the accuracy gate (error "
    leaking = dict(report["marked_leaking"])
    how = leaking.pop("cube_poisson_linear_in_x")
    assert how.startswith(prefix) and float(how[len(prefix) : -1]) < 1e-12
    # the blend of a component linear in z is that component: the magnitude is far off, the component given
    assert leaking == {
        "cube_elasticity_linear_in_z": "the case_spec states the solution's component 1, "
        "x**2*y*z*(1 - x)*(1 - y), as a boundary value or datum"
    }
    assert report["decisions"]["forcing_derived_from_the_solution"] == ["cube_poisson_2d_forcing"]
    output = (imported.parent / "output.txt").read_text()
    assert (
        "  decision: forcing derived from the manufactured solution, as the published oracle solves "
        '(3D records stating another): 1 ["cube_poisson_2d_forcing"]'
    ) in output


def test_a_cube_case_has_six_faces_a_3d_grid_and_the_published_3d_view(imported: Path) -> None:
    cases = {c.task_id: c for c in load_cases(imported)}
    for case_id in ("cube_poisson", "cube_heat", "cube_elasticity", "cube_stokes"):
        case = cases[case_id]
        data = case.spec_data()
        assert [p["name"] for p in data["boundary"]] == FACE_NAMES
        assert [p["face"] for p in data["boundary"]] == [
            {"axis": a, "at": v} for a in ("x", "y", "z") for v in (0.0, 1.0)
        ]
        assert all("segment" not in p for p in data["boundary"])
        assert data["grid"] == {"nx": 9, "ny": 9, "nz": 9, "bbox": [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]}
        assert data["domain"]["type"] == data["domain"]["name"] == "unit_cube"
        assert data["output"]["grid"] == pc.CUBE_GRID
        assert {k: v["shape"] for k, v in data["output"]["fields"].items()} == {"u": [9, 9, 9]}
        hidden, arrays = store.load_hidden(imported, case_id)
        assert arrays["u"].shape == (9, 9, 9) and hidden.in_domain_points == 729
        assert hidden.calibration["dolfinx"].solver.endswith("@4")  # 8 grid spacings: 4 P2 cells
        assert hidden.calibration["dolfinx"].e_base < 0.01
    # the vector families keep the published output, the magnitude; Stokes compares that alone
    assert data["output"]["field"] == "u_mag"
    assert cases["cube_stokes"].spec.equation.endswith(
        "the output u is |u|, the velocity magnitude (p is not compared)"
    )
    assert cases["cube_elasticity"].spec.equation.endswith("the output is |u|, the displacement magnitude")
    heat = cases["cube_heat"].spec
    assert heat.time is not None and (heat.time.t0, heat.time.t_end) == (0.0, 0.1)
    # the transient variant of convection-diffusion, started from the solution at t0 as its oracle does
    moving = cases["cube_convection_transient"].spec
    assert moving.time is not None and (moving.time.t0, moving.time.t_end) == (0.0, 0.1)
    assert moving.initial == "1.0*y*z*exp(x/2) + sin(pi*x)*sin(pi*y)*sin(pi*z)"
    assert moving.equation.startswith(
        "du/dt - eps lap(u) + b . grad u = f in the domain for t0 < t <= t_end, b = (b[0], b[1], b[2]);"
    )


def test_the_published_value_is_the_solution_on_every_face_not_inside(imported: Path) -> None:
    cases = {c.task_id: c for c in load_cases(imported)}
    s = np.linspace(0, 1, 7)
    A, B = np.meshgrid(s, s)
    for case_id, solution in (("cube_poisson", pc.SMOOTH_U), ("cube_heat", pc.HEAT_U)):
        data = cases[case_id].spec_data()
        # read as published programs read it: sympify, lambdify with numpy
        blend = sp.lambdify((x, y, z, t), sp.sympify(data["bc"]["dirichlet"]["value"]), "numpy")
        exact = sp.lambdify((x, y, z, t), solution, "numpy")
        for face in range(6):
            at = np.full_like(A, face % 2)
            pts = [(at, A, B), (A, at, B), (A, B, at)][face // 2]
            assert np.allclose(blend(*pts, 0.1), exact(*pts, 0.1), atol=1e-12)
        hidden, arrays = store.load_hidden(imported, case_id)
        view = {"bc": data["bc"]}
        gap = published.blend_error(view, cases[case_id].spec, arrays["u"], cube.grid_mask(cases[case_id].spec.grid))
        assert gap > 10 * hidden.calibration["dolfinx"].tau_acc  # fails the accuracy gate inside, by far


def test_a_source_term_without_z_derivatives_is_replaced_by_the_solutions_in_both_halves(imported: Path) -> None:
    cases = {c.task_id: c for c in load_cases(imported)}
    flat, right = cases["cube_poisson_2d_forcing"].spec_data(), cases["cube_poisson"].spec_data()
    derived = sp.sympify(flat["forcing"])
    want = sp.expand(-sum(sp.diff(pc.SMOOTH_U, s, 2) for s in (x, y, z)))
    assert sp.simplify(derived - want) == 0
    assert flat["pde"]["source_term"] == flat["forcing"]
    assert right["pde"]["source_term"] == str(
        sp.expand(-sum(sp.diff((1 + x * z / 2) * sp.diff(pc.SMOOTH_U, s), s) for s in (x, y, z)))
    )


def test_cases_validate_passes_on_the_imported_cube_cases(imported: Path) -> None:
    res = runner.invoke(app, ["cases", "validate", "--cases", str(imported), "--no-calibration"])
    assert res.exit_code == 0, res.output


def test_every_cube_calibration_solver_passes_its_own_three_gates_through_the_sandbox(imported: Path) -> None:
    res = runner.invoke(app, ["cases", "calibrate", "--cases", str(imported), "--repeats", "1"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["cases", "validate", "--cases", str(imported)])
    assert res.exit_code == 0, res.output
    assert "10 calibration solves pass their own gates" in res.output


def test_3d_outputs_are_checked_for_shape_and_finiteness_and_compared_over_the_whole_grid() -> None:
    contract = OutputContract(fields={"u": FieldSpec(shape=(5, 4, 3))}, layout="")
    mask = np.ones((5, 4, 3), dtype=bool)
    ref = {"u": np.arange(60.0).reshape(5, 4, 3) + 1}
    flat = gates.check_output({"u": np.zeros((4, 3))}, contract, mask)
    assert (flat.passed, flat.reason, flat.detail) == (
        False,
        "wrong_shape",
        "output['u'] has shape (4, 3), expected (5, 4, 3)",
    )
    holed = ref["u"].copy()
    holed[4, 3, 2] = np.nan
    nan = gates.check_output({"u": holed}, contract, mask)
    assert (nan.passed, nan.detail) == (False, "output['u'] is NaN or infinite at 1 in-domain grid points")
    off = ref["u"].copy()
    off[0, 0, 0] += 1.0
    assert gates.contract_error({"u": off}, ref, contract, mask, 1e-300) == pytest.approx(1 / np.linalg.norm(ref["u"]))


def test_a_published_3d_program_scores_unchanged_and_the_published_bc_value_fails_accuracy(
    imported: Path, tmp_path: Path
) -> None:
    docs = (Path(__file__).parent.parent / "docs" / "pde_import.md").read_text()
    assert pc.PUBLISHED_CUBE_PROGRAM.strip() in docs  # the docs show this very program
    timing.save(
        imported,
        timing.MachineCalibration(
            machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={"cube_poisson": {"dolfinx": 60.0}}
        ),
    )
    programs = tmp_path / "programs"
    programs.mkdir()
    (programs / "cube_poisson_dolfinx_correct.py").write_text(pc.PUBLISHED_CUBE_PROGRAM)
    (programs / "cube_poisson_dolfinx_bcvalue.py").write_text(pc.PUBLISHED_CUBE_BC_ANSWER)
    out = tmp_path / "scores.json"
    res = runner.invoke(app, ["score", str(programs), "--cases", "--cases-path", str(imported), "--json", str(out)])
    assert res.exit_code == 0, res.output
    outcomes = json.loads(out.read_text())["outcomes"]
    verdicts = {
        key.split("/")[0]: [(s["stage"], s["passed"], s["reason"]) for s in by_case["cube_poisson"]["stages"]]
        for key, by_case in outcomes.items()
    }
    assert verdicts == {
        "correct": [("executes", True, None), ("accurate", True, None), ("fast", True, None)],
        "bcvalue": [("executes", True, None), ("accurate", False, "too_inaccurate")],
    }

"""`cases import` of the boundary and time data (tests/published_records_bc.py):
transient reaction- and convection-diffusion with the record's reaction term,
interval and initial data; edges a per-edge list leaves out, with the condition
the published oracle applies there (do-nothing for a flow, traction-free for
elasticity); the biharmonic's second condition (lap u = 0 for a record without a
solution); the leak probe on initial fields; a transient reference over the
import's budget refused with its numbers; and a published-contract program for a
transient reaction-diffusion record scored unchanged on the imported case."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import published_records as pr
import published_records_bc as bc
import pytest
import sympy as sp
from typer.testing import CliRunner

from fembench_agents.cases import published, published_import, store, timing
from fembench_agents.cases.domains import DOMAINS, grid_mask
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.leak import probe
from fembench_agents.cases.problem import load_cases
from fembench_agents.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("import_bc")
    source = folder / "benchmark_v2.jsonl"
    source.write_text("\n".join(bc.records()) + "\n")
    res = runner.invoke(app, ["cases", "import", str(source), "--out", str(folder / "cases")])
    assert res.exit_code == 0, res.output
    return folder / "cases"


def _report(imported: Path) -> dict:
    return json.loads((imported / published_import.REPORT_FILE).read_text())


def _cases(imported: Path) -> dict:
    return {c.task_id: c for c in load_cases(imported)}


def test_the_new_shapes_import_and_what_is_left_out_names_its_numbers(imported: Path) -> None:
    report = _report(imported)
    assert (report["read"], report["imported"], report["leak_free"]) == (7, 6, 4)
    assert report["excluded_cases"] == {
        "rd_numerical_long": "numerical reference refused: its 4x solve would take 239 Newton time steps of "
        "635209 unknowns (1.5e+08, over the import's budget of 2e+07)"
    }
    assert sorted(report["numerical_references"]) == [
        "biharmonic_simply_supported",
        "elasticity_compression",
        "stokes_channel",
    ]
    # the channel's inflow profile is its whole solution (Poiseuille): the solves agree to rounding
    assert report["numerical_references"]["stokes_channel"] < 1e-10


def test_a_transient_reaction_diffusion_record_keeps_its_reaction_interval_and_initial_field(imported: Path) -> None:
    case = _cases(imported)["rd_cubic"]
    spec = case.spec
    assert spec.family == "reaction_diffusion" and spec.coefficients == {"D": 0.1, "R": "2.0*u**3 + 1.0*u"}
    assert spec.time is not None and (spec.time.t0, spec.time.t_end) == (0.0, 0.2)
    assert spec.initial == "sin(pi*x)*cos(2*y)"
    assert spec.equation == (
        "du/dt - D lap(u) + R(u) = f in the domain for t0 < t <= t_end, R the given function of u; "
        "u = g on every boundary piece; u = u0 at t = t0; the output is u at t = t_end"
    )
    # the published dt and reaction stay in the published view only: ours steps with the grid
    assert case.spec_data()["pde"]["time"] == bc.TIME
    assert case.spec_data()["pde"]["pde_params"]["reaction"] == bc.CUBIC
    hidden, arrays = store.load_hidden(imported, "rd_cubic")
    assert (hidden.reference_kind, hidden.leak) == ("manufactured", None)
    # Crank-Nicolson, at least 0.3 steps per grid interval (8 steps to t = 0.2 on 24 intervals; one per
    # grid spacing would be 5, e_base 2.8641e-05), P2 on 12 cells
    assert hidden.calibration["dolfinx"].e_base == pytest.approx(1.3493e-05, rel=1e-3)
    s = np.linspace(0, 1, 25)
    X, Y = np.meshgrid(s, s)
    exact = compile_expr(str(bc.RD_U))(x=X, y=Y, t=0.2)
    assert np.allclose(arrays["u"], exact, atol=1e-12)


def test_a_transient_convection_diffusion_record_keeps_eps_beta_and_its_interval(imported: Path) -> None:
    spec = _cases(imported)["cd_transient"].spec
    assert spec.equation.startswith("du/dt - eps lap(u) + b . grad u = f in the domain for t0 < t <= t_end")
    assert spec.coefficients["eps"] == 0.1 and spec.time is not None and spec.time.t_end == 0.2
    hidden, _ = store.load_hidden(imported, "cd_transient")
    # 8 steps as rd_cubic's (5 gave 3.2251e-05); Peclet 0.33 on 12 cells, so no SUPG
    assert hidden.leak is None and hidden.calibration["dolfinx"].e_base == pytest.approx(1.7605e-05, rel=1e-3)


def test_an_initial_field_that_is_a_multiple_of_the_answer_marks_the_case_leaking(imported: Path) -> None:
    # exp(-t) sin(pi x) sin(pi y): the initial field scaled by exp(-0.2) is u(t_end), whatever the boundary
    leak = _report(imported)["marked_leaking"]["rd_separable"]
    prefix = "initial passes the accuracy gate (error "
    assert leak.startswith(prefix) and float(leak[len(prefix) : -1]) < 1e-12


def test_the_leak_probe_evaluates_initial_fields_and_natural_data_and_none_passes_on_a_leak_free_case(
    imported: Path,
) -> None:
    cases = _cases(imported)
    for case_id in ("rd_cubic", "elasticity_compression"):
        spec = cases[case_id].spec
        hidden, arrays = store.load_hidden(imported, case_id)
        mask = grid_mask(DOMAINS[spec.domain.name], spec.grid)
        probes = {p.source: p.error for p in probe(spec, arrays["u"], mask)}
        tau = hidden.calibration["dolfinx"].tau_acc
        assert min(probes.values()) > tau
        if case_id == "rd_cubic":
            assert probes["initial"] > 10 * tau and "coefficients[R]" in probes
        else:  # the traction-free sides' data is probed like any other piece's
            assert {"boundary[right][0]", "boundary[left][1]"} <= set(probes)


def test_edges_a_list_leaves_out_get_the_oracle_s_natural_condition(imported: Path) -> None:
    cases = _cases(imported)
    channel, plate = cases["stokes_channel"].spec, cases["elasticity_compression"].spec
    assert [(p.name, p.kind, p.value) for p in channel.boundary] == [
        ("bottom", "dirichlet", ["0.0", "0.0"]),
        ("right", "do-nothing", ["0", "0"]),
        ("top", "dirichlet", ["0.0", "0.0"]),
        ("left", "dirichlet", ["4*y*(1-y)", "0.0"]),
    ]
    assert channel.equation.endswith(
        "on a piece of kind do-nothing nu du/dn - p n = g (a pair), n the outward unit normal (g = 0: an open "
        "outflow); the output u is |u|, the velocity magnitude (p is not compared)"
    )
    assert sorted(channel.output.fields) == ["u"]
    assert [(p.name, p.kind) for p in plate.boundary if p.kind != "dirichlet"] == [
        ("right", "neumann"),
        ("left", "neumann"),
    ]
    assert "on a piece of kind neumann sigma(u) n = g, n the outward unit normal (g a pair: the traction, 0 " in (
        plate.equation
    )
    # the published view keeps the list as published: the open edges are those it does not name
    assert [e["on"] for e in cases["stokes_channel"].spec_data()["bc"]["dirichlet"]] == ["x0", "y0", "y1"]


def test_a_biharmonic_record_without_a_solution_is_simply_supported_as_its_oracle_solves_it(imported: Path) -> None:
    case = _cases(imported)["biharmonic_simply_supported"]
    assert [p.value for p in case.spec.boundary] == [["0.0", "0"]] * 4
    assert case.spec_data()["bc"] == {
        "dirichlet": {"on": "all", "value": "0.0"},
        "laplacian": {"on": "all", "value": "0"},
    }
    hidden, _ = store.load_hidden(imported, "biharmonic_simply_supported")
    assert hidden.reference_kind == "numerical" and hidden.reference_check is not None


def test_a_published_contract_program_for_transient_reaction_diffusion_scores_unchanged(
    imported: Path, tmp_path: Path
) -> None:
    timing.save(
        imported,
        timing.MachineCalibration(
            machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={"rd_cubic": {"dolfinx": 60.0}}
        ),
    )
    programs = tmp_path / "programs"
    programs.mkdir()
    (programs / "rd_cubic_dolfinx_published.py").write_text(bc.PUBLISHED_TRANSIENT_RD)
    out = tmp_path / "scores.json"
    res = runner.invoke(app, ["score", str(programs), "--cases", "--cases-path", str(imported), "--json", str(out)])
    assert res.exit_code == 0, res.output
    outcome = json.loads(out.read_text())["outcomes"]["published/dolfinx"]["rd_cubic"]
    assert [(s["stage"], s["passed"], s["reason"]) for s in outcome["stages"]] == [
        ("executes", True, None),
        ("accurate", True, None),
        ("fast", True, None),
    ]
    assert outcome["solver_info"]["time_steps"] == 40


def test_burgers_without_an_interval_gets_its_oracle_s_default_and_the_view_states_it(tmp_path: Path) -> None:
    record = json.loads(next(r for r in pr.records() if '"burgers_untimed"' in r))
    spec, view, _ = published.convert(record, published.ImportReport())
    assert spec.time is not None and (spec.time.t0, spec.time.t_end) == (0.0, 0.1)
    assert view["pde"]["time"] == {"t0": 0.0, "t_end": 0.1}
    assert "time" not in record["oracle_config"]["pde"]


def test_a_manufactured_biharmonic_record_states_lap_u_per_piece_and_as_a_blend_in_its_view() -> None:
    u = pr.x**2 * pr.y**3 - pr.x * pr.y + sp.cos(pr.x + 2 * pr.y)
    spec, view, solution = published.convert(pr.biharmonic("plate", u), published.ImportReport())
    assert [str(c) for c in solution] == [str(u)]
    assert [(p.name, p.value) for p in spec.boundary] == [
        ("bottom", ["cos(x)", "-5*cos(x)"]),
        ("right", ["y**3 - y + cos(2*y + 1)", "2*y**3 + 6*y - 5*cos(2*y + 1)"]),
        ("top", ["x**2 - x + cos(x + 2)", "6*x**2 - 5*cos(x + 2) + 2"]),
        ("left", ["cos(2*y)", "2*y**3 - 5*cos(2*y)"]),
    ]
    lap = compile_expr(str(sp.diff(u, pr.x, 2) + sp.diff(u, pr.y, 2)))
    blend = compile_expr(view["bc"]["laplacian"]["value"])
    s = np.linspace(0, 1, 21)
    for bx, by in ((s, 0 * s), (s, 0 * s + 1), (0 * s, s), (0 * s + 1, s)):
        assert np.allclose(blend(x=bx, y=by), lap(x=bx, y=by), atol=1e-12)
    # the boundary's Laplacian, not the interior's: they differ at the centre
    assert float(blend(x=0.5, y=0.5)) - float(lap(x=0.5, y=0.5)) == pytest.approx(0.0199037, rel=1e-5)

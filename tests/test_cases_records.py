"""The committed PDE cases: coverage, leak-freedom of every case, the two
halves kept apart, builds byte-for-byte reproducible on one machine and the
same record up to floating point on another, and the builder's refusals."""

from __future__ import annotations

import json
import shutil
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from fembench_agents.cases import store, validation
from fembench_agents.cases.builder import BUILDER_VERSION, Built, build_all, build_case, make_spec, same_record
from fembench_agents.cases.domains import DOMAINS, grid_mask, grid_points
from fembench_agents.cases.expressions import ExpressionError, compile_expr
from fembench_agents.cases.leak import leaks, probe
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import CURVED_DOMAINS, FAMILIES, CaseFile, GridSpec
from fembench_agents.cases.model import DOMAINS as DOMAIN_NAMES
from fembench_agents.cases.own_curved import case_mask
from fembench_agents.cases.tracks import CONTRACT

CASES = Path(__file__).resolve().parent.parent / "cases"
DEFS = store.load_definitions(CASES)
SPECS = {s.id: s for s in store.load_specs(CASES)}


def test_coverage() -> None:
    assert len(DEFS) == 177
    domains: dict[str, set[str]] = defaultdict(set)
    for d in DEFS:
        domains[d.family].add(d.domain)
    assert set(domains) == set(FAMILIES) and len(FAMILIES) == 11
    assert all(len(v) >= 2 for v in domains.values()), domains
    assert {d.domain for d in DEFS} == {*DOMAIN_NAMES, *CURVED_DOMAINS} and len(DOMAIN_NAMES) == 6
    # every family on the disk and on the annulus; every family on at least one curved domain
    assert all({"circle", "annulus"} <= v for v in domains.values()), domains
    assert sum(bool(d.periodic) for d in DEFS) == 6
    assert [(d.id, d.grid.shape) for d in DEFS if d.domain == "unit_cube"] == [
        ("cd_cube_outlet", (17, 17, 17)),
        ("cd_cube_transient", (17, 17, 17)),
        ("el_cube_traction", (17, 17, 17)),
        ("heat_cube_modes", (17, 17, 17)),
        ("hz_cube_robin", (17, 17, 17)),
        ("po_cube_mixed", (17, 17, 17)),
        ("rd_cube_robin", (17, 17, 17)),
        ("rd_cube_transient", (17, 17, 17)),
        ("st_cube_curl", (17, 17, 17)),
    ]  # each on dolfinx, ngsolve and scikit-fem but Stokes, DOLFINx's alone (tests/test_cases_own_cube.py)
    assert {d.id for d in DEFS} == set(SPECS)
    assert sum(d.data is not None for d in DEFS) == 19


@pytest.mark.parametrize("case", [d for d in DEFS if d.data is not None], ids=lambda c: c.id)
def test_a_numerical_reference_is_far_below_the_strictest_accuracy_gate(case: CaseFile) -> None:
    hidden, _ = store.load_hidden(CASES, case.id)
    check = hidden.reference_check
    assert hidden.reference_kind == "numerical" and hidden.solution is None and check is not None
    strictest = min(c.tau_acc for c in hidden.calibration.values())
    assert check.refinements == (1, 2, 4) and check.distances_to_finest[-1] == 0.0
    assert check.error_estimate == check.distances_to_finest[1] <= check.threshold
    assert check.threshold == pytest.approx(0.05 * strictest, rel=1e-3)
    assert check.distances_to_finest[1] < check.distances_to_finest[0] / 2  # the solves converge


@pytest.mark.parametrize("case", DEFS, ids=lambda c: c.id)
def test_no_agent_visible_expression_passes_the_accuracy_gate(case: CaseFile) -> None:
    """Each expression (forcing, boundary pieces, coefficients, initial data) on the
    whole grid, best scalar multiple by least squares, fails the most lenient gate."""
    spec = SPECS[case.id]
    hidden, arrays = store.load_hidden(CASES, case.id)
    mask = case_mask(case.domain, case.grid)
    tau = max(c.tau_acc for c in hidden.calibration.values())
    assert set(arrays) == set(spec.output.fields)
    for name, field in spec.output.fields.items():
        probes = probe(spec, arrays[name], mask, field.up_to_constant)
        n_expr = (
            1 + sum(p.value is not None for p in spec.boundary) + len(spec.coefficients) + (spec.initial is not None)
        )
        assert len(probes) >= n_expr
        worst = min(probes, key=lambda p: p.error)
        assert worst.error > tau, f"{worst.source} reproduces {name} to {worst.error:.2e} <= {tau:.2e}"


def test_the_leak_check_reads_data_at_t_end_and_a_pressure_up_to_its_constant() -> None:
    heat = SPECS["heat_square_jump"]  # t from 0 to 0.25
    X, Y = grid_points(heat.grid)
    mask = grid_mask(DOMAINS["unit_square"], heat.grid)
    # a forcing that is zero at t0 and the solution at t_end
    leaky = heat.model_copy(update={"forcing": "4*t*(x**2 + y)"})
    found = leaks(leaky, {"u": X**2 + Y}, mask, 1e-3)
    assert [(p.source, p.error) for p in found] == [("forcing", pytest.approx(0.0, abs=1e-12))]
    cavity = SPECS["st_square_cavity"]
    mask = grid_mask(DOMAINS["unit_square"], cavity.grid)
    X, Y = grid_points(cavity.grid)
    # a forcing component that is the pressure but for its constant, which the gate does not judge
    leaky = cavity.model_copy(update={"forcing": ["x*y", "0"]})
    found = leaks(leaky, {"u": np.stack([np.sin(3 * X), Y**3]), "p": X * Y + 5.0}, mask, 1e-3)
    assert [p.source for p in found] == ["forcing[0] as p"]


def test_validate_checks_leaks_at_the_most_lenient_librarys_threshold(tmp_path: Path) -> None:
    case = "poisson_square_smooth"
    for sub in (store.DEFINITIONS, store.HIDDEN):
        (tmp_path / sub).mkdir()
    shutil.copy(CASES / store.DEFINITIONS / f"{case}.toml", tmp_path / store.DEFINITIONS)
    shutil.copy(CASES / store.HIDDEN / f"{case}.npz", tmp_path / store.HIDDEN)
    (tmp_path / store.SPECS_FILE).write_text(SPECS[case].model_dump_json() + "\n")
    hidden = json.loads((CASES / store.HIDDEN / f"{case}.json").read_text())
    # one library so loose that its gate passes any multiple of the forcing; the others as recorded
    hidden["calibration"]["numpy-scipy"]["tau_acc"] = 2.0
    (tmp_path / store.HIDDEN / f"{case}.json").write_text(json.dumps(hidden))
    found = validation.problems(tmp_path, rebuild=False)
    assert found[:2] == ["only 1 cases; the track needs at least 110", "family poisson on fewer than two domains"]
    assert found[2].startswith(f"{case}: forcing passes the accuracy gate (error ")


@pytest.mark.parametrize("case", DEFS, ids=lambda c: c.id)
def test_spec_holds_nothing_evaluator_only(case: CaseFile) -> None:
    spec = SPECS[case.id]
    hidden, arrays = store.load_hidden(CASES, case.id)
    text = spec.model_dump_json()
    for sol in hidden.solution if isinstance(hidden.solution, list) else [hidden.solution] * bool(hidden.solution):
        assert sol not in text
    # the gates' alpha_acc and alpha_time; a Robin piece's own `alpha` is data the solver needs
    for word in ("e_base", "tau", "t_base", "manufactured", "reference", "alpha_"):
        assert word not in text
    assert case.note == "" or case.note not in text
    mask = case_mask(case.domain, case.grid)
    for name, u in arrays.items():
        assert np.isnan(u[..., ~mask]).all() and np.isfinite(u[..., mask]).all()
        assert u.shape == spec.output.fields[name].shape
    # boundary data are per piece: the fixed coordinate is substituted away
    for piece in spec.boundary if case.manufactured else ():
        if piece.value is None:  # a periodic piece: tests/test_cases_own_curved.py
            continue
        if piece.face is not None:  # a face of the cube: its axis is fixed
            fixed = piece.face.axis
        elif piece.segment is None:  # an arc's trace: tests/test_cases_own_curved.py
            continue
        else:
            (ax, _), (bx, _) = piece.segment
            fixed = "x" if ax == bx else "y"
        for v in piece.value if isinstance(piece.value, list) else [piece.value]:
            assert fixed not in v.replace("exp", ""), (piece.name, v)


# one case of every family and domain, manufactured and numerical (`cases validate` rebuilds them all)
SAMPLE = (
    "poisson_square_smooth", "heat_lshape_slow", "cd_hole_layer", "rd_channel_cubic", "el_cross_shear",
    "hz_square_k4", "bh_lshape_exp", "st_hole_exp", "ns_channel_re10", "bg_cross_wave", "wv_square_travel",
    "poisson_channel_inflow", "heat_square_jump", "st_square_cavity",
)  # fmt: skip


def _sample_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "cases"
    (copy / store.DEFINITIONS).mkdir(parents=True)
    for case_id in SAMPLE:
        shutil.copy(CASES / store.DEFINITIONS / f"{case_id}.toml", copy / store.DEFINITIONS)
    return copy


def test_build_is_byte_for_byte_reproducible_and_incremental(tmp_path: Path) -> None:
    copy = _sample_copy(tmp_path)
    seen: list[tuple[str, bool]] = []
    build_all(copy, progress=lambda case_id, reused: seen.append((case_id, reused)))
    assert seen == [(c, False) for c in sorted(SAMPLE)]
    fresh_specs = {s.id: s for s in store.load_specs(copy)}
    for case_id in SAMPLE:
        hidden, arrays = store.load_hidden(copy, case_id)
        fresh = Built(spec=fresh_specs[case_id], hidden=hidden, reference=arrays, npz=b"")
        assert same_record(fresh, SPECS[case_id], *store.load_hidden(CASES, case_id)), case_id
    committed = {json.loads(line)["id"]: line for line in (CASES / store.SPECS_FILE).read_text().splitlines()}
    assert (copy / store.SPECS_FILE).read_text().splitlines() == [committed[c] for c in sorted(SAMPLE)]
    assert not list((copy / store.HIDDEN).glob("*.tmp"))
    # unchanged definitions are reused; a changed one (even a comment) is rebuilt; --force rebuilds all
    edited = copy / store.DEFINITIONS / "hz_square_k4.toml"
    edited.write_text(edited.read_text() + "# edited\n")
    seen.clear()
    build_all(copy, progress=lambda case_id, reused: seen.append((case_id, reused)))
    assert [c for c, reused in seen if not reused] == ["hz_square_k4"]
    hidden, _ = store.load_hidden(copy, "hz_square_k4")
    assert hidden.definition_sha256 == store.sha256(edited.read_bytes()) and hidden.builder_version == BUILDER_VERSION
    seen.clear()
    files = [copy / store.HIDDEN / f"wv_square_travel.{ext}" for ext in ("json", "npz")]
    before = [f.read_bytes() for f in files]
    build_all(copy, only=["wv_square_travel"], force=True, progress=lambda c, reused: seen.append((c, reused)))
    assert seen == [("wv_square_travel", False)]
    assert [f.read_bytes() for f in files] == before  # on one machine, byte for byte


def test_a_record_is_the_same_up_to_the_last_bits_of_floating_point_and_nothing_more() -> None:
    """What another machine's kernels change (the last bits of the reference, the
    last kept digit of an e_base) is the same record; anything larger is not."""
    case_id = "bh_lshape_exp"
    spec, (hidden, arrays) = SPECS[case_id], store.load_hidden(CASES, case_id)
    u = arrays["u"]
    scale = float(np.nanmax(np.abs(u)))

    def built(**change: object) -> Built:
        reference = {"u": change.pop("u", u)}
        return Built(
            spec=change.pop("spec", spec),  # type: ignore[arg-type]
            hidden=hidden.model_copy(update=change),
            reference=reference,  # type: ignore[dict-item]
            npz=b"",
        )

    library = next(iter(hidden.calibration))
    e_base = hidden.calibration[library].e_base

    def calibration(e: float) -> dict[str, object]:
        return {**hidden.calibration, library: hidden.calibration[library].model_copy(update={"e_base": e})}

    nudged = u.copy()
    nudged[np.isfinite(u)] += 1e-10 * scale
    assert same_record(built(u=nudged, reference_sha256="another machine's bytes"), spec, hidden, arrays)
    assert same_record(built(calibration=calibration(e_base * (1 + 1e-4))), spec, hidden, arrays)
    off = u.copy()
    off[np.isfinite(u)] += 1e-8 * scale
    assert not same_record(built(u=off), spec, hidden, arrays)
    moved = u.copy()
    moved[np.argwhere(np.isfinite(u))[0][0], np.argwhere(np.isfinite(u))[0][1]] = np.nan
    assert not same_record(built(u=moved), spec, hidden, arrays)
    assert not same_record(built(calibration=calibration(e_base * 1.01)), spec, hidden, arrays)
    assert not same_record(built(in_domain_points=hidden.in_domain_points + 1), spec, hidden, arrays)
    assert not same_record(built(spec=spec.model_copy(update={"equation": spec.equation + "."})), spec, hidden, arrays)


def test_reference_hash_is_checked(tmp_path: Path) -> None:
    copy = tmp_path / "cases"
    shutil.copytree(CASES, copy, ignore=shutil.ignore_patterns("calibration"))
    npz = copy / store.HIDDEN / "hz_square_k4.npz"
    data = bytearray(npz.read_bytes())
    data[-1] ^= 0xFF
    npz.write_bytes(bytes(data))
    with pytest.raises(store.CaseStoreError, match="hash"):
        store.load_hidden(copy, "hz_square_k4")


def _case(**kw: object) -> CaseFile:
    base: dict[str, object] = {
        "id": "t",
        "family": "poisson",
        "domain": "unit_square",
        "coefficients": {"k": 1},
        "libraries": ["numpy-scipy"],
        "grid": {"nx": 33, "ny": 33},
    }
    return CaseFile.model_validate({**base, **kw})


def test_a_case_grid_must_put_every_domain_corner_on_a_grid_point() -> None:
    u = {"u": "x*y"}
    assert _case(manufactured=u, grid={"nx": 17, "ny": 41}).grid.ny == 41  # 16 and 40 cells: multiples of 8
    for nx, ny in ((33, 36), (36, 33)):
        with pytest.raises(ValueError, match=r"nx - 1 and ny - 1 must be multiples of 8"):
            _case(manufactured=u, grid={"nx": nx, "ny": ny})


def test_a_grid_box_has_two_bounds_per_dimension_and_our_own_cases_keep_the_unit_square() -> None:
    assert GridSpec(nx=50, ny=40, bbox=(-0.8, 0.8, -0.8, 0.8)).shape == (40, 50)
    cube = GridSpec(nx=20, ny=21, nz=22, bbox=(0, 1, 0, 1, 0, 1))
    assert (cube.dim, cube.shape) == (3, (22, 21, 20))
    assert json.loads(GridSpec(nx=9, ny=9).model_dump_json()) == {"nx": 9, "ny": 9, "bbox": [0.0, 1.0, 0.0, 1.0]}
    assert cube.model_dump()["nz"] == 22
    with pytest.raises(ValueError, match=r"bbox must have 4 values for a 2D grid"):
        GridSpec(nx=20, ny=20, bbox=(0, 1, 0, 1, 0, 1))
    with pytest.raises(ValueError, match=r"bbox must have 6 values for a 3D grid"):
        GridSpec(nx=20, ny=20, nz=20, bbox=(0, 1, 0, 1))
    with pytest.raises(ValueError, match=r"each lower bound below its upper"):
        GridSpec(nx=20, ny=20, bbox=(0, 1, 1, 1))
    with pytest.raises(ValueError, match=r"bbox must be \[0, 1, 0, 1\] for the track's own domains"):
        _case(manufactured={"u": "x*y"}, grid={"nx": 33, "ny": 33, "bbox": [0, 2, 0, 1]})


def test_a_reference_file_depends_on_its_arrays_not_on_the_order_they_were_made_in() -> None:
    u, p = np.arange(6.0).reshape(2, 3), np.ones((2, 2))
    assert store.npz_bytes({"u": u, "p": p}) == store.npz_bytes({"p": p, "u": u})
    assert store.npz_bytes({"u": u, "p": p}) != store.npz_bytes({"u": u, "p": 2 * p})


def test_builder_rejects_an_eigenfunction() -> None:
    case = _case(manufactured={"u": "sin(pi*x)*sin(2*pi*y)"})
    with pytest.raises(CaseDefinitionError, match="eigenfunction"):
        build_case(case, b"")


def test_builder_rejects_a_leaky_case() -> None:
    """Separable decay: the initial data is a multiple of the final solution."""
    case = _case(id="h", family="heat", time={"t0": 0, "t_end": 1}, manufactured={"u": "exp(-t)*(x**2 + y**3 + x*y)"})
    with pytest.raises(CaseDefinitionError, match="initial"):
        build_case(case, b"")


def test_boundary_data_is_not_the_interior_formula() -> None:
    spec = SPECS["poisson_square_smooth"]
    values = {p.name: p.value for p in spec.boundary}
    assert values["bottom"] == "sin(pi*x)" and values["left"] == "0"
    hidden, _ = store.load_hidden(CASES, "poisson_square_smooth")
    assert all(v != hidden.solution for v in values.values())


def test_the_solvers_contract_describes_step_as_the_reference_evaluates_it() -> None:
    step = compile_expr("step(x - 0.5)")(x=np.array([0.25, 0.5, 0.75]))
    assert step.tolist() == [0.0, 0.5, 1.0]
    words = " ".join(CONTRACT.split())
    assert "step (step(s) = 1 for s > 0, 0 for s < 0, 1/2 at 0); evaluate them with numpy." in words


def test_an_expression_is_nan_off_its_domain_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an import prints no line per NaN point
        value = compile_expr("sqrt(x)/(x - 1)")(x=np.array([-1.0, 1.0, 4.0]))
    assert np.isnan(value[0]) and np.isinf(value[1]) and value[2] == pytest.approx(2.0 / 3.0)


@pytest.mark.parametrize("bad", ["__import__('os')", "x.real", "open('f')", "[x]", "lambda: 1", "'s'"])
def test_expressions_are_checked(bad: str) -> None:
    with pytest.raises(ExpressionError):
        compile_expr(bad)


def test_bad_definition_names_the_problem(tmp_path: Path) -> None:
    (tmp_path / store.DEFINITIONS).mkdir()
    (tmp_path / store.DEFINITIONS / "oops.toml").write_text('id = "oops"\nfamily = "stokes"\n')
    with pytest.raises(store.CaseStoreError, match="oops.toml"):
        store.load_definitions(tmp_path)
    (tmp_path / store.DEFINITIONS / "oops.toml").write_text(
        'id = "other"\nfamily = "poisson"\ndomain = "unit_square"\nmanufactured = { u = "x" }\n'
    )
    with pytest.raises(store.CaseStoreError, match="file name"):
        store.load_definitions(tmp_path)


def test_elasticity_output_is_a_vector_field() -> None:
    spec = SPECS["el_lshape_trig"]
    assert spec.output.fields["u"].shape == (2, 65, 65)
    assert isinstance(spec.forcing, list) and len(spec.forcing) == 2
    assert json.loads(spec.model_dump_json())["boundary"][0]["value"][0]


def test_stokes_output_is_velocity_and_a_pressure_compared_up_to_a_constant() -> None:
    spec = SPECS["st_square_cavity"]
    assert {n: (f.shape, f.up_to_constant) for n, f in spec.output.fields.items()} == {
        "u": ((2, 33, 33), False),
        "p": ((33, 33), True),
    }
    assert spec.libraries == ("dolfinx", "ngsolve", "scikit-fem") and "up to a constant" in spec.equation
    top = next(p for p in spec.boundary if p.name == "top")
    assert top.value == ["16*x**2*(1 - x)**2", "0"]


def test_biharmonic_and_wave_data_come_in_pairs() -> None:
    bh = SPECS["bh_square_trig"]
    assert all(isinstance(p.value, list) and len(p.value) == 2 for p in bh.boundary)  # [u, lap(u)]
    assert bh.boundary[0].name == "bottom"
    assert bh.boundary[0].value == ["sin(pi*x)", "2*x - pi**2*sin(pi*x) - 4*sin(pi*x)"]
    wave = SPECS["wv_square_travel"]
    assert isinstance(wave.initial, list) and len(wave.initial) == 2


def test_a_stokes_solution_comes_from_a_stream_function() -> None:
    with pytest.raises(CaseDefinitionError, match="stream"):
        build_case(_case(family="stokes", coefficients={"nu": 1}, manufactured={"u": "x"}), b"")
    with pytest.raises(ValueError, match="give either u \\(with p for a flow on the unit cube\\), or stream and p"):
        _case(family="stokes", coefficients={"nu": 1}, manufactured={"stream": "x*y"})
    # a velocity with p is the unit cube's form (no 3D stream function); in 2D, and beside u of a
    # family without a pressure, it is refused
    flows = "Stokes and Navier-Stokes take `stream` and `p`; other families `u`"
    with pytest.raises(CaseDefinitionError, match=flows):
        build_case(_case(family="stokes", coefficients={"nu": 1}, manufactured={"u": ["y", "x"], "p": "x"}), b"")
    with pytest.raises(CaseDefinitionError, match=flows):
        build_case(_case(manufactured={"u": "x*y", "p": "x"}), b"")


@pytest.mark.parametrize("case_id", ["poisson-1", "poisson 1", "Poisson_1", "poisson_1/", "_poisson_1.", ""])
def test_a_case_id_is_lowercase_letters_digits_and_underscores_throughout(case_id: str) -> None:
    """It names files and selects cases on the command line."""
    with pytest.raises(ValueError, match="String should match pattern"):
        _case(id=case_id, manufactured={"u": "x*y"})
    assert _case(id="poisson_1_k2", manufactured={"u": "x*y"}).id == "poisson_1_k2"


def test_a_track_without_a_solver_for_the_family_is_refused() -> None:
    case = _case(family="stokes", coefficients={"nu": 1}, manufactured={"stream": "sin(x)*y**2", "p": "x"})
    with pytest.raises(CaseDefinitionError, match="t: track numpy-scipy cannot solve it: no stokes solver"):
        build_case(case, b"")


def test_a_numerical_case_names_every_boundary_piece() -> None:
    data = {"forcing": "1", "boundary": {"bottom": "0", "top": "0", "left": "0"}}
    with pytest.raises(CaseDefinitionError, match="no value for boundary piece right"):
        build_case(_case(data=data), b"")
    with pytest.raises(CaseDefinitionError, match="no boundary piece named rim"):
        build_case(_case(data={"forcing": "1", "boundary": {"*": "0", "rim": "1"}}), b"")


CUBE_BOX = [0, 1, 0, 1, 0, 1]


def test_our_own_cube_cases_keep_a_3d_grid_on_the_unit_cube_with_every_line_through_the_corners() -> None:
    u = {"u": "x*y*z + sin(pi*x)*sin(pi*y)*sin(pi*z)"}
    case = _case(domain="unit_cube", manufactured=u, grid={"nx": 17, "ny": 9, "nz": 25, "bbox": CUBE_BOX})
    assert case.grid.shape == (25, 9, 17)
    with pytest.raises(ValueError, match=r"nx - 1, ny - 1 and nz - 1 must be multiples of 8"):
        _case(domain="unit_cube", manufactured=u, grid={"nx": 17, "ny": 17, "nz": 20, "bbox": CUBE_BOX})
    with pytest.raises(ValueError, match=r"a case on unit_cube needs a 3D grid \(nz\); got nz None"):
        _case(domain="unit_cube", manufactured=u, grid={"nx": 17, "ny": 17})
    with pytest.raises(ValueError, match=r"a case on unit_square needs a 2D grid \(no nz\); got nz 17"):
        _case(manufactured=u, grid={"nx": 17, "ny": 17, "nz": 17, "bbox": CUBE_BOX})
    with pytest.raises(ValueError, match=r"bbox must be \[0, 1, 0, 1, 0, 1\] for the unit cube"):
        _case(domain="unit_cube", manufactured=u, grid={"nx": 17, "ny": 17, "nz": 17, "bbox": [0, 2, 0, 1, 0, 1]})


def test_a_cube_case_has_its_faces_as_pieces_and_the_3d_operator_as_forcing() -> None:
    case = _case(
        domain="unit_cube",
        manufactured={"u": "x*y*z + sin(pi*x)*sin(pi*y)*sin(pi*z)"},
        grid={"nx": 9, "ny": 9, "nz": 9, "bbox": CUBE_BOX},
    )
    spec, solution = make_spec(case)
    assert [
        (p.name, p.face.axis if p.face else None, p.face.at if p.face else None, p.value) for p in spec.boundary
    ] == [
        ("x0", "x", 0.0, "0"),
        ("x1", "x", 1.0, "y*z"),
        ("y0", "y", 0.0, "0"),
        ("y1", "y", 1.0, "x*z"),
        ("z0", "z", 0.0, "0"),
        ("z1", "z", 1.0, "x*y"),
    ]
    assert spec.forcing == "3*pi**2*sin(pi*x)*sin(pi*y)*sin(pi*z)"  # -lap(xyz) = 0; the bump's is 3 pi^2 times it
    assert spec.output.fields["u"].shape == (9, 9, 9) and "z = linspace(bbox[4], bbox[5], nz)" in spec.output.layout
    assert str(solution[0]) == "x*y*z + sin(pi*x)*sin(pi*y)*sin(pi*z)"
    with pytest.raises(CaseDefinitionError, match=r"a case on the unit cube takes a family among poisson, heat"):
        make_spec(_case(domain="unit_cube", family="wave", manufactured={"u": "x"}, grid=case.grid.model_dump()))

"""The committed PDE cases: coverage, leak-freedom of every case, the two
halves kept apart, byte-for-byte reproducible builds, and the builder's refusals."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from fembench_agents.cases import store
from fembench_agents.cases.builder import build_all, build_case
from fembench_agents.cases.domains import DOMAINS, grid_mask
from fembench_agents.cases.expressions import ExpressionError, compile_expr
from fembench_agents.cases.leak import probe
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import FAMILIES, CaseFile

CASES = Path(__file__).resolve().parent.parent / "cases"
DEFS = store.load_definitions(CASES)
SPECS = {s.id: s for s in store.load_specs(CASES)}


def test_coverage() -> None:
    assert len(DEFS) >= 36
    domains: dict[str, set[str]] = defaultdict(set)
    for d in DEFS:
        domains[d.family].add(d.domain)
    assert set(domains) == set(FAMILIES)
    assert all(len(v) >= 2 for v in domains.values()), domains
    assert {d.id for d in DEFS} == set(SPECS)


@pytest.mark.parametrize("case", DEFS, ids=lambda c: c.id)
def test_no_agent_visible_expression_passes_the_accuracy_gate(case: CaseFile) -> None:
    """Each expression (forcing, boundary pieces, coefficients, initial data) on the
    whole grid, best scalar multiple by least squares, fails the most lenient gate."""
    spec = SPECS[case.id]
    hidden, arrays = store.load_hidden(CASES, case.id)
    mask = grid_mask(DOMAINS[case.domain], case.grid)
    tau = max(c.tau_acc for c in hidden.calibration.values())
    probes = probe(spec, arrays["u"], mask)
    n_expr = 1 + len(spec.boundary) + len(spec.coefficients) + (spec.initial is not None)
    assert len(probes) >= n_expr
    worst = min(probes, key=lambda p: p.error)
    assert worst.error > tau, f"{worst.source} reproduces the reference to {worst.error:.2e} <= {tau:.2e}"


@pytest.mark.parametrize("case", DEFS, ids=lambda c: c.id)
def test_spec_holds_nothing_evaluator_only(case: CaseFile) -> None:
    spec = SPECS[case.id]
    hidden, arrays = store.load_hidden(CASES, case.id)
    text = spec.model_dump_json()
    for sol in hidden.solution if isinstance(hidden.solution, list) else [hidden.solution]:
        assert sol not in text
    for word in ("e_base", "tau", "t_base", "manufactured", "reference", "alpha"):
        assert word not in text
    assert case.note == "" or case.note not in text
    mask = grid_mask(DOMAINS[case.domain], case.grid)
    u = arrays["u"]
    assert np.isnan(u[..., ~mask]).all() and np.isfinite(u[..., mask]).all()
    assert u.shape == spec.output.fields["u"].shape
    # boundary data are per piece: the fixed coordinate is substituted away
    for piece in spec.boundary:
        (ax, _), (bx, _) = piece.segment
        fixed = "x" if ax == bx else "y"
        for v in piece.value if isinstance(piece.value, list) else [piece.value]:
            assert fixed not in v.replace("exp", ""), (piece.name, v)


def test_build_is_byte_for_byte_reproducible(tmp_path: Path) -> None:
    copy = tmp_path / "cases"
    shutil.copytree(CASES / store.DEFINITIONS, copy / store.DEFINITIONS)
    build_all(copy)
    for path in sorted((CASES / store.HIDDEN).iterdir()):
        assert (copy / store.HIDDEN / path.name).read_bytes() == path.read_bytes(), path.name
    assert (copy / store.SPECS_FILE).read_bytes() == (CASES / store.SPECS_FILE).read_bytes()
    assert not list((copy / store.HIDDEN).glob("*.tmp"))


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

"""Fresh cases (`cases generate`, fembench_agents/cases/generate/): corner terms off every
domain's boundary, the same seed giving the same folder, and the CLI end to end through `cases validate` (records and calibration
solvers through the sandbox) on drawn curved domains and a numerical reference. The draw's
own rules (grammar text, streams, order, ranges, libraries, pinned bytes, redraws) are in
test_rules_fresh.py."""

from __future__ import annotations

import json
import tomllib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from fembench_agents.cases import store, timing
from fembench_agents.cases.builder import make_spec
from fembench_agents.cases.case_spec import Arc
from fembench_agents.cases.domains import DOMAINS
from fembench_agents.cases.generate import grammar
from fembench_agents.cases.generate.geometry import KINDS, draw_domain
from fembench_agents.cases.generate.manifest import MANIFEST, FreshManifest
from fembench_agents.cases.generate.output import Request, generate
from fembench_agents.cases.leak import leaks
from fembench_agents.cases.model import CaseFile
from fembench_agents.cases.own_curved import case_mask
from fembench_agents.cases.shapes import Shape
from fembench_agents.cli import app

runner = CliRunner()


def test_corner_centres_lie_outside_the_domain_off_every_piece_line_and_circle() -> None:
    d = grammar.Draw("corners")
    regions = [
        *DOMAINS.values(),
        *(draw_domain(grammar.Draw(f"c{k}"), kind).region for kind in KINDS for k in range(4)),
    ]
    for domain in regions:
        circles = [p for _, p in domain.pieces if isinstance(p, Arc)] if isinstance(domain, Shape) else []
        for _ in range(20):
            text = grammar.corner_singular(d, domain).text
            centre = text.split("((x ")[1].split("**2 + (y ")
            x0 = Fraction(centre[0][2:-1]) * (1 if centre[0][0] == "-" else -1)
            y0 = Fraction(centre[1][2 : centre[1].index(")")]) * (1 if centre[1][0] == "-" else -1)
            assert not domain.inside(np.array([float(x0)]), np.array([float(y0)]))[0], (domain.name, text)
            assert (x0 * 8).denominator != 1 and (y0 * 8).denominator != 1 and (x0 * 64).denominator != 1
            for arc in circles:
                cx, cy, r = Fraction(arc.center[0]), Fraction(arc.center[1]), Fraction(arc.radius)
                assert (x0 - cx) ** 2 + (y0 - cy) ** 2 != r**2, (domain.name, text)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_same_seed_writes_the_same_folder_byte_for_byte(tmp_path: Path) -> None:
    first = generate(Request("poisson", 5, 2), tmp_path / "a")
    generate(Request("poisson", 5, 2), tmp_path / "b")
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a == b and len(a) == 2 + 2 * 3  # specs, fresh.json; per case toml, json, npz
    assert [r.id for r in first] == ["fresh_v2_poisson_s5_00", "fresh_v2_poisson_s5_01"]
    manifest = FreshManifest.model_validate_json(a[MANIFEST])
    # the manifest names each case's domain and the libraries it was calibrated on (no arcs for numpy-scipy)
    assert [(r.domain, r.libraries, r.seed, r.index) for r in manifest.cases.values()] == [
        ("l_shape", ("numpy-scipy", "scikit-fem", "dolfinx", "ngsolve"), 5, 0),
        ("circle", ("scikit-fem", "dolfinx", "ngsolve"), 5, 1),
    ]
    hidden = json.loads(a["hidden/fresh_v2_poisson_s5_01.json"])
    assert hidden["definition_sha256"] == store.sha256(a["definitions/fresh_v2_poisson_s5_01.toml"])
    assert sorted(hidden["calibration"]) == ["dolfinx", "ngsolve", "scikit-fem"]
    generate(Request("poisson", 6, 1), tmp_path / "c")
    assert (
        _tree(tmp_path / "c")["definitions/fresh_v2_poisson_s6_00.toml"] != a["definitions/fresh_v2_poisson_s5_00.toml"]
    )


def test_cli_generates_validates_and_draws_a_case_again_from_its_id(tmp_path: Path) -> None:
    """A drawn disk (no numpy-scipy) and a numerical reference (the coarse-to-fine check) in one folder."""
    out = tmp_path / "fresh"
    lines = []
    for family, seed in (("elasticity", "2"), ("poisson_rough", "1")):
        res = runner.invoke(app, ["cases", "generate", "--family", family, "--seed", seed, "--out", str(out)])
        assert res.exit_code == 0, res.output
        lines += res.output.splitlines()
    assert lines == [
        "fresh_v2_elasticity_s2_00: circle, draw 0, calibrated on scikit-fem, dolfinx, ngsolve",
        f"generated 1 cases into {out}; none redrawn",
        "fresh_v2_poisson_rough_s1_00: square_hole, draw 0, calibrated on numpy-scipy, scikit-fem, dolfinx, ngsolve",
        f"generated 1 cases into {out}; none redrawn",
    ]
    specs = {s.id: s for s in store.load_specs(out)}
    assert list(specs) == ["fresh_v2_elasticity_s2_00", "fresh_v2_poisson_rough_s1_00"]
    disk = specs["fresh_v2_elasticity_s2_00"].domain
    assert (disk.type, disk.geometry_params) == ("circle", {"center": [0.4375, 0.5], "radius": 0.375})
    hidden, _ = store.load_hidden(out, "fresh_v2_poisson_rough_s1_00")
    assert hidden.reference_kind == "numerical" and hidden.reference_check is not None
    assert hidden.reference_check.error_estimate <= hidden.reference_check.threshold
    # every calibration solver through the sandbox against its own three gates (generous times)
    t_base = {i: {lib: 60.0 for lib in s.libraries} for i, s in specs.items()}
    timing.save(out, timing.MachineCalibration(machine=timing.machine_name(), fingerprint={}, repeats=1, t_base=t_base))
    res = runner.invoke(app, ["cases", "validate", "--cases", str(out)])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == (
        "cases valid: leak-free, reproducible, coverage met; 7 calibration solves pass their own gates"
    )
    res = runner.invoke(
        app, ["cases", "generate", "--id", "fresh_v2_poisson_rough_s1_00", "--out", str(tmp_path / "again")]
    )
    assert res.exit_code == 0, res.output
    name = "fresh_v2_poisson_rough_s1_00.toml"
    assert (tmp_path / "again" / "definitions" / name).read_bytes() == (out / "definitions" / name).read_bytes()
    res = runner.invoke(app, ["cases", "generate", "--family", "burgers", "--out", str(out)])
    assert res.exit_code == 2
    assert "no fresh space for family 'burgers'; known: poisson, heat, convection_diffusion" in res.output


def test_a_stokes_flow_without_its_pressure_scores_the_velocity_alone_and_says_so() -> None:
    flow = {
        "family": "stokes",
        "coefficients": {"nu": 1.0},
        "data": {"forcing": ["y", "0"], "boundary": {"*": ["0", "0"]}},
    }
    spec, _ = make_spec(
        CaseFile.model_validate({"id": "flow", "domain": "l_shape", **flow, "pressure_compared": False})
    )
    scored, _ = make_spec(CaseFile.model_validate({"id": "flow", "domain": "l_shape", **flow}))
    assert {k: (f.shape, f.up_to_constant) for k, f in spec.output.fields.items()} == {"u": ((2, 65, 65), False)}
    assert list(scored.output.fields) == ["u", "p"]
    assert spec.equation == scored.equation.replace(
        "(it is compared after subtracting its mean over the in-domain grid points, on both sides)",
        "(it is not compared: the velocity u alone is scored)",
    )
    assert spec.equation.endswith(
        "p is fixed only up to a constant (it is not compared: the velocity u alone is scored)"
    )
    with pytest.raises(
        ValidationError, match="pressure_compared is for stokes, navier_stokes; poisson has no pressure"
    ):
        CaseFile.model_validate(
            {"id": "p", "family": "poisson", "domain": "unit_square", "data": {"forcing": "1", "boundary": {"*": "0"}}}
            | {"pressure_compared": False}
        )


def test_a_stokes_numerical_case_passes_the_leak_test_calibration_and_coarse_to_fine_check(tmp_path: Path) -> None:
    """A body force and a lid on the channel with its step: every calibration solver within the cap on
    the velocity, the fine reference checked against the 2x solve, the same folder from the same seed."""
    request = Request("stokes_numerical", 0, 1, domain="channel_with_step")
    (record,) = generate(request, tmp_path / "a")
    generate(request, tmp_path / "b")
    a = _tree(tmp_path / "a")
    assert a == _tree(tmp_path / "b")
    assert (record.id, record.terms, record.libraries, record.redraws) == (
        "fresh_v2_stokes_numerical_channel_with_step_s0_00",
        ("force_smooth", "force_boundary_layer", "force_corner_singular", "force_oscillatory", "lid"),
        ("scikit-fem", "dolfinx", "ngsolve"),
        (),
    )
    (spec,) = store.load_specs(tmp_path / "a")
    assert list(spec.output.fields) == ["u"] and spec.equation.endswith(
        "(it is not compared: the velocity u alone is scored)"
    )
    hidden, arrays = store.load_hidden(tmp_path / "a", record.id)
    assert list(arrays) == ["u"] and arrays["u"].shape == (2, 65, 65)
    assert sorted(hidden.calibration) == ["dolfinx", "ngsolve", "scikit-fem"]
    assert all(c.e_base <= 1e-2 and c.tau_acc == float(f"{10 * c.e_base:.4e}") for c in hidden.calibration.values())
    check = hidden.reference_check
    assert check is not None and check.refinements == (1, 2, 4)
    assert check.error_estimate == check.distances_to_finest[1] <= check.threshold
    assert check.threshold == float(f"{0.05 * min(c.tau_acc for c in hidden.calibration.values()):.4e}")
    assert not leaks(
        spec, arrays, case_mask(spec.domain.name, spec.grid), max(c.tau_acc for c in hidden.calibration.values())
    )


def test_a_periodic_case_is_built_with_its_identified_sides_and_their_check(tmp_path: Path) -> None:
    """The builder's periodicity check (value, normal derivative, forcing, coefficients on paired
    sides) passes on a drawn case, whose case_spec names the pairs."""
    (record,) = generate(Request("helmholtz_periodic", 7, 1), tmp_path)
    assert (record.id, record.domain, record.libraries, record.redraws) == (
        "fresh_v2_helmholtz_periodic_s7_00",
        "unit_square",
        ("scikit-fem", "dolfinx", "ngsolve"),
        (),
    )
    (spec,) = store.load_specs(tmp_path)
    (s,) = tomllib.loads((tmp_path / "definitions" / f"{record.id}.toml").read_text())["periodic"]
    pairs = {"x": {"left": "right", "right": "left"}, "y": {"bottom": "top", "top": "bottom"}}[s]
    assert {p.name: p.partner for p in spec.boundary if p.kind == "periodic"} == pairs
    assert all(p.value is None for p in spec.boundary if p.kind == "periodic")
    assert "periodic" in spec.equation
    hidden, _ = store.load_hidden(tmp_path, record.id)
    assert all(c.e_base <= 1e-2 for c in hidden.calibration.values())

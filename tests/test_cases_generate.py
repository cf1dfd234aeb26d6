"""Fresh cases (`cases generate`, fembench_agents/cases/generate/): the grammar's exact
text for a fixed key, the same seed giving the same bytes, the id naming version
and seed, a refused draw redrawn with the next draw number, and the CLI end to end
through `cases validate` (records and calibration solvers through the sandbox)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fembench_agents.cases import store, timing
from fembench_agents.cases.builder import Built
from fembench_agents.cases.domains import DOMAINS
from fembench_agents.cases.generate import grammar
from fembench_agents.cases.generate.draw import (
    GenerationError,
    case_id,
    definition,
    definition_text,
    generate_case,
    parse_id,
)
from fembench_agents.cases.generate.manifest import MANIFEST, FreshManifest, Redraw
from fembench_agents.cases.generate.output import Request, generate, redraw_summary
from fembench_agents.cli import app

runner = CliRunner()


def test_the_grammar_writes_each_term_kind_exactly_for_a_fixed_key() -> None:
    d = grammar.Draw("pinned")
    assert [grammar.smooth(d).text, grammar.smooth(d).text] == ["(-1/2)*x**2*y**3", "2*x**3*y**3"]
    assert grammar.oscillatory(d).text == "(-5/4)*sin(3*pi*x + 3/4)*cos(pi*y)"
    assert grammar.boundary_layer(d).text == "(-3/4)*exp(-8*(1 - x))"
    # the L-shape's re-entrant corner (1/2, 1/2), its centre 1/48 inside the removed quarter
    assert grammar.corner_singular(d, DOMAINS["l_shape"]).text == "(-2)*((x - 25/48)**2 + (y - 25/48)**2)**(1/3)"


def test_numbers_are_written_as_exact_rationals_and_signs_as_differences() -> None:
    assert [grammar.number(Fraction(3, 4)), grammar.number(-2), grammar.number(Fraction(4, 2))] == ["3/4", "-2", "2"]
    assert [grammar.scaled(q, "x") for q in (1, -1, 3, Fraction(-1, 2))] == ["x", "-x", "3*x", "(-1/2)*x"]
    assert grammar.plus("1", "-x", "(-1/2)*y") == "1 - x + (-1/2)*y"


def test_corner_centres_lie_outside_the_domain_off_every_piece_line() -> None:
    d = grammar.Draw("corners")
    for name, domain in DOMAINS.items():
        for _ in range(20):
            text = grammar.corner_singular(d, domain).text
            centre = text.split("((x ")[1].split("**2 + (y ")
            x0 = Fraction(centre[0][2:-1]) * (1 if centre[0][0] == "-" else -1)
            y0 = Fraction(centre[1][2 : centre[1].index(")")]) * (1 if centre[1][0] == "-" else -1)
            assert not domain.inside([float(x0)], [float(y0)])[0], (name, text)
            assert (x0 * 8).denominator != 1 and (y0 * 8).denominator != 1 and (x0 * 64).denominator != 1


def test_a_seed_draws_the_same_case_file_and_the_id_names_version_family_seed_and_index() -> None:
    case, terms = definition("convection_diffusion", None, 7, 0, 0, ("numpy-scipy", "scikit-fem"))
    assert definition_text(case) == (
        'id = "fresh_v1_convection_diffusion_s7_00"\n'
        'family = "convection_diffusion"\n'
        'domain = "l_shape"\n'
        'note = "fresh v1: seed 7, case 0, draw 0"\n'
        'coefficients = { eps = 0.1, b = ["-(1/2 - y)", "-(x - 1/2)"] }\n'
        'manufactured = { u = "-exp(-5*(1 - y)) - x**2*y**2 + 2*((x - 11/24)**2 + (y - 25/24)**2)**(3/4)" }\n'
        'libraries = ["numpy-scipy", "scikit-fem"]\n'
    )
    assert terms == ("boundary_layer", "smooth", "corner_singular")
    heat, _ = definition("heat", "l_shape", 11, 2, 0, ("numpy-scipy",))
    assert heat.id == "fresh_v1_heat_l_shape_s11_02" and heat.time is not None and heat.time.t_end == 1.0
    assert parse_id(heat.id) == (1, "heat", "l_shape", 11, 2)
    assert parse_id(case.id) == (1, "convection_diffusion", None, 7, 0)
    assert case_id("reaction_diffusion", "unit_square", 0, 12) == "fresh_v1_reaction_diffusion_unit_square_s0_12"
    with pytest.raises(GenerationError, match="no fresh case id"):
        parse_id("poisson_square_smooth")
    # another seed, another index, another draw: other cases
    texts = {
        definition_text(definition("convection_diffusion", None, s, i, k, ("numpy-scipy",))[0]).split("\n", 4)[4]
        for s, i, k in ((7, 0, 0), (8, 0, 0), (7, 1, 0), (7, 0, 1))
    }
    assert len(texts) == 4


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_same_seed_writes_the_same_folder_byte_for_byte(tmp_path: Path) -> None:
    first = generate(Request("poisson", 5, 2), tmp_path / "a")
    generate(Request("poisson", 5, 2), tmp_path / "b")
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a == b and len(a) == 2 + 2 * 3  # specs, fresh.json; per case toml, json, npz
    assert [r.id for r in first] == ["fresh_v1_poisson_s5_00", "fresh_v1_poisson_s5_01"]
    manifest = FreshManifest.model_validate_json(a[MANIFEST])
    assert manifest.cases["fresh_v1_poisson_s5_01"].seed == 5 and manifest.cases["fresh_v1_poisson_s5_01"].index == 1
    hidden = json.loads(a["hidden/fresh_v1_poisson_s5_00.json"])
    assert hidden["definition_sha256"] == store.sha256(a["definitions/fresh_v1_poisson_s5_00.toml"])
    generate(Request("poisson", 6, 1), tmp_path / "c")
    assert (
        _tree(tmp_path / "c")["definitions/fresh_v1_poisson_s6_00.toml"] != a["definitions/fresh_v1_poisson_s5_00.toml"]
    )


def test_a_refused_draw_is_redrawn_with_the_next_draw_number_and_said() -> None:
    seen: list[str] = []

    def planted(built: Built) -> str | None:
        seen.append(built.spec.forcing if isinstance(built.spec.forcing, str) else "")
        return "planted refusal" if len(seen) == 1 else None

    fresh = generate_case("helmholtz", "unit_square", 1, 0, ("numpy-scipy",), checks=(planted,))
    assert fresh.record.draw == 1
    assert fresh.record.redraws == (Redraw(draw=0, check="planted", reason="planted refusal"),)
    assert len(set(seen)) == 2  # the second draw is another case
    again, _ = definition("helmholtz", "unit_square", 1, 0, 1, ("numpy-scipy",))
    assert fresh.definition == definition_text(again)
    assert redraw_summary([fresh.record]) == "1 redrawn (planted 1)"

    def never(built: Built) -> str | None:
        return "always refused"

    with pytest.raises(GenerationError, match=r"fresh_v1_helmholtz_unit_square_s1_00: no acceptable draw in 20"):
        generate_case("helmholtz", "unit_square", 1, 0, ("numpy-scipy",), checks=(never,))


def test_cli_generates_validates_and_draws_a_case_again_from_its_id(tmp_path: Path) -> None:
    out = tmp_path / "fresh"
    res = runner.invoke(
        app, ["cases", "generate", "--family", "elasticity", "--seed", "2", "--count", "2", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == f"generated 2 cases into {out}; none redrawn"
    ids = [s.id for s in store.load_specs(out)]
    assert ids == ["fresh_v1_elasticity_s2_00", "fresh_v1_elasticity_s2_01"]
    # every calibration solver through the sandbox against its own three gates (generous times)
    t_base = {i: {"numpy-scipy": 60.0, "scikit-fem": 60.0} for i in ids}
    timing.save(out, timing.MachineCalibration(machine=timing.machine_name(), fingerprint={}, repeats=1, t_base=t_base))
    res = runner.invoke(app, ["cases", "validate", "--cases", str(out)])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == (
        "cases valid: leak-free, reproducible, coverage met; 4 calibration solves pass their own gates"
    )
    res = runner.invoke(app, ["cases", "generate", "--id", ids[1], "--out", str(tmp_path / "again")])
    assert res.exit_code == 0, res.output
    name = f"{ids[1]}.toml"
    assert (tmp_path / "again" / "definitions" / name).read_bytes() == (out / "definitions" / name).read_bytes()
    res = runner.invoke(app, ["cases", "generate", "--family", "burgers", "--out", str(out)])
    assert res.exit_code == 2
    assert "no fresh space for family 'burgers'; known: poisson, heat, convection_diffusion" in res.output

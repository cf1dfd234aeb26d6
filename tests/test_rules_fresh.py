"""The rules of the fresh-case draw (fembench_agents/cases/generate/): which stream a case draws
from, in which order, within which ranges, on which libraries, and the exact bytes a seed gives.
These pin the generator's determinism: a change to the stream's name, the draw order, a range
or the case file's text changes a pinned hash or set here (and needs a GENERATOR_VERSION bump).
Cheap on purpose (no calibration solve but one redraw on the unit square): mutation testing
runs them for every mutant of the draw (pyproject [tool.mutmut])."""

from __future__ import annotations

import hashlib
import re
import tomllib
from fractions import Fraction
from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from fembench_agents.cases.builder import Built
from fembench_agents.cases.domains import DOMAINS, Domain
from fembench_agents.cases.generate import draw as draw_module
from fembench_agents.cases.generate import grammar
from fembench_agents.cases.generate.draw import (
    DEFAULT_LIBRARIES,
    MAX_DRAWS,
    GenerationError,
    _check_of,
    calibration_cap,
    case_id,
    definition,
    definition_text,
    domain_kinds,
    draw_key,
    generate_case,
    parse_id,
    solving,
)
from fembench_agents.cases.generate.families import SPACES
from fembench_agents.cases.generate.geometry import KINDS, POLYGONS, draw_domain
from fembench_agents.cases.generate.grammar import Draw, corners
from fembench_agents.cases.generate.manifest import Redraw
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import CaseFile
from fembench_agents.cases.shapes import Shape

ALL = ("numpy-scipy", "scikit-fem", "dolfinx", "ngsolve")
CURVED_SOLVERS = ("scikit-fem", "dolfinx", "ngsolve")


def test_the_grammar_writes_each_term_kind_exactly_for_a_fixed_key() -> None:
    d = Draw("pinned")
    assert [grammar.smooth(d).text, grammar.smooth(d).text] == ["(-1/2)*x**2*y**3", "2*x**3*y**3"]
    assert grammar.oscillatory(d).text == "(-5/4)*sin(3*pi*x + 3/4)*cos(pi*y)"
    assert grammar.boundary_layer(d).text == "(-3/4)*exp(-8*(1 - x))"
    # the L-shape's re-entrant corner (1/2, 1/2), its centre 1/48 inside the removed quarter
    assert grammar.corner_singular(d, DOMAINS["l_shape"]).text == "(-2)*((x - 25/48)**2 + (y - 25/48)**2)**(1/3)"


def test_numbers_are_written_as_exact_rationals_and_signs_as_differences() -> None:
    assert [grammar.number(Fraction(3, 4)), grammar.number(-2), grammar.number(Fraction(4, 2))] == ["3/4", "-2", "2"]
    assert [grammar.scaled(q, "x") for q in (1, -1, 3, Fraction(-1, 2), 0)] == ["x", "-x", "3*x", "(-1/2)*x", "(0)*x"]
    assert grammar.plus("1", "-x", "(-1/2)*y") == "1 - x + (-1/2)*y"
    assert [grammar.shifted("x", Fraction(q)) for q in (0, Fraction(3, 32), Fraction(-1, 32))] == [
        "x",
        "(x - 3/32)",
        "(x + 1/32)",
    ]
    assert [grammar.wave(1, "y"), grammar.wave(3, "x")] == ["pi*y", "3*pi*x"]
    d = Draw("sample")
    assert d.sample("abcd", 3) == ["c", "d", "b"] and [d.pick("abc") for _ in range(6)] == list("ccccab")


# sha256 of the case file of case 1, seed 3, draw 0 of each space, every library asked for
PINNED = {
    "poisson": "68ca047105f74d613efd2abdd6a4065c049b2c527d8d038488e0a8cf94cdf898",
    "heat": "cbb82c833f189c8d18abd02eeba3828d5aec525a6f5383a8b4a187e73f2491b0",
    "convection_diffusion": "1e29db1ea87a71b4effa026f743260e805bd0664ab4cec47d97ec932ee130e68",
    "reaction_diffusion": "b5c0cc0a9e5bcd05a8a5bc76ffb726d0e72d862c99ba32b8cb918d015d17ebc4",
    "helmholtz": "8dfcae9c7abaeee70e92aae165b23162d75cd8016ed8c3b127f8af7887935b67",
    "elasticity": "08976f7c61ac7714707a1ab31d5063e42b02a5fae06ab22db0ab795359320510",
    "poisson_rough": "45a278418ceb4aa39c95a39867bbf2315c943726735f0d8144fb89cc2dbaaa78",
    "stokes_numerical": "c95a939124b41883f9b285dfd00f4c6db9ddaeb84128fe731d61c4f6b272d0b1",
    "poisson_periodic": "8439ef640eebb7e28c4cddaaa35f57b8a700fb16eecdfc31ea5e8ab3b58759de",
    "heat_periodic": "9615baf1a29d489cd373bca36e5e9a7c608319a99a82efa7d3345fb9b5373def",
    "convection_diffusion_periodic": "a799607e2f3c45d2e57b65225fd308af6b5eeb01af6e04a52e6cb73eb5f39e9c",
    "helmholtz_periodic": "3bce6662f26f8f484eef29777df46dcf17e14aa50cde047683d58d68a08d6f8b",
    "elasticity_periodic": "41d3c17edc3f1a611fc4c0f48afaaffa0f1e651ad2d65a8fbe01531300dd130e",
}
TERMS = {
    "poisson": ("oscillatory", "boundary_layer", "smooth"),
    "heat": ("oscillatory", "boundary_layer", "corner_singular", "oscillatory"),
    "convection_diffusion": ("oscillatory", "smooth"),
    "reaction_diffusion": ("smooth", "oscillatory"),
    "helmholtz": ("oscillatory", "corner_singular"),
    "elasticity": ("boundary_layer", "oscillatory", "boundary_layer", "smooth"),
    "poisson_rough": ("constant_load", "source"),
    "stokes_numerical": (
        "force_boundary_layer",
        "force_corner_singular",
        "force_oscillatory",
        "force_boundary_layer",
        "lid",
    ),
    "poisson_periodic": ("boundary_layer", "across", "smooth"),
    "heat_periodic": ("oscillatory", "across", "smooth"),
    "convection_diffusion_periodic": ("boundary_layer", "oscillatory"),
    "helmholtz_periodic": ("across", "boundary_layer"),
    "elasticity_periodic": ("smooth", "oscillatory", "smooth", "across"),
}


def test_each_space_draws_its_pinned_case_file_byte_for_byte() -> None:
    assert DEFAULT_LIBRARIES == ALL and tuple(SPACES) == tuple(PINNED)
    for family, digest in PINNED.items():
        case, terms = definition(family, None, 3, 1, 0, DEFAULT_LIBRARIES)
        text = definition_text(case)
        assert (hashlib.sha256(text.encode()).hexdigest(), terms) == (digest, TERMS[family]), (family, text)
        assert case.id == f"fresh_v2_{family}_s3_01"
        assert CaseFile.model_validate(tomllib.loads(text)) == case  # the text reads back as the case
    helmholtz, _ = definition("helmholtz", None, 3, 1, 0, DEFAULT_LIBRARIES)
    assert definition_text(helmholtz) == (
        'id = "fresh_v2_helmholtz_s3_01"\n'
        'family = "helmholtz"\n'
        'domain = "square_hole"\n'
        'geometry = { outer = [0.0, 1.0, 0.0, 1.0], inner_hole = { type = "rect", bbox = [0.25, 0.5, 0.625, 0.875] } }\n'
        'note = "fresh v2: seed 3, case 1, draw 0"\n'
        "coefficients = { k = 7.0 }\n"
        'manufactured = { u = "(3/2)*sin(pi*x + 1/2)*cos(pi*y) + (-2)*((x - 1/48)**2 + (y + 1/48)**2)**(1/2)" }\n'
        'libraries = ["numpy-scipy", "scikit-fem", "dolfinx", "ngsolve"]\n'
    )
    rough, _ = definition("poisson_rough", None, 3, 1, 0, DEFAULT_LIBRARIES)
    assert definition_text(rough).splitlines()[1:6] == [
        'family = "poisson"',
        'domain = "cross"',
        'note = "fresh v2: seed 3, case 1, draw 0"',
        'coefficients = { k = "3/2 + (1/2)*x + (1/4)*y" }',
        'data = { forcing = "2 + (-5/4)*exp(-100*((x - 7/8)**2 + (y - 5/8)**2))", boundary = { "*" = "0" } }',
    ]
    # a body force of two grammar sums and a lid moving along the bottom (zero at its ends); no
    # numpy-scipy (it solves no Stokes flow); the velocity alone scored
    stokes, _ = definition("stokes_numerical", None, 3, 1, 0, DEFAULT_LIBRARIES)
    assert definition_text(stokes) == (
        'id = "fresh_v2_stokes_numerical_s3_01"\n'
        'family = "stokes"\n'
        'domain = "square_hole"\n'
        'geometry = { outer = [0.0, 1.0, 0.0, 1.0], inner_hole = { type = "rect", bbox = [0.625, 0.875, 0.5, 0.875] } }\n'
        'note = "fresh v2: seed 3, case 1, draw 0"\n'
        "coefficients = { nu = 1.0 }\n"
        'data = { forcing = ["(-1/2)*exp(-5*(1 - x)) + ((x + 1/24)**2 + (y - 1/24)**2)**(3/4)", '
        '"sin(2*pi*x + 1/2)*cos(pi*y) + (1/2)*exp(-4*(1 - y))"], '
        'boundary = { "*" = ["0", "0"], bottom = ["(-16)*x**2*(1 - x)**2", "0"] } }\n'
        "pressure_compared = false\n"
        'libraries = ["scikit-fem", "dolfinx", "ngsolve"]\n'
    )


# sha256 of the case files of cases 0 to 29 of seed 0 of each space, one after another: every
# branch of each space's draw (conductivity's shapes, uniform and rotating b, loads, bumps, ...)
SPACE_PINS = {
    "poisson": "a5ebd47a285de5145d1d86b426f8c4111bd5ce4cc52795f8cdd9ca5347df7ff1",
    "heat": "0b8cef964e8e46d04ed55913b1927dc63ab34d6eafa6a8cf3288dadd7b007e98",
    "convection_diffusion": "b6cb971689166edf883672b50bce732bfa84f8fa07207fb1e183f6e956d44336",
    "reaction_diffusion": "6c66e67c72f5e5d58c11c487a31389fa852b48b52da9db9b639213d600544a2b",
    "helmholtz": "404e48431f2f814c11ee6c6599471daf741227b565d2190136d1559603fc37d0",
    "elasticity": "40b3a2a4bb9d65357b12e6b6f70dc0dc37299dede22ad0ec5024874f053c7a80",
    "poisson_rough": "096858dcb2e24660e651ed48528107c64a06db718a92979a12d58c938efef83b",
    "stokes_numerical": "10d9a6d488d1a82271e82ab08bd6b64db0de20ee8347837fbc7605484717f31a",
    "poisson_periodic": "b9868f4cd847040057b5af5e87d96bb3c38fce1ad945b630c87dd97a0d1d1876",
    "heat_periodic": "2ad4e97b56033612df1695b7a8d304cf93c457aa7a8ff05f8ee0a1844d82b470",
    "convection_diffusion_periodic": "bee924227d72f9e98d0655d70bc94fbeca6e8b4e9368c06eefddb4d7775a5311",
    "helmholtz_periodic": "6fba410d24d3382fdc003157a1329e6a17287d4d8e64e09b3f6f21d8a337c79f",
    "elasticity_periodic": "4be1209ab30c73d485761cbea53faadd34926c999e4f406c86de167f702ae4db",
}


def test_thirty_cases_of_each_space_are_pinned_to_the_byte() -> None:
    got = {
        family: hashlib.sha256(
            "".join(definition_text(definition(family, None, 0, i, 0, ALL)[0]) for i in range(30)).encode()
        ).hexdigest()
        for family in SPACES
    }
    assert got == SPACE_PINS


def test_a_uniform_velocity_is_never_zero() -> None:
    """(0, 0) drawn becomes (1, 0): every other uniform b of the grid appears, (0, 0) never."""
    uniform = set()
    for i in range(200):
        b = definition("convection_diffusion", "unit_square", 1, i, 0, ("numpy-scipy",))[0].coefficients["b"]
        assert isinstance(b, list)
        if "y" not in b[0]:
            uniform.add(tuple(b))
    half = ("-1", "-1/2", "0", "1/2", "1")
    assert uniform == {(bx, by) for bx in half for by in half} - {("0", "0")}


def test_a_curved_draw_and_a_transient_one_write_their_geometry_time_and_libraries() -> None:
    case, terms = definition("convection_diffusion", None, 7, 0, 0, ALL)
    assert definition_text(case) == (
        'id = "fresh_v2_convection_diffusion_s7_00"\n'
        'family = "convection_diffusion"\n'
        'domain = "circle"\n'
        "geometry = { center = [0.625, 0.375], radius = 0.375 }\n"
        'note = "fresh v2: seed 7, case 0, draw 0"\n'
        'coefficients = { eps = 0.04, b = ["0", "1/2"] }\n'
        'manufactured = { u = "(-3/2)*sin(pi*x + 3/4)*cos(3*pi*y) + (-3/2)*exp(-6*(1 - y))" }\n'
        'libraries = ["scikit-fem", "dolfinx", "ngsolve"]\n'
    )
    assert terms == ("oscillatory", "boundary_layer")
    heat, _ = definition("heat", "l_shape", 11, 2, 0, ("numpy-scipy",))
    text = definition_text(heat)
    assert heat.id == "fresh_v2_heat_l_shape_s11_02" and heat.libraries == ("numpy-scipy",)
    assert text.splitlines()[-2:] == ["time = { t0 = 0.0, t_end = 0.25 }", 'libraries = ["numpy-scipy"]']
    # another seed, index or draw: another case; the same: the same text
    texts = {definition_text(definition("poisson", None, s, i, k, ALL)[0]).split("\n", 4)[4] for s, i, k in SPECS}
    assert len(texts) == 4
    assert definition_text(definition("poisson", None, 7, 1, 0, ALL)[0]) == definition_text(
        definition("poisson", None, 7, 1, 0, ALL)[0]
    )


SPECS = ((7, 0, 0), (8, 0, 0), (7, 1, 0), (7, 0, 1))


def test_the_stream_is_named_by_version_family_domain_seed_index_and_draw() -> None:
    assert draw_key("poisson", None, 7, 3, 0) == "fembench-fresh/v2/poisson/*/7/3/0"
    assert draw_key("heat", "annulus", 0, 12, 4) == "fembench-fresh/v2/heat/annulus/0/12/4"
    assert case_id("poisson_rough", "cross", 5, 7) == "fresh_v2_poisson_rough_cross_s5_07"
    assert case_id("heat", None, 11, 123, version=1) == "fresh_v1_heat_s11_123"
    assert parse_id("fresh_v2_poisson_rough_cross_s5_07") == (2, "poisson_rough", "cross", 5, 7)
    assert parse_id("fresh_v2_poisson_square_with_hole_s0_00") == (2, "poisson", "square_with_hole", 0, 0)
    assert parse_id("fresh_v2_poisson_rough_s5_07") == (2, "poisson_rough", None, 5, 7)
    assert parse_id("fresh_v1_elasticity_s2_01") == (1, "elasticity", None, 2, 1)
    with pytest.raises(GenerationError) as info:
        parse_id("poisson_square_smooth")
    assert str(info.value) == (
        "'poisson_square_smooth' is no fresh case id; expected fresh_v<version>_<family>[_<domain>]_s<seed>_<index>, "
        "family one of poisson, heat, convection_diffusion, reaction_diffusion, helmholtz, elasticity, poisson_rough, "
        "stokes_numerical, poisson_periodic, heat_periodic, convection_diffusion_periodic, helmholtz_periodic, "
        "elasticity_periodic"
    )
    for bad in (
        "poisson_square_smooth",
        "fresh_v2_stokes_s1_00",
        "fresh_v2_poisson_s1_00_x",
        "fresh_v2_poisson_disk_s1_00",
    ):
        with pytest.raises(GenerationError, match=re.escape(f"{bad!r} is no fresh case id; expected fresh_v<version>")):
            parse_id(bad)
    # the draw order: the domain kind, its geometry, then the family's numbers, all from one stream
    d = Draw(draw_key("poisson", None, 3, 1, 0))
    kind = d.pick(domain_kinds("poisson", ALL))
    where = draw_domain(d, kind)
    drawn = SPACES["poisson"].draw(d, where.region)
    case, _ = definition("poisson", None, 3, 1, 0, ALL)
    assert (case.domain, case.geometry, case.coefficients, case.manufactured and case.manufactured.u) == (
        kind,
        where.geometry,
        drawn.coefficients,
        drawn.u,
    )


PINNED_GEOMETRY: dict[str, dict[str, Any] | None] = {
    "unit_square": None,
    "l_shape": {"vertices": [[0.0, 0.0], [0.625, 0.0], [0.625, 0.375], [1.0, 0.375], [1.0, 1.0], [0.0, 1.0]]},
    "square_hole": {"outer": [0.0, 1.0, 0.0, 1.0], "inner_hole": {"type": "rect", "bbox": [0.5, 0.75, 0.25, 0.5]}},
    "channel_with_step": None,
    "cross": None,
    "circle": {"center": [0.4375, 0.4375], "radius": 0.4375},
    "annulus": {"center": [0.5, 0.5], "inner_r": 0.1875, "outer_r": 0.375},
    "square_with_hole": {
        "outer": [0.0, 1.0, 0.0, 1.0],
        "inner_hole": {"type": "circle", "center": [0.25, 0.5625], "radius": 0.125},
    },
}


def test_each_domain_kind_draws_its_pinned_size_and_placement() -> None:
    assert KINDS == tuple(PINNED_GEOMETRY) and POLYGONS == KINDS[:5]
    for kind, geometry in PINNED_GEOMETRY.items():
        drawn = draw_domain(Draw(f"pinned-{kind}"), kind)
        assert (drawn.name, drawn.geometry) == (kind, geometry)
        assert isinstance(drawn.region, Shape if kind in KINDS[5:] else Domain)
    hole = draw_domain(Draw("pinned-square_with_hole"), "square_with_hole").region
    # the corner term's anchors: the square's corners, then the hole's east, north, west and south points
    assert corners(hole) == [
        *((Fraction(a), Fraction(b)) for a, b in ((0, 0), (1, 0), (1, 1), (0, 1))),
        (Fraction(3, 8), Fraction(9, 16)),
        (Fraction(1, 4), Fraction(11, 16)),
        (Fraction(1, 8), Fraction(9, 16)),
        (Fraction(1, 4), Fraction(7, 16)),
    ]


def _sixteenths(lo: int, hi: int) -> set[float]:
    return {k / 16 for k in range(lo, hi + 1)}


def test_drawn_sizes_and_placements_cover_exactly_the_documented_ranges() -> None:
    seen: dict[str, set[Any]] = {kind: set() for kind in KINDS}
    for k in range(400):
        for kind in ("l_shape", "square_hole", "circle", "annulus", "square_with_hole"):
            g = draw_domain(Draw(f"range-{k}"), kind).geometry
            assert g is not None
            if kind == "l_shape":
                seen[kind].add(tuple(map(tuple, g["vertices"])))
            elif kind == "square_hole":
                x0, x1, y0, y1 = g["inner_hole"]["bbox"]
                seen[kind].add((x1 - x0, x0, y1 - y0, y0))
            elif kind == "circle":
                seen[kind].add((g["radius"], *g["center"]))
            elif kind == "annulus":
                seen[kind].add((g["outer_r"], g["inner_r"], *g["center"]))
            else:
                seen[kind].add((g["inner_hole"]["radius"], *g["inner_hole"]["center"]))
    # the L-shape: one of four quarters removed, its inner corner (a, b), a, b in {3/8, 1/2, 5/8}
    corners_seen = {v for ring in seen["l_shape"] for v in ring} - {(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)}
    inner = {(a, b) for a in (0.375, 0.5, 0.625) for b in (0.375, 0.5, 0.625)}
    assert len(seen["l_shape"]) == 4 * 9 and {v for v in corners_seen if v in inner} == inner
    rings = hashlib.sha256(repr(sorted(seen["l_shape"])).encode()).hexdigest()
    assert rings == "86b7dda30def034acd0a1466ea782be43fb0e51b36af9042d783f09897774e8c"
    # the rectangular hole: sides 1/4 or 3/8, at least 1/8 from the outer boundary, on multiples of 1/8
    sides = {(w, x0) for w in (0.25, 0.375) for x0 in np.arange(0.125, 0.875 - w + 1e-9, 0.125)}
    assert {(w, x0) for w, x0, _, _ in seen["square_hole"]} == sides == {(h, y0) for _, _, h, y0 in seen["square_hole"]}
    # the disk: radius 3/8, 7/16 or 1/2, centre on multiples of 1/16 with the disk in the unit square
    disks = {(r, c) for r in (0.375, 0.4375, 0.5) for c in _sixteenths(int(r * 16), 16 - int(r * 16))}
    assert {(r, cx) for r, cx, _ in seen["circle"]} == disks == {(r, cy) for r, _, cy in seen["circle"]}
    # the annulus: R - r >= 3/16
    walls = {(0.375, 0.125), (0.375, 0.1875), *((R, r) for R in (0.4375, 0.5) for r in (0.125, 0.1875, 0.25))}
    assert {(R, r) for R, r, _, _ in seen["annulus"]} == walls
    assert {(R, c) for R, _, c, _ in seen["annulus"]} == disks
    # the circular hole: radius 1/8, 3/16 or 1/4, at least 1/8 from the square's sides
    holes = {(r, c) for r in (0.125, 0.1875, 0.25) for c in _sixteenths(int(r * 16) + 2, 14 - int(r * 16))}
    assert (
        {(r, cx) for r, cx, _ in seen["square_with_hole"]}
        == holes
        == {(r, cy) for r, _, cy in seen["square_with_hole"]}
    )


def test_the_libraries_follow_the_drawn_domain() -> None:
    assert [solving("poisson", kind, ALL) for kind in ("unit_square", "cross", "circle", "annulus")] == [
        ALL,
        ALL,
        CURVED_SOLVERS,
        CURVED_SOLVERS,
    ]
    assert solving("heat", "square_with_hole", ("numpy-scipy", "ngsolve")) == ("ngsolve",)
    assert solving("convection_diffusion", "l_shape", ALL) == solving("reaction_diffusion", "unit_square", ALL) == ALL
    assert solving("poisson_rough", "l_shape", ("dolfinx", "numpy-scipy")) == ("dolfinx", "numpy-scipy")
    assert domain_kinds("poisson", ALL) == KINDS
    assert domain_kinds("poisson", ("numpy-scipy",)) == POLYGONS  # numpy-scipy meshes no arc
    assert domain_kinds("poisson_rough", ALL) == POLYGONS  # a numerical reference is solved on a polygon
    # no numpy-scipy Stokes solver; no cross (its calibration velocity misses the cap)
    assert solving("stokes_numerical", "l_shape", ALL) == CURVED_SOLVERS
    assert domain_kinds("stokes_numerical", ALL) == ("unit_square", "l_shape", "square_hole", "channel_with_step")
    with pytest.raises(
        GenerationError, match=r"^none of the libraries numpy-scipy has a calibration solver for stokes_numerical$"
    ):
        domain_kinds("stokes_numerical", ("numpy-scipy",))
    for index in range(12):
        case, _ = definition("elasticity", None, 0, index, 0, ("numpy-scipy",))
        assert case.domain in POLYGONS and case.libraries == ("numpy-scipy",)
    with pytest.raises(
        GenerationError, match=r"^none of the libraries numpy-scipy, numpy-scipy solves poisson on circle$"
    ):
        definition("poisson", "circle", 0, 0, 0, ("numpy-scipy", "numpy-scipy"))
    with pytest.raises(
        GenerationError, match=r"^poisson_rough draws on no domain 'annulus'; it draws on unit_square, "
    ):
        definition("poisson_rough", "annulus", 0, 0, 0, ALL)
    with pytest.raises(GenerationError) as info:
        definition("stokes", None, 0, 0, 0, ALL)
    assert str(info.value) == (
        "no fresh space for family 'stokes'; known: poisson, heat, convection_diffusion, reaction_diffusion, "
        "helmholtz, elasticity, poisson_rough, stokes_numerical, poisson_periodic, heat_periodic, "
        "convection_diffusion_periodic, helmholtz_periodic, elasticity_periodic"
    )
    with pytest.raises(GenerationError) as info:
        definition("poisson", "disk", 0, 0, 0, ALL)
    assert str(info.value) == (
        "poisson draws on no domain 'disk'; it draws on unit_square, l_shape, square_hole, channel_with_step, "
        "cross, circle, annulus, square_with_hole"
    )
    with pytest.raises(
        GenerationError, match=r"^none of the libraries \(none given\) has a calibration solver for heat$"
    ):
        domain_kinds("heat", ())


def test_a_refusal_is_named_by_the_check_that_made_it() -> None:
    assert [
        _check_of(exc)
        for exc in (
            CaseDefinitionError("c: agent-visible data pass the accuracy gate: forcing"),
            CaseDefinitionError("c: the forcing is a multiple of the manufactured solution (an eigenfunction)"),
            CaseDefinitionError("c: the forcing vanishes: the solution is harmonic-like"),
            CaseDefinitionError("c: the numerical reference's error estimate 1e-2 is above 1e-3"),
            CaseDefinitionError("c: the refinement solves do not converge ((1.0, 0.9, 0.0))"),
            CaseDefinitionError("c: calibration solver of ngsolve returned non-finite values"),
            ZeroDivisionError("division by zero"),
            RuntimeError("diverged"),
            np.linalg.LinAlgError("singular"),
            ValueError("c: bad geometry"),
        )
    ] == [
        "leak",
        "eigenfunction",
        "eigenfunction",
        "coarse_to_fine",
        "coarse_to_fine",
        "calibration",
        "calibration",
        "calibration",
        "calibration",
        "build",
    ]
    cal = {
        "scikit-fem": SimpleNamespace(e_base=0.0101),
        "numpy-scipy": SimpleNamespace(e_base=0.03),
        "dolfinx": SimpleNamespace(e_base=0.01),
    }
    over = SimpleNamespace(hidden=SimpleNamespace(calibration=cal))
    assert calibration_cap(over) == "calibration error above 0.01: numpy-scipy 3.00e-02, scikit-fem 1.01e-02"  # type: ignore[arg-type]
    cal.pop("numpy-scipy"), cal.pop("scikit-fem")
    assert calibration_cap(over) is None  # type: ignore[arg-type]


def _planted_builds(monkeypatch: pytest.MonkeyPatch, refusals: list[Exception | None]) -> list[bytes]:
    """generate_case's builder replaced: each call raises the next refusal or returns a stand-in
    record (no solve runs); the case-file bytes it was given are returned, in order."""
    texts: list[bytes] = []
    planted = iter(refusals)

    def build(case: CaseFile, text: bytes) -> Any:
        texts.append(text)
        refusal = next(planted, None)
        if refusal is not None:
            raise refusal
        return SimpleNamespace(case=case, hidden=SimpleNamespace(calibration={}))

    monkeypatch.setattr(draw_module, "build_case", build)
    return texts


def test_a_refused_draw_is_redrawn_with_the_next_draw_number_and_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _planted_builds(monkeypatch, [])
    seen: list[str] = []

    def planted(built: Built) -> str | None:
        seen.append(built.case.id)  # type: ignore[attr-defined]
        return "planted refusal" if len(seen) == 1 else None

    fresh = generate_case("helmholtz", "unit_square", 1, 0, ("numpy-scipy",), checks=(planted,))
    again, terms = definition("helmholtz", "unit_square", 1, 0, 1, ("numpy-scipy",))
    assert fresh.definition == definition_text(again) == texts[1].decode() and texts[0] != texts[1]
    assert fresh.built.case == again  # type: ignore[attr-defined]
    assert fresh.record.model_dump() == {
        "id": "fresh_v2_helmholtz_unit_square_s1_00",
        "generator_version": 2,
        "family": "helmholtz",
        "domain": "unit_square",
        "domain_fixed": True,
        "seed": 1,
        "index": 0,
        "draw": 1,
        "terms": terms,
        "libraries": ("numpy-scipy",),
        "redraws": (Redraw(draw=0, check="planted", reason="planted refusal").model_dump(),),
    }
    drawn = generate_case("poisson_rough", None, 5, 5, ALL)
    assert (drawn.record.family, drawn.record.domain, drawn.record.domain_fixed, drawn.record.draw) == (
        "poisson_rough",
        "l_shape",
        False,
        0,
    )
    assert drawn.record.libraries == ALL and drawn.record.terms == ("source", "boundary_bump")
    calls: list[int] = []

    def never(built: Built) -> str | None:
        calls.append(1)
        return "always refused"

    with pytest.raises(GenerationError) as info:
        generate_case("poisson", "unit_square", 2, 0, ("numpy-scipy",), checks=(never,), max_draws=4)
    assert len(calls) == 4 and MAX_DRAWS == 20
    assert str(info.value) == (
        "fresh_v2_poisson_unit_square_s2_00: no acceptable draw in 4 "
        "(draw 1: always refused; draw 2: always refused; draw 3: always refused)"
    )


def test_a_draw_the_builder_refuses_is_redrawn_naming_the_check_and_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The builder's refusals (here planted: no solve runs) and the checks after it, in order."""
    texts = _planted_builds(
        monkeypatch,
        [
            CaseDefinitionError("c: agent-visible data pass the accuracy gate: forcing (error 1e-3)"),
            ZeroDivisionError("division by zero"),
        ],
    )

    def passes(b: Any) -> str | None:
        return None

    def refuses_once(b: Any, said: list[int]) -> str | None:
        said.append(1)
        return "second check" if len(said) == 1 else None

    fresh = generate_case("poisson", "cross", 4, 2, ALL, checks=(passes, partial(refuses_once, said=[])))
    assert [r.model_dump() for r in fresh.record.redraws] == [
        {
            "draw": 0,
            "check": "leak",
            "reason": "CaseDefinitionError: c: agent-visible data pass the accuracy gate: forcing (error 1e-3)",
        },
        {"draw": 1, "check": "calibration", "reason": "ZeroDivisionError: division by zero"},
        {"draw": 2, "check": "check", "reason": "second check"},  # a check without a __name__
    ]
    assert fresh.record.draw == 3 and len(set(texts)) == 4
    assert texts[3].decode() == fresh.definition == definition_text(definition("poisson", "cross", 4, 2, 3, ALL)[0])


def test_a_value_the_case_file_cannot_hold_is_refused_naming_it() -> None:
    for value, text in (({1, 2}, "{1, 2}"), ({"k": True}, "True")):
        with pytest.raises(GenerationError, match=f"^cannot write {re.escape(text)} to a case file$"):
            draw_module._toml(value)
    assert draw_module._toml({"a-b": [1, 0.5, "x"], "*": {"k": -2}}) == '{ a-b = [1, 0.5, "x"], "*" = { k = -2 } }'


PERIODIC = ("poisson_periodic", "heat_periodic", "convection_diffusion_periodic", "helmholtz_periodic")


def test_a_periodic_draw_identifies_a_drawn_pair_of_sides_of_the_unit_square() -> None:
    """Periodic in x or y (drawn), on the unit square alone, on the tracks that solve periodic pieces;
    every term 1-periodic along the identified direction; convection by a uniform b only."""
    case, terms = definition("poisson_periodic", None, 3, 1, 0, ALL)
    assert definition_text(case) == (
        'id = "fresh_v2_poisson_periodic_s3_01"\n'
        'family = "poisson"\n'
        'domain = "unit_square"\n'
        'note = "fresh v2: seed 3, case 1, draw 0"\n'
        "coefficients = { k = 0.5 }\n"
        'manufactured = { u = "(-2)*cos(2*pi*y + 1/2)*exp(-8*(1 - x)) + (-3/2)*x**3 + '
        '(3/2)*sin(4*pi*y + 1/2)*exp((-3/2)*x)" }\n'
        'periodic = ["y"]\n'
        'libraries = ["scikit-fem", "dolfinx", "ngsolve"]\n'
    )
    assert terms == ("boundary_layer", "across", "smooth")
    for family in (*PERIODIC, "elasticity_periodic"):
        assert domain_kinds(family, ALL) == ("unit_square",)
        assert solving(family, "unit_square", ALL) == CURVED_SOLVERS  # numpy-scipy solves no periodic piece
        directions = set()
        for index in range(40):
            drawn, _ = definition(family, None, 0, index, 0, ALL)
            (s,) = drawn.periodic
            directions.add(s)
            u = drawn.manufactured and drawn.manufactured.u
            for text in u if isinstance(u, list) else [u]:
                assert text is not None
                # the identified coordinate only in sin/cos(2*m*pi*s ...): a whole number of periods
                rest = re.sub(rf"(sin|cos)\((2|4)\*pi\*{s}( \+ \d/\d)?\)", "", text)
                assert not re.search(rf"\b{s}\b", rest) and re.search(rf"\b{s}\b", "".join(u)), text
            b = drawn.coefficients.get("b")
            assert b is None or all("x" not in c and "y" not in c for c in b)
        assert directions == {"x", "y"}, family

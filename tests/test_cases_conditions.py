"""Boundary pieces beyond Dirichlet and the transient variants in our own cases:
the spec shape (alpha only on a Robin piece, a Dirichlet-only spec written as
before), the words of the equation, the data a manufactured solution gives a
natural piece, the leak probe on natural data, alpha and initial fields, and the
tracks that refuse what their calibration cannot solve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from fembench_agents.cases import store
from fembench_agents.cases.builder import make_spec
from fembench_agents.cases.case_spec import BoundaryPiece, CaseSpec
from fembench_agents.cases.domains import DOMAINS
from fembench_agents.cases.leak import probe
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import CaseFile
from fembench_agents.cases.published_shapes import domain_mask
from fembench_agents.cases.tracks import get_track

CASES = Path(__file__).resolve().parent.parent / "cases"


def test_every_committed_spec_line_is_written_back_byte_for_byte() -> None:
    lines = (CASES / store.SPECS_FILE).read_text().splitlines()
    again = [store.dumps_line(json.loads(CaseSpec.model_validate_json(line).model_dump_json())) for line in lines]
    assert again == lines and len(lines) == 177  # nine on the unit cube, their pieces faces
    assert sum(line.count('"alpha"') for line in lines) == 9  # the Robin pieces' alpha, nowhere else


def test_alpha_belongs_to_a_robin_piece_and_only_there() -> None:
    segment = ((0.0, 0.0), (1.0, 0.0))
    with pytest.raises(ValidationError, match="boundary piece bottom: alpha is given for a robin piece and only there"):
        BoundaryPiece(name="bottom", kind="robin", segment=segment, value="0")
    with pytest.raises(ValidationError, match="alpha is given for a robin piece and only there"):
        BoundaryPiece(name="bottom", segment=segment, value="0", alpha=1.0)
    piece = BoundaryPiece(name="bottom", segment=segment, value="x")
    assert json.loads(piece.model_dump_json()) == {
        "name": "bottom",
        "kind": "dirichlet",
        "segment": [[0.0, 0.0], [1.0, 0.0]],
        "value": "x",
    }


def _case(**kw: object) -> CaseFile:
    base: dict[str, object] = {
        "id": "c",
        "family": "poisson",
        "domain": "square_hole",
        "coefficients": {"k": 2.0},
        "manufactured": {"u": "x**2*y + exp(y)"},
        "libraries": ["dolfinx"],
    }
    return CaseFile.model_validate({**base, **kw})


def test_a_natural_piece_gets_the_flux_through_its_outward_normal_on_holes_too() -> None:
    spec, _ = make_spec(_case(natural={"right": {"kind": "neumann"}, "hole_right": {"kind": "robin", "alpha": 3.0}}))
    pieces = {p.name: p for p in spec.boundary}
    # right edge: n = (1, 0), k du/dx = 2 * 2 x y at x = 1
    assert (pieces["right"].kind, pieces["right"].value) == ("neumann", "4*y")
    # the hole's right edge x = 5/8 faces into the hole: n = (-1, 0), so -k du/dx + 3 u there,
    # -2 (2 x y) + 3 (x^2 y + e^y) = -160 y/64 + 75 y/64 + 3 e^y
    assert (pieces["hole_right"].kind, pieces["hole_right"].alpha) == ("robin", 3.0)
    assert pieces["hole_right"].value == "-85*y/64 + 3*exp(y)"
    assert spec.equation == (
        "-div(k grad u) = f in the domain; u = g on every boundary piece of kind dirichlet; on a piece of kind "
        "neumann k du/dn = g, n the outward unit normal; on a piece of kind robin k du/dn + alpha u = g, n the "
        "outward unit normal, alpha the piece's `alpha`"
    )


def test_a_case_file_s_natural_pieces_are_checked_against_its_domain_and_family() -> None:
    with pytest.raises(CaseDefinitionError, match="c: natural names no boundary piece of square_hole: notch"):
        make_spec(_case(natural={"notch": {"kind": "neumann"}}))
    every = {n: {"kind": "neumann"} for n, _, _ in DOMAINS["unit_square"].pieces}
    with pytest.raises(CaseDefinitionError, match="c: at least one boundary piece must be Dirichlet"):
        make_spec(_case(domain="unit_square", natural=every))
    wave = {"family": "wave", "coefficients": {"c": 1.0}, "time": {"t_end": 0.5}}
    with pytest.raises(
        CaseDefinitionError, match="c: a wave boundary piece of kind neumann: wave pieces are dirichlet"
    ):
        make_spec(_case(**wave, manufactured={"u": "x*t + y"}, natural={"right": {"kind": "neumann"}}))
    with pytest.raises(
        CaseDefinitionError, match="c: a time interval is for heat, burgers, wave, convection_diffusion"
    ):
        make_spec(_case(time={"t_end": 1.0}))


@pytest.mark.parametrize(
    ("case_id", "sources"),
    [
        ("po_lshape_robin", {"boundary[notch_left]", "boundary[notch_left].alpha", "boundary[notch_bottom]"}),
        ("heat_square_robin", {"initial", "boundary[right]", "boundary[right].alpha", "boundary[top]"}),
        ("rd_square_transient", {"initial", "coefficients[R]"}),
        ("el_square_traction", {"boundary[right] as a vector", "boundary[top][1] in every component"}),
    ],
)
def test_natural_data_alpha_and_initial_fields_are_probed_and_none_passes(case_id: str, sources: set[str]) -> None:
    spec = {s.id: s for s in store.load_specs(CASES)}[case_id]
    hidden, arrays = store.load_hidden(CASES, case_id)
    mask = domain_mask(spec.domain, spec.grid, spec.boundary)
    found = {p.source: p.error for p in probe(spec, arrays["u"], mask)}
    assert sources <= set(found)
    assert min(found.values()) > max(c.tau_acc for c in hidden.calibration.values())


def test_a_track_refuses_what_its_calibration_cannot_solve() -> None:
    kinds = ("dirichlet", "robin")
    assert get_track("numpy-scipy").refuses("poisson", kinds, False) == (
        "no boundary pieces of kind robin (it applies dirichlet)"
    )
    assert get_track("scikit-fem").refuses("stokes", ("dirichlet", "do-nothing"), False) == (
        "no boundary pieces of kind do-nothing (it applies dirichlet, neumann, robin)"
    )
    assert get_track("ngsolve").refuses("stokes", ("dirichlet", "do-nothing"), False) == (
        "no boundary pieces of kind do-nothing (it applies dirichlet, neumann, robin)"
    )
    assert get_track("ngsolve").refuses("convection_diffusion", ("dirichlet", "robin"), True) is None
    assert get_track("ngsolve").refuses("heat", ("dirichlet",), True) is None
    assert get_track("dolfinx").refuses("stokes", ("dirichlet", "do-nothing"), False) is None
    # the unit cube: each track's calibration names the families it solves in 3D
    assert get_track("numpy-scipy").refuses("poisson", ("dirichlet",), False, dim=3) == (
        "no poisson solver on the unit cube (3D)"
    )
    assert get_track("scikit-fem").refuses("stokes", ("dirichlet",), False, dim=3) == (
        "no stokes solver on the unit cube (3D)"
    )
    assert get_track("scikit-fem").refuses("heat", ("dirichlet",), False, dim=3) is None
    assert get_track("ngsolve").refuses("poisson", ("dirichlet",), False, dim=3) is None
    assert get_track("dolfinx").refuses("convection_diffusion", ("dirichlet",), True, dim=3) is None

"""Our own cases on curved domains (a disk, an annulus, the unit square with a circular hole)
and on periodic squares: the domain as the published contract gives it, the in-domain grid
points decided exactly from the geometry, the data of a natural piece on an arc, periodic
pieces, what each track refuses, and the two point samplers of an unstructured mesh
(scikit-fem's isoparametric one and NGSolve's curved one) reproducing a linear field exactly.
Every calibration solver meets its own gates on these cases in tests/test_cases_calibration.py
(one case per family, domain, piece kind and library); the leak probe runs on every case in
tests/test_cases_records.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from fembench_agents.cases import store
from fembench_agents.cases.builder import make_spec
from fembench_agents.cases.calibration.common import grid_problem
from fembench_agents.cases.case_spec import Arc
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.leak import probe
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import CURVED_DOMAINS, CaseFile
from fembench_agents.cases.own_curved import case_mask
from fembench_agents.cases.own_geometry import CURVED
from fembench_agents.cases.tracks import get_track

CASES = Path(__file__).resolve().parent.parent / "cases"
SPECS = {s.id: s for s in store.load_specs(CASES)}
DEFS = {d.id: d for d in store.load_definitions(CASES)}


def _ij() -> tuple[np.ndarray, np.ndarray]:
    """Integer grid coordinates of the 65 x 65 grid: the point (i/64, j/64) is (I[j, i], J[j, i])."""
    return np.meshgrid(np.arange(65), np.arange(65))


def test_our_curved_domains_are_given_as_the_published_contract_gives_them() -> None:
    assert CURVED_DOMAINS == ("circle", "annulus", "square_with_hole") == tuple(CURVED)
    on = {name: [d for d in DEFS.values() if d.domain == name] for name in CURVED_DOMAINS}
    assert {name: len(v) for name, v in on.items()} == {"circle": 11, "annulus": 11, "square_with_hole": 11}
    for name, defs in on.items():
        for d in defs:
            domain = SPECS[d.id].domain
            assert (domain.name, domain.type, domain.geometry_params) == (name, name, CURVED[name]["geometry_params"])
    disk = SPECS["po_circle_trig"].boundary
    assert [(p.name, p.arc) for p in disk] == [
        ("circle", Arc(center=(0.5, 0.5), radius=0.5, start=0.0, end=2 * math.pi))
    ]
    ring = SPECS["po_annulus_robin"].boundary
    assert [(p.name, p.kind, p.arc.radius if p.arc else None) for p in ring] == [
        ("outer", "dirichlet", 0.5),
        ("inner", "robin", 0.25),
    ]
    holed = SPECS["po_circlehole_neumann"].boundary
    assert [(p.name, p.kind, p.segment is None) for p in holed] == [
        ("bottom", "dirichlet", False),
        ("right", "dirichlet", False),
        ("top", "dirichlet", False),
        ("left", "dirichlet", False),
        ("hole", "neumann", True),
    ]


def test_the_in_domain_points_are_decided_exactly_from_the_geometry() -> None:
    # in grid units the disk is (i - 32)^2 + (j - 32)^2 <= 32^2 and the holes' interiors < 16^2:
    # integer arithmetic, no tolerance
    i, j = _ij()
    r2 = (i - 32) ** 2 + (j - 32) ** 2
    expected = {"circle": r2 <= 1024, "annulus": (r2 <= 1024) & (r2 >= 256), "square_with_hole": r2 >= 256}
    assert {k: int(v.sum()) for k, v in expected.items()} == {"circle": 3209, "annulus": 2416, "square_with_hole": 3432}
    for name, mask in expected.items():
        case = next(d for d in DEFS.values() if d.domain == name)
        assert np.array_equal(case_mask(name, case.grid), mask)
        hidden, arrays = store.load_hidden(CASES, case.id)
        assert hidden.in_domain_points == int(mask.sum())
        assert np.array_equal(np.isfinite(arrays["u"]), mask)


def test_a_piece_on_an_arc_carries_the_trace_or_the_flux_through_its_outward_normal() -> None:
    """po_annulus_robin: u = cos(2x) e^y + x^2 y, k = 1; Dirichlet on the outer circle, Robin
    (alpha 2) on the inner, whose outward normal points to the centre."""
    spec = {p.name: p for p in SPECS["po_annulus_robin"].boundary}
    a = np.linspace(0.1, 2 * math.pi - 0.1, 9)

    def u(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.cos(2 * x) * np.exp(y) + x**2 * y

    def grad(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return -2 * np.sin(2 * x) * np.exp(y) + 2 * x * y, np.cos(2 * x) * np.exp(y) + x**2

    ox, oy = 0.5 + 0.5 * np.cos(a), 0.5 + 0.5 * np.sin(a)
    np.testing.assert_allclose(compile_expr(str(spec["outer"].value))(x=ox, y=oy), u(ox, oy), rtol=1e-12)
    # inside, the outer trace is u at the radial projection, not u
    ix, iy = 0.5 + 0.35 * np.cos(a), 0.5 + 0.35 * np.sin(a)
    np.testing.assert_allclose(compile_expr(str(spec["outer"].value))(x=ix, y=iy), u(ox, oy), rtol=1e-12)
    assert np.abs(u(ix, iy) - u(ox, oy)).max() > 0.1
    nx, ny = -np.cos(a), -np.sin(a)
    cx, cy = 0.5 + 0.25 * np.cos(a), 0.5 + 0.25 * np.sin(a)
    gx, gy = grad(cx, cy)
    robin = gx * nx + gy * ny + 2.0 * u(cx, cy)
    np.testing.assert_allclose(compile_expr(str(spec["inner"].value))(x=cx, y=cy), robin, rtol=1e-10, atol=1e-12)
    assert spec["inner"].alpha == 2.0


def test_periodic_pieces_name_their_partner_and_carry_no_data() -> None:
    spec = SPECS["po_square_periodic"]
    assert [(p.name, p.kind, p.partner, p.value is None) for p in spec.boundary] == [
        ("bottom", "dirichlet", None, False),
        ("right", "periodic", "left", True),
        ("top", "dirichlet", None, False),
        ("left", "periodic", "right", True),
    ]
    assert spec.equation.endswith(
        "a piece of kind periodic has no value: u there equals u at the translated point of its `partner` "
        "piece (a parallel side of the same length), and so does its normal derivative"
    )
    assert [p.partner for p in SPECS["hz_square_periodic"].boundary] == ["top", None, "bottom", None]


def _case(**kw: object) -> CaseFile:
    base: dict[str, object] = {
        "id": "c",
        "family": "poisson",
        "domain": "unit_square",
        "coefficients": {"k": 1.0},
        "manufactured": {"u": "sin(2*pi*x)*exp(y)"},
        "periodic": ["x"],
        "libraries": ["dolfinx"],
    }
    return CaseFile.model_validate({**base, **kw})


def test_a_periodic_case_is_refused_where_its_data_is_not_periodic_or_not_on_the_square() -> None:
    with pytest.raises(CaseDefinitionError, match=r"c: the solution is not periodic in x on \[0, 1\]"):
        make_spec(_case(manufactured={"u": "sin(2*pi*x)*exp(y) + x"}))
    with pytest.raises(
        CaseDefinitionError, match=r"c: the solution \(its derivative across the sides\) is not periodic"
    ):
        make_spec(_case(manufactured={"u": "sin(pi*x)*exp(y)"}))
    with pytest.raises(CaseDefinitionError, match=r"c: the coefficients is not periodic in x"):
        make_spec(_case(coefficients={"k": "1 + x"}))
    with pytest.raises(CaseDefinitionError, match="c: left, right cannot be both periodic and natural"):
        make_spec(_case(natural={"left": {"kind": "neumann"}, "right": {"kind": "neumann"}}))
    with pytest.raises(ValidationError, match="periodic sides are the unit square's, each direction once"):
        _case(domain="l_shape")


def test_each_track_refuses_what_its_calibration_cannot_solve_on_curves_and_periodic_sides() -> None:
    assert get_track("numpy-scipy").refuses("poisson", ("dirichlet",), False, curved=True) == (
        "no solver on a curved domain (its stencils need the boundary on grid nodes)"
    )
    for lib in ("dolfinx", "scikit-fem", "ngsolve"):
        assert get_track(lib).refuses("poisson", ("dirichlet", "robin"), False, curved=True) is None
        assert get_track(lib).refuses("poisson", ("dirichlet", "periodic"), False) is None
    # scikit-fem reduces heat's time steps and the Stokes system too, not its Newton solves
    for family in ("heat", "stokes"):
        assert get_track("scikit-fem").refuses(family, ("dirichlet", "periodic"), family == "heat") is None
    assert get_track("scikit-fem").refuses("reaction_diffusion", ("dirichlet", "periodic"), False) == (
        "no periodic pieces in a reaction_diffusion solve"
    )
    assert get_track("scikit-fem").refuses("convection_diffusion", ("dirichlet", "periodic"), True) == (
        "no periodic pieces in a transient convection_diffusion solve"
    )
    assert get_track("dolfinx").refuses("reaction_diffusion", ("dirichlet", "periodic"), False) == (
        "no periodic pieces in a reaction_diffusion solve"
    )
    assert get_track("dolfinx").refuses("convection_diffusion", ("dirichlet", "periodic"), True) == (
        "no periodic pieces in a transient convection_diffusion solve"
    )
    assert get_track("ngsolve").refuses("heat", ("dirichlet", "periodic"), True) is None
    assert get_track("ngsolve").refuses("convection_diffusion", ("dirichlet", "neumann"), True) is None


@pytest.mark.parametrize(
    "case_id, sources",
    [
        ("po_annulus_robin", {"boundary[outer]", "boundary[inner]", "boundary[inner].alpha", "forcing"}),
        ("cd_annulus_transient", {"initial", "boundary[inner]", "coefficients[b][0]"}),
        ("po_square_periodic", {"boundary[bottom]", "boundary[top]", "coefficients[k]"}),
    ],
)
def test_arc_traces_robin_data_and_periodic_cases_are_probed_and_none_passes(case_id: str, sources: set[str]) -> None:
    spec = SPECS[case_id]
    hidden, arrays = store.load_hidden(CASES, case_id)
    found = {p.source: p.error for p in probe(spec, arrays["u"], case_mask(DEFS[case_id].domain, spec.grid))}
    assert sources <= set(found)
    assert not {"boundary[left]", "boundary[right]"} & set(found)  # a periodic piece has no data
    assert min(found.values()) > max(c.tau_acc for c in hidden.calibration.values())


def _linear(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return 2 * x - 3 * y + 1


def _outside_straight_cells(corners: np.ndarray, x: np.ndarray, y: np.ndarray) -> int:
    """How many points lie in no triangle of corners (2, 3, m)."""
    (ax, bx, cx), (ay, by, cy) = corners
    det = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    inside = np.zeros(x.size, dtype=bool)
    for k in range(x.size):
        l1 = ((x[k] - ax) * (cy - ay) - (y[k] - ay) * (cx - ax)) / det
        l2 = ((bx - ax) * (y[k] - ay) - (by - ay) * (x[k] - ax)) / det
        inside[k] = bool(((l1 >= -1e-12) & (l2 >= -1e-12) & (1 - l1 - l2 >= -1e-12)).any())
    return int((~inside).sum())


@pytest.mark.parametrize(
    "case_id, convex", [("po_circle_trig", True), ("po_annulus_robin", True), ("po_circlehole_neumann", False)]
)
def test_scikit_fem_s_isoparametric_sampler_reproduces_a_linear_field_at_every_in_domain_point(
    case_id: str, convex: bool
) -> None:
    """A linear field is exact on an isoparametric P2 mesh: its values at the grid points test the
    point location (also of the points between a chord and its arc) and the inverted quadratic map."""
    from skfem import Basis, ElementTriP2

    from fembench_agents.cases.calibration import scikit_fem_curved as curved

    spec = json.loads(SPECS[case_id].model_dump_json())
    p = grid_problem(spec)
    m = curved.mesh(spec)
    basis = Basis(m, ElementTriP2())
    out = curved.GridSampler(m, p.X, p.Y, p.inside)(basis, _linear(*basis.doflocs))
    # an outer circle's chords leave grid points of the exact domain outside every straight triangle
    # (the points on the circle between two vertices); a hole's chords cut into the hole instead
    assert (_outside_straight_cells(m.p[:, m.t], p.X[p.inside], p.Y[p.inside]) > 0) == convex
    assert np.isnan(out[~p.inside]).all()
    np.testing.assert_allclose(out[p.inside], _linear(p.X, p.Y)[p.inside], rtol=0, atol=1e-11)


@pytest.mark.parametrize("case_id", ["po_circle_trig", "po_annulus_robin"])
def test_ngsolve_s_curved_mesh_reproduces_a_linear_field_at_every_in_domain_point(case_id: str) -> None:
    import ngsolve as ng

    from fembench_agents.cases.calibration import ngsolve_geometry as geometry

    spec = json.loads(SPECS[case_id].model_dump_json())
    p = grid_problem(spec)
    m = geometry.mesh(spec)
    gf = ng.GridFunction(ng.H1(m, order=2))
    gf.Set(2 * ng.x - 3 * ng.y + 1)
    out = geometry.sample(gf, m, p)
    assert np.isnan(out[~p.inside]).all()
    np.testing.assert_allclose(out[p.inside], _linear(p.X, p.Y)[p.inside], rtol=0, atol=1e-9)

"""Our own cases on the unit cube: which families and boundary kinds they cover, the data a
natural face carries (the family's flux through its outward normal, plus alpha u on a Robin
face), 3D elasticity's whole-displacement output and equation text, what a cube definition
is refused for, and which tracks solve which family in 3D. Every calibration solver meets its
own gates on one cube case per family in tests/test_cases_calibration.py; the leak probe runs
on every case in tests/test_cases_records.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fembench_agents.cases import store
from fembench_agents.cases.builder import make_spec
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import CaseFile
from fembench_agents.cases.tracks import get_track

CASES = Path(__file__).resolve().parent.parent / "cases"
SPECS = {s.id: s for s in store.load_specs(CASES)}
BOX = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]


def _case(**kw: Any) -> CaseFile:
    base: dict[str, Any] = {
        "id": "cube_probe",
        "family": "poisson",
        "domain": "unit_cube",
        "coefficients": {"k": 2},
        "manufactured": {"u": "x**2*y + z"},
        "grid": {"nx": 9, "ny": 9, "nz": 9, "bbox": BOX},
        "libraries": ["dolfinx"],
    }
    return CaseFile.model_validate(base | kw)


def test_our_cube_cases_cover_every_family_the_cube_solvers_share_with_natural_and_transient_variants() -> None:
    cube = sorted(s.id for s in SPECS.values() if s.domain.name == "unit_cube")
    found = [
        (
            i,
            SPECS[i].family,
            SPECS[i].time is not None,
            tuple((p.name, p.kind) for p in SPECS[i].boundary if p.kind != "dirichlet"),
            SPECS[i].output.fields["u"].shape,
            SPECS[i].libraries,
        )
        for i in cube
    ]
    three = ("dolfinx", "ngsolve", "scikit-fem")
    assert found == [
        ("cd_cube_outlet", "convection_diffusion", False, (("x1", "neumann"),), (17, 17, 17), three),
        ("cd_cube_transient", "convection_diffusion", True, (), (17, 17, 17), three),
        ("el_cube_traction", "elasticity", False, (("z1", "neumann"),), (3, 17, 17, 17), three),
        ("heat_cube_modes", "heat", True, (), (17, 17, 17), three),
        ("hz_cube_robin", "helmholtz", False, (("x0", "robin"),), (17, 17, 17), three),
        ("po_cube_mixed", "poisson", False, (), (17, 17, 17), three),
        ("rd_cube_robin", "reaction_diffusion", False, (("z1", "robin"),), (17, 17, 17), three),
        ("rd_cube_transient", "reaction_diffusion", True, (), (17, 17, 17), three),
        ("st_cube_curl", "stokes", False, (), (3, 17, 17, 17), ("dolfinx",)),
    ]


def test_a_natural_face_carries_the_flux_through_its_outward_normal_and_a_robin_face_alpha_u_too() -> None:
    natural = {"x1": {"kind": "neumann"}, "x0": {"kind": "neumann"}, "z0": {"kind": "robin", "alpha": 3.0}}
    spec, _ = make_spec(_case(natural=natural))
    assert [(p.name, p.kind, p.value, p.alpha) for p in spec.boundary] == [
        ("x0", "neumann", "0", None),  # -k du/dx = -4 x y, 0 at x = 0
        ("x1", "neumann", "4*y", None),  # k du/dx = 4 x y at x = 1
        ("y0", "dirichlet", "z", None),
        ("y1", "dirichlet", "x**2 + z", None),
        ("z0", "robin", "3*x**2*y - 2", 3.0),  # -k du/dz + 3 u at z = 0
        ("z1", "dirichlet", "x**2*y + 1", None),
    ]
    assert spec.equation == (
        "-div(k grad u) = f in the domain; u = g on every boundary piece of kind dirichlet; on a piece of kind "
        "neumann k du/dn = g, n the outward unit normal; on a piece of kind robin k du/dn + alpha u = g, n the "
        "outward unit normal, alpha the piece's `alpha`"
    )
    assert spec.forcing == "-4*y"


def test_3d_elasticity_outputs_the_whole_displacement_and_its_traction_is_sigma_n() -> None:
    case = _case(
        family="elasticity",
        coefficients={"E": 10, "nu": 0.25},
        manufactured={"u": ["x", "0", "0"]},
        natural={"x1": {"kind": "neumann"}},
    )
    spec, solution = make_spec(case)
    # lambda = mu = 4: sigma = diag(lambda + 2 mu, lambda, lambda), and sigma n on x = 1 is its first column
    assert [(p.name, p.value) for p in spec.boundary[:2]] == [("x0", ["0", "0", "0"]), ("x1", ["12", "0", "0"])]
    assert spec.forcing == ["0", "0", "0"] and len(solution) == 3
    assert spec.output.fields["u"].shape == (3, 9, 9, 9)
    assert spec.equation.startswith("-div sigma(u) = f in the domain, u = (ux, uy, uz), sigma = 2 mu eps(u)")
    assert "plane strain" not in spec.equation
    assert "u = g (a triple) on every boundary piece of kind dirichlet" in spec.equation
    assert spec.equation.endswith(
        "on a piece of kind neumann sigma(u) n = g, n the outward unit normal (g a triple: "
        "the traction, 0 traction-free)"
    )


STOKES: dict[str, Any] = {
    "family": "stokes",
    "coefficients": {"nu": 2},
    # the curl of (0, 0, x**2*y): (x**2, -2*x*y, 0)
    "manufactured": {"u": ["x**2", "-2*x*y", "0"], "p": "x*z"},
}


def test_3d_stokes_outputs_the_whole_velocity_and_p_up_to_its_mean_with_the_velocity_on_every_face() -> None:
    spec, solution = make_spec(_case(**STOKES))
    assert [(name, f.shape, f.up_to_constant) for name, f in spec.output.fields.items()] == [
        ("u", (3, 9, 9, 9), False),
        ("p", (9, 9, 9), True),
    ]
    # -nu lap(u) + grad p with nu = 2: lap(x**2) = 2, lap(-2xy) = 0; grad(xz) = (z, 0, x)
    assert spec.forcing == ["z - 4", "0", "x"]
    assert [(p.name, p.kind, p.value) for p in spec.boundary] == [
        ("x0", "dirichlet", ["0", "0", "0"]),
        ("x1", "dirichlet", ["1", "-2*y", "0"]),
        ("y0", "dirichlet", ["x**2", "0", "0"]),
        ("y1", "dirichlet", ["x**2", "-2*x", "0"]),
        ("z0", "dirichlet", ["x**2", "-2*x*y", "0"]),
        ("z1", "dirichlet", ["x**2", "-2*x*y", "0"]),
    ]
    assert [str(e) for e in solution or []] == ["x**2", "-2*x*y", "0", "x*z"]  # the hidden record's [ux, uy, uz, p]
    assert spec.equation == (
        "-nu lap(u) + grad p = f and div u = 0 in the domain, velocity u = (ux, uy, uz), pressure p; "
        "u = g (a triple) on every boundary piece; p is fixed only up to a constant (it is compared after "
        "subtracting its mean over the in-domain grid points, on both sides)"
    )
    quiet, _ = make_spec(_case(**STOKES, pressure_compared=False))
    assert list(quiet.output.fields) == ["u"]
    assert quiet.equation.endswith(
        "p is fixed only up to a constant (it is not compared: the velocity u alone is scored)"
    )


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"manufactured": {"u": ["x**2", "x*y", "z"], "p": "x"}},
            "st_probe: a Stokes velocity must be divergence-free \\(a curl of a vector potential is\\); "
            "div u = 3\\*x \\+ 1$",
        ),
        ({"manufactured": {"u": ["x**2", "-2*x*y", "0"]}}, "\\[ux, uy, uz\\] and p for stokes"),
        ({"manufactured": {"u": ["x**2", "-2*x*y"], "p": "x"}}, "\\[ux, uy, uz\\] and p for stokes"),
        (
            {"natural": {"z1": {"kind": "do-nothing"}}},
            "st_probe: a Stokes case on the unit cube gives the velocity on every face; natural faces \\(z1\\)",
        ),
    ],
)
def test_a_cube_stokes_definition_is_refused_naming_what_is_wrong(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(CaseDefinitionError, match=message):
        make_spec(_case(**(STOKES | {"id": "st_probe"} | changes)))


def test_a_pressure_is_refused_for_a_family_without_one() -> None:
    with pytest.raises(CaseDefinitionError, match="with a manufactured u \\(\\[ux, uy, uz\\] for elasticity"):
        make_spec(_case(manufactured={"u": "x", "p": "y"}))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"natural": {"left": {"kind": "neumann"}}}, "natural names no boundary piece of unit_cube: left"),
        (
            {"natural": {n: {"kind": "neumann"} for n in ("x0", "x1", "y0", "y1", "z0", "z1")}},
            "at least one boundary piece must be Dirichlet",
        ),
        (
            {"family": "reaction_diffusion", "coefficients": {"D": 1, "R": "2*u"}},
            "R\\(u\\) must be nonlinear in u",
        ),
        ({"time": {"t0": 0.0, "t_end": 1.0}}, "a time interval is for heat, burgers, wave, convection_diffusion"),
        ({"family": "elasticity", "coefficients": {"E": 1, "nu": 0.3}}, "\\[ux, uy, uz\\] for elasticity"),
        ({"family": "wave", "coefficients": {"c": 1}}, "a case on the unit cube takes a family among poisson, heat"),
    ],
)
def test_a_cube_definition_is_refused_naming_what_is_wrong(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(CaseDefinitionError, match=message):
        make_spec(_case(**changes))


def test_each_track_names_the_families_its_calibration_solves_on_the_cube() -> None:
    for lib in ("dolfinx", "ngsolve", "scikit-fem"):
        for family in ("poisson", "heat", "helmholtz", "convection_diffusion", "reaction_diffusion", "elasticity"):
            assert get_track(lib).refuses(family, ("dirichlet", "neumann", "robin"), False, dim=3) is None
        for family in ("convection_diffusion", "reaction_diffusion"):
            assert get_track(lib).refuses(family, ("dirichlet",), True, dim=3) is None
    assert get_track("ngsolve").refuses("stokes", ("dirichlet",), False, dim=3) == (
        "no stokes solver on the unit cube (3D)"
    )
    assert get_track("scikit-fem").refuses("biharmonic", ("dirichlet",), False, dim=3) == (
        "no biharmonic solver on the unit cube (3D)"
    )
    assert get_track("numpy-scipy").refuses("poisson", ("dirichlet",), False, dim=3) == (
        "no poisson solver on the unit cube (3D)"
    )

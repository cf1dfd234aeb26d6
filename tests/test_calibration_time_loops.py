"""The DOLFINx time loops that evaluate a step's form without assembling its high-rule cell
integral each step (docs/pde_import.md, "Speed and memory"): the transient reaction-diffusion
residual from matrices, forcing loads and a reaction on its exact rule (dolfinx_reaction.py,
dolfinx_forcing.py) solves as Newton on the assembled step form did (the code before it, kept
here as the reference): the same steps, iterations and factorisations, the same solution up to
rounding, on a structured mesh with a damped start and a forcing that does not split in time, on
a curved (P2 geometry) annulus, and on a square with a hole whose pieces are natural. Heat's and
Galerkin convection-diffusion's right-hand side from matrices (dolfinx_transient.py) likewise,
with Robin, Neumann and periodic pieces."""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

import gc
import json
from pathlib import Path
from typing import Any

import numpy as np
import published_records as pr
import pytest
import ufl
from dolfinx import fem
from dolfinx.fem.petsc import NonlinearProblem

from fembench_agents.cases import store
from fembench_agents.cases.calibration import dolfinx_fem, dolfinx_transient
from fembench_agents.cases.calibration.common import grid_problem
from fembench_agents.cases.calibration.dolfinx_common import Setup, structured_mesh
from fembench_agents.cases.calibration.dolfinx_forcing import cell_quadrature_degree, exact_rule, separated
from fembench_agents.cases.calibration.dolfinx_reaction import CHORD, march, step_form
from fembench_agents.cases.calibration.dolfinx_transient import Clock
from fembench_agents.cases.published import ImportReport, convert

CASES = Path(__file__).resolve().parent.parent / "cases"


def _assembled_form(s: Setup) -> tuple[fem.Function, dict[str, Any]]:
    """The chord on the whole step form F, assembled at every iteration, MUMPS LU (before)."""
    p = step_form(s)
    problem = NonlinearProblem(p.F, p.u, bcs=[p.bc], petsc_options_prefix="test_rdt_", petsc_options=CHORD)
    return p.u, march(p, problem)


def _merged(record: dict[str, Any]) -> dict[str, Any]:
    spec, view, _ = convert(record, ImportReport())
    data = json.loads(spec.model_dump_json())
    return {
        **view,
        **data,
        "domain": {**view["domain"], **data["domain"]},
        "output": {**view["output"], **data["output"]},
    }


def _jump_start_moving_source() -> dict[str, Any]:
    """Allen-Cahn (degree 8 in u v), a source moving with t (it does not split in time), an
    initial field off the zero boundary data (the damped start: two step lengths and thetas)."""
    return _merged(
        pr._record(
            "rd_moving",
            {
                "type": "reaction_diffusion",
                "pde_params": {"epsilon": 0.02, "reaction": {"type": "allen_cahn", "lambda": 4.0}},
                "time": {"t0": 0.0, "t_end": 0.2, "dt": 0.01},
                "source_term": "3*exp(-40*((x - 0.3 - 2*t)**2 + (y - 0.5)**2))*sin(5*pi*x)**2",
                "initial_condition": "0.4 + 0.1*sin(pi*x)*sin(pi*y)",
            },
            bc={"dirichlet": {"on": "all", "value": "0.0"}},
            grid={"bbox": [0, 1, 0, 1], "nx": 21, "ny": 21},
        )
    )


def _own(case_id: str) -> dict[str, Any]:
    spec = next(s for s in store.load_specs(CASES) if s.id == case_id)
    return json.loads(spec.model_dump_json())


SOLVES = {
    "structured, damped start, moving source": (_jump_start_moving_source, (6, 3)),
    "curved annulus (P2 geometry), cubic": (lambda: _own("rd_annulus_transient"), None),
    "square hole with natural pieces": (lambda: _own("rd_hole_transient_neumann"), None),
}


@pytest.mark.parametrize("name", SOLVES)
def test_the_split_residual_solves_as_the_assembled_form_did(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    make, expected = SOLVES[name]
    spec = make()
    new = dolfinx_fem.solve(spec)
    monkeypatch.setitem(dolfinx_fem.FAMILIES, "reaction_diffusion", _assembled_form)
    old = dolfinx_fem.solve(spec)
    keys = ("time_steps", "iterations", "factorisations")
    assert [new["solver_info"][k] for k in keys] == [old["solver_info"][k] for k in keys]
    if expected is not None:
        assert (new["solver_info"]["time_steps"], new["solver_info"]["factorisations"]) == expected
    inside = np.isfinite(old["u"])
    assert (np.isfinite(new["u"]) == inside).all() and inside.sum() > 200
    gap = np.linalg.norm(new["u"][inside] - old["u"][inside]) / np.linalg.norm(old["u"][inside])
    assert gap < 1e-11, gap


def test_a_forcing_splits_into_terms_a_t_times_g_xy_gathered_by_a() -> None:
    text = "(2.0*exp(0.5*t)*cos(pi*x)**2 + 3*exp(0.5*t))*exp(-2.0*t)*sin(pi*y) + t*x*y + sin(pi*x)"
    assert separated(text) == [
        ("exp(-1.5*t)", "2.0*sin(pi*y)*cos(pi*x)**2 + 3*sin(pi*y)"),
        ("t", "x*y"),
        ("1", "sin(pi*x)"),
    ]
    assert separated("exp(-40*((x - 0.3 - 2*t)**2 + (y - 0.5)**2))") is None  # a moving source
    assert separated("x*step(y - 0.5)") == [("1", "x*step(y - 0.5)")]  # a switch the language knows


def _setup(nx: int) -> Setup:
    merged = _jump_start_moving_source()
    merged["grid"] = {**merged["grid"], "nx": nx, "ny": nx}
    domain, cells = structured_mesh(merged)
    return Setup(spec=merged, grid=grid_problem(merged), domain=domain, cells=cells)


def test_a_step_form_has_one_rule_its_forcing_s_and_a_polynomial_reaction_its_own() -> None:
    """A product of sines cubed asks for degree 20 (rd_periodic_cubic's forcing); u^3 v is
    degree 8, exact on that rule's points and on 16 of them; exp(u) is no polynomial."""
    s = _setup(5)
    V = s.space()
    u, v = fem.Function(V), ufl.TestFunction(V)
    forcing = s.expr("exp(-3*t)*sin(4*pi*x)**3*cos(4*pi*y)**3", t=fem.Constant(s.domain, 0.0))
    F = (u * v + 0.05 * ufl.inner(ufl.grad(u), ufl.grad(v)) + (u**3 + u) * v - forcing * v) * ufl.dx
    assert cell_quadrature_degree(F) == 20
    assert cell_quadrature_degree((u * v - forcing * v) * ufl.dx(metadata={"quadrature_degree": 6})) == 6
    assert exact_rule(s, (u**3 + u) * v, 20).metadata() == {"quadrature_degree": 8}
    assert exact_rule(s, 2.0 * u * (1 - u) * v / 3, 20).metadata() == {"quadrature_degree": 6}
    assert exact_rule(s, ufl.exp(u) * v, 20).metadata() == {"quadrature_degree": 20}
    assert exact_rule(s, (u**3) * v, 6).metadata() == {"quadrature_degree": 6}  # never above the form's


def test_a_solve_leaves_no_nonlinear_problem_behind() -> None:
    """SNES holds the residual callback; a callback that held the problem made a cycle through a
    PETSc object, which the collector cannot see: each solve's factors stayed resident (an import
    process grew from 250 to 1400 MB over the reaction-diffusion records)."""
    dolfinx_fem.solve(_jump_start_moving_source())
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, NonlinearProblem)]


def _heat_gaussian_start() -> dict[str, Any]:
    """A Gaussian initial field (the damped start) and a forcing with terms in exp(-t), t and 1."""
    return _merged(
        pr._record(
            "heat_gauss",
            {
                "type": "heat",
                "coefficients": {"kappa": {"type": "constant", "value": 0.5}},
                "source_term": "exp(-t)*sin(3*pi*x)*sin(2*pi*y)**3 + t*x*y + 1",
                "initial_condition": "exp(-120*((x - 0.4)**2 + (y - 0.5)**2))",
                "time": {"t0": 0.0, "t_end": 0.1, "dt": 0.01, "scheme": "backward_euler"},
            },
            bc={"dirichlet": {"on": "all", "value": "0.0"}},
            grid={"bbox": [0, 1, 0, 1], "nx": 21, "ny": 21},
        )
    )


LINEAR_SOLVES = {
    "heat, damped start": _heat_gaussian_start,
    "heat, Neumann and Robin pieces": lambda: _own("heat_square_robin"),
    "heat, periodic pieces": lambda: _own("heat_square_periodic"),
    "heat, curved annulus with a Robin piece": lambda: _own("heat_annulus_robin"),
    "convection-diffusion (Galerkin), curved, Neumann piece": lambda: _own("cd_annulus_transient"),
}


def _assembled_right_hand_side(
    s: Setup, V: fem.FunctionSpace, operator: Any, u_old: fem.Function, clock: Clock, L_form: Any
) -> Any:
    return dolfinx_transient._assembled(fem.form(L_form))


@pytest.mark.parametrize("name", LINEAR_SOLVES)
def test_a_linear_step_s_right_hand_side_from_matrices_solves_as_the_assembled_one_did(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = LINEAR_SOLVES[name]()
    new = dolfinx_fem.solve(spec)
    monkeypatch.setattr(dolfinx_transient, "_right_hand_side", _assembled_right_hand_side)
    monkeypatch.setattr(Setup, "stepped_factorisation", property(lambda self: "lu"))  # MUMPS LU, as before
    old = dolfinx_fem.solve(spec)
    assert new["solver_info"]["time_steps"] == old["solver_info"]["time_steps"] > 5
    inside = np.isfinite(old["u"])
    assert (np.isfinite(new["u"]) == inside).all() and inside.sum() > 200
    gap = np.linalg.norm(new["u"][inside] - old["u"][inside]) / np.linalg.norm(old["u"][inside])
    assert gap < 1e-11, gap

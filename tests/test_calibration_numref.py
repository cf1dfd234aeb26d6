"""The DOLFINx calibration rules that let the published records without a solution import
(docs/pde_import.md, "Numerical references: what the calibration does"): the parabolic step
schedule (a minimum count, a damped start where the data outruns the step, a Courant limit),
SUPG past a cell Peclet number of 1, mesh lines that keep every grid point a node beside a
corner line (of a refined solve, the points it reads), and the cube's mesh refined while its data is not resolved."""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

import json
from typing import Any

import numpy as np
import published_records as pr
import published_records_bc as bc
import pytest
import ufl

from fembench_agents.cases import gates, published_ladders
from fembench_agents.cases.calibration import dolfinx_cube, dolfinx_fem, dolfinx_transient
from fembench_agents.cases.calibration.common import READ_EVERY, grid_problem, refined
from fembench_agents.cases.calibration.dolfinx_common import Setup, _mesh_lines, streamline_weight, structured_mesh
from fembench_agents.cases.model import GateConfig, GridSpec
from fembench_agents.cases.published import ImportReport, convert
from fembench_agents.cases.published_domains import Excluded
from fembench_agents.cases.published_shapes import domain_mask


def _merged(record: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    spec, view, _ = convert(record, ImportReport())
    data = json.loads(spec.model_dump_json())
    merged = {
        **view,
        **data,
        "domain": {**view["domain"], **data["domain"]},
        "output": {**view["output"], **data["output"]},
    }
    return spec, merged


def _heat(rid: str, initial: str, t_end: float, source: str = "0.0") -> dict[str, Any]:
    pde = {
        "type": "heat",
        "coefficients": {"kappa": {"type": "constant", "value": 1.0}},
        "source_term": source,
        "initial_condition": initial,
        "time": {"t0": 0.0, "t_end": t_end, "dt": 0.001, "scheme": "backward_euler"},
    }
    return pr._record(rid, pde, bc={"dirichlet": {"on": "all", "value": "0.0"}})


def _setup(merged: dict[str, Any]) -> Setup:
    domain, cells = structured_mesh(merged)
    return Setup(spec=merged, grid=grid_problem(merged), domain=domain, cells=cells)


def test_a_short_interval_gets_its_minimum_steps_and_a_gaussian_start_is_damped() -> None:
    _, merged = _merged(_heat("heat_gauss", "exp(-120*((x-0.6)**2 + (y-0.4)**2))", 0.1))
    s = _setup(merged)
    # the Rayleigh quotient of exp(-a r^2) is 2a
    assert dolfinx_transient.data_decay_rate(s, s.coefficient("k"), 0.0) == pytest.approx(240.0, rel=0.01)
    steps, plan = dolfinx_transient.schedule(s, s.coefficient("k"))
    assert steps == 15  # 0.3 x 49 intervals (the grid's rule alone: ceil(0.1 x 49) = 5)
    dt = 0.1 / 15
    assert [p.theta for p in plan[:6]] == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5] and len(plan) == 17
    assert plan[0].t_new == pytest.approx(dt / 2) and plan[4].t_old == pytest.approx(2 * dt)
    assert plan[-1].t_new == pytest.approx(0.1)


def test_smooth_data_keeps_plain_crank_nicolson() -> None:
    _, merged = _merged(_heat("heat_smooth", "sin(pi*x)*sin(pi*y)", 0.5))
    s = _setup(merged)
    assert dolfinx_transient.data_decay_rate(s, s.coefficient("k"), 0.0) == pytest.approx(2 * np.pi**2, rel=1e-3)
    steps, plan = dolfinx_transient.schedule(s, s.coefficient("k"))
    assert steps == 25 and {p.theta for p in plan} == {0.5}  # ceil(0.5 x 49): lambda dt = 0.39


def test_a_high_frequency_decay_over_a_short_interval_calibrates_within_two_percent() -> None:
    """sin(6 pi x) sin(6 pi y) decaying over 0.005: one Crank-Nicolson step (the grid's rule) was
    81 times the solution's size off; 15 steps are 1.4% off the exact decay."""
    spec, merged = _merged(_heat("heat_high_freq", "sin(6*pi*x)*sin(6*pi*y)", 0.005))
    out = dolfinx_fem.solve(merged)
    assert out["solver_info"]["time_steps"] == 15
    mask = domain_mask(spec.domain, spec.grid, spec.boundary)
    X, Y = np.meshgrid(np.linspace(0, 1, 50), np.linspace(0, 1, 50))
    exact = {"u": np.exp(-72 * np.pi**2 * 0.005) * np.sin(6 * np.pi * X) * np.sin(6 * np.pi * Y)}
    err = gates.contract_error(out, exact, spec.output, mask, GateConfig().eps)
    assert err == pytest.approx(1.35e-2, rel=0.05)


def _convection(rid: str, eps: float, beta: list[float], **time: Any) -> dict[str, Any]:
    pde: dict[str, Any] = {
        "type": "convection_diffusion",
        "pde_params": {"epsilon": eps, "beta": beta, "stabilization": "supg"},
        "source_term": "1.0",
    }
    if time:
        pde |= {"initial_condition": "0.0", "time": {"t0": 0.0, "dt": 0.02, **time}}
    return pr._record(rid, pde, bc={"dirichlet": {"on": "all", "value": "0.0"}})


def test_supg_only_past_a_cell_peclet_number_of_one() -> None:
    """On the 50-point grid (49 cells, P2 element length sqrt(2) / 98): |b| 12 against epsilon
    0.005 is a Peclet number of 17; |b| 1.1 against 0.05 is 0.16."""
    for eps, beta, stabilised in ((0.005, [12.0, 0.0], True), (0.05, [1.0, 0.5], False)):
        _, merged = _merged(_convection("cd", eps, beta))
        s = _setup(merged)
        assert (streamline_weight(s, ufl.TestFunction(s.space())) is not None) is stabilised


def test_a_convection_dominated_solve_is_close_to_its_own_4x_refinement() -> None:
    """Galerkin's oscillations from the unresolved outflow layer were 0.13 to 0.22 off the 8x solve
    on the published records; with SUPG the 50-point solve is 2.5% off its 4x refinement."""
    spec, merged = _merged(_convection("cd_layer", 0.005, [12.0, 0.0]))
    mask = domain_mask(spec.domain, spec.grid, spec.boundary)
    coarse = dolfinx_fem.solve(merged)
    fine_grid = {**merged["grid"], "nx": 197, "ny": 197}
    fine = dolfinx_fem.solve({**merged, "grid": fine_grid})
    reference = {"u": np.asarray(fine["u"])[::4, ::4]}
    err = gates.contract_error(coarse, reference, spec.output, mask, GateConfig().eps)
    assert err == pytest.approx(2.50e-2, rel=0.02)


def test_an_initial_field_off_the_boundary_data_gets_the_damped_start() -> None:
    _, merged = _merged(_heat("heat_jump", "0.4 + 0.1*sin(pi*x)*sin(pi*y)", 0.3))
    s = _setup(merged)
    V = s.space()
    g, _, bc = s.boundary(V, 0.0)
    start = dolfinx_transient.start(s, V, 0.0)
    assert dolfinx_transient.jumps(start, g, bc)
    steps, plan = dolfinx_transient.schedule(s, s.coefficient("k"), jump=True)
    assert steps == 15 and [p.theta for p in plan[:5]] == [1.0, 1.0, 1.0, 1.0, 0.5]
    _, merged = _merged(_heat("heat_fits", "0.1*sin(pi*x)*sin(pi*y)", 0.3))
    s = _setup(merged)
    g, _, bc = s.boundary(V := s.space(), 0.0)
    assert not dolfinx_transient.jumps(dolfinx_transient.start(s, V, 0.0), g, bc)


def test_a_transient_convection_steps_at_most_two_grid_spacings() -> None:
    _, merged = _merged(_convection("cd_moving", 0.02, [6.0, 3.0], t_end=0.1))
    s = _setup(merged)
    speed = float(np.hypot(6.0, 3.0))
    steps, _ = dolfinx_transient.schedule(s, s.coefficient("eps"), speed)
    assert steps == 17  # ceil(0.1 x 6.71 / 2 x 49) = ceil(16.4); the grid's rule gives 5


def test_mesh_lines_keep_every_grid_point_a_node_beside_a_corner_line() -> None:
    # 75 points on [0, 1.5], the L-shape's corner at y = 0.5: every other line would put the line
    # 0.5 inside a cell whose P2 midpoints miss the grid row y = 0.507, so every grid line is taken
    lines, cells = _mesh_lines(0.0, 1.5, 75, [0.0, 0.5, 1.5])
    assert cells == 74 and lines.size == 76 and np.isclose(lines, 0.5).any()
    # 51 points on [0, 1], the corner 0.5 between two half-grid lines: the split cells' midpoints
    # 0.49 and 0.51 are grid points, so half the grid stays
    lines, cells = _mesh_lines(0.0, 1.0, 51, [0.0, 0.5, 1.0])
    assert cells == 25 and lines.size == 27
    # 100 points: the grid itself already; the corner is a line of its own as before
    lines, cells = _mesh_lines(0.0, 2.0, 100, [0.0, 0.5, 2.0])
    assert cells == 99 and lines.size == 101


def test_a_refined_solve_keeps_only_the_points_it_reads_as_nodes() -> None:
    # wave_lshape_source_gaussian's corner 0.4 on its 100-point grid refined 4x (397 points): the
    # corner line splits the cell about the refined point 159, which is never read (only every 4th
    # is), so half the refined grid stays: 198 cells and the corner line, not 396
    lines, cells = _mesh_lines(0.0, 1.0, 397, [0.0, 0.4, 1.0], every=4)
    assert cells == 198 and lines.size == 200 and np.isclose(lines, 0.4).any()
    lines, cells = _mesh_lines(0.0, 1.0, 397, [0.0, 0.4, 1.0])
    assert cells == 396 and lines.size == 398
    seen: list[dict[str, Any]] = []

    def solver(spec: dict[str, Any]) -> dict[str, Any]:
        seen.append(spec)
        return {"u": np.zeros((spec["grid"]["ny"], spec["grid"]["nx"]))}

    out = refined(solver, {"grid": {"nx": 100, "ny": 50, "bbox": [0, 1, 0, 1]}}, 4)
    assert seen[0]["grid"]["nx"] == 397 and seen[0]["grid"]["ny"] == 197 and seen[0][READ_EVERY] == 4
    assert out["u"].shape == (50, 100)
    refined(solver, {"grid": {"nx": 100, "ny": 50, "bbox": [0, 1, 0, 1]}}, 1)
    assert READ_EVERY not in seen[1]


def test_the_cube_mesh_is_refined_while_its_forcing_is_not_resolved() -> None:
    grid = GridSpec(nx=25, ny=25, nz=25, bbox=[0, 1, 0, 1, 0, 1])
    high = {"forcing": "75*pi**2*sin(5*pi*x)*sin(5*pi*y)*sin(5*pi*z)"}
    domain, cells = dolfinx_cube.cube_mesh(grid)
    assert cells == (12, 12, 12) and dolfinx_cube.data_error(high, domain) == pytest.approx(0.0661, rel=0.01)
    # a third finer: 16 cells, 2.9% off; 22 would be 91,125 unknowns, over the cap of 60,000
    assert dolfinx_cube.resolving_mesh(high, grid)[1] == (16, 16, 16)
    smooth = {"forcing": "3*pi**2*sin(pi*x)*sin(pi*y)*sin(pi*z)"}
    assert dolfinx_cube.resolving_mesh(smooth, grid)[1] == (12, 12, 12)


def _reaction(rid: str, n: int) -> Any:
    return convert(bc.reaction_diffusion_numerical(rid, n), ImportReport())[0]


def test_a_reaction_diffusion_reference_takes_the_rungs_within_its_budget() -> None:
    """70 points, 0.25 long: 4x is 277^2 = 76,729 unknowns x 83 steps (6.4e6); 6x 415^2 x 125
    (2.2e7) and 8x are over 2e7. 30 points: 8x is 233^2 x 70 (3.8e6)."""
    assert published_ladders.within_budget(_reaction("rd_70", 70)) == ((1, 2, 4),)
    assert published_ladders.within_budget(_reaction("rd_30", 30)) == ((1, 2, 4), (1, 4, 6), (1, 4, 8))
    with pytest.raises(Excluded, match=r"its 4x solve would take 239 Newton time steps of 635209 unknowns \(1\.5e\+08"):
        published_ladders.within_budget(_reaction("rd_200", 200))


def test_the_chord_newton_factorises_once_per_step_length() -> None:
    """A jump start (0.4 inside, 0 on the boundary): four backward-Euler half steps, then
    Crank-Nicolson; two factorisations for all of its steps."""
    record = pr._record(
        "rd_chord",
        {
            "type": "reaction_diffusion",
            "pde_params": {"epsilon": 0.06, "reaction": {"type": "logistic", "rho": 3.0}},
            "time": {"t0": 0.0, "t_end": 0.2, "dt": 0.01},
            "source_term": "4*exp(-200*((x-0.4)**2 + (y-0.6)**2))",
            "initial_condition": "0.4 + 0.1*sin(pi*x)*sin(pi*y)",
        },
        bc={"dirichlet": {"on": "all", "value": "0.0"}},
        grid={"bbox": [0, 1, 0, 1], "nx": 21, "ny": 21},
    )
    _, merged = _merged(record)
    out = dolfinx_fem.solve(merged)
    info = out["solver_info"]
    assert (info["time_steps"], info["factorisations"]) == (6, 2)
    assert info["iterations"] > 8  # the chord takes more iterations than Newton's 2 or 3 a step


def test_an_unstructured_reference_climbs_to_6x_only_where_that_solve_is_affordable() -> None:
    """The third unstructured rung (1, 4, 6) is taken where its 6x solve is expected within 1e6
    unknowns (the refined grid's box, reference_memory.unknowns): the dumbbell Stokes record's
    144 x 66 grid, 859 x 391 x 2.25 = 755,705 (it imports at 6x in 858 MB); the ten-tooth gear's
    160 x 160, 955^2 x 2.25 = 2,052,056, is not (its 6x solve would not fit 2 GB)."""
    assert published_ladders.UNSTRUCTURED_CLIMB == (1, 4, 6) and published_ladders.CLIMB_UNKNOWNS == 1_000_000
    dumbbell = {"family": "stokes", "grid": {"nx": 144, "ny": 66, "bbox": [0.0, 1.0, 0.27, 0.73]}}
    gear = {"family": "stokes", "grid": {"nx": 160, "ny": 160, "bbox": [-0.75, 0.75, -0.75, 0.75]}}
    assert published_ladders.affordable(dumbbell, 6) and not published_ladders.affordable(gear, 6)
    # a scalar family on the gear's grid: 955^2 = 912,025 unknowns, within
    assert published_ladders.affordable({**gear, "family": "poisson"}, 6)
    # 1,000,000 is the edge: a scalar grid of 1000^2 points at 1x is taken, one more column is not
    assert published_ladders.affordable({"family": "poisson", "grid": {"nx": 1000, "ny": 1000}}, 1)
    assert not published_ladders.affordable({"family": "poisson", "grid": {"nx": 1001, "ny": 1000}}, 1)
    # a record refused at 4x for its estimate says which limit kept it from 6x; the dumbbell, none
    assert published_ladders.beyond_climb(dumbbell) is None
    assert published_ladders.beyond_climb(gear) == (
        "its 6x solve, about 2,052,056 unknowns, is beyond the import's 1,000,000 (a direct factorisation within 2 GB)"
    )

"""The published unit-cube records (domain type `unit_cube`, an output grid with
nz), as published.convert reads them: the six faces as our boundary pieces,
each valued by the solution's trace there, and the published
`bc.dirichlet.value` their 3D transfinite blend (published_boundary.py,
cube_data.coons_blend); the output (nz, ny, nx), a vector family's magnitude
(`u_mag`) as in 2D.

The published 3D scalar records state a source term that is not their
solution's: the 2D Laplacian's, without the z derivatives (37 of the 40
manufactured poisson, heat, helmholtz and convection-diffusion records). The
published oracle never reads it when the record has a manufactured solution:
it derives f from u (pdebench/oracle/*.py), so the published reference is the
solution of the derived forcing. Ours is that case: the forcing derived from u
as the oracle does, in both halves of the case_spec, each replacement named in
the import report (`forcing_derived`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from fembench_agents.cases import cube_series, gates, numerical
from fembench_agents.cases.cube_data import NAMES, disagree, forcing
from fembench_agents.cases.model import GateConfig, GridSpec, ReferenceCheck
from fembench_agents.cases.published_domains import Excluded, as_list
from fembench_agents.cases.zero_flow import zero_velocity_reason

COMPONENTS = 3  # a vector family's solution on the cube
MAX_CALIBRATION_ERROR = 0.05  # published.MAX_CALIBRATION_ERROR (published.py imports this module)
MAGNITUDE_FIELD = "u_mag"  # the published 3D output of elasticity and Stokes
# Without a manufactured solution, heat's reference is a sine series (cube_series.py), built with the
# case; the other families' would need the coarse-to-fine ladder's solves, beyond the import's memory.
SERIES_FAMILIES = ("heat",)
NUMERICAL_REASON_LIMIT = (
    "the coarse-to-fine check (cases/numerical.py) needs P2 solves on the mesh refined 4x and 8x (about 0.5 "
    "and 4 million unknowns per component on a 20^3 grid), beyond a direct (MUMPS) solve within the import's 2 GB"
)
NUMERICAL_REASON = f"numerical reference not built in 3D: {NUMERICAL_REASON_LIMIT}"


def without_reference(family: str, pde: dict[str, Any], whole: dict[str, Any]) -> str:
    """Why a 3D record without a manufactured solution is excluded: a flow record whose velocity
    is zero by its own data (zero wall data and a gradient forcing: the published two,
    zero_flow.py), else the numerical reference's limit."""
    load, data = as_list(pde.get("source_term", "0")), as_list(whole.get("value", "0"))
    if family in ("stokes", "navier_stokes") and len(load) == 3:
        zero = zero_velocity_reason(load, [data], [])
        if zero is not None:
            return zero
    return NUMERICAL_REASON


def is_3d(oc: dict[str, Any]) -> bool:
    grid = (oc.get("output") or {}).get("grid") or {}
    return "nz" in grid or (oc.get("domain") or {}).get("type") in ("unit_cube", "cube")


def grid_spec(grid: dict[str, Any]) -> GridSpec:
    if (grid.get("nz") is None) or len(grid.get("bbox") or []) != 6:
        raise Excluded(f"record not read: a unit_cube output grid needs nx, ny, nz and a six-value bbox; got {grid}")
    return GridSpec(
        nx=int(grid["nx"]),
        ny=int(grid["ny"]),
        nz=int(grid["nz"]),
        bbox=tuple(float(v) for v in grid["bbox"]),
    )


def checked_forcing(
    family: str, coefficients: dict[str, Any], solution: Any, pressure: Any, stated: list[Any]
) -> list[sp.Expr] | None:
    """The forcing the published oracle solves with (derived from u) when the stated source
    term is another; None when the stated one is right."""
    u = [sp.sympify(str(c), locals=NAMES) for c in as_list(solution)]
    p = sp.sympify(str(pressure), locals=NAMES) if pressure is not None else None
    derived = forcing(family, coefficients, u, p)
    given = [sp.sympify(str(e), locals=NAMES) for e in stated]
    return [sp.factor_terms(sp.expand(e)) for e in derived] if disagree(derived, given) else None


def series_reference(
    spec: Any, merged: dict[str, Any], mask: np.ndarray, solve: Any, config: GateConfig
) -> tuple[dict[str, np.ndarray], dict[str, Any], float, float, ReferenceCheck]:
    """A cube record without a solution: the eigenfunction series (cube_series.py), kept when its
    truncation bound is within numerical.MARGIN of the case's threshold, as a ladder's estimate."""
    try:
        series = cube_series.heat_series(spec)
    except cube_series.SeriesUnavailable as exc:
        raise Excluded(f"numerical reference not built in 3D: {exc}; {NUMERICAL_REASON_LIMIT}") from None
    ref = {"u": series.u}
    try:
        out = solve(merged)
    except Exception as exc:  # a record our solver cannot run is reported, never fatal to the import
        raise Excluded(f"calibration solver failed: {type(exc).__name__}: {exc}") from None
    err = gates.contract_error(out, ref, spec.output, mask, config.eps)
    if not np.isfinite(err) or err > MAX_CALIBRATION_ERROR:
        raise Excluded(f"calibration error above {MAX_CALIBRATION_ERROR}: {err:.3g} (our solve against the series)")
    tau = float(f"{gates.tau_acc(float(f'{err:.4e}'), config):.4e}")
    threshold = float(f"{numerical.MARGIN * tau:.4e}")
    if not series.relative_bound <= threshold:
        raise Excluded(
            f"numerical reference refused: the series' truncation bound {series.relative_bound:.2e} with "
            f"{series.modes} modes per axis is above {threshold:.2e} ({numerical.MARGIN} x the accuracy threshold)"
        )
    coarser = gates.relative_l2(series.coarser, series.u, mask, config.eps)
    check = ReferenceCheck(
        solver=f"{cube_series.SOLVER}@{series.modes}modes",
        refinements=(series.modes // 2, series.modes),
        distances_to_finest=(float(f"{coarser:.4e}"), 0.0),
        error_estimate=float(f"{series.relative_bound:.4e}"),
        threshold=threshold,
    )
    return ref, {**out, "solver_info": {"method": "p2"}}, err, tau, check

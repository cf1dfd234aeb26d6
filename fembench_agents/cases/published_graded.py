"""A numerical reference on a mesh graded toward the domain's re-entrant corners, for a record
without a solution whose uniform refinements (published_import's ladder) the corner's
singularity slows: at a corner of interior angle 3 pi / 2, u ~ r^(2/3), and every uniform
refinement converges at rate 4/3 at best, so the 4x solve stays too far from the 6x or 8x one
(`le_exp_lshape_gravity_load`: estimate 4.4e-4 above 2.6e-4). On a mesh whose cells shrink in
proportion to the distance to the corner (gmsh_shapes.meshed(graded_at=...)) P2 keeps its rate.

The rung: the graded meshes at refinement 1 and 2 (cells of two and one grid spacings away from
the corners, down to 1/64 of that at them; dolfinx_fem.solve_graded, output by point
evaluation), the second the reference. The case's calibration solve stays the structured 1x one
(the solver `cases validate` runs), so e_base is its distance to the graded reference. The check
is the ladder's: the graded 1x solve's distance to the graded 2x, times numerical.bound_factor(1,
2) = 1, at most numerical.MARGIN of tau_acc, and below half the calibration solve's distance.
Taken by steady records on an axis-parallel domain with a re-entrant corner and no periodic
piece (a periodic pair needs matching nodes on its sides, which gmsh does not make)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fembench_agents.cases import gates, numerical
from fembench_agents.cases.domains import reentrant_corners
from fembench_agents.cases.model import GateConfig, ReferenceCheck
from fembench_agents.cases.published import LIBRARY, MAX_CALIBRATION_ERROR
from fembench_agents.cases.published_domains import Excluded
from fembench_agents.cases.reference_memory import UNLIMITED, Budgeted

GRADED_REFINEMENTS = (1, 2)


def applies(spec: Any) -> bool:
    """Whether a record's uniform ladder may be followed by the graded rung."""
    domain = spec.domain
    if spec.grid.nz is not None or domain.geometry_params is not None or spec.time is not None:
        return False
    if any(piece.kind == "periodic" for piece in spec.boundary):
        return False
    outer = tuple((float(x), float(y)) for x, y in domain.outer)
    holes = tuple(tuple((float(x), float(y)) for x, y in h) for h in domain.holes)
    return bool(outer) and bool(reentrant_corners(outer, holes))


def graded_reference(
    spec: Any,
    merged: dict[str, Any],
    mask: np.ndarray,
    calibration: dict[str, np.ndarray],
    solve: Any,
    config: GateConfig,
) -> tuple[dict[str, np.ndarray], float, float, ReferenceCheck]:
    """The graded reference, e_base (the calibration solve `calibration` against it), tau_acc and
    the check; Excluded with the graded rung's numbers when it does not pass."""
    from fembench_agents.cases.calibration import dolfinx_fem

    graded = Budgeted(dolfinx_fem.solve_graded, solve.budget if isinstance(solve, Budgeted) else UNLIMITED)
    try:
        fine = numerical.solve_refinements(spec, mask, graded, merged, GRADED_REFINEMENTS)
    except Exception as exc:  # a record our solver cannot run is reported, never fatal to the import
        raise Excluded(f"calibration solver failed: {type(exc).__name__}: {exc}") from None
    ref = fine.arrays
    err = gates.contract_error(calibration, ref, spec.output, mask, config.eps)
    if not np.isfinite(err) or err > MAX_CALIBRATION_ERROR:
        raise Excluded(
            f"calibration error above {MAX_CALIBRATION_ERROR}: {err:.3g} (our solve against the graded mesh's 2x)"
        )
    tau = float(f"{gates.tau_acc(float(f'{err:.4e}'), config):.4e}")
    coarse = float(f"{gates.contract_error(fine.solves[1], ref, spec.output, mask, config.eps):.4e}")
    estimate = coarse * numerical.bound_factor(*GRADED_REFINEMENTS)
    threshold = float(f"{numerical.MARGIN * tau:.4e}")
    calibration_distance = float(f"{err:.4e}")
    if not estimate <= threshold:
        raise Excluded(
            f"numerical reference refused: on the mesh graded toward the re-entrant corners the error estimate "
            f"{estimate:.2e} is above {threshold:.2e} ({numerical.MARGIN} x the strictest accuracy threshold)"
        )
    if not coarse < calibration_distance / 2:
        raise Excluded(
            f"numerical reference refused: the graded solves do not converge past our calibration solve "
            f"({calibration_distance}, {coarse})"
        )
    check = ReferenceCheck(
        solver=f"{LIBRARY}:p2-graded@refined{GRADED_REFINEMENTS[-1]}x",
        refinements=(1, *GRADED_REFINEMENTS),  # the structured calibration solve, then the graded ones
        distances_to_finest=(calibration_distance, coarse, 0.0),
        error_estimate=estimate,
        threshold=threshold,
    )
    return ref, err, tau, check

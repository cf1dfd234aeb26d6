"""References without a closed form: a fine solve with our own solver, kept only
after a coarse-to-fine check.

The reference solver (scikit-fem's calibration solver, P2) solves the case on
the evaluation grid refined 1x, 2x and 4x (the coarser grids' nodes are nodes
of the finer ones, so every solve is read off at the evaluation points). The
finest is the reference. Its own error is estimated by its distance to the 2x
solve, which over-estimates it whenever the solves converge at a rate above
one; the case is refused unless that estimate is at most `MARGIN` times the
strictest accuracy threshold of the case and the solves visibly converge.

A finest solve less than twice as fine as the one before it (the import's 6x after 4x, see
`bound_factor`) has its distance scaled so that the estimate keeps that guarantee: whatever
the rate, as long as it is at least one, the estimate is at least the finest solve's error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fembench_agents.cases import gates
from fembench_agents.cases.calibration.common import refined
from fembench_agents.cases.case_spec import CaseSpec
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import GateConfig, ReferenceCheck
from fembench_agents.cases.tracks import Solver, get_track

REFERENCE_LIBRARY = "scikit-fem"
REFINEMENTS = (1, 2, 4)
MARGIN = 0.05  # the reference's estimated error is at most 1/20 of the strictest accuracy threshold
EXACT = 1e-9  # a coarsest solve this close to the finest: the discretisation holds the solution exactly


@dataclass(frozen=True)
class NumericalReference:
    arrays: dict[str, np.ndarray]
    solves: dict[int, dict[str, np.ndarray]]  # refinement -> its output on the evaluation grid


def solve_refinements(
    spec: CaseSpec,
    mask: np.ndarray,
    solver: Solver | None = None,
    spec_dict: dict[str, Any] | None = None,
    refinements: tuple[int, ...] = REFINEMENTS,
    solved: dict[int, dict[str, np.ndarray]] | None = None,
) -> NumericalReference:
    """`solver` (default: the reference library's calibration solver) on `spec_dict`
    (default: the spec itself) at each refinement; the finest is the reference. A refinement
    in `solved` (a coarser reference's solves) is taken from there, not solved again."""
    solver = solver or get_track(REFERENCE_LIBRARY).calibration_solver()
    spec_dict = spec_dict or spec.model_dump(mode="json")
    solves = {}
    for r in refinements:
        if solved is not None and r in solved:
            solves[r] = solved[r]
            continue
        out = refined(solver, spec_dict, r)
        solves[r] = {name: np.asarray(out[name], dtype=float) for name in spec.output.fields}
    finest = {k: v.copy() for k, v in solves[refinements[-1]].items()}
    for arr in finest.values():
        arr[..., ~mask] = np.nan
    return NumericalReference(arrays=finest, solves=solves)


def check(
    spec: CaseSpec, ref: NumericalReference, mask: np.ndarray, strictest_tau: float, library: str = REFERENCE_LIBRARY
) -> ReferenceCheck:
    """Distances of each solve to the finest; refuse a reference that is not far below the gate."""
    eps = GateConfig().eps
    refinements = tuple(ref.solves)
    dist = tuple(
        float(f"{gates.contract_error(ref.solves[r], ref.arrays, spec.output, mask, eps):.4e}") for r in refinements
    )
    estimate = dist[-2] * bound_factor(refinements[-2], refinements[-1])
    threshold = float(f"{MARGIN * strictest_tau:.4e}")
    if not estimate <= threshold:
        raise CaseDefinitionError(
            f"{spec.id}: the numerical reference's error estimate {estimate:.2e} is above {threshold:.2e} "
            f"({MARGIN} x the strictest accuracy threshold): refine the grid or choose smoother data"
        )
    # Solves that agree to rounding (a flow whose solution the elements hold exactly, such as
    # Poiseuille's) have nothing left to converge.
    if not (dist[-2] < dist[0] / 2 or dist[0] <= EXACT):
        raise CaseDefinitionError(f"{spec.id}: the refinement solves do not converge ({dist})")
    return ReferenceCheck(
        solver=f"{library}:p2@refined{refinements[-1]}x",
        refinements=refinements,
        distances_to_finest=dist,
        error_estimate=estimate,
        threshold=threshold,
    )


def bound_factor(previous: int, finest: int) -> float:
    """What the distance between two solves is scaled by to bound the finer one's error at any
    rate p >= 1: with e(r) = C r^-p, e(finest) <= d / ((finest / previous)^p - 1) <= d /
    (finest / previous - 1). 1 for a finest twice as fine (the estimate as it always was), 2 for
    6x after 4x."""
    return 1.0 / (finest / previous - 1.0)


def data_pieces(spec_boundary: dict[str, Any], names: list[str], case_id: str) -> list[Any]:
    """Each piece's value from a definition's `boundary` table ("*" for every piece not named)."""
    unknown = sorted(set(spec_boundary) - set(names) - {"*"})
    if unknown:
        raise CaseDefinitionError(f"{case_id}: no boundary piece named {', '.join(unknown)}")
    out = []
    for n in names:
        if n not in spec_boundary and "*" not in spec_boundary:
            raise CaseDefinitionError(f"{case_id}: no value for boundary piece {n} (and no '*')")
        out.append(spec_boundary.get(n, spec_boundary.get("*")))
    return out

"""Which refinements a published record's numerical reference climbs (cases/numerical.py checks
each rung coarse to fine; the first that passes is the reference): the structured ladder, the
unstructured one of a domain given by its geometry and its climb where affordable, and a
transient reaction-diffusion record's ladder within its Newton budget. A record refused at the
last rung it could afford says which limit stopped it."""

from __future__ import annotations

import math
from typing import Any

from fembench_agents.cases.published_domains import Excluded
from fembench_agents.cases.reference_memory import unknowns

# Our DOLFINx solver meshes (n - 1) / 2 cells for a grid of n points when n - 1 is even,
# n - 1 cells otherwise: refined 2x, the published 50-point grid gets its 49 cells again.
# Refined 4x, 6x and 8x, the meshes are 2, 3 and 4 times as fine: 98, 147, 196 cells.
# A numerical reference is the first rung whose check passes: 6x after 4x (its estimate the
# distance scaled by numerical.bound_factor, 2), else 8x after 4x (the 4x solve reused), as
# it always was. 6x takes about half the memory and CPU of 8x (3/4 of the cells per side, and
# of the time steps).
IMPORT_LADDER = ((1, 4, 6), (1, 4, 8))
IMPORT_REFINEMENTS = IMPORT_LADDER[-1]
# An unstructured mesh (a published domain given by its geometry) is refined by its cell size, which
# follows the grid's spacing: 2x, 3x and 4x divide it (P2: the 2x solve is some 8 times closer).
UNSTRUCTURED_LADDER = ((1, 2, 3), (1, 2, 4))
# One rung more where it is affordable: 6x after the 4x solve of (1, 2, 4), reused (its estimate the
# distance doubled, numerical.bound_factor), taken only when its 6x solve is expected within
# CLIMB_UNKNOWNS unknowns (reference_memory.unknowns, the refined grid's box):
# stokes_exp_dumbbell_opposing_vortex_source's 756,000 (estimate 3.82e-4 above 3.20e-4 at 4x) fit in
# 840 MB; the ten-tooth gear's 2.05 million would not fit the import's 2 GB.
UNSTRUCTURED_CLIMB = (1, 4, 6)
CLIMB_UNKNOWNS = 1_000_000
NEWTON_PER_STEP = ("reaction_diffusion",)
# A transient NEWTON_PER_STEP reference climbs from (1, 2, 4) (on a grid of odd n - 1 the 2x solve
# has the 1x mesh and twice its steps; the 4x one halves both), and takes only the rungs whose
# finest solve is within NEWTON_STEP_BUDGET unknowns x time steps. Its chord Newton (one LU per
# step length, dolfinx_transient.py) took 25 s of CPU for 6.4e6 (77,000 unknowns, 83 steps).
NEWTON_LADDER = ((1, 2, 4), *IMPORT_LADDER)
NEWTON_STEP_BUDGET = 2e7
# The start of a refusal whose estimate one more rung might have met.
ESTIMATE_REFUSAL = "numerical reference refused: the numerical reference's error estimate"


def ladder(spec: Any, merged: dict[str, Any]) -> tuple[tuple[tuple[int, ...], ...], str | None]:
    """The rungs a record's reference climbs, and (where the climb is beyond the budget) the limit
    that kept it from climbing further."""
    rungs: tuple[tuple[int, ...], ...] = IMPORT_LADDER
    beyond = None
    if spec.domain.geometry_params is not None:
        beyond = beyond_climb(merged)
        rungs = UNSTRUCTURED_LADDER + (() if beyond else (UNSTRUCTURED_CLIMB,))
    if spec.time is not None and spec.family in NEWTON_PER_STEP:
        rungs = within_budget(spec)
    return rungs, beyond


def affordable(merged: dict[str, Any], r: int) -> bool:
    """Whether the solve of the grid refined r times is expected within CLIMB_UNKNOWNS unknowns."""
    return refined_unknowns(merged, r) <= CLIMB_UNKNOWNS


def refined_unknowns(merged: dict[str, Any], r: int) -> int:
    grid = merged["grid"]
    fine = {**grid, "nx": r * (grid["nx"] - 1) + 1, "ny": r * (grid["ny"] - 1) + 1}
    return unknowns({**merged, "grid": fine})


def beyond_climb(merged: dict[str, Any]) -> str | None:
    """Where an unstructured reference may not climb to UNSTRUCTURED_CLIMB, the limit that stops it
    (said beside its refusal: the record is not refused for its data but for this import's budget)."""
    r = UNSTRUCTURED_CLIMB[-1]
    if affordable(merged, r):
        return None
    return (
        f"its {r}x solve, about {refined_unknowns(merged, r):,} unknowns, is beyond the import's "
        f"{CLIMB_UNKNOWNS:,} (a direct factorisation within 2 GB)"
    )


def within_budget(spec: Any) -> tuple[tuple[int, ...], ...]:
    """The rungs of NEWTON_LADDER whose finest solve is within NEWTON_STEP_BUDGET unknowns x time
    steps (each step of a reaction-diffusion reference is a nonlinear solve); refused when none is.
    The steps follow the calibration's schedule (dolfinx_transient.schedule: at least 0.3 per grid
    interval) on a structured mesh."""
    from fembench_agents.cases.calibration.dolfinx_transient import MIN_STEPS_PER_INTERVAL

    def cost(r: int) -> tuple[int, int]:
        n = r * (spec.grid.nx - 1)  # intervals of the refined grid
        cells = n // 2 if n % 2 == 0 else n
        steps = max(math.ceil((spec.time.t_end - spec.time.t0) * n), math.ceil(MIN_STEPS_PER_INTERVAL * n - 1e-9))
        return (2 * cells + 1) ** 2, steps

    kept = tuple(rung for rung in NEWTON_LADDER if math.prod(cost(rung[-1])) <= NEWTON_STEP_BUDGET)
    if not kept:
        r = NEWTON_LADDER[0][-1]
        dofs, steps = cost(r)
        raise Excluded(
            f"numerical reference refused: its {r}x solve would take {steps} Newton time steps of {dofs} "
            f"unknowns ({dofs * steps:.1e}, over the import's budget of {NEWTON_STEP_BUDGET:.0e})"
        )
    return kept

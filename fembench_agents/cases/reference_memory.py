"""The memory a numerical reference's solves take, kept within the import's budget.

A reference's finest solve is the largest thing the import does: Taylor-Hood on a 100-point
grid refined 8x is 1.4 million unknowns, whose in-core MUMPS LU alone took 5.5 GB. Two rules
keep the import within `cases import`'s budget:

- a solve of more than `OUT_OF_CORE_UNKNOWNS` unknowns factorises out of core (MUMPS ICNTL(22):
  the factors go to a file in the temporary folder and are read back for the solve), ordered by
  SCOTCH (ICNTL(7) = 3) rather than METIS, whose analysis took a fifth of such a factorisation's
  CPU (Taylor-Hood on 297 x 297 cells, 797,000 unknowns: 10.1 against 12.8 s, the factor's flops
  5 % fewer; PORD's analysis is as cheap but its factor 6 % costlier). The arithmetic is the same
  LU; only its blocking and pivot order differ, so the solution differs in its last bits
  (relative 1e-15 on a test problem), and smaller solves stay in core, byte for byte as before;
- a Stokes system of more than that many unknowns is not factorised whole at all: its pressure
  Schur complement is solved by CG (calibration/dolfinx_taylor_hood.py; the 1.4 million unknowns
  above in 960 MB against 2046 out of core), and the budget below counts it at what that takes;
- solves running at once in the import's worker processes share a `MemoryBudget`: a solve
  waits until the memory it is expected to take fits beside the others (one larger than the
  whole budget runs alone).

The estimate reads the solve's grid alone: a P2 calibration mesh has a node at about every grid
point of its refined grid (a structured one exactly, an unstructured one with cells of two
spacings), times the unknowns per node of the family.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fembench_agents.cases.model import FLOW_FAMILIES, VECTOR_FAMILIES

OUT_OF_CORE_UNKNOWNS = 200_000
# Bytes a solve takes per unknown beyond what its worker already holds (mesh, assembled matrix,
# the solver's copy of it, the factors), measured on Taylor-Hood solves of 0.36 and 1.4 million
# unknowns (benchmarks/import_speed.py --probe): in core the factors grow as n log n.
BYTES_IN_CORE = 3000
BYTES_OUT_OF_CORE = 1000
# A plane Stokes system through its Schur complement (K's Cholesky, a scalar third of the unknowns,
# and CG's vectors): its worker's high-water mark was 594 to 626 MB at 0.8 and 960 to 1028 MB at 1.4
# million unknowns, on a worker of about 300 MB. Counted as a factorisation, two 6x rungs could not
# run side by side within the budget, and the import's Stokes references ran one at a time.
BYTES_SCHUR = 550
# PETSc prefixes of the DOLFINx calibration's LU solves (calibration/dolfinx_*.py; a test holds
# this list to the code): MUMPS reads its options under the prefix of the solver it factorises.
SOLVER_PREFIXES = ("", "calibration_", "calibration_rd_", "calibration_rdt_", "calibration_ns_")


def unknowns(spec: dict[str, Any]) -> int:
    """About how many unknowns the DOLFINx calibration solves for this case_spec (its grid)."""
    grid = spec["grid"]
    nodes = int(grid["nx"]) * int(grid["ny"]) * int(grid.get("nz") or 1)
    family = spec.get("family")
    per_node = 2.25 if family in FLOW_FAMILIES else 2.0 if family in VECTOR_FAMILIES else 1.0
    return int(nodes * per_node)


def expected_mb(n: int, through_schur: bool = False) -> float:
    if n <= OUT_OF_CORE_UNKNOWNS:
        return n * BYTES_IN_CORE / 2**20
    return n * (BYTES_SCHUR if through_schur else BYTES_OUT_OF_CORE) / 2**20


def through_schur(spec: dict[str, Any]) -> bool:
    """Whether a large solve of this case_spec goes through the Schur complement: a plane Stokes
    system without periodic pieces (calibration/dolfinx_flow.py; a periodic one is reduced and
    factorised, and on the cube K's Cholesky fills in far more)."""
    plane = not spec["grid"].get("nz")
    periodic = any(piece.get("kind") == "periodic" for piece in spec.get("boundary", ()))
    return spec.get("family") == "stokes" and plane and not periodic


class MemoryBudget:
    """Megabytes shared by the solves of several processes (or threads): `take(mb)` waits until
    `mb` fits beside what the others hold, or until nothing else is held. Each worker takes
    through its own `share()`, so that what a worker that died held can be given back."""

    def __init__(self, megabytes: float, context: Any = None) -> None:
        self._ctx = context or multiprocessing.get_context("spawn")
        self.megabytes = megabytes
        self._used = self._ctx.Value("d", 0.0, lock=False)
        self._cond = self._ctx.Condition()

    def share(self) -> BudgetShare:
        return BudgetShare(self, self._ctx.Value("d", 0.0, lock=False))

    def reclaim(self, share: BudgetShare) -> None:
        """Give back what `share` holds (its process ended without giving it back)."""
        with self._cond:
            self._used.value -= share.held.value
            share.held.value = 0.0
            self._cond.notify_all()

    @contextmanager
    def take(self, mb: float) -> Iterator[None]:
        with self.share().take(mb):
            yield


@dataclass
class BudgetShare:
    budget: MemoryBudget
    held: Any  # a shared double: what this share's solve holds now

    @contextmanager
    def take(self, mb: float) -> Iterator[None]:
        b = self.budget
        with b._cond:
            while b._used.value > 0 and b._used.value + mb > b.megabytes:
                b._cond.wait()
            b._used.value += mb
            self.held.value += mb
        try:
            yield
        finally:
            with b._cond:
                b._used.value -= mb
                self.held.value -= mb
                b._cond.notify_all()


class _Unlimited:
    @contextmanager
    def take(self, mb: float) -> Iterator[None]:
        yield


UNLIMITED = _Unlimited()
_options_lock = threading.Lock()


# MUMPS options of a large solve: out of core, SCOTCH's ordering
LARGE_SOLVE_OPTIONS = {"mat_mumps_icntl_22": 1, "mat_mumps_icntl_7": 3}


@contextmanager
def out_of_core(on: bool) -> Iterator[None]:
    """MUMPS factorises out of core, ordered by SCOTCH, within this block (when `on`), for every
    calibration solver."""
    if not on:
        yield
        return
    from petsc4py import PETSc

    options = PETSc.Options()
    with _options_lock:
        for prefix in SOLVER_PREFIXES:
            for name, value in LARGE_SOLVE_OPTIONS.items():
                options.setValue(f"{prefix}{name}", value)
        try:
            yield
        finally:
            for prefix in SOLVER_PREFIXES:
                for name in LARGE_SOLVE_OPTIONS:
                    options.delValue(f"{prefix}{name}")


@dataclass(frozen=True)
class Budgeted:
    """A calibration solver whose every solve takes its expected memory from `budget` first and
    factorises out of core when large."""

    solver: Callable[[dict[str, Any]], dict[str, Any]]
    budget: Any = UNLIMITED

    def __call__(self, spec: dict[str, Any]) -> dict[str, Any]:
        n = unknowns(spec)
        with self.budget.take(expected_mb(n, through_schur(spec))), out_of_core(n > OUT_OF_CORE_UNKNOWNS):
            return self.solver(spec)

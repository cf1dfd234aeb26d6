"""Periodic boundary pieces in the DOLFINx calibration, without dolfinx_mpc (no wheel): the
system is assembled as usual (Dirichlet rows set, right-hand side lifted) and reduced with a
prolongation P that maps each degree of freedom on a periodic image side to its source on
the partner side, all others to themselves: solve (P^T A P) x = P^T b, u = P x, by a direct factorisation.

A dof on a Dirichlet piece keeps its Dirichlet row (Dirichlet wins where the pieces meet);
chains of images (a corner of a doubly periodic rectangle, mapped across x, then y) end at
one source. Works for any space: scalar, blocked (vector P2) and mixed (Taylor-Hood), each
scalar sub-space paired with itself by dof coordinates.
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from dolfinx import fem
from petsc4py import PETSc

from fembench_agents.cases.domains import on_segment

Segment = tuple[tuple[float, float], tuple[float, float]]


def _shifts(spec: dict[str, Any]) -> list[tuple[Segment, np.ndarray]]:
    """Each periodic image side and the translation onto its source (image: the right or top one)."""
    pieces = {p["name"]: p for p in spec["boundary"]}
    out = []
    for p in spec["boundary"]:
        if p.get("kind") != "periodic":
            continue
        partner = pieces.get(p.get("partner"))
        if partner is None or partner.get("kind") != "periodic" or partner.get("partner") != p["name"]:
            raise ValueError(
                f"periodic piece {p['name']!r}: its partner {p.get('partner')!r} is no periodic piece naming it"
            )
        a, b = (np.asarray(v, dtype=float) for v in p["segment"])
        c, d = (np.asarray(v, dtype=float) for v in partner["segment"])
        shift = min(c, d, key=tuple) - min(a, b, key=tuple)
        if not np.allclose(max(a, b, key=tuple) + shift, max(c, d, key=tuple), atol=1e-12):
            raise ValueError(f"periodic pieces {p['name']!r} and {partner['name']!r} are not translates of each other")
        if shift.sum() < 0:  # the image lies right of or above its source
            out.append(((tuple(a), tuple(b)), shift))
    return out


def _leaves(V: fem.FunctionSpace, index: np.ndarray | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(dof coordinates, their indices in the whole system) of each scalar sub-space."""
    if V.num_sub_spaces and V.dofmap.index_map_bs == 1:  # a mixed space: each part collapsed
        for k in range(V.num_sub_spaces):
            sub, parts = V.sub(k).collapse()
            where = np.asarray(parts).ravel()
            yield from _leaves(sub, where if index is None else index[where])
        return
    coords = V.tabulate_dof_coordinates()
    bs = V.dofmap.index_map_bs
    for c in range(bs):
        local = np.arange(coords.shape[0]) * bs + c
        yield coords, local if index is None else index[local]


# How a system is factorised: MUMPS LU for any matrix; PETSc's own Cholesky for a symmetric
# positive definite one solved at every step of a 2D time loop (M + k K): its triangular solves
# took a third of MUMPS's (47 against 160 ms on 491,000 unknowns), which the loop repeats hundreds
# of times. Both give the same solution up to rounding. (MUMPS LDL^T on Taylor-Hood took less
# memory, 1073 against 1238 MB on a 1.06 million unknown solve out of core; its CPU, measured
# under a heavy load, was not clearly less: not used, docs/pde_import.md "Speed and memory".)
FACTORISATIONS = {
    "lu": ("lu", "mumps"),
    "cholesky": ("cholesky", "petsc"),
}


def direct_solver(A: PETSc.Mat | None, factorisation: str = "lu") -> PETSc.KSP:
    """preonly + the named factorisation (FACTORISATIONS) of A, factorised at the first solve."""
    if factorisation not in FACTORISATIONS:
        raise ValueError(f"factorisation {factorisation!r}: expected one of {', '.join(FACTORISATIONS)}")
    pc_type, package = FACTORISATIONS[factorisation]
    ksp = PETSc.KSP().create(PETSc.COMM_SELF)
    if A is not None:
        ksp.setOperators(A)
    ksp.setType("preonly")
    ksp.getPC().setType(pc_type)
    ksp.getPC().setFactorSolverType(package)
    return ksp


class LinearSolver(Protocol):
    """What the time-stepping loops use of a PETSc KSP (and ReducedLU stands in for)."""

    def setOperators(self, A: PETSc.Mat) -> Any: ...  # noqa: N802 - PETSc's name

    def solve(self, b: PETSc.Vec, x: PETSc.Vec) -> Any: ...

    def destroy(self) -> Any: ...


@dataclass
class Reduction:
    """The prolongation P (full x reduced) of a space with periodic pieces."""

    P: PETSc.Mat

    def solver(self, A: PETSc.Mat, factorisation: str = "lu") -> ReducedLU:
        return ReducedLU(self.P, A, factorisation)


class ReducedLU:
    """A KSP-like direct solve of the reduced system (P^T A P keeps A's symmetry, so any
    factorisation of A's fits it): setOperators, solve(b, x), destroy."""

    def __init__(self, P: PETSc.Mat, A: PETSc.Mat, factorisation: str = "lu") -> None:
        self.P = P
        self.ksp = direct_solver(None, factorisation)
        self.reduced: PETSc.Mat | None = None
        self.setOperators(A)

    def setOperators(self, A: PETSc.Mat) -> None:  # noqa: N802 - the KSP method it stands in for
        """A, reduced at the next solve (a time loop may hand over a matrix it assembles later)."""
        self.A = A
        self.stale = True

    def solve(self, b: PETSc.Vec, x: PETSc.Vec) -> None:
        if self.stale:
            if self.reduced is not None:
                self.reduced.destroy()
            self.reduced = self.A.PtAP(self.P)
            self.ksp.setOperators(self.reduced)
            self.stale = False
        br, xr = self.P.createVecRight(), self.P.createVecRight()
        self.P.multTranspose(b, br)
        self.ksp.solve(br, xr)
        self.P.mult(xr, x)
        br.destroy()
        xr.destroy()

    def destroy(self) -> None:
        self.ksp.destroy()
        if self.reduced is not None:
            self.reduced.destroy()


def reduction(spec: dict[str, Any], V: fem.FunctionSpace, bcs: list[fem.DirichletBC]) -> Reduction | None:
    """The reduction of V's system for the spec's periodic pieces, None where it has none."""
    shifts = _shifts(spec)
    if not shifts:
        return None
    fixed = np.zeros(0, dtype=np.int64)
    for bc in bcs:
        fixed = np.union1d(fixed, bc.dof_indices()[0])
    size = sum(index.size for _, index in _leaves(V))
    source = np.arange(size)
    for coords, index in _leaves(V):
        key = {(round(float(x), 9), round(float(y), 9)): int(i) for (x, y, _), i in zip(coords, index, strict=True)}
        for (a, b), shift in shifts:
            on = on_segment(coords[:, 0], coords[:, 1], a, b) & ~np.isin(index, fixed)
            for (x, y, _), i in zip(coords[on], index[on], strict=True):
                target = key.get((round(float(x + shift[0]), 9), round(float(y + shift[1]), 9)))
                if target is None:
                    raise ValueError(f"periodic calibration: no dof at the image of ({x:.6g}, {y:.6g}) on its partner")
                if target in fixed:
                    raise ValueError(
                        f"periodic calibration: ({x:.6g}, {y:.6g}) is free but its partner dof is Dirichlet"
                    )
                source[i] = target
    for _ in range(4):  # a corner: across x, then across y
        source = source[source]
    kept = np.flatnonzero(source == np.arange(size))
    column = np.full(size, -1, dtype=np.int32)
    column[kept] = np.arange(kept.size, dtype=np.int32)
    cols = column[source]
    P = PETSc.Mat().createAIJ(
        size=(size, kept.size),
        csr=(np.arange(size + 1, dtype=np.int32), cols.astype(np.int32), np.ones(size)),  # type: ignore[arg-type]
        comm=PETSc.COMM_SELF,
    )
    P.assemble()
    return Reduction(P)

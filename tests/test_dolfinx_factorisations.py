"""The DOLFINx calibration's direct factorisations (calibration/dolfinx_periodic.FACTORISATIONS):
which PETSc factorisation and package each name takes, one solution whichever is used on a
symmetric positive definite system, and a clear error for an unknown name."""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

import numpy as np
import pytest
from petsc4py import PETSc

from fembench_agents.cases.calibration.dolfinx_periodic import FACTORISATIONS, direct_solver


def _laplacian(n: int) -> PETSc.Mat:
    """The 1D Dirichlet Laplacian plus the identity: tridiagonal (-1, 3, -1), symmetric positive definite."""
    A = PETSc.Mat().createAIJ([n, n], nnz=3, comm=PETSc.COMM_SELF)
    for i in range(n):
        A.setValue(i, i, 3.0)
        if i:
            A.setValue(i, i - 1, -1.0)
            A.setValue(i - 1, i, -1.0)
    A.assemble()
    return A


def test_each_name_takes_its_factorisation_and_package() -> None:
    assert FACTORISATIONS == {
        "lu": ("lu", "mumps"),
        "cholesky": ("cholesky", "petsc"),
    }
    A = _laplacian(5)
    for name, (pc_type, package) in FACTORISATIONS.items():
        ksp = direct_solver(A, name)
        assert (ksp.getType(), ksp.getPC().getType(), ksp.getPC().getFactorSolverType()) == (
            "preonly",
            pc_type,
            package,
        )
        ksp.destroy()


def test_every_factorisation_solves_a_symmetric_positive_definite_system_alike() -> None:
    A = _laplacian(40)
    b = A.createVecRight()
    b.array[:] = np.sin(np.arange(40.0))
    solutions = []
    for name in FACTORISATIONS:
        x = b.duplicate()
        ksp = direct_solver(A, name)
        ksp.solve(b, x)
        solutions.append(x.array.copy())
        ksp.destroy()
    r = A.createVecRight()
    A.mult(_vec(solutions[0]), r)
    assert np.max(np.abs(r.array - b.array)) < 1e-13
    for other in solutions[1:]:
        assert np.max(np.abs(other - solutions[0])) < 1e-13


def _vec(values: np.ndarray) -> PETSc.Vec:
    v = PETSc.Vec().createSeq(values.size, comm=PETSc.COMM_SELF)
    v.array[:] = values
    return v


def test_an_unknown_factorisation_is_named_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"^factorisation 'qr': expected one of lu, cholesky$"):
        direct_solver(_laplacian(3), "qr")

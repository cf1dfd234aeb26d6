"""A large Taylor-Hood Stokes system solved through its pressure Schur complement, not one LU.

The monolithic LU of Taylor-Hood on a 100-point grid refined 8x (1.4 million unknowns) took about
2 GB in its process even out of core: the mixed space's matrix stores every coupling of a cell's
dofs (the velocity components with each other, the pressure with itself: zeros), and MUMPS copies
it and factorises it with pivoting. Here nothing of the mixed matrix is assembled. Its nonzero
blocks are

    [K     B_c^T] [u_c]   [f_c]      K   = nu grad u . grad v on one scalar P2 space (the velocity
    [B_c   D    ] [p  ] = [f_p]      components share it and their Dirichlet dofs), B_c = -q du_c/dx_c,
                                     D   = the identity on a pinned pressure dof's row, else 0,

with the Dirichlet rows, the pinned row and the lifted right-hand side exactly as the monolithic
assembly makes them. K, symmetric positive definite, is factorised once (Cholesky: no pivoting,
a scalar system of a third of the unknowns); the pressure solves

    (sum_c B_c K^-1 B_c^T) p = sum_c B_c K^-1 f_c - f_p   (p = f_p on pinned rows)

by conjugate gradients preconditioned by its mass matrix / nu (incomplete Cholesky): Taylor-Hood is
inf-sup stable, so that Schur complement is spectrally the mass matrix and the iterations do not
grow with refinement (42 to 46 from 4x to 8x); then u_c = K^-1 (f_c - B_c^T p). Measured on the
double lid-driven cavity against the LU: 1e-12 relative, 960 against 2046 MB and 23 to 25 against
27 s of CPU at 8x (docs/pde_import.md, "Speed and memory").
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

from dataclasses import dataclass
from typing import Any

import numpy as np
import ufl
from dolfinx import fem
from dolfinx.fem.petsc import apply_lifting, assemble_matrix, assemble_vector, set_bc
from petsc4py import PETSc

from fembench_agents.cases.reference_memory import OUT_OF_CORE_UNKNOWNS

# Above this many unknowns a Stokes system is solved here (the size from which the import's other
# solves factorise out of core): smaller ones, every calibration solve among them, keep their LU,
# byte for byte as before.
ITERATIVE_UNKNOWNS = OUT_OF_CORE_UNKNOWNS
RTOL = 1e-12  # CG's preconditioned residual, relative
MAX_ITERATIONS = 1000
# what the Dirichlet conditions fix: the velocity's facets, the pinned pressure dofs (or None)
Fixed = tuple[np.ndarray, np.ndarray | None]


@dataclass
class _Blocks:
    """The system's nonzero blocks and where each block's dofs sit in the mixed space's vector."""

    K: PETSc.Mat  # scalar P2 stiffness, Dirichlet rows and columns the identity
    B: list[PETSc.Mat]  # per component, Q x V0; Dirichlet columns and pinned rows zero
    M: PETSc.Mat  # pressure mass / nu, pinned rows the identity: the preconditioner
    velocity: list[np.ndarray]  # per component: the mixed vector's index of each V0 dof
    pressure: np.ndarray  # the mixed vector's index of each Q dof
    pinned: np.ndarray  # Q dofs whose row is the identity (the pinned pressure)

    def release(self) -> None:
        for m in (self.K, *self.B, self.M):
            m.destroy()


def _blocks(W: fem.FunctionSpace, nu: Any, fixed: Fixed, dx: ufl.Measure) -> _Blocks:
    facets, pinned = fixed
    tdim = W.mesh.topology.dim
    collapsed = [W.sub(0).sub(c).collapse() for c in range(tdim)]
    V0 = collapsed[0][0]
    if any(not np.array_equal(V0.dofmap.list, V.dofmap.list) for V, _ in collapsed):
        raise RuntimeError("the velocity components' collapsed dofmaps differ: one K cannot serve them all")
    Q, in_mixed = W.sub(1).collapse()
    bc_u = fem.dirichletbc(0.0, fem.locate_dofs_topological(V0, tdim - 1, facets), V0)
    pinned_q = np.zeros(0, dtype=np.int32) if pinned is None else np.asarray(pinned, dtype=np.int32)
    bc_p = [fem.dirichletbc(0.0, pinned_q, Q)] if pinned_q.size else []
    u, v = ufl.TrialFunction(V0), ufl.TestFunction(V0)
    p, q = ufl.TrialFunction(Q), ufl.TestFunction(Q)

    def assembled(form: Any, bcs: list[fem.DirichletBC]) -> PETSc.Mat:
        A = assemble_matrix(fem.form(form), bcs=bcs)
        A.assemble()
        return A

    K = assembled(nu * ufl.inner(ufl.grad(u), ufl.grad(v)) * dx, [bc_u])
    B = [assembled(-q * u.dx(c) * dx, [bc_u, *bc_p]) for c in range(tdim)]
    M = assembled((1 / nu) * p * q * dx, bc_p)
    velocity = [np.asarray(at, dtype=np.int32).ravel() for _, at in collapsed]
    return _Blocks(K, B, M, velocity, np.asarray(in_mixed, dtype=np.int32).ravel(), pinned_q)


def _preonly(A: PETSc.Mat, pc_type: str) -> PETSc.KSP:
    """A KSP applying pc_type's (factorised) inverse of A; PETSc's own factorisation: its triangular
    solves, repeated twice every iteration, took a third of MUMPS's (dolfinx_periodic.FACTORISATIONS)."""
    ksp = PETSc.KSP().create(PETSc.COMM_SELF)
    ksp.setOperators(A)
    ksp.setType("preonly")
    ksp.getPC().setType(pc_type)
    ksp.getPC().setFactorSolverType("petsc")
    ksp.setUp()
    return ksp


class _Schur:
    """sum_c B_c K^-1 B_c^T, with the identity on the pinned rows (a PETSc python matrix)."""

    def __init__(self, blocks: _Blocks, velocity: PETSc.KSP) -> None:
        self.blocks, self.velocity = blocks, velocity
        self.r, self.z = blocks.K.createVecRight(), blocks.K.createVecRight()
        self.t = blocks.M.createVecRight()

    def mult(self, mat: Any, x: PETSc.Vec, y: PETSc.Vec) -> None:
        y.zeroEntries()
        for B in self.blocks.B:
            B.multTranspose(x, self.r)
            self.velocity.solve(self.r, self.z)
            B.mult(self.z, self.t)
            y.axpy(1.0, self.t)
        pinned = self.blocks.pinned
        y.getArray()[pinned] = x.getArray(readonly=True)[pinned]

    def release(self) -> None:
        for vec in (self.r, self.z, self.t):
            vec.destroy()


class _MassPreconditioner:
    """The pressure mass matrix's incomplete Cholesky (a PETSc python PC)."""

    def __init__(self, blocks: _Blocks) -> None:
        self.ksp = _preonly(blocks.M, "icc")

    def apply(self, pc: Any, x: PETSc.Vec, y: PETSc.Vec) -> None:
        self.ksp.solve(x, y)

    def release(self) -> None:
        self.ksp.destroy()


def schur_complement_cg(
    a: Any, L: Any, bcs: list[fem.DirichletBC], w: fem.Function, nu: Any, fixed: Fixed, dx: ufl.Measure
) -> tuple[fem.Function, dict[str, Any]]:
    """The Taylor-Hood system a(w, .) = L with `bcs` into w; `fixed` holds what `bcs` fix: the
    velocity's Dirichlet facets and the pinned pressure dofs (of the collapsed pressure space), or
    None; `dx` is a's cell measure. Returns w and what the solve adds to solver_info."""
    form_a, form_L = fem.form(a), fem.form(L)
    rhs = assemble_vector(form_L)
    apply_lifting(rhs, [form_a], [bcs])
    set_bc(rhs, bcs)  # one rank (an MPI singleton): no ghost values to exchange
    f = rhs.getArray(readonly=True)
    blocks = _blocks(w.function_space, nu, fixed, dx)
    velocity = _preonly(blocks.K, "cholesky")
    schur = _Schur(blocks, velocity)
    preconditioner = _MassPreconditioner(blocks)
    n = int(blocks.M.getSize()[0])
    S = PETSc.Mat().createPython((n, n), schur, comm=PETSc.COMM_SELF)
    S.setUp()
    ksp = PETSc.KSP().create(PETSc.COMM_SELF)
    try:
        g, p = blocks.M.createVecRight(), blocks.M.createVecRight()
        g.setArray(-f[blocks.pressure])
        for B, at in zip(blocks.B, blocks.velocity, strict=True):
            schur.r.setArray(f[at])
            velocity.solve(schur.r, schur.z)
            B.mult(schur.z, schur.t)
            g.axpy(1.0, schur.t)
        g.getArray()[blocks.pinned] = f[blocks.pressure][blocks.pinned]
        ksp.setOperators(S)
        ksp.setType("cg")
        ksp.setTolerances(rtol=RTOL, atol=0.0, max_it=MAX_ITERATIONS)
        ksp.getPC().setType("python")
        ksp.getPC().setPythonContext(preconditioner)
        ksp.solve(g, p)
        reason: int = ksp.getConvergedReason()  # type: ignore[assignment]  # an int enum at run time
        iterations = int(ksp.getIterationNumber())
        if reason <= 0:
            raise RuntimeError(
                f"Schur complement CG did not converge (KSP reason {reason} after {iterations} iterations)"
            )
        out = w.x.array
        out[blocks.pressure] = p.getArray()
        for B, at in zip(blocks.B, blocks.velocity, strict=True):  # u_c = K^-1 (f_c - B_c^T p)
            B.multTranspose(p, schur.z)
            schur.r.setArray(f[at] - schur.z.getArray())
            velocity.solve(schur.r, schur.z)
            out[at] = schur.z.getArray()
        g.destroy()
        p.destroy()
    finally:
        for petsc in (ksp, S, velocity, rhs):
            petsc.destroy()
        for ours in (schur, preconditioner, blocks):
            ours.release()
    for bc in bcs:  # the Dirichlet rows are the identity, solved exactly by K's factor: set as assembled
        bc.set(w.x.array)
    w.x.scatter_forward()
    info = {"ksp_type": "cg", "pc_type": "schur-complement, velocity cholesky, pressure mass icc"}
    return w, {**info, "rtol": RTOL, "iterations": iterations}

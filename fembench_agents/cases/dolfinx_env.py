"""What the DOLFINx track needs from this install, and what every job that
may run DOLFINx gets before the attempt's code runs.

Facts of the `dolfinx-solver-real` 0.11 wheel (checked by `check()`):
- its PETSc has MUMPS and SuperLU_dist but not hypre: `pc_type hypre` fails
  with PETSc error 86 (unknown type); `gamg` and `lu` are there;
- `petsc4py` and `dolfinx` find the MPI library only once `mpi4py.MPI` is
  loaded: imported first they fail with "libmpi.so.12: cannot open shared
  object file". The track's workers import mpi4py.MPI first, so inside a job
  the order no longer matters;
- runs are MPI singletons (COMM_WORLD has one rank, no mpirun).

Form compilation: ffcx compiles each new form to C and builds it with the
system C compiler into a cache directory. DOLFINx fixes that directory when
it is imported (in the warm worker, before any job), so `prepare_job` points
it at the job's own scratch directory: no attempt writes into a cache that
another attempt or the evaluator loads code from.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import json
import os
import subprocess
import sys
from pathlib import Path

# The first import must be mpi4py.MPI: the order the warm workers preload. sympy too: programs
# written for the published contract parse its expressions with it, and importing it took
# 0.7 to 1 s of every such attempt (benchmarks/pde_mesh_overhead.py).
PRELOAD = (
    "mpi4py.MPI",
    "dolfinx",
    "dolfinx.fem.petsc",
    "petsc4py.PETSc",
    "ufl",
    "basix",
    "ffcx",
    "gmsh",
    "sympy",
    __name__,
)
VERSION_PREFIX = "0.11."
NO_HYPRE = (
    "this PETSc build has no hypre (pc_type hypre fails with PETSc error 86, unknown type): "
    "use pc_type gamg (algebraic multigrid) or lu (MUMPS, SuperLU_dist)"
)

CONTRACT = f"""\
Use DOLFINx 0.11 (dolfinx, ufl, basix; PETSc through dolfinx.fem.petsc and petsc4py); numpy and scipy
are allowed. The solve runs as an MPI singleton (one rank, no mpirun): use MPI.COMM_WORLD or
MPI.COMM_SELF, and import mpi4py (`from mpi4py import MPI`) before petsc4py. In 0.11,
dolfinx.fem.petsc.LinearProblem and NonlinearProblem take a keyword `petsc_options_prefix`.
{NO_HYPRE[0].upper()}{NO_HYPRE[1:]}; MUMPS is the LU solver.
Each new form is compiled to C on first use (about 0.5 s, counted in your solve time): build
forms once, outside time loops. Sample your solution on the evaluation grid yourself (for
example with dolfinx.geometry.bb_tree, compute_collisions_points, compute_colliding_cells
and Function.eval) and put NaN outside the domain; every grid point of the exact domain needs a value,
also one between a curved boundary and your mesh's edges. gmsh 4.15 meshes curved domains
(dolfinx.io.gmsh.model_to_mesh)."""

_PROBE = """
import json
from mpi4py import MPI
import dolfinx, dolfinx.fem.petsc
from petsc4py import PETSc
has = PETSc.Sys.hasExternalPackage
print(json.dumps({"dolfinx": dolfinx.__version__, "ranks": MPI.COMM_WORLD.size,
                  "hypre": has("hypre"), "mumps": has("mumps"), "superlu_dist": has("superlu_dist")}))
"""


@functools.cache
def probe() -> dict[str, object]:
    """The install's facts, from a fresh interpreter (never MPI in the scorer's own process)."""
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    if done.returncode != 0:
        lines = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return {"error": lines[-1] if lines else f"exit code {done.returncode}"}
    facts: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return facts


def check() -> tuple[bool, str]:
    facts = probe()
    if "error" in facts:
        return False, f"dolfinx does not import: {facts['error']}"
    version = str(facts["dolfinx"])
    if not version.startswith(VERSION_PREFIX):
        return False, f"dolfinx {version} installed; the track targets {VERSION_PREFIX}x"
    if not facts["mumps"]:
        return False, "PETSc has no MUMPS: the track's direct solves need it"
    if facts["ranks"] != 1:
        return False, f"MPI COMM_WORLD has {facts['ranks']} ranks; jobs run as MPI singletons"
    hypre = "with hypre" if facts["hypre"] else "no hypre"
    return True, f"available (dolfinx {version}, PETSc with MUMPS, {hypre}, MPI singleton)"


def prepare_job() -> None:
    """In the job's process, before the attempt runs: the form cache lives in
    the job's scratch (its HOME), whether dolfinx was preloaded or not."""
    cache = Path(os.environ.get("HOME") or os.getcwd()) / ".cache"
    os.environ["XDG_CACHE_HOME"] = str(cache)
    jit = sys.modules.get("dolfinx.jit")
    if jit is not None:
        _, doc = jit.DOLFINX_DEFAULT_JIT_OPTIONS["cache_dir"]
        jit.DOLFINX_DEFAULT_JIT_OPTIONS["cache_dir"] = (cache / "fenics", doc)


COMPILE_FAILED = (
    "building a form's C code failed (ffcx generates it, the C compiler builds it into the job's "
    "form cache); the compiler's own message is above"
)


def explain_error(code: str, message: str) -> str | None:
    """What a failure means in this install: a request for hypre (PETSc error 86,
    unknown type), or a form whose C code did not build."""
    if "hypre" in code.lower() and ("error code 86" in message or "unknown type" in message.lower()):
        return NO_HYPRE
    if message.startswith(("VerificationError", "CompileError", "LinkError")) or "CompileError:" in message:
        return COMPILE_FAILED
    return None


def forget_mpi_segment() -> None:
    """Unlink the shared-memory file MPICH made for this process when MPI started
    (/dev/shm/mpich_shm_<pid in hex>_<n>, 1 MB). A singleton has mapped it and never
    opens it by name again; MPI_Finalize would unlink it, but a warm worker or an import
    worker that is killed, like a process that ends with `os._exit`, never finalises, and
    each left its file in memory: 1,391 of them, 1.4 GB of /dev/shm, after a day of test
    runs on the development machine. Unlinked now, it goes with the process however that ends."""
    if "mpi4py.MPI" not in sys.modules:
        return
    for path in glob.glob(f"/dev/shm/mpich_shm_{os.getpid():x}_*"):
        with contextlib.suppress(OSError):
            os.unlink(path)


# The warm workers import this module last of PRELOAD, after mpi4py.MPI: their file goes here.
forget_mpi_segment()

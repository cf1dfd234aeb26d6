"""Library tracks as plug-ins: an environment check, the allowed imports, the
solver contract text for prompts, the template-guided skeleton (a file under
scaffolds/pde/), and our own calibration solver. A track whose library is not
installed reports itself unavailable; nothing fakes it."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fembench_agents.cases import dolfinx_env
from fembench_agents.cases.model import TRANSIENT_VARIANTS

Solver = Callable[[dict[str, Any]], dict[str, Any]]

CONTRACT = """\
Write `solve(case_spec: dict) -> dict`. case_spec holds the PDE family and its
coefficients, the forcing `f`, the boundary data per boundary piece (a segment
or a circular arc, its kind and the value there: u itself on a dirichlet piece,
the flux or traction on the others, as the equation text says; a periodic piece
names its partner and has no value), initial data and time
interval where the case is time-dependent, the domain and the evaluation grid. Expressions are Python
syntax in x, y, t (u in a reaction term R) with pi, E, sin, cos, tan, exp,
log, sqrt, sinh, cosh, tanh, atan, step (step(s) = 1 for s > 0, 0 for s < 0,
1/2 at 0); evaluate them with numpy.
Return {"u": array, "solver_info": {...}}: "u" is a float array of shape
(ny, nx) (rows are y) on x = linspace(bbox[0], bbox[1], nx),
y = linspace(bbox[2], bbox[3], ny), with NaN at points outside the domain
(boundary points are inside). For elasticity "u" has shape (2, ny, nx):
u[0] is the x-displacement, u[1] the y-displacement. For Stokes and
Navier-Stokes "u" is the velocity, shape (2, ny, nx), and "p" the pressure,
shape (ny, nx), compared up to a constant. For time-dependent
families return u at t_end. On the unit cube (a grid with nz) every
boundary piece is a face (its axis and the value there), expressions are in
x, y, z, and "u" has shape (nz, ny, nx): u[k, j, i] is the value at
(x_i, y_j, z_k), z = linspace(bbox[4], bbox[5], nz) (a displacement there:
(3, nz, ny, nx), u[2] the z-displacement); the output contract
in case_spec["output"] gives each field's shape. solver_info should report mesh_resolution,
element_degree, dofs and, where used, iterations and time_steps.
The solve must be accurate and fast; choose the method and resolution yourself."""


@dataclass(frozen=True)
class Track:
    name: str
    modules: tuple[str, ...]  # must import for the track to be available
    allowed_imports: tuple[str, ...]
    skeleton: str  # path under scaffolds/
    calibration_module: str
    extra_contract: str = ""
    # A deeper check of the install (run once, in a subprocess where it imports the library).
    environment_check: Callable[[], tuple[bool, str]] | None = None
    # A module of ours whose prepare_job() runs in each solve job before the solver does.
    job_setup: str | None = None
    # (code, error message) -> what the failure means in this install, or None.
    explain_error: Callable[[str, str], str | None] | None = None
    unsupported_families: tuple[str, ...] = ()  # families this track has no calibration solver for
    boundary_kinds: tuple[str, ...] = ("dirichlet",)  # the piece kinds its calibration solvers apply
    transient_variants: tuple[str, ...] = ()  # steady families it also solves with a time interval
    periodic_families: tuple[str, ...] = ()  # families whose solves it reduces to periodic pieces (steady ones)
    curved: bool = True  # whether it solves on a domain given by its geometry (arcs)
    cube_families: tuple[str, ...] = ()  # families its calibration solves on the unit cube (3D)

    def supports(self, family: str, domain: str) -> bool:
        return family not in self.unsupported_families

    def refuses(
        self, family: str, kinds: tuple[str, ...], transient: bool, *, dim: int = 2, curved: bool = False
    ) -> str | None:
        """Why this track's calibration cannot solve a case of this family with pieces of these
        kinds (transient: a steady family given a time interval; dim 3: on the unit cube; curved: on
        a domain given by its geometry), or None."""
        if family in self.unsupported_families:
            return f"no {family} solver"
        if dim == 3 and family not in self.cube_families:
            return f"no {family} solver on the unit cube (3D)"
        if curved and not self.curved:
            return "no solver on a curved domain (its stencils need the boundary on grid nodes)"
        if "periodic" in kinds and (
            family not in self.periodic_families or (transient and family in TRANSIENT_VARIANTS)
        ):
            return f"no periodic pieces in a{' transient' if transient else ''} {family} solve"
        other = sorted(set(kinds) - {*self.boundary_kinds, "periodic"})
        if other:
            return f"no boundary pieces of kind {', '.join(other)} (it applies {', '.join(self.boundary_kinds)})"
        if transient and family in TRANSIENT_VARIANTS and family not in self.transient_variants:
            return f"no transient {family} solver"
        return None

    def available(self) -> tuple[bool, str]:
        # Top-level names only: finding a submodule imports its package, and
        # some packages (dolfinx) import only after another (mpi4py.MPI).
        missing = [m for m in self.modules if importlib.util.find_spec(m.partition(".")[0]) is None]
        if missing:
            extra = "ngsolve" if self.name == "ngsolve" else "pde"
            return False, f"not installed: {', '.join(missing)} (pip install 'fembench-agents[{extra}]')"
        if self.environment_check is not None:
            return self.environment_check()
        return True, "available"

    def contract_text(self) -> str:
        return CONTRACT + ("\n" + self.extra_contract if self.extra_contract else "")

    def calibration_solver(self) -> Solver:
        ok, why = self.available()
        if not ok:
            raise TrackUnavailable(f"track {self.name} unavailable: {why}")
        mod = importlib.import_module(self.calibration_module)
        solver: Solver = mod.solve
        return solver


class TrackUnavailable(RuntimeError):
    pass


TRACKS: dict[str, Track] = {
    "numpy-scipy": Track(
        name="numpy-scipy",
        modules=("numpy", "scipy"),
        allowed_imports=("numpy", "scipy", "math", "functools", "itertools", "collections", "typing"),
        skeleton="pde/numpy_scipy_skeleton.py",
        calibration_module="fembench_agents.cases.calibration.numpy_scipy",
        extra_contract="Use numpy and scipy only (any method: finite differences, finite elements, ...).",
        unsupported_families=("stokes", "navier_stokes"),
        # its finite differences take the boundary on grid nodes; a curve cuts grid lines between them
        # (Shortley-Weller stencils per family would be needed)
        curved=False,
    ),
    "scikit-fem": Track(
        name="scikit-fem",
        modules=("numpy", "scipy", "skfem"),
        # gmsh: a curved domain's mesh, as the calibration makes it (skfem's own meshers do too)
        allowed_imports=("numpy", "scipy", "skfem", "gmsh", "math", "functools", "itertools", "collections", "typing"),
        skeleton="pde/scikit_fem_skeleton.py",
        calibration_module="fembench_agents.cases.calibration.scikit_fem",
        boundary_kinds=("dirichlet", "neumann", "robin"),
        transient_variants=("convection_diffusion", "reaction_diffusion"),
        # its linear solves and heat's time steps, reduced (scikit_fem_common.factorised); not its Newton solves
        periodic_families=(
            "poisson",
            "heat",
            "convection_diffusion",
            "helmholtz",
            "biharmonic",
            "elasticity",
            "stokes",
        ),
        # scikit_fem_cube.py
        cube_families=("poisson", "heat", "helmholtz", "convection_diffusion", "reaction_diffusion", "elasticity"),
        extra_contract="Use scikit-fem (skfem 12) for the discretisation; numpy and scipy are allowed.",
    ),
    "dolfinx": Track(
        name="dolfinx",
        modules=dolfinx_env.PRELOAD,
        allowed_imports=(
            "dolfinx",
            "ufl",
            "basix",
            "ffcx",
            "petsc4py",
            "mpi4py",
            "numpy",
            "scipy",
            "sympy",  # programs written for the published track parse its expressions with it
            "gmsh",  # the published track's programs mesh its curved domains with it
            "math",
            "functools",
            "itertools",
            "collections",
            "typing",
        ),
        skeleton="pde/dolfinx_skeleton.py",
        calibration_module="fembench_agents.cases.calibration.dolfinx_fem",
        extra_contract=dolfinx_env.CONTRACT,
        environment_check=dolfinx_env.check,
        boundary_kinds=("dirichlet", "neumann", "robin", "do-nothing"),
        transient_variants=("convection_diffusion", "reaction_diffusion"),
        # its linear solves, reduced (dolfinx_periodic.py); a Newton (SNES) solve is not
        periodic_families=(
            "poisson",
            "heat",
            "convection_diffusion",
            "helmholtz",
            "elasticity",
            "biharmonic",
            "stokes",
        ),
        # dolfinx_cube.py: the scalar families and the published 3D vector ones (magnitude output)
        cube_families=(
            "poisson",
            "heat",
            "helmholtz",
            "convection_diffusion",
            "reaction_diffusion",
            "elasticity",
            "stokes",
        ),
        job_setup=dolfinx_env.__name__,
        explain_error=dolfinx_env.explain_error,
    ),
    "ngsolve": Track(
        name="ngsolve",
        modules=("numpy", "scipy", "ngsolve", "netgen"),
        allowed_imports=(
            "numpy",
            "scipy",
            "ngsolve",
            "netgen",
            "math",
            "functools",
            "itertools",
            "collections",
            "typing",
        ),  # fmt: skip
        skeleton="pde/ngsolve_skeleton.py",
        calibration_module="fembench_agents.cases.calibration.ngsolve_track",
        extra_contract="Use NGSolve (ngsolve 6.2, with netgen for the mesh) for the discretisation; "
        "numpy and scipy are allowed.",
        unsupported_families=("navier_stokes", "burgers", "wave"),
        boundary_kinds=("dirichlet", "neumann", "robin"),
        transient_variants=("convection_diffusion", "reaction_diffusion"),
        # netgen identifies a periodic pair's nodes; ng.Periodic every space of these solves
        periodic_families=(
            "poisson",
            "heat",
            "convection_diffusion",
            "helmholtz",
            "elasticity",
            "biharmonic",
            "stokes",
        ),
        # ngsolve_track.py's forms on ngsolve_cube.py's box
        cube_families=("poisson", "heat", "helmholtz", "convection_diffusion", "reaction_diffusion", "elasticity"),
    ),
}


def get_track(name: str) -> Track:
    if name not in TRACKS:
        raise KeyError(f"unknown library track {name!r}; known: {', '.join(sorted(TRACKS))}")
    return TRACKS[name]

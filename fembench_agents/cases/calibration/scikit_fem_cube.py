"""The scikit-fem calibration on the unit cube (cases/cube.py): P2 tetrahedra on
MeshTet.init_tensor (six per sub-cube, a body diagonal and one diagonal per
face) with ceil((n - 1) / 2) cells along an axis of n grid points, as the DOLFINx
cube solver meshes it (dolfinx_cube.py): where n - 1 is even every grid point is
a P2 node. The output is read by point evaluation (Basis.probes) at every grid
point, shape (nz, ny, nx) per component.

Our cube cases' families (cube_cases.CUBE_FAMILIES): poisson, helmholtz,
convection_diffusion and reaction_diffusion (each steady, the last two also
transient), heat, and elasticity (vector P2, 3D Lame). The linear time-dependent
ones by Crank-Nicolson with the cube's step rule (common.time_steps), the matrix
factorised once; reaction-diffusion by Newton (scikit_fem_common.newton; its
transient variant scikit_fem_dynamics.reaction). Dirichlet faces take the
first Dirichlet face's data (as listed) at a shared edge; natural faces add
their flux data, a Robin face alpha u v too (scikit_fem_common.natural)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.sparse.linalg import splu
from skfem import Basis, BilinearForm, ElementTetP2, ElementVector, LinearForm, MeshTet
from skfem.helpers import dot, grad

from fembench_agents.cases import cube
from fembench_agents.cases.calibration import scikit_fem_common as p2
from fembench_agents.cases.calibration import scikit_fem_dynamics as dynamics
from fembench_agents.cases.calibration.common import components, time_steps
from fembench_agents.cases.case_spec import Face
from fembench_agents.cases.cube_cases import CUBE_FAMILIES
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.model import GridSpec

INTORDER = 6  # P2 products exactly, smooth data to P2's order (the DOLFINx cube's quadrature degree)


def _at(w: Any, text: Any, t: float | None = None) -> Any:
    return compile_expr(text)(x=w.x[0], y=w.x[1], z=w.x[2], t=t)


def _boundary(spec: dict[str, Any], locs: np.ndarray, dofs: np.ndarray, comp: int) -> Callable[..., np.ndarray]:
    """A function of t giving component `comp` of the Dirichlet data at these dofs, each from the
    first Dirichlet face (as listed) it lies on."""
    coords = {c: locs[k, dofs] for k, c in enumerate(cube.AXES)}
    kept = [k for k, piece in enumerate(spec["boundary"]) if p2.kind(piece) == "dirichlet"]
    which = cube.face_index(coords, [Face.model_validate(spec["boundary"][k]["face"]) for k in kept])
    if (which < 0).any():
        raise RuntimeError(f"{int((which < 0).sum())} boundary dofs lie on no Dirichlet face of the cube")

    def values(t: float | None = None) -> np.ndarray:
        out = np.zeros(dofs.size)
        for j, k in enumerate(kept):
            sel = which == j
            text = components(spec["boundary"][k]["value"])[comp]
            out[sel] = compile_expr(text)(**{c: v[sel] for c, v in coords.items()}, t=t)
        return out

    return values


def _probe(basis: Basis, u: np.ndarray, grid: GridSpec) -> np.ndarray:
    coords = cube.grid_coordinates(grid)
    points = np.vstack([coords[a].ravel() for a in cube.AXES])
    out = (basis.probes(points) @ u).reshape(grid.shape)
    out[~cube.grid_mask(grid)] = np.nan
    return out


def solve(case_spec: dict[str, Any]) -> dict[str, Any]:
    family = case_spec["family"]
    if family not in CUBE_FAMILIES:
        raise ValueError(f"the scikit-fem cube calibration solves {', '.join(CUBE_FAMILIES)}; got {family!r}")
    grid = GridSpec.model_validate(case_spec["grid"])
    cells = [math.ceil((n - 1) / 2) for n in (grid.nx, grid.ny, grid.nz or 0)]
    mesh = MeshTet.init_tensor(*(np.linspace(0.0, 1.0, c + 1) for c in cells))
    if family == "elasticity":
        u, basis, info = _elasticity(case_spec, mesh)
        scalar = Basis(mesh, ElementTetP2())  # a component's dofs are numbered as the scalar space's
        out = np.stack([_probe(scalar, u[idx], grid) for idx in basis.split_indices()])
    else:
        basis = Basis(mesh, ElementTetP2(), intorder=INTORDER)
        u, info = _scalar(case_spec, basis)
        out = _probe(basis, u, grid)
    solver_info = {
        "mesh_resolution": cells[0],
        "element_degree": 2,
        "dofs": int(basis.N),
        "ksp_type": "preonly",
        "pc_type": "lu",
        **info,
        "method": f"scikit-fem-p2-tet-{family}",
    }
    return {"u": out, "solver_info": solver_info}


def _scalar(spec: dict[str, Any], basis: Basis) -> tuple[np.ndarray, dict[str, Any]]:
    family, c = spec["family"], spec["coefficients"]
    # the diffusion coefficient (helmholtz's k is its wavenumber)
    k_text = {"poisson": "k", "heat": "k", "convection_diffusion": "eps", "reaction_diffusion": "D"}.get(family)

    @BilinearForm
    def stiffness(u: Any, v: Any, w: Any) -> Any:
        return (1.0 if k_text is None else _at(w, c[k_text])) * dot(grad(u), grad(v))

    @BilinearForm
    def mass(u: Any, v: Any, w: Any) -> Any:
        return u * v

    @BilinearForm
    def convection(u: Any, v: Any, w: Any) -> Any:
        b = [_at(w, e) for e in c["b"]]
        return (b[0] * grad(u)[0] + b[1] * grad(u)[1] + b[2] * grad(u)[2]) * v

    def load(t: float | None) -> np.ndarray:
        @LinearForm
        def f(v: Any, w: Any) -> Any:
            return _at(w, spec["forcing"], t) * v

        return f.assemble(basis)

    A = stiffness.assemble(basis)
    if family == "helmholtz":
        A = A - float(c["k"]) ** 2 * mass.assemble(basis)
    if family == "convection_diffusion":
        A = A + convection.assemble(basis)
    D = basis.get_dofs(facets=p2.dirichlet_facets(spec, basis.mesh)).all()
    g = _boundary(spec, basis.doflocs, D, 0)
    if spec.get("time") is not None and family == "reaction_diffusion":
        return dynamics.reaction(spec, basis, mass.assemble(basis), A, D, g)
    t0 = float(spec["time"]["t0"]) if spec.get("time") else None
    flux, robin = p2.natural(spec, basis.mesh, basis.elem, t0)
    A = A if robin is None else A + robin
    if spec.get("time") is None:
        F = load(None) + (0 if flux is None else flux)
        if family == "reaction_diffusion":
            u, its = p2.newton(spec, basis, A, F, D, g())
            return u, {"iterations": its}
        return p2.solve_dirichlet(A, F, D, g()), {}
    return _crank_nicolson(spec, basis, mass.assemble(basis), A, D, g, load)


def _crank_nicolson(
    spec: dict[str, Any], basis: Basis, M: Any, A: Any, D: np.ndarray, g: Callable[..., np.ndarray], load: Any
) -> tuple[np.ndarray, dict[str, Any]]:
    """du/dt + A u = f (+ the natural faces' flux data), the matrix factorised once."""
    t0, _, steps, dt = time_steps(spec)
    u = basis.project(lambda x: compile_expr(spec["initial"])(x=x[0], y=x[1], z=x[2], t=t0))
    left, right = (M / dt + A / 2).tocsr(), (M / dt - A / 2).tocsr()
    interior = basis.complement_dofs(D)
    lu = splu(left[interior][:, interior].tocsc())

    def rhs_at(t: float) -> np.ndarray:
        flux, _ = p2.natural(spec, basis.mesh, basis.elem, t)
        return load(t) + (0 if flux is None else flux)

    f_old = rhs_at(t0)
    for n in range(1, steps + 1):
        t_new = t0 + n * dt
        f_new = rhs_at(t_new)
        new = np.zeros(basis.N)
        new[D] = g(t_new)
        rhs = right @ u + (f_old + f_new) / 2 - left @ new
        new[interior] = lu.solve(rhs[interior])
        u, f_old = new, f_new
    return u, {"time_steps": steps, "dt": dt}


def _elasticity(spec: dict[str, Any], mesh: MeshTet) -> tuple[np.ndarray, Basis, dict[str, Any]]:
    element = ElementVector(ElementTetP2())
    basis = Basis(mesh, element, intorder=INTORDER)

    @LinearForm
    def load(v: Any, w: Any) -> Any:
        return sum(_at(w, e) * v[i] for i, e in enumerate(spec["forcing"]))

    dofs = basis.get_dofs(facets=p2.dirichlet_facets(spec, mesh))
    per_component = [dofs.all(f"u^{i}") for i in (1, 2, 3)]
    D = np.concatenate(per_component)
    uD = np.concatenate([_boundary(spec, basis.doflocs, d, i)() for i, d in enumerate(per_component)])
    traction, _ = p2.natural(spec, mesh, element)
    F = load.assemble(basis) + (0 if traction is None else traction)
    return p2.solve_dirichlet(p2.elasticity_form(spec).assemble(basis), F, D, uD), basis, {}

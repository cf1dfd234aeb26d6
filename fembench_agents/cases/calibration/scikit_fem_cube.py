"""The scikit-fem calibration on the unit cube (cases/cube.py): P2 tetrahedra on
MeshTet.init_tensor (six per sub-cube, a body diagonal and one diagonal per
face) with ceil((n - 1) / 2) cells along an axis of n grid points, as the DOLFINx
cube solver meshes it (dolfinx_cube.py): where n - 1 is even every grid point is
a P2 node. The output is read by point evaluation (Basis.probes) at every grid
point, shape (nz, ny, nx).

Our cube cases' families (cube_cases.CUBE_FAMILIES), Dirichlet faces only:
poisson, helmholtz, convection_diffusion (steady, and the transient variant)
and heat, the time-dependent ones by Crank-Nicolson with the DOLFINx cube's
step rule (dolfinx_cube.DT_MAX), the matrix factorised once."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.sparse.linalg import splu
from skfem import Basis, BilinearForm, ElementTetP2, LinearForm, MeshTet, condense
from skfem.helpers import dot, grad

from fembench_agents.cases import cube
from fembench_agents.cases.calibration.common import components
from fembench_agents.cases.cube_cases import CUBE_FAMILIES
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.model import Face, GridSpec

DT_MAX = 0.005  # as the DOLFINx cube's Crank-Nicolson (dolfinx_cube.DT_MAX)
INTORDER = 6  # P2 products exactly, smooth data to P2's order (the DOLFINx cube's quadrature degree)


def _at(w: Any, text: Any, t: float | None = None) -> Any:
    return compile_expr(text)(x=w.x[0], y=w.x[1], z=w.x[2], t=t)


def _time_steps(spec: dict[str, Any]) -> tuple[float, float, int, float]:
    t0, t1 = float(spec["time"]["t0"]), float(spec["time"]["t_end"])
    steps = max(1, math.ceil((t1 - t0) * (spec["grid"]["nx"] - 1)), math.ceil((t1 - t0) / DT_MAX - 1e-9))
    return t0, t1, steps, (t1 - t0) / steps


def _boundary(basis: Basis, spec: dict[str, Any]) -> tuple[np.ndarray, Any]:
    """The boundary dofs and a function of t giving their values, each from the first face (as
    listed) the dof lies on."""
    dofs = basis.get_dofs().all()
    xyz = basis.doflocs[:, dofs]
    coords = {c: xyz[k] for k, c in enumerate(cube.AXES)}
    faces = [Face.model_validate(p["face"]) for p in spec["boundary"]]
    which = cube.face_index(coords, faces)
    if (which < 0).any():
        raise RuntimeError(f"{int((which < 0).sum())} boundary dofs lie on no face of the cube")

    def values(t: float | None = None) -> np.ndarray:
        out = np.zeros(dofs.size)
        for k, piece in enumerate(spec["boundary"]):
            sel = which == k
            out[sel] = compile_expr(components(piece["value"])[0])(**{c: v[sel] for c, v in coords.items()}, t=t)
        return out

    return dofs, values


def solve(case_spec: dict[str, Any]) -> dict[str, Any]:
    family = case_spec["family"]
    if family not in CUBE_FAMILIES:
        raise ValueError(f"the scikit-fem cube calibration solves {', '.join(CUBE_FAMILIES)}; got {family!r}")
    grid = GridSpec.model_validate(case_spec["grid"])
    cells = [math.ceil((n - 1) / 2) for n in (grid.nx, grid.ny, grid.nz or 0)]
    mesh = MeshTet.init_tensor(*(np.linspace(0.0, 1.0, c + 1) for c in cells))
    basis = Basis(mesh, ElementTetP2(), intorder=INTORDER)
    c = case_spec["coefficients"]
    k_text = c.get("k", c.get("eps", 1.0))

    @BilinearForm
    def stiffness(u: Any, v: Any, w: Any) -> Any:
        return _at(w, k_text) * dot(grad(u), grad(v))

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
            return _at(w, case_spec["forcing"], t) * v

        return f.assemble(basis)

    A = stiffness.assemble(basis)
    if family == "helmholtz":
        A = A - float(c["k"]) ** 2 * mass.assemble(basis)
    if family == "convection_diffusion":
        A = A + convection.assemble(basis)
    D, g = _boundary(basis, case_spec)
    u = np.zeros(basis.N)
    info: dict[str, Any] = {}
    if case_spec.get("time") is None:
        u[D] = g()
        A_in, b_in, _, inner = condense(A, load(None), x=u, D=D)
        u[inner] = splu(A_in.tocsc()).solve(b_in)
    else:
        t0, _, steps, dt = _time_steps(case_spec)
        u = basis.project(lambda x: compile_expr(case_spec["initial"])(x=x[0], y=x[1], z=x[2], t=t0))
        M = mass.assemble(basis)
        left, right = (M / dt + A / 2).tocsr(), (M / dt - A / 2).tocsr()
        interior = basis.complement_dofs(D)
        lu = splu(left[interior][:, interior].tocsc())
        f_old = load(t0)
        for n in range(1, steps + 1):
            t_new = t0 + n * dt
            f_new = load(t_new)
            new = np.zeros(basis.N)
            new[D] = g(t_new)
            rhs = right @ u + (f_old + f_new) / 2 - left @ new
            new[interior] = lu.solve(rhs[interior])
            u, f_old = new, f_new
        info = {"time_steps": steps, "dt": dt}
    coords = cube.grid_coordinates(grid)
    points = np.vstack([coords[a].ravel() for a in cube.AXES])
    out = (basis.probes(points) @ u).reshape(grid.shape)
    out[~cube.grid_mask(grid)] = np.nan
    solver_info = {
        "mesh_resolution": cells[0],
        "element_degree": 2,
        "method": f"scikit-fem-p2-tet-{family}",
        "dofs": int(basis.N),
        "ksp_type": "preonly",
        "pc_type": "lu",
        **info,
    }
    return {"u": out, "solver_info": solver_info}

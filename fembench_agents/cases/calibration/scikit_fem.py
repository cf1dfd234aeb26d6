"""Calibration solvers of the scikit-fem track: P2 triangles on a structured
mesh of half the grid's resolution, so that the P2 nodes are exactly the
in-domain grid points and the output is read off the degrees of freedom.

- poisson, convection_diffusion, helmholtz: one Galerkin solve.
- heat, and the transient variant of convection_diffusion: Crank-Nicolson with
  one step per grid spacing; the forcing enters through its P2 interpolant (M f_h).
- the transient variant of reaction_diffusion: scikit_fem_dynamics.reaction.
- reaction_diffusion: Newton, R'(u) by central differences (scikit_fem_common.newton).
- elasticity: vector P2, plane-strain Lame parameters.
- biharmonic: two Dirichlet problems (w = lap u, with its boundary data).
- wave, burgers: scikit_fem_dynamics.py; stokes, navier_stokes: scikit_fem_flow.py.
Dirichlet data: per Dirichlet piece, at the boundary nodes on that piece; a natural
piece adds its flux data (and a Robin piece alpha u v) on its facets.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from skfem import (
    Basis,
    BilinearForm,
    ElementTriP2,
    ElementVector,
    LinearForm,
    MeshTri,
    asm,
)
from skfem.helpers import dot, grad

from fembench_agents.cases.calibration import scikit_fem_common as p2
from fembench_agents.cases.calibration import scikit_fem_cube as cube
from fembench_agents.cases.calibration import scikit_fem_dynamics as dynamics
from fembench_agents.cases.calibration import scikit_fem_flow as flow
from fembench_agents.cases.calibration.common import grid_problem, time_steps
from fembench_agents.cases.expressions import compile_expr

# the families whose linear solves are reduced to periodic pieces (p2.factorised): the steady ones
# and heat's time steps (Stokes: scikit_fem_flow.py)
PERIODIC = ("poisson", "convection_diffusion", "helmholtz", "biharmonic", "elasticity", "heat")


def solve(case_spec: dict[str, Any]) -> dict[str, Any]:
    if case_spec["grid"].get("nz") is not None:  # the unit cube: tetrahedra of its own
        return cube.solve(case_spec)
    p = grid_problem(case_spec)
    mesh, nx, ny = p2.mesh(case_spec, p.inside)
    fam, c = case_spec["family"], case_spec["coefficients"]
    cells = (nx - 1) // 2
    if fam == "elasticity":
        return _elasticity(case_spec, mesh, p, nx, ny, cells)
    if fam in ("stokes", "navier_stokes"):
        return flow.solve(case_spec, mesh, p, nx, ny, cells)
    basis = Basis(mesh, ElementTriP2())
    locs = basis.doflocs
    D = basis.get_dofs(facets=p2.dirichlet_facets(case_spec, mesh)).all()  # nodes of Dirichlet pieces only
    # a time-dependent family assembles its natural pieces' data at each step instead
    flux, robin = (None, None) if case_spec.get("time") else p2.natural(case_spec, mesh, ElementTriP2())
    transient = fam in ("convection_diffusion", "reaction_diffusion") and bool(case_spec.get("time"))
    fexpr = compile_expr(case_spec["forcing"]) if fam not in ("heat", "wave", "burgers") and not transient else None
    pairs = p2.periodic(case_spec, basis, D)
    if pairs is not None and (fam not in PERIODIC or transient):
        raise ValueError(f"periodic pieces: the scikit-fem calibration reduces {', '.join(PERIODIC)} only")

    @LinearForm
    def load(v: Any, w: Any) -> Any:
        assert fexpr is not None
        return fexpr(x=w.x[0], y=w.x[1]) * v

    @BilinearForm
    def mass(u: Any, v: Any, w: Any) -> Any:
        return u * v

    def stiffness(k: Any) -> Any:
        kf = compile_expr(k)

        @BilinearForm
        def a(u: Any, v: Any, w: Any) -> Any:
            return kf(x=w.x[0], y=w.x[1]) * dot(grad(u), grad(v))

        return asm(a, basis)

    if fam == "heat":
        return _heat(case_spec, basis, asm(mass, basis), stiffness(c["k"]), D, (p, nx, ny, cells), pairs)
    if transient and fam == "convection_diffusion":
        return _heat(case_spec, basis, asm(mass, basis), _convection(c, basis), D, (p, nx, ny, cells))
    if transient:
        boundary = partial(p2.dirichlet, case_spec, locs, D, 0)
        u, info = dynamics.reaction(case_spec, basis, asm(mass, basis), stiffness(c["D"]), D, boundary)
        return {"u": p2.out(u, basis, p, nx, ny), "solver_info": p2.info(cells, basis.N, **info)}
    if fam in ("wave", "burgers"):
        solver = dynamics.wave if fam == "wave" else dynamics.burgers
        return solver(case_spec, basis, asm(mass, basis), stiffness(1.0), D, p, nx, ny)
    if fam == "biharmonic":
        # lap(lap u) = f as two Dirichlet problems: lap w = f with w = h, then lap u = w with u = g
        K = stiffness(1.0)
        w_h = p2.solve_dirichlet(K, -asm(load, basis), D, p2.dirichlet(case_spec, locs, D, 1), pairs)
        M = asm(mass, basis)
        u = p2.solve_dirichlet(K, -(M @ w_h), D, p2.dirichlet(case_spec, locs, D, 0), pairs)
        return {"u": p2.out(u, basis, p, nx, ny), "solver_info": p2.info(cells, 2 * basis.N, "p2-split-biharmonic")}
    uD = p2.dirichlet(case_spec, locs, D, 0)
    F = asm(load, basis) + (0 if flux is None else flux)
    its = None
    if fam == "poisson":
        A = stiffness(c["k"])
    elif fam == "helmholtz":
        k = float(c["k"])
        A = stiffness(1.0) - k * k * asm(mass, basis)
    elif fam == "convection_diffusion":
        A = _convection(c, basis)
    elif fam == "reaction_diffusion":
        K = stiffness(float(c["D"])) + (0 if robin is None else robin)
        u, its = p2.newton(case_spec, basis, K, F, D, uD)
        return {"u": p2.out(u, basis, p, nx, ny), "solver_info": p2.info(cells, basis.N, "p2-newton", iterations=its)}
    else:
        raise ValueError(f"unknown family {fam}")
    u = p2.solve_dirichlet(A if robin is None else A + robin, F, D, uD, pairs)
    return {"u": p2.out(u, basis, p, nx, ny), "solver_info": p2.info(cells, basis.N, "p2-galerkin")}


def _convection(c: dict[str, Any], basis: Any) -> Any:
    ef, bx, by = compile_expr(c["eps"]), compile_expr(c["b"][0]), compile_expr(c["b"][1])

    @BilinearForm
    def cd(u: Any, v: Any, w: Any) -> Any:
        X, Y = w.x[0], w.x[1]
        return ef(x=X, y=Y) * dot(grad(u), grad(v)) + (bx(x=X, y=Y) * grad(u)[0] + by(x=X, y=Y) * grad(u)[1]) * v

    return asm(cd, basis)


def _heat(
    spec: dict[str, Any],
    basis: Any,
    M: Any,
    K: Any,
    D: np.ndarray,
    grid: tuple[Any, int, int, int],
    pairs: p2.Pairs | None = None,
) -> dict[str, Any]:
    """Crank-Nicolson, the matrix factorised once (reduced to the periodic pieces' sources, if any)."""
    p, nx, ny, cells = grid
    t0, _, steps, dt = time_steps(spec)
    locs = basis.doflocs
    fexpr = compile_expr(spec["forcing"])
    mesh, element = basis.mesh, basis.elem
    g_old, robin = p2.natural(spec, mesh, element, t0)  # natural pieces: their flux at both ends of a step
    K = K if robin is None else K + robin
    A = (M + dt / 2 * K).tocsr()
    B = (M - dt / 2 * K).tocsr()
    step = p2.factorised(A, D, pairs)
    u = compile_expr(spec["initial"])(x=locs[0], y=locs[1], t=t0)
    f_old = M @ fexpr(x=locs[0], y=locs[1], t=t0)
    for n in range(1, steps + 1):
        t = t0 + n * dt
        f_new = M @ fexpr(x=locs[0], y=locs[1], t=t)
        gD = p2.dirichlet(spec, locs, D, 0, t)
        rhs = B @ u + dt / 2 * (f_old + f_new)
        g_new, _ = p2.natural(spec, mesh, element, t)
        if g_new is not None and g_old is not None:
            rhs = rhs + dt / 2 * (g_old + g_new)
        g_old = g_new
        u = step(rhs, gD)
        f_old = f_new
    return {
        "u": p2.out(u, basis, p, nx, ny),
        "solver_info": p2.info(cells, basis.N, "p2-crank-nicolson", time_steps=steps, dt=dt),
    }


def _elasticity(spec: dict[str, Any], mesh: MeshTri, p: Any, nx: int, ny: int, cells: int) -> dict[str, Any]:
    basis = Basis(mesh, ElementVector(ElementTriP2()))
    fx, fy = (compile_expr(e) for e in spec["forcing"])

    @LinearForm
    def load(v: Any, w: Any) -> Any:
        return fx(x=w.x[0], y=w.x[1]) * v[0] + fy(x=w.x[0], y=w.x[1]) * v[1]

    dofs = basis.get_dofs(facets=p2.dirichlet_facets(spec, mesh))
    D1, D2 = dofs.all("u^1"), dofs.all("u^2")
    traction, _ = p2.natural(spec, mesh, ElementVector(ElementTriP2()))
    locs = basis.doflocs
    D = np.concatenate([D1, D2])
    uD = np.concatenate([p2.dirichlet(spec, locs, D1, 0), p2.dirichlet(spec, locs, D2, 1)])
    load_vector = asm(load, basis) + (0 if traction is None else traction)
    u = p2.solve_dirichlet(asm(p2.elasticity_form(spec), basis), load_vector, D, uD, p2.periodic(spec, basis, D))
    return {"u": p2.vector_out(u, basis, p, nx, ny), "solver_info": p2.info(cells, basis.N, "p2-vector-galerkin")}

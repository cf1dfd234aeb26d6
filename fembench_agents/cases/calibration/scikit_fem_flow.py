"""Stokes and steady Navier-Stokes calibration solvers of the scikit-fem track:
Taylor-Hood (P2 velocity, P1 pressure) on the structured mesh whose P2 nodes are
the in-domain grid points. The pressure is fixed by pinning one vertex value
(the output is compared up to a constant) and is written to the grid by its P1
interpolant, exact at the vertices and at the edge midpoints (the other grid points).
Navier-Stokes: Newton from the Stokes solution. Periodic pieces: the Stokes system reduced to
their sources, velocity and pressure alike (scikit_fem_common.periodic).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps
from skfem import Basis, BilinearForm, ElementTriP1, ElementTriP2, ElementVector, LinearForm, MeshTri, asm
from skfem.helpers import ddot, div, dot, grad, mul

from fembench_agents.cases.calibration import scikit_fem_common as p2
from fembench_agents.cases.expressions import compile_expr

NEWTON_MAX = 25


@BilinearForm
def _laplace(u: Any, v: Any, w: Any) -> Any:
    return ddot(grad(u), grad(v))


@BilinearForm
def _divergence(u: Any, q: Any, w: Any) -> Any:
    return div(u) * q


@BilinearForm
def _convection_jacobian(du: Any, v: Any, w: Any) -> Any:
    u0 = w["prev"]
    return dot(mul(grad(u0), du) + mul(grad(du), u0), v)


@LinearForm
def _convection(v: Any, w: Any) -> Any:
    u0 = w["prev"]
    return dot(mul(grad(u0), u0), v)


def _pressure_on_grid(pressure: np.ndarray, mesh: MeshTri, nx: int, ny: int) -> np.ndarray:
    out = np.full((ny, nx), np.nan)
    mid = (mesh.p[:, mesh.facets[0]] + mesh.p[:, mesh.facets[1]]) / 2
    values = np.concatenate([pressure, (pressure[mesh.facets[0]] + pressure[mesh.facets[1]]) / 2])
    j, i = p2.grid_index(np.hstack([mesh.p, mid]), nx, ny)
    out[j, i] = values
    return out


def _periodic(spec: dict[str, Any], ub: Basis, pb: Basis, D: np.ndarray) -> p2.Pairs | None:
    """The periodic pairs of the velocity's dofs and of the pressure's (numbered after the
    velocity's in the block system; its pinned first vertex lies on no image piece)."""
    velocity = p2.periodic(spec, ub, D)
    if velocity is None:
        return None
    pressure = p2.periodic(spec, pb, np.array([0]))
    assert pressure is not None  # the same pieces
    image, source = (np.concatenate([v, q + ub.N]) for v, q in zip(velocity, pressure, strict=True))
    return image, source


def solve(spec: dict[str, Any], mesh: MeshTri, p: Any, nx: int, ny: int, cells: int) -> dict[str, Any]:
    nu = float(spec["coefficients"]["nu"])
    ub = Basis(mesh, ElementVector(ElementTriP2()), intorder=4)
    pb = Basis(mesh, ElementTriP1(), intorder=4)
    fx, fy = (compile_expr(e) for e in spec["forcing"])

    @LinearForm
    def load(v: Any, w: Any) -> Any:
        return fx(x=w.x[0], y=w.x[1]) * v[0] + fy(x=w.x[0], y=w.x[1]) * v[1]

    A = nu * asm(_laplace, ub)
    B = asm(_divergence, ub, pb)  # (pressure dofs) x (velocity dofs)
    nu_, np_ = ub.N, pb.N
    F = np.concatenate([asm(load, ub), np.zeros(np_)])
    dofs = ub.get_dofs(facets=p2.dirichlet_facets(spec, mesh))
    D1, D2 = dofs.all("u^1"), dofs.all("u^2")
    D = np.concatenate([D1, D2, [nu_]])  # the first pressure vertex pinned to 0
    locs = ub.doflocs
    uD = np.concatenate([p2.dirichlet(spec, locs, D1, 0), p2.dirichlet(spec, locs, D2, 1), [0.0]])
    pairs = _periodic(spec, ub, pb, np.concatenate([D1, D2]))

    def system(extra: Any = None) -> sps.csr_matrix:
        K = A if extra is None else A + extra
        return sps.bmat([[K, -B.T], [-B, None]], format="csr")

    x = p2.solve_dirichlet(system(), F, D, uD, pairs)
    its = 0
    if spec["family"] == "navier_stokes":
        for n in range(1, NEWTON_MAX + 1):
            its = n
            prev = ub.interpolate(x[:nu_])
            J = system(asm(_convection_jacobian, ub, prev=prev))
            r = system() @ x + np.concatenate([asm(_convection, ub, prev=prev), np.zeros(np_)]) - F
            dx = p2.solve_dirichlet(J, -r, D, np.zeros(D.size), pairs)
            x += dx
            if np.linalg.norm(dx) <= 1e-11 * max(1.0, float(np.linalg.norm(x))):
                break
        else:
            raise RuntimeError("Newton did not converge")
    u = p2.vector_out(x[:nu_], ub, p, nx, ny)
    if p2.unstructured(spec):
        pressure = p2.out(x[nu_:], pb, p, nx, ny)
    else:
        pressure = _pressure_on_grid(x[nu_:], mesh, nx, ny)
        pressure[~p.inside] = np.nan
    method = "taylor-hood-newton" if its else "taylor-hood"
    info = p2.info(cells, nu_ + np_, method, **({"iterations": its} if its else {}))
    return {"u": u, "p": pressure, "solver_info": info}

"""Shared parts of the scikit-fem calibration solvers: the structured P2 mesh whose
nodes are the in-domain grid points, Dirichlet data per boundary piece, the
output read off the degrees of freedom, one Dirichlet-constrained solve. A domain
given by its geometry (a curved one) is meshed by gmsh instead and read off by
point evaluation (scikit_fem_curved.py); its boundary nodes and facets go to the
nearest piece."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla
from skfem import Basis, BilinearForm, ElementTriP2, ElementVector, LinearForm, MeshTri, asm
from skfem.helpers import ddot, sym_grad, trace

from fembench_agents.cases import cube
from fembench_agents.cases.calibration import scikit_fem_curved as curved
from fembench_agents.cases.calibration.common import components, kept_cells_as_triangles, nearest_piece
from fembench_agents.cases.case_spec import Face
from fembench_agents.cases.domains import on_segment
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.published_shapes import given_by_geometry


def unstructured(spec: dict[str, Any]) -> bool:
    """Whether the case's domain is meshed by gmsh (given by its geometry) rather than on grid nodes."""
    return given_by_geometry(spec["domain"])


def mesh(spec: dict[str, Any], inside: np.ndarray) -> tuple[MeshTri, int, int]:
    g = spec["grid"]
    nx, ny = g["nx"], g["ny"]
    if unstructured(spec):
        return curved.mesh(spec), nx, ny
    cx, cy = (nx - 1) // 2, (ny - 1) // 2  # cells per direction
    xs, ys = np.linspace(0.0, 1.0, cx + 1), np.linspace(0.0, 1.0, cy + 1)
    # a cell is in the domain if its centre grid point (a P2 node) is
    points, triangles = kept_cells_as_triangles(inside[1::2, 1::2][:cy, :cx], xs, ys)
    return MeshTri(np.ascontiguousarray(points.T), np.ascontiguousarray(triangles.T)), nx, ny


def grid_index(locs: np.ndarray, nx: int, ny: int) -> tuple[np.ndarray, np.ndarray]:
    return np.rint(locs[1] * (ny - 1)).astype(int), np.rint(locs[0] * (nx - 1)).astype(int)


def dirichlet(
    spec: dict[str, Any], locs: np.ndarray, dofs: np.ndarray, comp: int, t: float | None = None
) -> np.ndarray:
    x, y = locs[0, dofs], locs[1, dofs]
    vals = np.full(dofs.size, np.nan)
    owner = None
    if unstructured(spec):  # each node to its nearest Dirichlet piece
        kept = [k for k, piece in enumerate(spec["boundary"]) if kind(piece) == "dirichlet"]
        owner = np.asarray(kept)[nearest_piece([spec["boundary"][k] for k in kept], x, y)]
    for k, piece in reversed(list(enumerate(spec["boundary"]))):
        if kind(piece) != "dirichlet":  # its data is a flux, not a value: it never sets a node
            continue
        if owner is None:
            a, b = piece["segment"]
            sel = on_segment(x, y, tuple(a), tuple(b))
        else:
            sel = owner == k
        vals[sel] = compile_expr(components(piece["value"])[comp])(x=x[sel], y=y[sel], t=t)
    if np.isnan(vals).any():
        raise RuntimeError("a boundary node lies on no boundary piece")
    return vals


def out(u_dofs: np.ndarray, basis: Any, p: Any, nx: int, ny: int) -> np.ndarray:
    """A scalar basis's values on the grid, NaN outside the domain."""
    if unstructured(p.spec):
        return curved.GridSampler(basis.mesh, p.X, p.Y, p.inside)(basis, u_dofs)
    out = np.full((ny, nx), np.nan)
    j, i = grid_index(basis.doflocs, nx, ny)
    out[j, i] = u_dofs
    out[~p.inside] = np.nan
    return out


def vector_out(u_dofs: np.ndarray, basis: Any, p: Any, nx: int, ny: int) -> np.ndarray:
    """A vector P2 basis's values on the grid, (2, ny, nx), NaN outside the domain."""
    out = np.full((2, ny, nx), np.nan)
    scalar = Basis(basis.mesh, ElementTriP2()) if unstructured(p.spec) else None
    for comp, idx in enumerate(basis.split_indices()):
        if scalar is not None:  # a component's dofs are numbered as the scalar space's
            out[comp] = curved.GridSampler(basis.mesh, p.X, p.Y, p.inside)(scalar, u_dofs[idx])
            continue
        j, i = grid_index(basis.doflocs[:, idx], nx, ny)
        out[comp, j, i] = u_dofs[idx]
    out[:, ~p.inside] = np.nan
    return out


def info(cells: int, dofs: int, method: str, **extra: Any) -> dict[str, Any]:
    return {
        "mesh_resolution": cells,
        "element_degree": 2,
        "method": method,
        "dofs": dofs,
        "ksp_type": "preonly",
        "pc_type": "lu",
        "rtol": 0.0,
        **extra,
    }


def reaction_forms(spec: dict[str, Any]) -> tuple[Any, Any]:
    """The reaction term R(u) as a load (R(u_prev), v) and its Jacobian (R'(u_prev) u, v), u_prev
    the form's `prev`; R'(u) by central differences."""
    R = compile_expr(spec["coefficients"]["R"])

    def dR(u: np.ndarray) -> np.ndarray:
        d = 1e-6 * np.maximum(1.0, np.abs(u))
        return (R(u=u + d) - R(u=u - d)) / (2 * d)

    @LinearForm
    def react(v: Any, w: Any) -> Any:
        return R(u=np.asarray(w.prev)) * v

    @BilinearForm
    def jac(u: Any, v: Any, w: Any) -> Any:
        return dR(np.asarray(w.prev)) * u * v

    return react, jac


def elasticity_form(spec: dict[str, Any]) -> Any:
    """(sigma(u), eps(v)) with the Lame parameters of E and nu, in 2D (plane strain) or 3D."""
    E, nu = float(spec["coefficients"]["E"]), float(spec["coefficients"]["nu"])
    lam, mu = E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))

    @BilinearForm
    def a(u: Any, v: Any, w: Any) -> Any:
        eu, ev = sym_grad(u), sym_grad(v)
        return 2 * mu * ddot(eu, ev) + lam * trace(eu) * trace(ev)

    return a


def newton(
    spec: dict[str, Any], basis: Any, K: Any, F: np.ndarray, D: np.ndarray, uD: np.ndarray
) -> tuple[np.ndarray, int]:
    """-D lap u + R(u) = f by Newton from u = uD on D (0 elsewhere): K the diffusion (and Robin)
    matrix, F the load; R'(u) by central differences. The solution and the iterations."""
    react, jac = reaction_forms(spec)
    u = np.zeros(basis.N)
    u[D] = uD
    its = 0
    for n in range(1, 41):
        its = n
        prev = basis.interpolate(u)
        r = K @ u + asm(react, basis, prev=prev) - F
        J = K + asm(jac, basis, prev=prev)
        du = solve_dirichlet(J, -r, D, np.zeros(D.size))
        u += du
        if np.linalg.norm(du) <= 1e-12 * max(1.0, float(np.linalg.norm(u))):
            break
    return u, its


Pairs = tuple[np.ndarray, np.ndarray]  # (image dofs, their source dofs): u[image] = u[source]


def solve_dirichlet(
    A: sps.spmatrix, rhs: np.ndarray, D: np.ndarray, uD: np.ndarray, pairs: Pairs | None = None
) -> np.ndarray:
    """u with u[D] = uD solving the other rows of A u = rhs (with periodic pairs, reduced: factorised)."""
    return factorised(A, D, pairs)(rhs, uD)


def factorised(
    A: sps.spmatrix, D: np.ndarray, pairs: Pairs | None = None
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A factorised once, for solves of u with u[D] = uD and the other rows of A u = rhs, given
    (rhs, uD); with periodic pairs, of the reduced system P^T A P x = P^T rhs, u = P x (P maps each
    image dof to its source, every other dof to itself), so u is periodic."""
    n = A.shape[0]
    image = np.zeros(0, dtype=np.int64) if pairs is None else pairs[0]
    inn = np.setdiff1d(np.arange(n), np.concatenate([D, image]))
    P = None
    if pairs is not None:
        cols = np.arange(n)
        cols[pairs[0]] = pairs[1]
        P = sps.csr_matrix((np.ones(n), (np.arange(n), cols)), shape=(n, n))
        A = P.T @ A @ P
    A = A.tocsr()
    lu = spla.splu(A[inn][:, inn].tocsc())
    coupling = A[inn][:, D]

    def solve(rhs: np.ndarray, uD: np.ndarray) -> np.ndarray:
        x = np.zeros(n)
        x[D] = uD
        reduced = rhs if P is None else P.T @ rhs
        x[inn] = lu.solve(reduced[inn] - coupling @ uD)
        return x if P is None else P @ x

    return solve


def periodic(spec: dict[str, Any], basis: Any, D: np.ndarray) -> Pairs | None:
    """Each dof on a periodic image piece (the right or top one), not on a Dirichlet piece, and
    the dof of the same component at the translated point of its partner; None without periodic pieces."""
    pieces = {p["name"]: p for p in spec["boundary"]}
    images: list[tuple[tuple[float, float], tuple[float, float], np.ndarray]] = []
    for p in spec["boundary"]:
        if kind(p) != "periodic":
            continue
        ends = [np.asarray(v, dtype=float) for v in p["segment"]]
        other = [np.asarray(v, dtype=float) for v in pieces[p["partner"]]["segment"]]
        shift = np.minimum(*other) - np.minimum(*ends)
        if shift.sum() < 0:  # the image lies right of or above its source
            (ax, ay), (bx, by) = ends
            images.append(((float(ax), float(ay)), (float(bx), float(by)), shift))
    if not images:
        return None
    locs = basis.doflocs
    groups = basis.split_indices() if isinstance(basis.elem, ElementVector) else [np.arange(basis.N)]
    fixed = np.zeros(basis.N, dtype=bool)
    fixed[D] = True
    image_dofs, source_dofs = [], []
    for group in groups:
        where = {(round(float(locs[0, k]), 10), round(float(locs[1, k]), 10)): int(k) for k in group}
        for start, end, shift in images:
            on = group[on_segment(locs[0, group], locs[1, group], start, end) & ~fixed[group]]
            for k in on:
                key = (round(float(locs[0, k] + shift[0]), 10), round(float(locs[1, k] + shift[1]), 10))
                if key not in where:
                    raise RuntimeError(f"a periodic dof at {tuple(locs[:, k])} has no partner dof at {key}")
                image_dofs.append(int(k))
                source_dofs.append(where[key])
    return np.asarray(image_dofs, dtype=np.int64), np.asarray(source_dofs, dtype=np.int64)


def piece_facets(spec: dict[str, Any], mesh: Any) -> tuple[np.ndarray, np.ndarray]:
    """The boundary facets and, per facet, the index of the boundary piece it lies on (the first
    piece listed wins, as at shared corners; on the unit cube the face it lies in)."""
    facets = mesh.boundary_facets()
    mid = mesh.p[:, mesh.facets[:, facets]].mean(axis=1)
    if mesh.dim() == 3:
        faces = [Face.model_validate(p["face"]) for p in spec["boundary"]]
        index = cube.face_index(dict(zip(cube.AXES, mid, strict=True)), faces)
        if (index < 0).any():
            raise RuntimeError(f"{int((index < 0).sum())} boundary facets lie on no face of the cube")
        return facets, index
    if unstructured(spec):
        return facets, nearest_piece(spec["boundary"], mid[0], mid[1])
    index = np.full(facets.size, -1)
    for k in reversed(range(len(spec["boundary"]))):
        a, b = spec["boundary"][k]["segment"]
        index[on_segment(mid[0], mid[1], tuple(a), tuple(b))] = k
    if (index < 0).any():
        raise RuntimeError("a boundary facet lies on no boundary piece")
    return facets, index


def kind(piece: dict[str, Any]) -> str:
    return str(piece.get("kind", "dirichlet"))


def dirichlet_facets(spec: dict[str, Any], mesh: Any) -> np.ndarray:
    facets, index = piece_facets(spec, mesh)
    on_dirichlet = np.array([kind(p) == "dirichlet" for p in spec["boundary"]])
    return facets[on_dirichlet[index]]


def _flux_form(texts: list[Any], t: float | None) -> Any:
    from skfem import LinearForm

    g = [compile_expr(e) for e in texts]

    @LinearForm
    def flux(v: Any, w: Any) -> Any:
        at = dict(zip("xyz", w.x, strict=False))
        if len(g) == 1:
            return g[0](**at, t=t) * v
        return sum(gc(**at, t=t) * v[c] for c, gc in enumerate(g))

    return flux


def _robin_form(text: Any) -> Any:
    from skfem import BilinearForm

    alpha = compile_expr(text)

    @BilinearForm
    def mass(u: Any, v: Any, w: Any) -> Any:
        return alpha(**dict(zip("xyz", w.x, strict=False))) * u * v

    return mass


def natural(
    spec: dict[str, Any], mesh: Any, element: Any, t: float | None = None
) -> tuple[np.ndarray | None, sps.spmatrix | None]:
    """The natural pieces' load (sum of (g, v) on each, g the piece's flux data at t) and the Robin
    pieces' alpha u v, assembled on the facets of each piece; None where there are none."""
    from skfem import FacetBasis, asm

    facets, index = piece_facets(spec, mesh)
    load: np.ndarray | None = None
    robin: sps.spmatrix | None = None
    for k, piece in enumerate(spec["boundary"]):
        if kind(piece) not in ("neumann", "robin") or not (index == k).any():
            continue
        fb = FacetBasis(mesh, element, facets=facets[index == k])
        part = asm(_flux_form(components(piece["value"]), t), fb)
        load = part if load is None else load + part
        if kind(piece) == "robin":
            part_m = asm(_robin_form(piece["alpha"]), fb)
            robin = part_m if robin is None else robin + part_m
    return load, robin

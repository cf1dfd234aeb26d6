"""The DOLFINx calibration on the unit cube: P2 tetrahedra on a structured mesh
of the cube (six tetrahedra per sub-cube, DOLFINx's create_box) with
ceil((n - 1) / 2) cells along an axis of n grid points (more where the forcing or initial
data is finer than that mesh: resolving_mesh), the output read by point
evaluation at every grid point, shape (nz, ny, nx). Where n - 1 is even the grid
points are P2 nodes (the 2D rule); the 2D rule's other half (the grid itself as
the mesh when n - 1 is odd) would cost a 20^3 grid 19^3 cells, a 16^3 vector
problem 2 GB and 15 s of LU: half the grid's resolution keeps every family a
few seconds and well under 1 GB, about the published oracle's own resolution
(8 to 28 cells).

The families are those of dolfinx_fem.py and dolfinx_flow.py, unchanged: they
take a `Setup`, and `CubeSetup` is one whose spaces, expressions (x, y, z),
Dirichlet data (per face) and output are the cube's."""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # isort: skip

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import ufl
from dolfinx import fem, geometry
from dolfinx import mesh as dmesh

from fembench_agents.cases import cube
from fembench_agents.cases.calibration.common import components
from fembench_agents.cases.calibration.dolfinx_common import Setup, nodal
from fembench_agents.cases.case_spec import Face
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.model import GridSpec

QUADRATURE_DEGREE = 6


# Data the half-resolution mesh does not resolve gets a finer one: sin(5 pi x) sin(5 pi y) sin(5 pi z)
# on 12 cells per axis is 6.6% off its P2 interpolant (relative L2), the solve 5.3% off the solution;
# every other published cube record's data is within 0.6%. Cells grow by a third while the data is
# more than RESOLVED off, as long as a scalar P2 system stays within MAX_REFINED_UNKNOWNS (LU on
# 36,000 unknowns: 0.4 GB; the grid itself, 24^3 cells, would take 1.4 GB).
RESOLVED = 0.02
MAX_REFINED_UNKNOWNS = 60_000


def cells_along(n: int) -> int:
    return math.ceil((n - 1) / 2)


def cube_mesh(grid: GridSpec, cells: int | None = None) -> tuple[dmesh.Mesh, tuple[int, int, int]]:
    """create_box with `cells` per axis, by default cells_along each axis's grid points."""
    if grid.nz is None:
        raise ValueError(f"the cube's calibration needs a 3D grid (nx, ny, nz); got {grid}")
    along = (cells,) * 3 if cells else (cells_along(grid.nx), cells_along(grid.ny), cells_along(grid.nz))
    corners: list[Any] = [np.zeros(3), np.ones(3)]
    return dmesh.create_box(MPI.COMM_SELF, corners, list(along), dmesh.CellType.tetrahedron), along


def data_error(case_spec: dict[str, Any], domain: dmesh.Mesh) -> float:
    """The largest relative L2 distance of the scalar forcing or initial data (at t0) to its P2
    interpolant on `domain`; 0 for vector data (elasticity, Stokes) and data that vanishes."""
    s = CubeSetup(spec=case_spec, grid=None, domain=domain, cells=0)
    V = s.space()
    t = float(case_spec["time"]["t0"]) if case_spec.get("time") else None
    dx = ufl.dx(metadata={"quadrature_degree": QUADRATURE_DEGREE + 2})
    worst = 0.0
    for key in ("forcing", "initial"):
        text = case_spec.get(key)
        if text is None or isinstance(text, list):
            continue
        exact = s.expr(text, t=fem.Constant(domain, t)) if t is not None else s.expr(text)
        interpolant = fem.Function(V)
        interpolant.x.array[:] = nodal(V, text, t)
        size = float(np.real(fem.assemble_scalar(fem.form(exact**2 * dx))))
        if size > 0:
            gap = float(np.real(fem.assemble_scalar(fem.form((interpolant - exact) ** 2 * dx))))
            worst = max(worst, math.sqrt(gap / size))
    return worst


def resolving_mesh(case_spec: dict[str, Any], grid: GridSpec) -> tuple[dmesh.Mesh, tuple[int, int, int]]:
    """The half-resolution mesh, a third finer per round while its data is not resolved (RESOLVED)."""
    domain, cells = cube_mesh(grid)
    while data_error(case_spec, domain) > RESOLVED:
        finer = math.ceil(max(cells) * 4 / 3)
        if (2 * finer + 1) ** 3 > MAX_REFINED_UNKNOWNS:
            break
        domain, cells = cube_mesh(grid, finer)
    return domain, cells


@dataclass
class CubeSetup(Setup):
    """A Setup on the unit cube (its `grid` is None: the 2D grid problem does not apply)."""

    @property
    def dx(self) -> ufl.Measure:
        """UFL's estimate for a forcing of sines and exponentials (each +2 over its argument's
        degree, multiplied together) asks for hundreds of points per tetrahedron: a heat step's
        right-hand side cost 0.4 s on 10^3 cells. Degree 6 integrates the P2 products exactly
        and keeps P2's third order for smooth data."""
        return ufl.dx(metadata={"quadrature_degree": QUADRATURE_DEGREE})

    def faces(self) -> list[Face]:
        return [Face.model_validate(p["face"]) for p in self.spec["boundary"]]

    def piece_facets(self) -> tuple[np.ndarray, np.ndarray]:
        """The exterior facets and, per facet, the index of the face it lies on (the first face
        listed wins: a facet lies in one face, its midpoint on no edge)."""
        if self._facets is None:
            self.domain.topology.create_connectivity(2, 3)
            facets = dmesh.exterior_facet_indices(self.domain.topology)
            mid = dmesh.compute_midpoints(self.domain, 2, facets)
            index = cube.face_index({c: mid[:, k] for k, c in enumerate(cube.AXES)}, self.faces())
            if (index < 0).any():
                raise RuntimeError(f"{int((index < 0).sum())} boundary facets lie on no face of the cube")
            self._facets = (facets, index.astype(np.int32))
        return self._facets

    def boundary(
        self, V: fem.FunctionSpace, t: float | None = None, component: int | None = None
    ) -> tuple[fem.Function, Callable[[float | None], None], fem.DirichletBC]:
        """The Dirichlet condition on every dof of a Dirichlet face, valued by the first
        Dirichlet face (as listed) the dof lies on; `update(t)` re-evaluates it."""
        dofs = fem.locate_dofs_topological(V, 2, self.dirichlet_facets())
        xyz = V.tabulate_dof_coordinates()[dofs]
        coords = {"x": xyz[:, 0], "y": xyz[:, 1], "z": xyz[:, 2]}
        kept = [k for k, kind in enumerate(self.kinds()) if kind == "dirichlet"]
        faces = self.faces()
        which = cube.face_index(coords, [faces[k] for k in kept])
        if (which < 0).any():
            raise RuntimeError(f"{int((which < 0).sum())} boundary dofs lie on no Dirichlet face of the cube")
        owner = np.asarray(kept, dtype=int)[which] if kept else which
        g = fem.Function(V)
        values = g.x.array.reshape(-1, V.dofmap.index_map_bs)

        def update(t: float | None = None) -> None:
            for k in kept:
                sel = owner == k
                texts = components(self.spec["boundary"][k]["value"])
                for c, text in enumerate(texts if component is None else [texts[component]]):
                    at = {name: v[sel] for name, v in coords.items()}
                    values[dofs[sel], c] = compile_expr(text)(**at, t=t)

        update(t)
        return g, update, fem.dirichletbc(g, dofs)

    def output(self, u: fem.Function) -> np.ndarray:
        """u at every grid point, (nz, ny, nx) per component (NaN off the cube); a vector
        field whose contract asks for one scalar per point gives its magnitude (the
        published 3D output of elasticity and Stokes)."""
        grid = GridSpec.model_validate(self.spec["grid"])
        coords = cube.grid_coordinates(grid)
        points = np.column_stack([coords[c].ravel() for c in cube.AXES])
        inside = cube.inside(*(coords[c] for c in cube.AXES)).ravel()
        cells = _cells_of(self.domain, points)
        ncomp = u.function_space.dofmap.index_map_bs
        values = np.full((points.shape[0], ncomp), np.nan)
        found = inside & (cells >= 0)
        values[found] = u.eval(points[found], cells[found]).reshape(-1, ncomp)
        out = values.T.reshape(ncomp, *grid.shape)
        if ncomp == 1:
            return out[0]
        if len(self.spec["output"]["fields"]["u"]["shape"]) == 3:
            return np.sqrt((out**2).sum(axis=0))
        return out


def _cells_of(domain: dmesh.Mesh, points: np.ndarray) -> np.ndarray:
    """A tetrahedron containing each point, -1 where none does: the bounding-box candidates,
    then barycentric coordinates in numpy (DOLFINx's compute_colliding_cells, a GJK distance
    per candidate, took 1.2 s for the 8000 points of a 20^3 grid)."""
    tree = geometry.bb_tree(domain, domain.topology.dim)
    candidates = geometry.compute_collisions_points(tree, points)
    offsets, cells = candidates.offsets, candidates.array
    owner = np.repeat(np.arange(points.shape[0]), np.diff(offsets))
    corners = domain.geometry.x[domain.geometry.dofmaps[0][cells]]  # (pairs, 4, 3)
    edges = (corners[:, 1:] - corners[:, :1]).transpose(0, 2, 1)  # columns: the edges from vertex 0
    lam = np.linalg.solve(edges, (points[owner] - corners[:, 0])[..., None])[..., 0]
    inside = (lam >= -1e-10).all(axis=1) & (lam.sum(axis=1) <= 1 + 1e-10)
    out = np.full(points.shape[0], -1, dtype=np.int32)
    hit = np.nonzero(inside)[0][::-1]  # reversed: the first candidate of a point is written last
    out[owner[hit]] = cells[hit]
    return out


def setup(case_spec: dict[str, Any]) -> tuple[CubeSetup, int]:
    grid = GridSpec.model_validate(case_spec["grid"])
    domain, cells = resolving_mesh(case_spec, grid)
    return CubeSetup(spec=case_spec, grid=None, domain=domain, cells=cells[0]), cells[0]

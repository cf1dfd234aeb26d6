"""The unit cube [0, 1]^3, the track's one 3D domain (the published benchmark's
`unit_cube`). Its boundary pieces are its six closed faces, named as the
published per-edge data names the square's edges (x0 is the face x = 0, ...);
the first face listed wins on a shared edge, as the first piece does at a 2D
corner. A 3D grid's output has the shape (nz, ny, nx): u[k, j, i] is the value
at (x_i, y_j, z_k), as the published evaluator reads it."""

from __future__ import annotations

from typing import Final

import numpy as np

from fembench_agents.cases.case_spec import DomainSpec, Face
from fembench_agents.cases.model import GridSpec

CUBE: Final = "unit_cube"
DESCRIPTION = "the unit cube [0, 1] x [0, 1] x [0, 1]"
TOL = 1e-12
FACES: tuple[tuple[str, Face], ...] = tuple(
    (f"{axis}{int(at)}", Face(axis=axis, at=at))  # type: ignore[arg-type]
    for axis in ("x", "y", "z")
    for at in (0.0, 1.0)
)
AXES = ("x", "y", "z")
LAYOUT = (
    "u[..., k, j, i] is the value at (x_i, y_j, z_k): x = linspace(bbox[0], bbox[1], nx), "
    "y = linspace(bbox[2], bbox[3], ny), z = linspace(bbox[4], bbox[5], nz); NaN outside the domain"
)


def spec() -> DomainSpec:
    """What a solver sees of the cube: no polygon (it is not planar), the faces are the pieces."""
    return DomainSpec(name=CUBE, description=DESCRIPTION, outer=[], holes=[])


def grid_coordinates(grid: GridSpec) -> dict[str, np.ndarray]:
    """x, y, z of shape (nz, ny, nx): u[k, j, i] is the value at (x_i, y_j, z_k)."""
    if grid.nz is None:
        raise ValueError(f"a grid on the unit cube needs nz; got {grid}")
    x0, x1, y0, y1, z0, z1 = grid.bbox
    Z, Y, X = np.meshgrid(
        np.linspace(z0, z1, grid.nz), np.linspace(y0, y1, grid.ny), np.linspace(x0, x1, grid.nx), indexing="ij"
    )
    return {"x": X, "y": Y, "z": Z}


def inside(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """True on the closed cube."""
    return np.all([(c >= -TOL) & (c <= 1 + TOL) for c in (x, y, z)], axis=0)


def on_face(coords: dict[str, np.ndarray], face: Face) -> np.ndarray:
    """The points of the closed face (coordinates keyed by x, y, z)."""
    others = [c for c in AXES if c != face.axis]
    ok = np.abs(coords[face.axis] - face.at) <= TOL
    for c in others:
        ok &= (coords[c] >= -TOL) & (coords[c] <= 1 + TOL)
    return ok


def face_index(coords: dict[str, np.ndarray], faces: list[Face]) -> np.ndarray:
    """Index of the first face each point lies on, -1 if none."""
    idx = np.full(np.shape(coords["x"]), -1, dtype=int)
    for k in reversed(range(len(faces))):
        idx[on_face(coords, faces[k])] = k
    return idx


def grid_mask(grid: GridSpec) -> np.ndarray:
    c = grid_coordinates(grid)
    return inside(c["x"], c["y"], c["z"])

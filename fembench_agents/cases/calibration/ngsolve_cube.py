"""The unit cube (cases/cube.py) for the NGSolve calibration (ngsolve_track.py, whose
forms are the same in x, y, z): a netgen tetrahedral mesh of the OCC box [0, 1]^3
(maxh two grid spacings, as in 2D) with its six faces named as our pieces (x0 x1 y0
y1 z0 z1), and a grid function's values at every grid point, shape (nz, ny, nx) per
component."""

from __future__ import annotations

from typing import Any

import ngsolve as ng
import numpy as np
from netgen.occ import Box, OCCGeometry, Pnt

from fembench_agents.cases import cube
from fembench_agents.cases.model import GridSpec


def box_mesh(grid: GridSpec) -> ng.Mesh:
    """The unit cube meshed by netgen, each face named by the face of ours it is (by its centre)."""
    box = Box(Pnt(0, 0, 0), Pnt(1, 1, 1))
    for face in box.faces:
        centre = face.center
        for name, f in cube.FACES:
            if abs((centre.x, centre.y, centre.z)["xyz".index(f.axis)] - f.at) < 1e-12:
                face.name = name
    return ng.Mesh(OCCGeometry(box).GenerateMesh(maxh=2.0 / (grid.nx - 1)))


def sample(gf: Any, m: ng.Mesh, grid: GridSpec) -> np.ndarray:
    """gf at every grid point: (nz, ny, nx), or (components, nz, ny, nx) for a vector field."""
    coords = cube.grid_coordinates(grid)
    values = np.asarray(gf(m(coords["x"].ravel(), coords["y"].ravel(), coords["z"].ravel())))
    ncomp = gf.dim
    out = values.reshape(-1, ncomp).T.reshape(ncomp, *grid.shape)
    return out if ncomp > 1 else out[0]

"""The NGSolve calibration on the unit cube (cases/cube.py): P2 on a netgen
tetrahedral mesh of the OCC box [0, 1]^3 (maxh two grid spacings, as in 2D),
its six faces named as our pieces (x0 x1 y0 y1 z0 z1), the output evaluated at
every grid point, shape (nz, ny, nx).

Our cube cases' families, Dirichlet faces only: poisson, helmholtz,
convection_diffusion (steady) and heat (Crank-Nicolson with the DOLFINx cube's
step rule, dolfinx_cube.DT_MAX: one step per grid spacing leaves a 17^3 case's
decaying modes a third off). The expressions' coefficient functions come from
the track's own reader (ngsolve_track.cf), passed in."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ngsolve as ng
import numpy as np
from netgen.occ import Box, OCCGeometry, Pnt

from fembench_agents.cases import cube
from fembench_agents.cases.calibration.common import components
from fembench_agents.cases.model import GridSpec

FAMILIES = ("poisson", "heat", "helmholtz", "convection_diffusion")
DT_MAX = 0.005  # as the DOLFINx cube's (dolfinx_cube.DT_MAX)
Reader = Callable[..., Any]  # ngsolve_track.cf: a case expression (and t) as a coefficient function


def box_mesh(grid: GridSpec) -> ng.Mesh:
    """The unit cube meshed by netgen, each face named by the face of ours it is (by its centre)."""
    box = Box(Pnt(0, 0, 0), Pnt(1, 1, 1))
    for face in box.faces:
        centre = face.center
        for name, f in cube.FACES:
            if abs((centre.x, centre.y, centre.z)["xyz".index(f.axis)] - f.at) < 1e-12:
                face.name = name
    return ng.Mesh(OCCGeometry(box).GenerateMesh(maxh=2.0 / (grid.nx - 1)))


def _sample(gf: Any, m: ng.Mesh, grid: GridSpec) -> np.ndarray:
    coords = cube.grid_coordinates(grid)
    values = np.asarray(gf(m(coords["x"].ravel(), coords["y"].ravel(), coords["z"].ravel())))
    return values.reshape(grid.shape)


def solve(case_spec: dict[str, Any], cf: Reader) -> dict[str, Any]:
    family, c = case_spec["family"], case_spec["coefficients"]
    if family not in FAMILIES:
        raise ValueError(f"the NGSolve cube calibration solves {', '.join(FAMILIES)}; got {family!r}")
    grid = GridSpec.model_validate(case_spec["grid"])
    m = box_mesh(grid)
    fes = ng.H1(m, order=2, dirichlet="|".join(name for name, _ in cube.FACES))
    u, v = fes.TnT()

    def boundary(t: Any = 0.0) -> Any:
        return m.BoundaryCF({p["name"]: cf(components(p["value"])[0], t) for p in case_spec["boundary"]})

    k: Any = cf(c["k"]) if family in ("poisson", "heat") else 1.0
    a = ng.BilinearForm(fes)
    if family in ("poisson", "heat"):
        a += k * ng.grad(u) * ng.grad(v) * ng.dx
    elif family == "helmholtz":
        a += (ng.grad(u) * ng.grad(v) - float(c["k"]) ** 2 * u * v) * ng.dx
    else:
        b = ng.CoefficientFunction(tuple(cf(e) for e in c["b"]))
        a += (cf(c["eps"]) * ng.grad(u) * ng.grad(v) + b * ng.grad(u) * v) * ng.dx
    a.Assemble()
    gf = ng.GridFunction(fes)
    info: dict[str, Any] = {}
    if family != "heat":
        f = ng.LinearForm(cf(case_spec["forcing"]) * v * ng.dx).Assemble()
        gf.Set(boundary(), ng.BND)
        r = f.vec - a.mat * gf.vec
        gf.vec.data += a.mat.Inverse(fes.FreeDofs(), inverse="umfpack") * r
    else:
        t0, t1 = float(case_spec["time"]["t0"]), float(case_spec["time"]["t_end"])
        steps = max(1, math.ceil((t1 - t0) * (grid.nx - 1)), math.ceil((t1 - t0) / DT_MAX - 1e-9))
        dt = (t1 - t0) / steps
        mass = ng.BilinearForm(u * v * ng.dx).Assemble()
        mstar = ng.BilinearForm(u * v * ng.dx + dt / 2 * k * ng.grad(u) * ng.grad(v) * ng.dx).Assemble()
        inv = mstar.mat.Inverse(fes.FreeDofs(), inverse="umfpack")
        tp = ng.Parameter(t0)
        load = ng.LinearForm(cf(case_spec["forcing"], tp) * v * ng.dx)
        gf.Set(cf(case_spec["initial"], t0))
        f_old = load.Assemble().vec.CreateVector()
        f_old.data = load.vec
        rhs = gf.vec.CreateVector()
        for n in range(1, steps + 1):
            tp.Set(t0 + n * dt)
            load.Assemble()
            rhs.data = mass.mat * gf.vec - dt / 2 * (a.mat * gf.vec) + dt / 2 * (f_old + load.vec)
            gf.Set(boundary(tp), ng.BND)  # the new step's Dirichlet values; the interior kept
            rhs.data -= mstar.mat * gf.vec
            gf.vec.data += inv * rhs
            f_old.data = load.vec
        info = {"time_steps": steps, "dt": dt}
    solver_info = {
        "mesh_resolution": (grid.nx - 1) // 2,
        "element_degree": 2,
        "method": f"ngsolve-p2-tet-{family}",
        "dofs": fes.ndof,
        "ksp_type": "preonly",
        "pc_type": "lu",
        **info,
    }
    return {"u": _sample(gf, m, grid), "solver_info": solver_info}

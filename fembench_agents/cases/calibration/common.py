"""What every calibration solver needs from a case_spec: the grid, which grid
points are in the domain, on a boundary piece, or interior, and the Dirichlet
data there. Reads only the agent-visible spec."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fembench_agents.cases.domains import crossings, on_segment
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.published_shapes import given_by_geometry, published_shape
from fembench_agents.cases.shapes import on_piece, piece_distance

TOL = 1e-12
# On the unit cube Crank-Nicolson steps at most this long: one step per grid spacing (the 2D rule)
# gives a 17^3 grid one step to t = 0.0625, where a mode exp(-3 pi^2 t) is off by a third. The
# factorisation is done once; a step is a back-substitution on ~10^4 unknowns.
CUBE_DT_MAX = 0.005


def time_steps(spec: dict[str, Any]) -> tuple[float, float, int, float]:
    """t0, t_end, the number of steps and dt of every calibration's time stepping: one step per
    grid spacing, and on the unit cube (a grid with nz) steps no longer than CUBE_DT_MAX."""
    t0, t1 = float(spec["time"]["t0"]), float(spec["time"]["t_end"])
    steps = max(1, math.ceil((t1 - t0) * (spec["grid"]["nx"] - 1)))
    if spec["grid"].get("nz") is not None:
        steps = max(steps, math.ceil((t1 - t0) / CUBE_DT_MAX - 1e-9))
    return t0, t1, steps, (t1 - t0) / steps


def components(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def inside_polygon_closed(spec: dict[str, Any], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Closed-domain test from the spec's outer polygon and holes (even-odd rule),
    with points on any boundary piece counted in."""

    def crossing(poly: list[list[float]]) -> np.ndarray:
        return crossings(tuple((float(p[0]), float(p[1])) for p in poly), x, y)

    ok = crossing(spec["domain"]["outer"])
    for hole in spec["domain"]["holes"]:
        ok &= ~crossing(hole)
    for piece in spec["boundary"]:
        a, b = piece["segment"]
        ok |= on_segment(x, y, tuple(a), tuple(b))
    return ok


def nearest_piece(pieces: list[dict[str, Any]], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Index of the boundary piece nearest each boundary point of an unstructured mesh (the first
    listed among those within 1e-9 of the nearest): a node of a curved edge lies on its arc only
    up to the mesh's geometry."""
    dist = np.stack([piece_distance(x, y, p) for p in pieces])
    return np.argmax(dist <= dist.min(axis=0) + 1e-9, axis=0)


@dataclass
class GridProblem:
    nx: int
    ny: int
    hx: float
    hy: float
    X: np.ndarray
    Y: np.ndarray
    inside: np.ndarray  # (ny, nx) closed domain
    bnd: np.ndarray  # (ny, nx) on a boundary piece
    piece: np.ndarray  # (ny, nx) index of the piece, -1 elsewhere
    spec: dict[str, Any]

    @property
    def interior(self) -> np.ndarray:
        return self.inside & ~self.bnd

    def dirichlet(self, t: float | None = None) -> list[np.ndarray]:
        """Per component: full-grid array holding the boundary data on boundary points, 0 elsewhere."""
        pieces = self.spec["boundary"]
        ncomp = len(components(pieces[0]["value"]))
        out = [np.zeros((self.ny, self.nx)) for _ in range(ncomp)]
        for k, piece in enumerate(pieces):
            sel = self.piece == k
            if not sel.any():
                continue
            for c, expr in enumerate(components(piece["value"])):
                out[c][sel] = compile_expr(expr)(x=self.X[sel], y=self.Y[sel], t=t)
        return out

    def field(self, expr: Any, t: float | None = None) -> np.ndarray:
        return compile_expr(expr)(x=self.X, y=self.Y, t=t)

    def as_output(self, u: np.ndarray) -> np.ndarray:
        out = np.array(u, dtype=float)
        out[..., ~self.inside] = np.nan
        return out


def kept_cells_as_triangles(keep: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vertices (n, 2) and triangles (m, 3) of the structured cells on nodes xs x ys
    that `keep` (cy, cx) marks, two triangles per cell; nodes of no kept cell are left out."""
    cy, cx = keep.shape
    used = np.zeros((cy + 1, cx + 1), dtype=bool)
    for dj in (0, 1):
        for di in (0, 1):
            used[dj : dj + cy, di : di + cx] |= keep
    vid = np.full((cy + 1, cx + 1), -1, dtype=np.int64)
    vid[used] = np.arange(int(used.sum()))
    X, Y = np.meshgrid(xs, ys)
    j, i = np.nonzero(keep)
    a, b, c, d = vid[j, i], vid[j, i + 1], vid[j + 1, i + 1], vid[j + 1, i]
    triangles = np.vstack([np.column_stack([a, b, c]), np.column_stack([a, c, d])])
    return np.column_stack([X[used], Y[used]]), triangles


def grid_problem(spec: dict[str, Any]) -> GridProblem:
    g = spec["grid"]
    x0, x1, y0, y1 = g["bbox"]
    nx, ny = g["nx"], g["ny"]
    X, Y = np.meshgrid(np.linspace(x0, x1, nx), np.linspace(y0, y1, ny))
    piece = np.full((ny, nx), -1, dtype=int)
    if given_by_geometry(spec["domain"]):
        shape = published_shape({"type": spec["domain"]["type"], "geometry_params": spec["domain"]["geometry_params"]})
        for k in reversed(range(len(spec["boundary"]))):
            piece[on_piece(X, Y, spec["boundary"][k])] = k
        hx, hy = (x1 - x0) / (nx - 1), (y1 - y0) / (ny - 1)
        return GridProblem(nx, ny, hx, hy, X, Y, shape.inside(X, Y), piece >= 0, piece, spec)
    for k in reversed(range(len(spec["boundary"]))):
        a, b = spec["boundary"][k]["segment"]
        piece[on_segment(X, Y, tuple(a), tuple(b))] = k
    inside = inside_polygon_closed(spec, X, Y)
    return GridProblem(nx, ny, (x1 - x0) / (nx - 1), (y1 - y0) / (ny - 1), X, Y, inside, piece >= 0, piece, spec)


# A refined solve's spec names its refinement under this key: only every r-th point of its grid
# is read back, so a solver's mesh need only have those points as nodes (dolfinx_common._mesh_lines).
READ_EVERY = "read_every"


def refined(solver: Any, spec: dict[str, Any], r: int) -> dict[str, Any]:
    """`solver` on the evaluation grid refined r times (every evaluation point stays
    a node), its array outputs read back at the evaluation points."""
    if r == 1:
        out: dict[str, Any] = solver(spec)
        return out
    g = dict(spec["grid"])
    g["nx"], g["ny"] = r * (g["nx"] - 1) + 1, r * (g["ny"] - 1) + 1
    out = solver({**spec, "grid": g, READ_EVERY: r})
    return {k: v[..., ::r, ::r] if isinstance(v, np.ndarray) else v for k, v in out.items()}

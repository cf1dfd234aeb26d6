"""The netgen mesh of a case's domain for the NGSolve calibration, and reading a solution off at
the in-domain grid points.

Every boundary piece is a named boundary of a 2D spline geometry: a segment a line, an arc
quarter-circle (or shorter) rational quadratic splines, which netgen's `spline3` makes exact
circles; the mesh is curved to second order, so P2 sees the arcs. Which side of a piece the
domain lies on is probed from the exact domain. A periodic image piece is appended as a copy
of its partner (netgen then identifies their nodes and `ng.Periodic` the spaces' dofs)."""

from __future__ import annotations

import math
from typing import Any

import ngsolve as ng
import numpy as np
from netgen.geom2d import SplineGeometry

from fembench_agents.cases.calibration.common import inside_polygon_closed
from fembench_agents.cases.case_spec import Arc
from fembench_agents.cases.published_shapes import given_by_geometry, published_shape

NUDGE = 1e-9  # how far a grid point on a curved edge outside the curved mesh is moved in


def _inside(spec: dict[str, Any]) -> Any:
    if given_by_geometry(spec["domain"]):
        shape = published_shape({"type": spec["domain"]["type"], "geometry_params": spec["domain"]["geometry_params"]})
        return shape.inside
    return lambda x, y: inside_polygon_closed(spec, x, y)


def _arcs(arc: Arc) -> list[tuple[tuple[float, float], tuple[float, float], tuple[float, float]]]:
    """(start, control, end) of each spline of an arc, none wider than a quarter circle."""
    n = max(1, math.ceil((arc.end - arc.start) / (math.pi / 2) - 1e-9))
    (cx, cy), r = arc.center, arc.radius
    out = []
    for k in range(n):
        a = arc.start + k * (arc.end - arc.start) / n
        b = arc.start + (k + 1) * (arc.end - arc.start) / n
        m, h = (a + b) / 2, (b - a) / 2
        out.append(
            (
                (cx + r * math.cos(a), cy + r * math.sin(a)),
                (cx + r / math.cos(h) * math.cos(m), cy + r / math.cos(h) * math.sin(m)),
                (cx + r * math.cos(b), cy + r * math.sin(b)),
            )
        )
    return out


def mesh(spec: dict[str, Any]) -> ng.Mesh:
    """A netgen mesh (maxh two grid spacings, second-order geometry) whose boundary edges carry
    the names of the spec's boundary pieces."""
    geo = SplineGeometry()
    inside = _inside(spec)
    points: dict[tuple[float, float], int] = {}

    def point(p: Any) -> int:
        key = (round(float(p[0]), 12) + 0.0, round(float(p[1]), 12) + 0.0)
        if key not in points:
            points[key] = geo.AppendPoint(*key)
        return points[key]

    def sides(a: Any, b: Any, mid: Any) -> dict[str, int]:
        d = np.array([b[0] - a[0], b[1] - a[1]], dtype=float)
        left = np.asarray(mid, dtype=float) + 1e-6 * np.array([-d[1], d[0]]) / np.linalg.norm(d)
        on_left = bool(inside(np.array([left[0]]), np.array([left[1]]))[0])
        return {"leftdomain": 1 if on_left else 0, "rightdomain": 0 if on_left else 1}

    index: dict[str, int] = {}
    pieces = {p["name"]: p for p in spec["boundary"]}
    images = [p for p in spec["boundary"] if p.get("kind") == "periodic" and _is_image(p, pieces)]
    for piece in [p for p in spec["boundary"] if p not in images] + images:
        if piece.get("arc") is not None:
            arc = Arc.model_validate(piece["arc"])
            for a, c, b in _arcs(arc):
                (cx, cy), r = arc.center, arc.radius
                reach = math.hypot(c[0] - cx, c[1] - cy)
                mid = (cx + r * (c[0] - cx) / reach, cy + r * (c[1] - cy) / reach)  # on the arc
                geo.Append(["spline3", point(a), point(c), point(b)], bc=piece["name"], **sides(a, b, mid))
            continue
        a, b = sorted(piece["segment"]) if piece.get("kind") == "periodic" else piece["segment"]
        mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
        copy = {"copy": index[piece["partner"]]} if piece in images else {}
        index[piece["name"]] = geo.Append(["line", point(a), point(b)], bc=piece["name"], **sides(a, b, mid), **copy)
    h = 2.0 / (spec["grid"]["nx"] - 1)
    m = ng.Mesh(geo.GenerateMesh(maxh=h))
    m.Curve(2)
    return m


def _is_image(piece: dict[str, Any], pieces: dict[str, dict[str, Any]]) -> bool:
    """The right or top one of a periodic pair (the other is its source)."""
    partner = pieces[piece["partner"]]
    return bool(min(map(tuple, piece["segment"])) > min(map(tuple, partner["segment"])))


def sample(gf: Any, m: ng.Mesh, p: Any) -> np.ndarray:
    """gf at the in-domain grid points, NaN outside; a point of a curved edge that the curved mesh
    leaves out by a rounding is moved in by NUDGE towards the nearest mesh vertex."""
    ncomp = gf.dim
    out = np.full((ncomp, p.ny, p.nx), np.nan)
    x, y = p.X[p.inside].copy(), p.Y[p.inside].copy()
    found = np.array([m(float(a), float(b)).nr >= 0 for a, b in zip(x, y, strict=True)])
    if not found.all():
        vertices = np.array([v.point for v in m.vertices])
        for k in np.flatnonzero(~found):
            step = NUDGE
            nearest = vertices[np.argmin(np.hypot(vertices[:, 0] - x[k], vertices[:, 1] - y[k]))]
            d = nearest - (x[k], y[k])
            while m(float(x[k]), float(y[k])).nr < 0 and step < 1e-3:
                x[k], y[k] = (x[k], y[k]) + step * d / max(float(np.hypot(*d)), 1e-300)
                step *= 10
    vals = np.asarray(gf(m(x, y))).reshape(-1, ncomp)
    for c in range(ncomp):
        out[c][p.inside] = vals[:, c]
    return out if ncomp > 1 else out[0]

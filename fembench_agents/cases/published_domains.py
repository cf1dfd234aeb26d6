"""Which published domains are ours, and the boundary data an imported case
gets on them (`published.convert`): a published domain is one of the track's
own (DOMAINS) or excluded with what differs from ours; a manufactured
solution's published boundary value becomes a blend of its traces on our
boundary pieces (equal to it on every piece, not inside); per-edge Dirichlet
data becomes the value of our square's pieces."""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from fembench_agents.cases import cube_data
from fembench_agents.cases.domains import DOMAINS, Domain, Point, crossings
from fembench_agents.cases.expressions import ExpressionError, check_expr
from fembench_agents.cases.published_shapes import published_shape
from fembench_agents.cases.rectilinear import Box, GeometryError, in_box, region
from fembench_agents.cases.shapes import GeometryError as ShapeError

X, Y, T = sp.symbols("x y t")

DOMAIN_REASON = "domain not in the track: "


class Excluded(ValueError):
    """A record that does not become a case; the message is the reason."""


NAMES = {"x": X, "y": Y, "z": cube_data.Z, "t": T, "pi": sp.pi, "E": sp.E}


def sym(text: Any) -> sp.Expr:
    try:
        return sp.sympify(str(text), locals=NAMES)
    except (sp.SympifyError, TypeError, SyntaxError) as exc:
        raise Excluded(f"unreadable expression: {text!r} ({exc})") from None


def show(expr: Any) -> str:
    """An expression's text, once our expression language reads it."""
    text = str(expr)
    try:
        check_expr(text)
    except ExpressionError as exc:
        raise Excluded(f"unreadable expression: {exc}") from None
    return text


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _close(a: Any, b: Any) -> bool:
    try:
        return bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=0, atol=1e-12))
    except (TypeError, ValueError):
        return False


def _num(v: float) -> str:
    return f"{float(v):g}"


def _box(b: Any) -> str:
    return f"[{_num(b[0])}, {_num(b[1])}] x [{_num(b[2])}, {_num(b[3])}]"


def _points(pts: Any) -> str:
    return ", ".join(f"({_num(a)}, {_num(b)})" for a, b in pts)


def _turn(a: Any, b: Any, c: Any) -> float:
    return float((b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]))


def _corners(vertices: list[list[float]]) -> list[tuple[float, float]]:
    """A polygon's vertices without those that are no corner of its region: a repeated one (a
    closed ring's last vertex), one on the straight line through its neighbours, and the tip of
    a spike of no width."""
    pts = [(float(a), float(b)) for a, b in vertices]
    k = 0
    while len(pts) > 3 and k < len(pts):
        if abs(_turn(pts[k - 1], pts[k], pts[(k + 1) % len(pts)])) <= 1e-12:
            del pts[k]
            k = 0
        else:
            k += 1
    return pts


def _four(value: Any, what: str) -> Box:
    try:
        box = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise Excluded(f"{DOMAIN_REASON}{what} is {value!r}, not [x0, x1, y0, y1]") from None
    if len(box) != 4 or not (box[0] < box[1] and box[2] < box[3]):
        raise Excluded(f"{DOMAIN_REASON}{what} is {value!r}, not [x0, x1, y0, y1] with x0 < x1, y0 < y1")
    return box  # type: ignore[return-value]


def _polygon(kind: str, vertices: Any) -> Domain:
    """The region a closed vertex ring bounds (even-odd rule), exactly, when every edge is axis-parallel."""
    try:
        pts = [(float(a), float(b)) for a, b in vertices]
    except (TypeError, ValueError):
        raise Excluded(f"{DOMAIN_REASON}{kind} vertices {vertices!r} are not [[x, y], ...]") from None
    for p, q in zip(pts, pts[1:] + pts[:1], strict=True):
        if p[0] != q[0] and p[1] != q[1]:
            raise Excluded(f"{DOMAIN_REASON}{kind} with an edge not axis-parallel: {_points([p, q])}")
    ring = tuple(pts)
    text = f"{kind.replace('_', '-')}: the closed polygon with the corners {_points(_corners([list(p) for p in pts]))}"

    def inside(x: float, y: float) -> bool:
        return bool(crossings(ring, np.asarray(x), np.asarray(y)))

    return _region(kind, text, ([p[0] for p in pts], [p[1] for p in pts]), inside)


def _region(kind: str, text: str, coordinates: tuple[list[float], list[float]], inside: Any, **kw: Any) -> Domain:
    try:
        return region(kind, text, coordinates, inside, **kw)
    except GeometryError as exc:
        raise Excluded(f"{DOMAIN_REASON}{exc}") from None


def _less(box: Box, cut: Box) -> Any:
    return lambda x, y: in_box(box, x, y) and not in_box(cut, x, y)


def _l_shape(domain: dict[str, Any], params: dict[str, Any]) -> Domain:
    vertices = params.get("vertices")
    if vertices is not None:
        corners = _corners(vertices)
        if len(corners) == len(DOMAINS["l_shape"].outer) and set(corners) == set(DOMAINS["l_shape"].outer):
            return DOMAINS["l_shape"]
        return _polygon("l_shape", vertices)
    if domain.get("outer_bbox") is None or domain.get("cutout_bbox") is None:
        raise Excluded(f"{DOMAIN_REASON}l_shape given by {sorted(domain)}")
    box, cut = _four(domain["outer_bbox"], "outer_bbox"), _four(domain["cutout_bbox"], "cutout_bbox")
    if _close(box, [0, 1, 0, 1]) and _close(cut, [0.5, 1, 0.5, 1]):
        return DOMAINS["l_shape"]
    text = f"L-shape: {_box(box)} without the open box {_box(cut)}"
    coordinates = ([box[0], box[1], cut[0], cut[1]], [box[2], box[3], cut[2], cut[3]])
    return _region("l_shape", text, coordinates, _less(box, cut))


def _t_junction(params: dict[str, Any]) -> Domain:
    if "horizontal_rect" not in params or "vertical_rect" not in params:
        raise Excluded(f"{DOMAIN_REASON}t_junction given by {sorted(params)} (expected horizontal_rect, vertical_rect)")
    bar, stem = _four(params["horizontal_rect"], "horizontal_rect"), _four(params["vertical_rect"], "vertical_rect")

    def name(a: Point, b: Point, side: str, bbox: Box) -> str:
        """The stem's and the bar's own sides; the bar's underside either side of the stem."""
        on = a[1] if side in ("bottom", "top") else a[0]
        if side == "bottom" and on == bar[2]:
            return "bar_bottom_left" if (a[0] + b[0]) / 2 < stem[0] else "bar_bottom_right"
        part = "stem" if {"bottom": stem[2], "left": stem[0], "right": stem[1]}.get(side) == on else "bar"
        return f"{part}_{side}"

    text = f"T-junction: the union of the bar {_box(bar)} and the stem {_box(stem)}"
    coordinates = ([bar[0], bar[1], stem[0], stem[1]], [bar[2], bar[3], stem[2], stem[3]])
    return _region("t_junction", text, coordinates, lambda x, y: in_box(bar, x, y) or in_box(stem, x, y), namer=name)


def rectangle(box: Box, text: str) -> Domain:
    return _region("rectangle", text, ([box[0], box[1]], [box[2], box[3]]), lambda x, y: in_box(box, x, y))


def periodic_box(params: dict[str, Any]) -> Box:
    """A periodic_square's rectangle: `extents` or `bounds` (the same where both are given)."""
    given = {k: _four(params[k], k) for k in ("extents", "bounds") if k in params}
    if not given:
        raise Excluded(f"{DOMAIN_REASON}periodic_square given by {sorted(params)} (expected extents or bounds)")
    if len(given) == 2 and not _close(given["extents"], given["bounds"]):
        raise Excluded(f"{DOMAIN_REASON}periodic_square with extents {given['extents']} and bounds {given['bounds']}")
    return next(iter(given.values()))


# published domains given by their geometry (cases/published_shapes.py), meshed without structure
GEOMETRIC = ("circle", "annulus", "eccentric_annulus", "sector", "dumbbell", "multi_hole", "star", "gear")


def track_domain(domain: dict[str, Any]) -> Domain | str:
    """The domain a published record describes, built from its geometry exactly: ours where it
    is ours (the unit square, our L-shape and square hole keep their pieces), else an
    axis-parallel region of its own; a curved or slanted kind (GEOMETRIC, a square with a circular
    or polygonal hole) is given by its geometry (cases/published_shapes.py) and returned as its kind's name,
    its pieces built by published_boundary.imported_boundary; raises Excluded for a domain the
    track cannot mesh."""
    kind = domain.get("type")
    params = domain.get("geometry_params") or {}
    if kind == "unit_square":
        return DOMAINS["unit_square"]
    if kind == "l_shape":
        return _l_shape(domain, params)
    if kind in GEOMETRIC or (kind == "square_with_hole" and (params.get("inner_hole") or {}).get("type") != "rect"):
        try:
            published_shape(domain)
        except ShapeError as exc:
            raise Excluded(f"domain not read: {kind}: {exc}") from None
        return str(kind)
    if kind == "square_with_hole":
        hole = params.get("inner_hole") or {}
        if hole.get("type") == "rect":
            box, cut = _four(params.get("outer", [0, 1, 0, 1]), "outer"), _four(hole.get("bbox"), "inner_hole.bbox")
            if _close(box, [0, 1, 0, 1]) and _close(cut, [0.375, 0.625, 0.375, 0.625]):
                return DOMAINS["square_hole"]
            text = f"{_box(box)} without the open rectangular hole {_box(cut)}"
            coordinates = ([box[0], box[1], cut[0], cut[1]], [box[2], box[3], cut[2], cut[3]])
            return _region("square_hole", text, coordinates, _less(box, cut))
    if kind == "t_junction":
        return _t_junction(params)
    if kind == "periodic_square":
        box = periodic_box(params)
        return rectangle(box, f"the rectangle {_box(box)}")
    raise Excluded(f"{DOMAIN_REASON}{kind} (not one of the track's domains)")


def domain_box(domain: Domain, grid: dict[str, Any]) -> tuple[float, float, float, float]:
    """The domain's bounding box, which must lie in the output grid's box: our calibration meshes
    that box (a domain beyond it would be cut off)."""
    pts = np.asarray(domain.outer, dtype=float)
    box = (float(pts[:, 0].min()), float(pts[:, 0].max()), float(pts[:, 1].min()), float(pts[:, 1].max()))
    try:
        gx0, gx1, gy0, gy1 = (float(v) for v in grid["bbox"][:4])
    except (KeyError, TypeError, ValueError):
        raise Excluded(f"record not read: output grid {grid!r} without a bbox") from None
    if box[0] < gx0 - 1e-12 or box[1] > gx1 + 1e-12 or box[2] < gy0 - 1e-12 or box[3] > gy1 + 1e-12:
        raise Excluded(f"domain beyond the output grid: the domain spans {list(box)}, the grid {grid['bbox']}")
    return box


def restricted(u: sp.Expr, a: tuple[float, float], b: tuple[float, float]) -> sp.Expr:
    """u on the axis-parallel segment from a to b, as a function of the coordinate along it."""
    if a[1] == b[1]:
        return sp.simplify(u.subs(Y, sp.nsimplify(a[1])))
    if a[0] == b[0]:
        return sp.simplify(u.subs(X, sp.nsimplify(a[0])))
    raise ValueError(f"segment {a} - {b} is not axis-parallel")


# the published per-edge names of the unit square's edges, and our pieces there
EDGES = {"y0": "bottom", "x1": "right", "y1": "top", "x0": "left"}


def corner_jumps(domain: Any, traces: dict[str, list[sp.Expr]]) -> list[tuple[float, float]]:
    """The corners where the Dirichlet data of the piece ending there and of the piece starting
    there disagree (`traces`: the Dirichlet pieces only). Matched by the corner, not by the order
    of the pieces: a domain with a hole lists its outer loop, then the hole's, and each loop
    closes on its own first piece."""
    out = []
    for first, _, end in domain.pieces:
        if first not in traces:  # a periodic piece: no data of its own
            continue
        at = {X: sp.nsimplify(end[0]), Y: sp.nsimplify(end[1])}
        for second, start, _ in domain.pieces:
            if (
                first in traces
                and second in traces
                and start == end
                and any(
                    sp.simplify(a.subs(at) - b.subs(at)) != 0
                    for a, b in zip(traces[first], traces[second], strict=True)
                )
            ):
                out.append((float(end[0]), float(end[1])))
    return out


def dirichlet_entries(dirichlet: Any) -> list[dict[str, Any]] | None:
    """The published Dirichlet data as per-edge entries, or None where it is one value on the
    whole boundary (`on: all`, also as the only entry of a list)."""
    entries = dirichlet if isinstance(dirichlet, list) else [dirichlet]
    if not all(isinstance(e, dict) for e in entries):
        raise Excluded("boundary condition not read: only Dirichlet data on the whole boundary")
    if len(entries) == 1 and entries[0].get("on") == "all":
        return None
    return entries


def edge_values(
    entries: list[dict[str, Any]], domain: str, solution: Any, natural: str | None
) -> tuple[dict[str, list[sp.Expr]], dict[str, str]]:
    """Our square's pieces, valued by the published per-edge Dirichlet entries, and the kind of
    each piece: an edge the list leaves out carries `natural` with zero data (the published
    oracle applies Dirichlet data on the listed edges only)."""
    names = [e.get("on") for e in entries]
    if domain != "unit_square" or solution or not set(names) <= set(EDGES) or len(set(names)) != len(names):
        where = "alongside a manufactured solution" if solution else f"on {names} of a {domain}"
        raise Excluded(f"boundary condition not read: per-edge Dirichlet data {where}")
    traces = {EDGES[e["on"]]: [sym(v) for v in as_list(e.get("value", "0"))] for e in entries}
    kinds = {piece: "dirichlet" for piece in traces}
    missing = sorted(e for e in EDGES if e not in names)
    if missing and natural is None:
        raise Excluded(
            f"natural boundary not read: a per-edge Dirichlet list leaves edges [{', '.join(missing)}] out, "
            "and this family's pieces are Dirichlet only"
        )
    width = len(next(iter(traces.values())))
    for edge in missing:
        traces[EDGES[edge]] = [sp.Integer(0)] * width
        kinds[EDGES[edge]] = natural  # type: ignore[assignment]
    return traces, kinds

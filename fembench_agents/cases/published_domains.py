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
from fembench_agents.cases.domains import DOMAINS

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


def _reentrant_corner(vertices: list[tuple[float, float]]) -> tuple[float, float] | None:
    """The vertex of a polygon whose interior angle exceeds 180 degrees (the first one)."""
    pts = np.asarray(vertices, dtype=float)
    n = len(pts)
    area = sum(pts[k, 0] * pts[(k + 1) % n, 1] - pts[(k + 1) % n, 0] * pts[k, 1] for k in range(n))
    for k in range(n):
        a, b, c = pts[k - 1], pts[k], pts[(k + 1) % n]
        if _turn(a, b, c) * area < 0:
            return float(b[0]), float(b[1])
    return None


CURVED = ("circle", "annulus", "eccentric_annulus", "sector", "dumbbell", "multi_hole")
SLANTED = ("star", "gear")


def track_domain(domain: dict[str, Any]) -> str:
    """The name of our domain (cases/domains.py) that the published domain is, exactly;
    raises Excluded with what differs otherwise."""
    kind = domain.get("type")
    params = domain.get("geometry_params") or {}
    if kind == "unit_square":
        return "unit_square"
    if kind == "l_shape":
        ours = DOMAINS["l_shape"]
        vertices = params.get("vertices")
        if vertices is not None:
            vertices = _corners(vertices)
            if len(vertices) == len(ours.outer) and set(vertices) == set(ours.outer):
                return "l_shape"
            pts = np.asarray(vertices, dtype=float)
            bbox: Any = [pts[:, 0].min(), pts[:, 0].max(), pts[:, 1].min(), pts[:, 1].max()]
            corner = _reentrant_corner(vertices)
        else:
            bbox, cut = domain.get("outer_bbox"), domain.get("cutout_bbox")
            if _close(bbox, [0, 1, 0, 1]) and _close(cut, [0.5, 1, 0.5, 1]):
                return "l_shape"
            if bbox is None or cut is None:
                raise Excluded(f"{DOMAIN_REASON}l_shape given by {sorted(domain)}")
            corner = (float(cut[0]), float(cut[2]))
        if not _close(bbox, [0, 1, 0, 1]):
            raise Excluded(f"{DOMAIN_REASON}l_shape on {_box(bbox)}, not the unit square")
        if corner == (0.5, 0.5):  # our re-entrant corner, another region: say what else differs
            if vertices is None:
                raise Excluded(f"{DOMAIN_REASON}l_shape with the cutout {_box(cut)} (ours: [0.5, 1] x [0.5, 1])")
            raise Excluded(f"{DOMAIN_REASON}l_shape with the corners {_points(vertices)} (ours: {_points(ours.outer)})")
        where = f"({_num(corner[0])}, {_num(corner[1])})" if corner else "none"
        raise Excluded(f"{DOMAIN_REASON}l_shape with re-entrant corner {where} (ours: (0.5, 0.5))")
    if kind == "square_with_hole":
        hole = params.get("inner_hole") or {}
        if hole.get("type") == "rect" and _close(params.get("outer", [0, 1, 0, 1]), [0, 1, 0, 1]):
            if _close(hole.get("bbox"), [0.375, 0.625, 0.375, 0.625]):
                return "square_hole"
            raise Excluded(
                f"{DOMAIN_REASON}square_with_hole with the rectangular hole {_box(hole['bbox'])} "
                "(ours: [0.375, 0.625] x [0.375, 0.625])"
            )
        if hole.get("type") == "circle":
            raise Excluded(f"{DOMAIN_REASON}square_with_hole with a circular hole (curved boundary)")
        raise Excluded(f"{DOMAIN_REASON}square_with_hole with a {hole.get('type')} hole (edges not axis-parallel)")
    if kind in CURVED:
        raise Excluded(f"{DOMAIN_REASON}{kind} (curved boundary)")
    if kind in SLANTED:
        raise Excluded(f"{DOMAIN_REASON}{kind} (edges not axis-parallel)")
    if kind == "periodic_square":
        raise Excluded(f"{DOMAIN_REASON}periodic_square (periodic boundary)")
    raise Excluded(f"{DOMAIN_REASON}{kind} (not one of the track's domains)")


def coons_blend(u: sp.Expr) -> sp.Expr:
    """The transfinite blend of u's restrictions to the four edges of the unit
    square: u on the boundary, and a function of the boundary data alone."""
    bottom, top = u.subs(Y, 0), u.subs(Y, 1)
    left, right = u.subs(X, 0), u.subs(X, 1)
    c00, c10, c01, c11 = (u.subs({X: a, Y: b}) for a, b in ((0, 0), (1, 0), (0, 1), (1, 1)))
    corners = (1 - X) * (1 - Y) * c00 + X * (1 - Y) * c10 + (1 - X) * Y * c01 + X * Y * c11
    return (1 - Y) * bottom + Y * top + (1 - X) * left + X * right - corners


def l_shape_blend(u: sp.Expr) -> sp.Expr:
    """u on every segment of our L-shape (the unit square without (1/2, 1] x (1/2, 1]), and a
    function of u's restrictions to the lines of those segments alone: the square's Coons blend C
    of the lines x = 0, x = 1, y = 0, y = 1 (the top and right traces taken on their whole lines,
    as the formulas of our pieces are), plus a Coons-type correction of the notch residuals
    r1(x) = u(x, 1/2) - C(x, 1/2) and r2(y) = u(1/2, y) - C(1/2, y), with the weights
    16 y^2 (1 - y)^2 and 16 x^2 (1 - x)^2, which are 1 on the notch lines and 0 on the outer ones.
    The residuals vanish where the notch meets the outer edges, so the outer edges keep u; on the
    notch lines the correction adds exactly the residual. The quartic weights, not 4 y (1 - y):
    those would make the blend a quadratic interpolation through the lines y = 0, 1/2, 1 (and x
    = 0, 1/2, 1), which is the solution itself wherever it is quadratic in x or in y (x^2 y^2,
    exp(x) y^2, ...). Like the piece formulas themselves, it also equals u on the notch lines'
    continuations into the domain (x = 1/2, y < 1/2 and y = 1/2, x < 1/2)."""
    half = sp.Rational(1, 2)
    coons = coons_blend(u)
    r1 = u.subs(Y, half) - coons.subs(Y, half)
    r2 = u.subs(X, half) - coons.subs(X, half)
    r0 = u.subs({X: half, Y: half}) - coons.subs({X: half, Y: half})
    wy, wx = 16 * Y**2 * (1 - Y) ** 2, 16 * X**2 * (1 - X) ** 2
    return coons + wy * r1 + wx * r2 - wx * wy * r0


BLENDS = {"unit_square": coons_blend, "l_shape": l_shape_blend, "unit_cube": cube_data.coons_blend}


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
    """The corners where the data of the piece ending there and of the piece starting there
    disagree. Matched by the corner, not by the order of the pieces: a domain with a hole lists
    its outer loop, then the hole's, and each loop closes on its own first piece."""
    out = []
    for first, _, end in domain.pieces:
        at = {X: sp.nsimplify(end[0]), Y: sp.nsimplify(end[1])}
        for second, start, _ in domain.pieces:
            if start == end and any(
                sp.simplify(a.subs(at) - b.subs(at)) != 0 for a, b in zip(traces[first], traces[second], strict=True)
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


def edge_values(entries: list[dict[str, Any]], domain: str, solution: Any) -> dict[str, list[sp.Expr]]:
    """Our square's pieces, valued by the published per-edge Dirichlet entries."""
    names = [e.get("on") for e in entries]
    if domain != "unit_square" or solution or not set(names) <= set(EDGES) or len(set(names)) != len(names):
        where = "alongside a manufactured solution" if solution else f"on {names} of a {domain}"
        raise Excluded(f"boundary condition not read: per-edge Dirichlet data {where}")
    missing = sorted(e for e in EDGES if e not in names)
    if missing:
        raise Excluded(
            f"natural (do-nothing/traction-free) boundary: on edges [{', '.join(missing)}]; "
            "the track's pieces are Dirichlet only"
        )
    return {EDGES[e["on"]]: [sym(v) for v in as_list(e.get("value", "0"))] for e in entries}

"""The boundary data of a published domain given by its geometry (cases/shapes.py): each
boundary piece's formula, and the published view's one Dirichlet expression, built from u's
values on the boundary alone.

Piece formulas, the solution restricted to the piece in a form that does not determine the
interior: on a segment, u composed with the orthogonal projection onto the segment's line (an
axis-parallel one: u with that coordinate fixed, as on our own domains); on an arc, u composed
with the radial projection onto its circle, c + r (p - c) / |p - c|. Like the formulas of our
L-shape's pieces, they equal u on their lines and circles also where those run inside the domain
(a curve, not an answer).

The published value is one expression, finite on the closed domain and equal to u on its whole
boundary, that evaluates u at boundary points only (where a weight is exactly 0 an interior value
may enter, multiplied by that 0):
- a star-shaped domain (circle, sector, star, gear) about a centre c with gauge g (g = 1 on the
  boundary, g(c + s d) = s g(c + d)): u at the boundary point c + (p - c) / g on the ray through p,
  weighted by w = clamp(4 g - 1, 0, 1), plus (1 - w) times u at the first boundary vertex: radial
  extension outside g = 1/2, a constant near c where the rays meet. The gauge: |p - c| / r (circle);
  the largest of its edges' and its arc's (sector, about a point inside it); for a star or gear
  the largest over its notches (reflex vertices) of the smaller of the two edges' gauges there,
  checked against the polygon at import (published_blend raises where it does not hold).
- several loops (annulus, eccentric annulus, a square with holes): the transfinite blend
  sum_j E_j prod_{k != j} phi_k / sum_l prod_{k != l} phi_k of each loop's extension E_j, with phi_k
  >= 0 in the domain and 0 on loop k alone: 1 on loop j's own. E: the square's Coons blend, a
  hole's radial extension (its centre is outside the domain), an outer circle's star-shaped one.
- the dumbbell (not star-shaped): u interpolated along the vertical chord through p between the
  boundary points above and below, and along the horizontal chord in the band of the bar, where
  that chord is one interval, weighted by the chords' squared lengths (so that a chord of length
  0, at the ends, carries no weight and divides nothing).
The max and min are written with sqrt: max(a, b) = (a + b + sqrt((a - b)**2)) / 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import sympy as sp

from fembench_agents.cases.model import Arc
from fembench_agents.cases.shapes import Box, Disk, GeometryError, Polygon, Shape, Wedge

X, Y = sp.symbols("x y")
Point = tuple[float, float]


def num(v: float) -> sp.Expr:
    """A parameter as sympy reads it back: a short decimal as a rational, else a float."""
    text = repr(float(v))
    return sp.Rational(text) if len(text) <= 8 and "e" not in text else sp.Float(float(v), 17)


def smax(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    return (a + b + sp.sqrt((a - b) ** 2)) / 2


def smin(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    return (a + b - sp.sqrt((a - b) ** 2)) / 2


def sqrt_pos(a: sp.Expr) -> sp.Expr:
    """sqrt(max(a, 0)), never NaN: sympy reorders the max's sum, whose rounding can leave -1e-18."""
    return (smax(a, sp.Integer(0)) ** 2) ** sp.Rational(1, 4)


def _at(u: sp.Expr, px: sp.Expr, py: sp.Expr) -> sp.Expr:
    return u.subs({X: px, Y: py}, simultaneous=True)


def radial_trace(u: sp.Expr, center: Point, radius: float) -> sp.Expr:
    """u composed with the radial projection onto the circle (singular at its centre only)."""
    cx, cy, r = num(center[0]), num(center[1]), num(radius)
    rho = sp.sqrt((X - cx) ** 2 + (Y - cy) ** 2)
    return _at(u, cx + r * (X - cx) / rho, cy + r * (Y - cy) / rho)


def line_trace(u: sp.Expr, a: Point, b: Point) -> sp.Expr:
    """u composed with the orthogonal projection onto the line through a and b."""
    if a[1] == b[1]:
        return sp.simplify(u.subs(Y, num(a[1])))
    if a[0] == b[0]:
        return sp.simplify(u.subs(X, num(a[0])))
    ax, ay, ex, ey = num(a[0]), num(a[1]), num(b[0] - a[0]), num(b[1] - a[1])
    s = ((X - ax) * ex + (Y - ay) * ey) / (ex**2 + ey**2)
    return _at(u, ax + s * ex, ay + s * ey)


def piece_trace(u: sp.Expr, geometry: tuple[Point, Point] | Arc) -> sp.Expr:
    if isinstance(geometry, Arc):
        return radial_trace(u, geometry.center, geometry.radius)
    return line_trace(u, *geometry)


# --- gauges: g(p) of a set star-shaped about a centre, homogeneous of degree one in p - c ---


def _line_gauge(a: Point, b: Point, c: Point) -> sp.Expr:
    """The gauge about c of the half-plane left of the directed line a -> b (c inside it)."""
    nx, ny = b[1] - a[1], a[0] - b[0]  # outward normal of a counter-clockwise edge
    h = nx * (a[0] - c[0]) + ny * (a[1] - c[1])
    if not h > 1e-12:
        raise GeometryError(f"the centre {c} is not inside the edge {a} - {b}")
    return (num(nx / h) * (X - num(c[0])) + num(ny / h) * (Y - num(c[1]))) if abs(h) > 0 else sp.oo


def _disk_gauge(disk: Disk, c: Point) -> sp.Expr:
    """The gauge of a disk about a point c inside it: the positive root s of |e + d / s| = r."""
    ex, ey = c[0] - disk.center[0], c[1] - disk.center[1]
    dx, dy = X - num(c[0]), Y - num(c[1])
    if ex == 0 and ey == 0:
        return sp.sqrt(dx**2 + dy**2) / num(disk.radius)
    q = disk.radius**2 - ex * ex - ey * ey
    ed = num(ex) * dx + num(ey) * dy
    return (ed + sp.sqrt(ed**2 + num(q) * (dx**2 + dy**2))) / num(q)


def polygon_gauge(vertices: tuple[Point, ...], c: Point) -> sp.Expr:
    """A counter-clockwise polygon star-shaped about c with no two reflex vertices adjacent:
    the largest over its corners of the edge gauges, the two edges at a reflex vertex taken
    together by their smaller (a union of half-planes there)."""
    n = len(vertices)
    edges = [_line_gauge(vertices[k], vertices[(k + 1) % n], c) for k in range(n)]
    reflex = [_turn(vertices[k - 1], vertices[k], vertices[(k + 1) % n]) < 0 for k in range(n)]
    if any(reflex[k] and reflex[(k + 1) % n] for k in range(n)):
        raise GeometryError("no closed-form gauge: two adjacent reflex vertices")
    terms, used = [], set()
    for k in range(n):
        if reflex[k]:
            terms.append(smin(edges[k - 1], edges[k]))
            used |= {(k - 1) % n, k}
    terms += [e for k, e in enumerate(edges) if k not in used]
    g = terms[0]
    for t in terms[1:]:
        g = smax(g, t)
    return g


def _turn(a: Point, b: Point, c: Point) -> float:
    return (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0])


def check_gauge(g: sp.Expr, polygon: Polygon, samples: int = 4000) -> None:
    """g is 1 on the polygon's edges and below 1 exactly inside it, at sample points."""
    fn = sp.lambdify((X, Y), g, "numpy")
    verts = np.array(polygon.vertices)
    t = np.linspace(0, 1, 41)[1:-1]
    on = np.concatenate([verts[k] + t[:, None] * (verts[(k + 1) % len(verts)] - verts[k]) for k in range(len(verts))])
    if not np.allclose(fn(on[:, 0], on[:, 1]), 1.0, rtol=0, atol=1e-9):
        raise GeometryError("no closed-form gauge: it is not 1 on the polygon's edges")
    rng = np.random.default_rng(0)
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    pts = lo + (hi - lo) * rng.uniform(-0.2, 1.2, size=(samples, 2))
    values = fn(pts[:, 0], pts[:, 1])
    inside = polygon.contains(pts[:, 0], pts[:, 1], closed=True)
    clear = np.abs(values - 1) > 1e-6
    if not np.array_equal((values < 1)[clear], inside[clear]):
        raise GeometryError("no closed-form gauge: it does not describe the polygon")


def star_blend(u: sp.Expr, c: Point, g: sp.Expr, anchor: Point) -> sp.Expr:
    """u at the boundary point on the ray from c through p, faded to u(anchor) near c."""
    cx, cy = num(c[0]), num(c[1])
    reach = smax(g, sp.Rational(1, 4))  # g < 1/4: weight 0 below, whatever the point
    radial = _at(u, cx + (X - cx) / reach, cy + (Y - cy) / reach)
    w = smin(smax(4 * g - 1, sp.Integer(0)), sp.Integer(1))
    return w * radial + (1 - w) * _at(u, num(anchor[0]), num(anchor[1]))


def coons_box(u: sp.Expr, box: Box) -> sp.Expr:
    """The transfinite blend of u on the box's four edges."""
    x0, x1, y0, y1 = (num(v) for v in (box.x0, box.x1, box.y0, box.y1))
    s, t = (X - x0) / (x1 - x0), (Y - y0) / (y1 - y0)
    edge = (1 - t) * u.subs(Y, y0) + t * u.subs(Y, y1) + (1 - s) * u.subs(X, x0) + s * u.subs(X, x1)
    corner = (
        (1 - s) * (1 - t) * u.subs({X: x0, Y: y0})
        + s * (1 - t) * u.subs({X: x1, Y: y0})
        + (1 - s) * t * u.subs({X: x0, Y: y1})
        + s * t * u.subs({X: x1, Y: y1})
    )
    return edge - corner


def loop_blend(loops: list[tuple[sp.Expr, sp.Expr]]) -> sp.Expr:
    """sum_j E_j prod_{k != j} phi_k / sum_l prod_{k != l} phi_k over (E_j, phi_j)."""
    others = [sp.Mul(*[phi for k, (_, phi) in enumerate(loops) if k != j]) for j in range(len(loops))]
    return sp.Add(*[e * w for (e, _), w in zip(loops, others, strict=True)]) / sp.Add(*others)


def _hole(u: sp.Expr, hole: Disk | Polygon) -> tuple[sp.Expr, sp.Expr]:
    if isinstance(hole, Disk):
        (cx, cy), r = hole.center, hole.radius
        rho2 = (X - num(cx)) ** 2 + (Y - num(cy)) ** 2
        return radial_trace(u, hole.center, r), rho2 / num(r * r) - 1
    c = tuple(float(v) for v in np.mean(hole.vertices, axis=0))
    g = polygon_gauge(hole.vertices, c)  # type: ignore[arg-type]
    check_gauge(g, hole)
    return _at(u, num(c[0]) + (X - num(c[0])) / g, num(c[1]) + (Y - num(c[1])) / g), g - 1


def _outer_disk(u: sp.Expr, disk: Disk) -> tuple[sp.Expr, sp.Expr]:
    """The disk's two-chord blend: u interpolated along the vertical chord through p and along the
    horizontal one, weighted by their squared lengths (their sum is at least r^2 in the disk, and a
    chord of length 0 carries no weight); no max, so that sympy reads it back quickly. The chords'
    half-lengths get 1e-15 r^2 under their root: a boundary point outside the circle by rounding
    still has a real chord."""
    (cx, cy), r = disk.center, disk.radius
    ex, ey, r2 = num(cx), num(cy), num(r * r)
    slack = sp.Float(1e-15 * r * r, 17)
    s = sp.sqrt(r2 - (X - ex) ** 2 + slack)
    t = sp.sqrt(r2 - (Y - ey) ** 2 + slack)
    u_lo, u_hi = _at(u, X, ey - s), _at(u, X, ey + s)
    u_left, u_right = _at(u, ex - t, Y), _at(u, ex + t, Y)
    vertical = s * s * u_lo + (Y - ey + s) * (u_hi - u_lo) * s / 2
    horizontal = t * t * u_left + (X - ex + t) * (u_right - u_left) * t / 2
    rho2 = (X - ex) ** 2 + (Y - ey) ** 2
    return (vertical + horizontal) / (s * s + t * t), 1 - rho2 / r2


def _box_loop(u: sp.Expr, box: Box) -> tuple[sp.Expr, sp.Expr]:
    w, h = box.x1 - box.x0, box.y1 - box.y0
    bubble = (X - num(box.x0)) * (num(box.x1) - X) * (Y - num(box.y0)) * (num(box.y1) - Y)
    return coons_box(u, box), 16 * bubble / num(w * w * h * h)


def _chord(u: sp.Expr, lo: sp.Expr, hi: sp.Expr, along: sp.Symbol, scale: float) -> tuple[sp.Expr, sp.Expr]:
    """(weight, weight x interpolant) of u between the chord's ends, weight = (length / scale)^2:
    the product needs no division, so a chord of length 0 gives 0."""
    u_lo, u_hi = (u.subs(along, e) for e in (lo, hi))
    length = hi - lo
    return (length / num(scale)) ** 2, (length**2 * u_lo + (along - lo) * (u_hi - u_lo) * length) / num(scale * scale)


def _dumbbell(u: sp.Expr, shape: Shape) -> sp.Expr:
    left, right, bar = shape.joined
    assert isinstance(left, Disk) and isinstance(right, Disk) and isinstance(bar, Box)
    (lx, ly), lr = left.center, left.radius
    (rx, _), rr = right.center, right.radius
    xl, xr = shape.extras["junctions"]
    h = bar.y1 - ly
    zero = sp.Integer(0)
    sl = sqrt_pos(num(lr * lr) - (X - num(lx)) ** 2)
    sr = sqrt_pos(num(rr * rr) - (X - num(rx)) ** 2)
    # the bar's half-height where it is the vertical section (between the junctions), fading to 0
    # where a disk's section is taller anyway
    d = (xl - lx) / 2
    k = h / d
    bar_half = smax(smin(smin(num(h), num(k) * (X - num(xl - d))), num(k) * (num(xr + d) - X)), zero)
    half = smax(smax(sl, sr), bar_half)
    wv, v = _chord(u, num(ly) - half, num(ly) + half, Y, lr + rr)
    tl = sqrt_pos(num(lr * lr) - (Y - num(ly)) ** 2)
    tr = sqrt_pos(num(rr * rr) - (Y - num(ly)) ** 2)
    band = smax(num(h * h) - (Y - num(ly)) ** 2, zero) / num(h * h)  # > 0 where the horizontal section is one interval
    wh, hz = _chord(u, num(lx) - tl, num(rx) + tr, X, lr + rr)
    return (v + band * hz) / (wv + band * wh)


def published_blend(shape: Shape, u: sp.Expr) -> sp.Expr:
    """The published view's Dirichlet value on the shape (module text); GeometryError where
    no closed form is built for it."""
    builder = _BLENDS.get(shape.kind)
    if builder is None:
        raise GeometryError(f"no published boundary blend for the {shape.kind}")
    return builder(u, shape)


def _circle(u: sp.Expr, shape: Shape) -> sp.Expr:
    (disk,) = shape.joined
    assert isinstance(disk, Disk)
    return _outer_disk(u, disk)[0]


def _holes(u: sp.Expr, shape: Shape) -> sp.Expr:
    (outer,) = shape.joined
    first = _box_loop(u, outer) if isinstance(outer, Box) else _outer_disk(u, outer)  # type: ignore[arg-type]
    return loop_blend([first, *(_hole(u, h) for h in shape.removed)])  # type: ignore[arg-type]


def _sector(u: sp.Expr, shape: Shape) -> sp.Expr:
    (wedge,) = shape.joined
    assert isinstance(wedge, Wedge)
    (cx, cy), r, a = wedge.center, wedge.radius, wedge.angle
    inner = (cx + r / 2 * math.cos(a / 2), cy + r / 2 * math.sin(a / 2))
    tip0, tip1 = (cx + r, cy), (cx + r * math.cos(a), cy + r * math.sin(a))
    g = smax(
        smax(_line_gauge(wedge.center, tip0, inner), _line_gauge(tip1, wedge.center, inner)),
        _disk_gauge(Disk(wedge.center, r), inner),
    )
    return star_blend(u, inner, g, tip0)


def _star(u: sp.Expr, shape: Shape) -> sp.Expr:
    vertices = shape.outer
    c = (float(shape.params.get("center", [0, 0])[0]), float(shape.params.get("center", [0, 0])[1]))
    g = polygon_gauge(vertices, c)
    check_gauge(g, Polygon(vertices))
    return star_blend(u, c, g, vertices[0])


_BLENDS: dict[str, Callable[[sp.Expr, Shape], sp.Expr]] = {
    "circle": _circle,
    "annulus": _holes,
    "eccentric_annulus": _holes,
    "square_with_hole": _holes,
    "multi_hole": _holes,
    "sector": _sector,
    "star": _star,
    "gear": _star,
    "dumbbell": _dumbbell,
}

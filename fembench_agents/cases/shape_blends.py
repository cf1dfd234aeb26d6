"""The boundary data of a published domain given by its geometry (cases/published_shapes.py): each
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
The expressions are built from cases/blend_algebra.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import sympy as sp

from fembench_agents.cases.blend_algebra import (
    T,
    at,
    check_gauge,
    coons_box,
    disk_gauge,
    line_gauge,
    loop_blend,
    num,
    polygon_gauge,
    radial_trace,
    smax,
    smin,
    sqrt,
    sqrt_pos,
    star_blend,
    x_,
    y_,
)
from fembench_agents.cases.shapes import Box, Disk, GeometryError, Polygon, Shape, Wedge


def _hole(u: T, hole: Disk | Polygon) -> tuple[T, T]:
    if isinstance(hole, Disk):
        (cx, cy), r = hole.center, hole.radius
        rho2 = (x_ - num(cx)) ** 2 + (y_ - num(cy)) ** 2
        return radial_trace(u, hole.center, r), rho2 / num(r * r) - 1
    c = tuple(float(v) for v in np.mean(hole.vertices, axis=0))
    g = polygon_gauge(hole.vertices, c)  # type: ignore[arg-type]
    check_gauge(g, hole)
    return at(u, num(c[0]) + (x_ - num(c[0])) / g, num(c[1]) + (y_ - num(c[1])) / g), g - 1


def _outer_disk(u: T, disk: Disk) -> tuple[T, T]:
    """The disk's two-chord blend: u interpolated along the vertical chord through p and along the
    horizontal one, weighted by their squared lengths (their sum is at least r^2 in the disk, and a
    chord of length 0 carries no weight); no max, so that sympy reads it back quickly. The chords'
    half-lengths get 1e-15 r^2 under their root: a boundary point outside the circle by rounding
    still has a real chord."""
    (cx, cy), r = disk.center, disk.radius
    ex, ey, r2 = num(cx), num(cy), num(r * r)
    slack = num(1e-15 * r * r)
    s = sqrt(r2 - (x_ - ex) ** 2 + slack)
    t = sqrt(r2 - (y_ - ey) ** 2 + slack)
    u_lo, u_hi = at(u, x_, ey - s), at(u, x_, ey + s)
    u_left, u_right = at(u, ex - t, y_), at(u, ex + t, y_)
    vertical = s * s * u_lo + (y_ - ey + s) * (u_hi - u_lo) * s / 2
    horizontal = t * t * u_left + (x_ - ex + t) * (u_right - u_left) * t / 2
    rho2 = (x_ - ex) ** 2 + (y_ - ey) ** 2
    return (vertical + horizontal) / (s * s + t * t), 1 - rho2 / r2


def _box_loop(u: T, box: Box) -> tuple[T, T]:
    w, h = box.x1 - box.x0, box.y1 - box.y0
    bubble = (x_ - num(box.x0)) * (num(box.x1) - x_) * (y_ - num(box.y0)) * (num(box.y1) - y_)
    return coons_box(u, box), 16 * bubble / num(w * w * h * h)


def _chord(u: T, lo: T, hi: T, along: str, scale: float) -> tuple[T, T]:
    """(weight, weight x interpolant) of u between the chord's ends, weight = (length / scale)^2:
    the product needs no division, so a chord of length 0 gives 0."""
    u_lo, u_hi = ((u.at(x_, e) if along == "y" else u.at(e, y_)) for e in (lo, hi))
    length = hi - lo
    return (length / num(scale)) ** 2, (length**2 * u_lo + (T(along) - lo) * (u_hi - u_lo) * length) / num(
        scale * scale
    )


def _dumbbell(u: T, shape: Shape) -> T:
    left, right, bar = shape.joined
    assert isinstance(left, Disk) and isinstance(right, Disk) and isinstance(bar, Box)
    (lx, ly), lr = left.center, left.radius
    (rx, _), rr = right.center, right.radius
    xl, xr = shape.extras["junctions"]
    h = bar.y1 - ly
    zero = 0
    sl = sqrt_pos(num(lr * lr) - (x_ - num(lx)) ** 2)
    sr = sqrt_pos(num(rr * rr) - (x_ - num(rx)) ** 2)
    # the bar's half-height where it is the vertical section (between the junctions), fading to 0
    # where a disk's section is taller anyway
    d = (xl - lx) / 2
    k = h / d
    bar_half = smax(smin(smin(num(h), num(k) * (x_ - num(xl - d))), num(k) * (num(xr + d) - x_)), zero)
    half = smax(smax(sl, sr), bar_half)
    wv, v = _chord(u, num(ly) - half, num(ly) + half, "y", lr + rr)
    tl = sqrt_pos(num(lr * lr) - (y_ - num(ly)) ** 2)
    tr = sqrt_pos(num(rr * rr) - (y_ - num(ly)) ** 2)
    band = smax(num(h * h) - (y_ - num(ly)) ** 2, zero) / num(h * h)  # > 0 where the horizontal section is one interval
    wh, hz = _chord(u, num(lx) - tl, num(rx) + tr, "x", lr + rr)
    return (v + band * hz) / (wv + band * wh)


def published_blend(shape: Shape, u: sp.Expr) -> str:
    """The published view's Dirichlet value on the shape (module text); GeometryError where
    no closed form is built for it."""
    builder = _BLENDS.get(shape.kind)
    if builder is None:
        raise GeometryError(f"no published boundary blend for the {shape.kind}")
    return str(builder(T(str(u)), shape))


def _circle(u: T, shape: Shape) -> T:
    (disk,) = shape.joined
    assert isinstance(disk, Disk)
    return _outer_disk(u, disk)[0]


def _holes(u: T, shape: Shape) -> T:
    (outer,) = shape.joined
    first = _box_loop(u, outer) if isinstance(outer, Box) else _outer_disk(u, outer)  # type: ignore[arg-type]
    return loop_blend([first, *(_hole(u, h) for h in shape.removed)])  # type: ignore[arg-type]


def _sector(u: T, shape: Shape) -> T:
    (wedge,) = shape.joined
    assert isinstance(wedge, Wedge)
    (cx, cy), r, a = wedge.center, wedge.radius, wedge.angle
    inner = (cx + r / 2 * math.cos(a / 2), cy + r / 2 * math.sin(a / 2))
    tip0, tip1 = (cx + r, cy), (cx + r * math.cos(a), cy + r * math.sin(a))
    g = smax(
        smax(line_gauge(wedge.center, tip0, inner), line_gauge(tip1, wedge.center, inner)),
        disk_gauge(Disk(wedge.center, r), inner),
    )
    return star_blend(u, inner, g, tip0)


def _star(u: T, shape: Shape) -> T:
    """Not used by the import: the radial blend over a star's or gear's nested max is 100-500 KB of
    text, which sympy (as published programs read it) takes tens of seconds to parse."""
    vertices = shape.outer
    c = (float(shape.params.get("center", [0, 0])[0]), float(shape.params.get("center", [0, 0])[1]))
    g = polygon_gauge(vertices, c)
    check_gauge(g, Polygon(vertices))
    return star_blend(u, c, g, vertices[0])


_BLENDS: dict[str, Callable[[T, Shape], T]] = {
    "circle": _circle,
    "annulus": _holes,
    "eccentric_annulus": _holes,
    "square_with_hole": _holes,
    "multi_hole": _holes,
    "sector": _sector,
    "dumbbell": _dumbbell,
}

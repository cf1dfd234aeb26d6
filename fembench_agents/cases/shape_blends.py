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

import ast
import math
from collections.abc import Callable

import numpy as np
import sympy as sp

from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.model import Arc
from fembench_agents.cases.shapes import Box, Disk, GeometryError, Polygon, Shape, Wedge

X, Y = sp.symbols("x y")
Point = tuple[float, float]


class T:
    """An expression's text, composed without sympy (whose automatic evaluation of sqrt((a - b)**2)
    over large arguments takes seconds): arithmetic parenthesises, `at` substitutes x and y."""

    def __init__(self, text: str) -> None:
        self.text = text

    @staticmethod
    def of(v: object) -> T:
        return v if isinstance(v, T) else T(repr(float(v)) if isinstance(v, int | float) else str(v))

    def _op(self, op: str, other: object, right: bool = False) -> T:
        a, b = (T.of(other), self) if right else (self, T.of(other))
        return T(f"(({a.text}) {op} ({b.text}))")

    def __add__(self, o: object) -> T:
        return self._op("+", o)

    def __radd__(self, o: object) -> T:
        return self._op("+", o, True)

    def __sub__(self, o: object) -> T:
        return self._op("-", o)

    def __rsub__(self, o: object) -> T:
        return self._op("-", o, True)

    def __mul__(self, o: object) -> T:
        return self._op("*", o)

    def __rmul__(self, o: object) -> T:
        return self._op("*", o, True)

    def __truediv__(self, o: object) -> T:
        return self._op("/", o)

    def __rtruediv__(self, o: object) -> T:
        return self._op("/", o, True)

    def __pow__(self, o: object) -> T:
        return self._op("**", o)

    def __neg__(self) -> T:
        return T(f"(-({self.text}))")

    def __str__(self) -> str:
        return ast.unparse(ast.parse(self.text, mode="eval"))

    def at(self, px: object, py: object) -> T:
        """This expression with x and y replaced by px and py."""
        values = {"x": ast.parse(T.of(px).text, mode="eval").body, "y": ast.parse(T.of(py).text, mode="eval").body}

        class Swap(ast.NodeTransformer):
            def visit_Name(self, node: ast.Name) -> ast.AST:
                return values.get(node.id, node)

        tree = Swap().visit(ast.parse(self.text, mode="eval"))
        return T(ast.unparse(tree))


def sqrt(a: object) -> T:
    return T(f"sqrt({T.of(a).text})")


x_, y_ = T("x"), T("y")


def num(v: float) -> T:
    return T(repr(float(v)))


def smax(a: object, b: object) -> T:
    a, b = T.of(a), T.of(b)
    return (a + b + sqrt((a - b) ** 2)) / 2


def smin(a: object, b: object) -> T:
    a, b = T.of(a), T.of(b)
    return (a + b - sqrt((a - b) ** 2)) / 2


def sqrt_pos(a: object) -> T:
    """sqrt(max(a, 0)), never NaN: the max's sum can round to -1e-18."""
    return sqrt(sqrt(smax(a, 0) ** 2))


def _at(u: T, px: object, py: object) -> T:
    return u.at(px, py)


def radial_trace(u: T, center: Point, radius: float) -> T:
    """u composed with the radial projection onto the circle (singular at its centre only)."""
    cx, cy, r = num(center[0]), num(center[1]), num(radius)
    rho = sqrt((x_ - cx) ** 2 + (y_ - cy) ** 2)
    return _at(u, cx + r * (x_ - cx) / rho, cy + r * (y_ - cy) / rho)


def line_trace(u: T, a: Point, b: Point) -> T:
    """u composed with the orthogonal projection onto the line through a and b."""
    ax, ay, ex, ey = num(a[0]), num(a[1]), num(b[0] - a[0]), num(b[1] - a[1])
    s = ((x_ - ax) * ex + (y_ - ay) * ey) / (ex**2 + ey**2)
    return _at(u, ax + s * ex, ay + s * ey)


def piece_trace(u: sp.Expr, geometry: tuple[Point, Point] | Arc) -> sp.Expr | str:
    """u restricted to a piece: on an axis-parallel segment u with that coordinate fixed,
    simplified (as on our own domains); else composed with the projection (module text)."""
    if isinstance(geometry, Arc):
        return str(radial_trace(T(str(u)), geometry.center, geometry.radius))
    (ax, ay), (bx, by) = geometry
    if ay == by:
        return sp.simplify(u.subs(Y, sp.Rational(repr(float(ay)))))
    if ax == bx:
        return sp.simplify(u.subs(X, sp.Rational(repr(float(ax)))))
    return str(line_trace(T(str(u)), *geometry))


# --- gauges: g(p) of a set star-shaped about a centre, homogeneous of degree one in p - c ---


def _line_gauge(a: Point, b: Point, c: Point) -> T:
    """The gauge about c of the half-plane left of the directed line a -> b (c inside it)."""
    nx, ny = b[1] - a[1], a[0] - b[0]  # outward normal of a counter-clockwise edge
    h = nx * (a[0] - c[0]) + ny * (a[1] - c[1])
    if not h > 1e-12:
        raise GeometryError(f"the centre {c} is not inside the edge {a} - {b}")
    return num(nx / h) * (x_ - num(c[0])) + num(ny / h) * (y_ - num(c[1]))


def _disk_gauge(disk: Disk, c: Point) -> T:
    """The gauge of a disk about a point c inside it: the positive root s of |e + d / s| = r."""
    ex, ey = c[0] - disk.center[0], c[1] - disk.center[1]
    dx, dy = x_ - num(c[0]), y_ - num(c[1])
    if ex == 0 and ey == 0:
        return sqrt(dx**2 + dy**2) / num(disk.radius)
    q = disk.radius**2 - ex * ex - ey * ey
    ed = num(ex) * dx + num(ey) * dy
    return (ed + sqrt(ed**2 + num(q) * (dx**2 + dy**2))) / num(q)


def polygon_gauge(vertices: tuple[Point, ...], c: Point) -> T:
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


def check_gauge(g: T, polygon: Polygon, samples: int = 4000) -> None:
    """g is 1 on the polygon's edges and below 1 exactly inside it, at sample points."""
    compiled = compile_expr(str(g))

    def fn(px: np.ndarray, py: np.ndarray) -> np.ndarray:
        return compiled(x=px, y=py)

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


def star_blend(u: T, c: Point, g: T, anchor: Point) -> T:
    """u at the boundary point on the ray from c through p, faded to u(anchor) near c."""
    cx, cy = num(c[0]), num(c[1])
    reach = smax(g, 0.25)  # g < 1/4: weight 0 below, whatever the point
    radial = _at(u, cx + (x_ - cx) / reach, cy + (y_ - cy) / reach)
    w = smin(smax(4 * g - 1, 0), 1)
    return w * radial + (1 - w) * _at(u, num(anchor[0]), num(anchor[1]))


def coons_box(u: T, box: Box) -> T:
    """The transfinite blend of u on the box's four edges."""
    x0, x1, y0, y1 = (num(v) for v in (box.x0, box.x1, box.y0, box.y1))
    s, t = (x_ - x0) / (x1 - x0), (y_ - y0) / (y1 - y0)
    edge = (1 - t) * u.at(x_, y0) + t * u.at(x_, y1) + (1 - s) * u.at(x0, y_) + s * u.at(x1, y_)
    corner = (
        (1 - s) * (1 - t) * u.at(x0, y0)
        + s * (1 - t) * u.at(x1, y0)
        + (1 - s) * t * u.at(x0, y1)
        + s * t * u.at(x1, y1)
    )
    return edge - corner


def loop_blend(loops: list[tuple[T, T]]) -> T:
    """sum_j E_j prod_{k != j} phi_k / sum_l prod_{k != l} phi_k over (E_j, phi_j)."""
    others = [_product([phi for k, (_, phi) in enumerate(loops) if k != j]) for j in range(len(loops))]
    return _sum([e * w for (e, _), w in zip(loops, others, strict=True)]) / _sum(others)


def _product(factors: list[T]) -> T:
    out = T.of(1.0)
    for f in factors:
        out = out * f
    return out


def _sum(terms: list[T]) -> T:
    out = T.of(0.0)
    for t in terms:
        out = out + t
    return out


def _hole(u: T, hole: Disk | Polygon) -> tuple[T, T]:
    if isinstance(hole, Disk):
        (cx, cy), r = hole.center, hole.radius
        rho2 = (x_ - num(cx)) ** 2 + (y_ - num(cy)) ** 2
        return radial_trace(u, hole.center, r), rho2 / num(r * r) - 1
    c = tuple(float(v) for v in np.mean(hole.vertices, axis=0))
    g = polygon_gauge(hole.vertices, c)  # type: ignore[arg-type]
    check_gauge(g, hole)
    return _at(u, num(c[0]) + (x_ - num(c[0])) / g, num(c[1]) + (y_ - num(c[1])) / g), g - 1


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
    u_lo, u_hi = _at(u, x_, ey - s), _at(u, x_, ey + s)
    u_left, u_right = _at(u, ex - t, y_), _at(u, ex + t, y_)
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
        smax(_line_gauge(wedge.center, tip0, inner), _line_gauge(tip1, wedge.center, inner)),
        _disk_gauge(Disk(wedge.center, r), inner),
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

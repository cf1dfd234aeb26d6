"""Closed-form expressions of a boundary blend, built as text (sympy's automatic evaluation of
sqrt((a - b)**2) over large arguments takes seconds): the expression type `T`, the traces of u on
a segment's line and a circle, gauges of convex and star-shaped polygons, and the blends that
combine them (star-shaped, Coons on a box, transfinite over several loops). cases/shape_blends.py
builds each published domain kind's blend from these.

The max and min are written with sqrt: max(a, b) = (a + b + sqrt((a - b)**2)) / 2.
"""

from __future__ import annotations

import ast

import numpy as np
import sympy as sp

from fembench_agents.cases.case_spec import Arc
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.shapes import Box, Disk, GeometryError, Polygon

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


def at(u: T, px: object, py: object) -> T:
    return u.at(px, py)


def radial_trace(u: T, center: Point, radius: float) -> T:
    """u composed with the radial projection onto the circle (singular at its centre only)."""
    cx, cy, r = num(center[0]), num(center[1]), num(radius)
    rho = sqrt((x_ - cx) ** 2 + (y_ - cy) ** 2)
    return at(u, cx + r * (x_ - cx) / rho, cy + r * (y_ - cy) / rho)


def line_trace(u: T, a: Point, b: Point) -> T:
    """u composed with the orthogonal projection onto the line through a and b."""
    ax, ay, ex, ey = num(a[0]), num(a[1]), num(b[0] - a[0]), num(b[1] - a[1])
    s = ((x_ - ax) * ex + (y_ - ay) * ey) / (ex**2 + ey**2)
    return at(u, ax + s * ex, ay + s * ey)


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


def line_gauge(a: Point, b: Point, c: Point) -> T:
    """The gauge about c of the half-plane left of the directed line a -> b (c inside it)."""
    nx, ny = b[1] - a[1], a[0] - b[0]  # outward normal of a counter-clockwise edge
    h = nx * (a[0] - c[0]) + ny * (a[1] - c[1])
    if not h > 1e-12:
        raise GeometryError(f"the centre {c} is not inside the edge {a} - {b}")
    return num(nx / h) * (x_ - num(c[0])) + num(ny / h) * (y_ - num(c[1]))


def disk_gauge(disk: Disk, c: Point) -> T:
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
    edges = [line_gauge(vertices[k], vertices[(k + 1) % n], c) for k in range(n)]
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
    radial = at(u, cx + (x_ - cx) / reach, cy + (y_ - cy) / reach)
    w = smin(smax(4 * g - 1, 0), 1)
    return w * radial + (1 - w) * at(u, num(anchor[0]), num(anchor[1]))


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

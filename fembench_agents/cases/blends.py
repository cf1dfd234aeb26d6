"""The published `bc.dirichlet.value` of an imported case with a manufactured solution: one
expression, equal to the solution on every Dirichlet piece, and a function of the pieces'
formulas alone (each piece's formula is u restricted to the piece's whole line).

- the unit square: the transfinite (Coons) blend of the four edges;
- our L-shape: that blend plus a correction on the notch lines (l_shape_blend);
- any other axis-parallel domain: Gordon's transfinite interpolation on every line that
  carries a Dirichlet piece (gordon_blend), which is both of the above generalised.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from fembench_agents.cases.domains import DOMAINS, Domain

X, Y = sp.symbols("x y")


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


def _weights(s: sp.Symbol, lines: list[sp.Rational]) -> list[sp.Expr]:
    """Blending functions through the lines c_1 < ... < c_n: w_k(c_j) = delta_kj, summing to 1 and
    reproducing linear functions of s, and no more: an inner line's weight is its squared
    Lagrange polynomial (1 on it, 0 with zero slope on the others); the two outer lines take the
    linear interpolant less what the inner weights already carry. Lagrange polynomials themselves
    would reproduce every polynomial of degree n - 1: the solution itself wherever it is one."""
    if len(lines) == 1:
        return [sp.Integer(1)]
    lo, hi = lines[0], lines[-1]
    inner = [sp.Mul(*[((s - c) / (b - c)) ** 2 for c in lines if c != b]) for b in lines[1:-1]]
    first = (hi - s) / (hi - lo) - sum(
        (w * (hi - b) / (hi - lo) for w, b in zip(inner, lines[1:-1], strict=True)), sp.Integer(0)
    )
    last = (s - lo) / (hi - lo) - sum(
        (w * (b - lo) / (hi - lo) for w, b in zip(inner, lines[1:-1], strict=True)), sp.Integer(0)
    )
    return [first, *inner, last]


def gordon_blend(u: sp.Expr, pieces: Sequence[tuple[str, tuple[float, float], tuple[float, float]]]) -> sp.Expr:
    """Gordon's transfinite interpolation of u on the lines x = a_i and y = b_j that carry the
    given (axis-parallel) pieces: sum_i phi_i(x) u(a_i, y) + sum_j psi_j(y) u(x, b_j) - sum_ij
    phi_i(x) psi_j(y) u(a_i, b_j). At x = a_k the second and third sums cancel and the first is
    u(a_k, y): it is u on every such line, so on every piece, and reads u only there. With the
    lines of the unit square's edges it is the Coons blend. It is the solution wherever that is
    linear in x or in y (or a sum of such terms): the leak probe finds those."""
    xs = sorted({sp.nsimplify(a[0]) for _, a, b in pieces if a[0] == b[0]})
    ys = sorted({sp.nsimplify(a[1]) for _, a, b in pieces if a[1] == b[1]})
    phi, psi = _weights(X, xs) if xs else [], _weights(Y, ys) if ys else []
    along_x = sum((w * u.subs(X, a) for w, a in zip(phi, xs, strict=True)), sp.Integer(0))
    along_y = sum((w * u.subs(Y, b) for w, b in zip(psi, ys, strict=True)), sp.Integer(0))
    both = sum(
        (wa * wb * u.subs({X: a, Y: b}) for wa, a in zip(phi, xs, strict=True) for wb, b in zip(psi, ys, strict=True)),
        sp.Integer(0),
    )
    return along_x + along_y - both


def blend(
    u: sp.Expr, domain: Domain, pieces: Sequence[tuple[str, tuple[float, float], tuple[float, float]]]
) -> sp.Expr:
    """The published value on `domain` whose Dirichlet pieces are `pieces`: our square's and our
    L-shape's blends as they were (their records read the same), Gordon's elsewhere."""
    if tuple(pieces) == DOMAINS["unit_square"].pieces and domain == DOMAINS["unit_square"]:
        return coons_blend(u)
    if tuple(pieces) == DOMAINS["l_shape"].pieces and domain == DOMAINS["l_shape"]:
        return l_shape_blend(u)
    return gordon_blend(u, pieces)

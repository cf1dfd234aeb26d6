"""The grammar of fresh manufactured solutions: a sum of two or three terms of
different kinds, each a fixed template with drawn numbers.

  smooth           a*exp(b*x + c*y)                 or  a*x**i*y**j
  oscillatory      a*sin(m*pi*x + q)*cos(n*pi*y)
  boundary_layer   a*exp(-(x - s)/d), the layer on one edge of [0, 1]^2 (x or y, s = 0 or 1)
  corner_singular  a*((x - x0)**2 + (y - y0)**2)**p, r**(2p) with 2p in {2/3, 1, 3/2} about
                   a centre (x0, y0) just outside a vertex of the domain (1/48 or 1/24
                   away in x and in y): the corner singularity of a re-entrant corner
                   or a hole's corner, cut off at that distance

Every number is drawn from a short list of rationals and written as text by
`number`, so an expression is the same string on any machine and reads
exactly into sympy (`manufactured.parse` keeps rationals rational).

The draws use `random.Random` seeded with a string (`Draw`): Python derives
the state from the string's SHA-512, so the sequence is the same on every
platform and every Python 3.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeVar

import numpy as np

from fembench_agents.cases.case_spec import Arc
from fembench_agents.cases.domains import Domain
from fembench_agents.cases.shapes import Shape

Region = Domain | Shape  # a polygonal domain, or one given by its geometry (arcs)
TermKind = Literal["smooth", "oscillatory", "boundary_layer", "corner_singular"]
TERM_KINDS: tuple[TermKind, ...] = ("smooth", "oscillatory", "boundary_layer", "corner_singular")

# The ranges, as the lists the numbers are drawn from (docs/fresh_instances.md prints them).
AMPLITUDES = tuple(Fraction(n, 4) for n in (-8, -6, -5, -4, -3, -2, 2, 3, 4, 5, 6, 8))  # |a| in [1/2, 2]
EXP_RATES = tuple(Fraction(n, 2) for n in (-3, -2, -1, 1, 2, 3))  # b, c in [-3/2, 3/2]
POWERS = (1, 2, 3)  # i, j of a monomial
WAVENUMBERS = (1, 2, 3)  # m, n: at most three half-waves per unit length
PHASES = tuple(Fraction(n, 4) for n in range(4))  # q in [0, 3/4]
LAYER_WIDTHS = (Fraction(1, 8), Fraction(1, 6), Fraction(1, 5), Fraction(1, 4))  # d: 8 to 16 grid spacings
CORNER_POWERS = (Fraction(1, 3), Fraction(1, 2), Fraction(3, 4))  # p: r**(2p) with 2p in {2/3, 1, 3/2}
# the centre's distance from the corner along x and along y: never a multiple of 1/64, so the
# centre is no point of a 65 x 65 or 33 x 33 grid (the data are evaluated outside the domain too)
CORNER_OFFSETS = (Fraction(1, 48), Fraction(1, 24))

T = TypeVar("T")


class Draw:
    """One draw's random stream, named by a string key (the case id's parts and the draw number)."""

    def __init__(self, key: str) -> None:
        self._rng = random.Random(key)

    def pick(self, options: Sequence[T]) -> T:
        return options[self._rng.randrange(len(options))]

    def sample(self, options: Sequence[T], k: int) -> list[T]:
        """k distinct options, in the order drawn."""
        pool = list(options)
        return [pool.pop(self._rng.randrange(len(pool))) for _ in range(k)]


def number(q: Fraction | int) -> str:
    """A rational as expression text: `3`, `-1/2`, `3/4` (no float ever enters an expression)."""
    q = Fraction(q)
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def scaled(q: Fraction | int, body: str) -> str:
    """q times body as text: `body`, `-body`, `3*body`, `(3/4)*body`, `(-2)*body`."""
    q = Fraction(q)
    if q == 1:
        return body
    if q == -1:
        return f"-{body}"
    return f"{q.numerator}*{body}" if q.denominator == 1 and q > 0 else f"({number(q)})*{body}"


def plus(*parts: str) -> str:
    """A sum, a part starting with a minus sign written as a difference."""
    out = parts[0]
    for p in parts[1:]:
        out += f" - {p[1:]}" if p.startswith("-") else f" + {p}"
    return out


def _power(var: str, n: int) -> str:
    return var if n == 1 else f"{var}**{n}"


def shifted(var: str, at: Fraction) -> str:
    """`(x - 3/32)`, `(x + 1/32)`, or `x` itself when the shift is 0."""
    if at == 0:
        return var
    return f"({var} - {number(at)})" if at > 0 else f"({var} + {number(-at)})"


def wave(n: int, var: str) -> str:
    return f"pi*{var}" if n == 1 else f"{n}*pi*{var}"


@dataclass(frozen=True)
class Term:
    kind: TermKind
    text: str


def smooth(d: Draw) -> Term:
    a = d.pick(AMPLITUDES)
    if d.pick((0, 1)):
        b, c = d.pick(EXP_RATES), d.pick(EXP_RATES)
        return Term("smooth", scaled(a, f"exp({plus(scaled(b, 'x'), scaled(c, 'y'))})"))
    i, j = d.pick(POWERS), d.pick(POWERS)
    return Term("smooth", scaled(a, f"{_power('x', i)}*{_power('y', j)}"))


def oscillatory(d: Draw) -> Term:
    a, m, n, q = d.pick(AMPLITUDES), d.pick(WAVENUMBERS), d.pick(WAVENUMBERS), d.pick(PHASES)
    phase = "" if q == 0 else f" + {number(q)}"
    return Term("oscillatory", scaled(a, f"sin({wave(m, 'x')}{phase})*cos({wave(n, 'y')})"))


def boundary_layer(d: Draw) -> Term:
    a, var, edge, width = d.pick(AMPLITUDES), d.pick(("x", "y")), d.pick((0, 1)), d.pick(LAYER_WIDTHS)
    distance = var if edge == 0 else f"(1 - {var})"
    return Term("boundary_layer", scaled(a, f"exp(-{number(1 / width)}*{distance})"))


def corners(region: Region) -> list[tuple[Fraction, Fraction]]:
    """The points a corner term's centre is placed beside: the polygon's vertices (the outer loop,
    then the holes'), then the four axis points (east, north, west, south) of each circle, whole
    circles being the only arcs of our domains."""
    out = [(Fraction(x), Fraction(y)) for x, y in (*region.outer, *(v for hole in region.holes for v in hole))]
    for _, place in region.pieces if isinstance(region, Shape) else ():
        if isinstance(place, Arc):
            (cx, cy), r = (Fraction(c) for c in place.center), Fraction(place.radius)
            out += [(cx + r, cy), (cx, cy + r), (cx - r, cy), (cx, cy - r)]
    return out


def _outside(domain: Region, vertex: tuple[Fraction, Fraction], offset: Fraction) -> list[tuple[Fraction, Fraction]]:
    """The points `offset` diagonally away from a vertex that lie strictly outside the domain."""
    out = []
    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
        px, py = vertex[0] + sx * offset, vertex[1] + sy * offset
        if not domain.inside(np.array([float(px)]), np.array([float(py)]))[0]:
            out.append((px, py))
    return out


def corner_singular(d: Draw, domain: Region) -> Term:
    """The centre sits just outside a corner (or beside a circle), off every line a boundary piece
    lies on (offsets of 1/48 or 1/24, pieces lie on multiples of 1/8) and off every circle:
    restricted to a piece, the term stays a power of a positive sum, which the expression language
    writes without an absolute value."""
    a, p, offset = d.pick(AMPLITUDES), d.pick(CORNER_POWERS), d.pick(CORNER_OFFSETS)
    vertex = d.pick(corners(domain))
    x0, y0 = d.pick(_outside(domain, vertex, offset))
    r2 = f"({shifted('x', x0)}**2 + {shifted('y', y0)}**2)"
    return Term("corner_singular", scaled(a, f"{r2}**({number(p)})"))


def term(kind: TermKind, d: Draw, domain: Region) -> Term:
    if kind == "corner_singular":
        return corner_singular(d, domain)
    return {"smooth": smooth, "oscillatory": oscillatory, "boundary_layer": boundary_layer}[kind](d)


def solution(d: Draw, domain: Region, kinds: Sequence[TermKind] = TERM_KINDS) -> list[Term]:
    """Two or three terms of distinct kinds drawn from `kinds`, in the order drawn."""
    chosen = d.sample(kinds, min(len(kinds), d.pick((2, 3))))
    return [term(k, d, domain) for k in chosen]


def join(terms: Sequence[Term]) -> str:
    return plus(*(t.text for t in terms))

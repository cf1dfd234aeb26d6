"""Each fresh family's space: its coefficients and parameters within the ranges
our calibration solvers meet their gates on, and the shape of its solution (or,
for a numerical-reference family, of its data). One function per family draws a
`Drawn` (everything a case file needs but its name, domain, grid and libraries);
`SPACES` is the registry the generator reads: each family's draw and the domain
kinds it draws on. Every fresh case has the case file's default grid, 65 x 65.

The ranges keep a second-order method on the 65 x 65 grid (h = 1/64) in its
regime: a mesh Peclet number |b| h / (2 eps) below 0.6, Helmholtz k with
k h below 0.11, diffusion coefficients bounded below by 1/2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from fembench_agents.cases.domains import Domain
from fembench_agents.cases.generate.geometry import KINDS, POLYGONS
from fembench_agents.cases.generate.grammar import (
    AMPLITUDES,
    Draw,
    Region,
    Term,
    join,
    number,
    plus,
    scaled,
    shifted,
    solution,
    term,
    wave,
)
from fembench_agents.cases.generate.periodic import (
    DIRECTIONS,
    PeriodicKind,
    other,
    periodic_solution,
    periodic_term,
)
from fembench_agents.cases.model import Coefficient, ProblemData

# scalar parameters are floats: the calibration solvers read them with float()
CONDUCTIVITIES = (0.5, 1.0, 2.0, 4.0)  # a constant k (poisson, heat)
K_MEANS = (Fraction(3, 2), Fraction(2), Fraction(3))  # k = c0 + c1 x + c2 y, |c1|, |c2| <= 1/2: k >= 1/2
K_SLOPES = tuple(Fraction(n, 4) for n in (-2, -1, 1, 2))
K_WAVE_MEANS = (Fraction(2), Fraction(3))  # k = c0 + a sin(m pi x) cos(n pi y), |a| <= 1: k >= 1
K_WAVE_AMPLITUDES = (Fraction(-1), Fraction(-1, 2), Fraction(1, 2), Fraction(1))
HEAT_END_TIMES = (0.25, 0.5, 0.75, 1.0)
HEAT_FREQUENCIES = (Fraction(1), Fraction(3, 2), Fraction(2))  # w in cos(w t), sin(w t)
DIFFUSIVITIES = (0.02, 0.025, 0.04, 0.05, 0.1)  # eps: Peclet |b|/eps from 5 to 71
VELOCITY_COMPONENTS = tuple(Fraction(n, 2) for n in (-2, -1, 0, 1, 2))
REACTION_D = (0.1, 0.2, 0.5, 1.0)
REACTIONS = ("u**3", "u + u**3", "2*u**3", "5*u**3", "exp(u)")  # monotone in u: one solution
HELMHOLTZ_K = (2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0)
YOUNG = (1.0, 10.0, 50.0, 100.0)
POISSON_RATIO = (0.2, 0.25, 0.3, 0.35, 0.4)
LOADS = ("constant", "source", "both")  # poisson_rough's forcing
SOURCE_WIDTHS = (25, 50, 100)  # w in exp(-w r^2): a source of radius about 1/sqrt(w), 6 to 13 grid spacings
SOURCE_MARGIN = Fraction(1, 8)
STOKES_NU = (0.5, 1.0, 2.0)
STOKES_LOADS = ("body", "lid", "both")  # what drives the flow
# the polygons but the cross: on its arms (1/2 wide, four re-entrant corners) the calibration
# solvers' velocity misses a fine reference by 1.1e-2 to 1.2e-2 on 65 x 65, over draw.E_BASE_CAP
STOKES_KINDS = tuple(k for k in POLYGONS if k != "cross")


@dataclass(frozen=True)
class Drawn:
    coefficients: dict[str, Coefficient]
    u: str | list[str] | None  # the manufactured solution; None for a numerical reference
    terms: tuple[str, ...]  # the kinds of the solution's terms (or the data's), in order (all components)
    t_end: float | None = None
    data: ProblemData | None = None  # a numerical-reference case's data
    pressure_compared: bool = True  # a flow's pressure scored beside its velocity
    periodic: tuple[str, ...] = ()  # the unit square's identified direction ("x" or "y")


@dataclass(frozen=True)
class Space:
    draw: Callable[[Draw, Region], Drawn]
    kinds: tuple[str, ...] = KINDS  # the domain kinds it draws on
    family: str | None = None  # the PDE family when the space's name is not it
    periodic: bool = False  # its cases have periodic sides (a track must solve them so)

    def pde(self, name: str) -> str:
        """The PDE family of the space registered as `name`."""
        return self.family or name


def conductivity(d: Draw) -> Coefficient:
    """k: a constant, a linear field or an oscillating one, each bounded below by 1/2."""
    shape = d.pick(("constant", "linear", "oscillating"))
    if shape == "constant":
        return d.pick(CONDUCTIVITIES)
    if shape == "linear":
        c0, c1, c2 = d.pick(K_MEANS), d.pick(K_SLOPES), d.pick(K_SLOPES)
        return plus(number(c0), scaled(c1, "x"), scaled(c2, "y"))
    c0, a, m, n = d.pick(K_WAVE_MEANS), d.pick(K_WAVE_AMPLITUDES), d.pick((1, 2)), d.pick((1, 2))
    return plus(number(c0), scaled(a, f"sin({wave(m, 'x')})*cos({wave(n, 'y')})"))


def _steady(d: Draw, domain: Region) -> tuple[str, tuple[str, ...]]:
    terms = solution(d, domain)
    return join(terms), tuple(t.kind for t in terms)


def poisson(d: Draw, domain: Region) -> Drawn:
    k = conductivity(d)
    u, kinds = _steady(d, domain)
    return Drawn({"k": k}, u, kinds)


def heat(d: Draw, domain: Region) -> Drawn:
    """u = cos(w t) S1 + sin(w t) S2: two spatial parts turning into each other, so u0 = S1 is
    no multiple of u(t_end)."""
    k = conductivity(d)
    first = solution(d, domain)
    second: Term = term(d.pick(("smooth", "oscillatory")), d, domain)
    w = number(d.pick(HEAT_FREQUENCIES))
    u = f"cos({w}*t)*({join(first)}) + sin({w}*t)*({second.text})"
    return Drawn({"k": k}, u, (*(t.kind for t in first), second.kind), t_end=d.pick(HEAT_END_TIMES))


def _uniform_velocity(d: Draw) -> list[str]:
    """(bx, by) from VELOCITY_COMPONENTS; (0, 0) becomes (1, 0)."""
    bx, by = d.pick(VELOCITY_COMPONENTS), d.pick(VELOCITY_COMPONENTS)
    if bx == 0 and by == 0:
        bx = Fraction(1)
    return [number(bx), number(by)]


def convection_diffusion(d: Draw, domain: Region) -> Drawn:
    eps = d.pick(DIFFUSIVITIES)
    if d.pick(("uniform", "rotating")) == "uniform":
        b = _uniform_velocity(d)
    else:
        s = d.pick((Fraction(1), Fraction(2), Fraction(-1)))
        b = [scaled(s, "(1/2 - y)"), scaled(s, "(x - 1/2)")]
    u, kinds = _steady(d, domain)
    return Drawn({"eps": eps, "b": b}, u, kinds)


def reaction_diffusion(d: Draw, domain: Region) -> Drawn:
    D, R = d.pick(REACTION_D), d.pick(REACTIONS)
    u, kinds = _steady(d, domain)
    return Drawn({"D": D, "R": R}, u, kinds)


def helmholtz(d: Draw, domain: Region) -> Drawn:
    k = d.pick(HELMHOLTZ_K)
    u, kinds = _steady(d, domain)
    return Drawn({"k": k}, u, kinds)


def elasticity(d: Draw, domain: Region) -> Drawn:
    E, nu = d.pick(YOUNG), d.pick(POISSON_RATIO)
    ux, kx = _steady(d, domain)
    uy, ky = _steady(d, domain)
    return Drawn({"E": E, "nu": nu}, [ux, uy], (*kx, *ky))


def _bump(d: Draw, domain: Domain) -> tuple[str, str, str]:
    """One boundary piece, the coordinate s along it ("x" or "y") and the value
    a (16 / L^4) (s - s0)^2 (s1 - s)^2: zero at the piece's ends, so the data meet the zero
    pieces beside it without a jump."""
    name, a, b = d.pick(domain.pieces)
    along = "x" if a[1] == b[1] else "y"
    k = 0 if along == "x" else 1
    s0, s1 = sorted((Fraction(a[k]), Fraction(b[k])))
    c = d.pick(AMPLITUDES) * 16 / (s1 - s0) ** 4
    return name, along, scaled(c, f"{shifted(along, s0)}**2*({number(s1)} - {along})**2")


def _source(d: Draw, domain: Domain) -> str:
    """a exp(-w ((x - x0)^2 + (y - y0)^2)), its centre on multiples of 1/16 at least SOURCE_MARGIN
    (in x and in y) from the domain's boundary."""
    a, w = d.pick(AMPLITUDES), d.pick(SOURCE_WIDTHS)
    steps = np.arange(1, 16) / 16
    X, Y = np.meshgrid(steps, steps)  # row by row in y, each from low x to high
    m, ok = float(SOURCE_MARGIN), np.ones(X.shape, dtype=bool)
    for sx in (-1, 0, 1):
        for sy in (-1, 0, 1):
            ok &= domain.inside(X + sx * m, Y + sy * m)
    places = [(Fraction(int(i) + 1, 16), Fraction(int(j) + 1, 16)) for j, i in zip(*np.nonzero(ok), strict=True)]
    x0, y0 = d.pick(places)
    return scaled(a, f"exp(-{w}*({shifted('x', x0)}**2 + {shifted('y', y0)}**2))")


def poisson_rough(d: Draw, domain: Region) -> Drawn:
    """A numerical reference (no closed form): a conductivity field as for poisson, a load that is a
    constant, a narrow source or both, zero boundary data but perhaps a bump on one piece. The
    re-entrant corners of the polygons make the solution singular there."""
    assert isinstance(domain, Domain)  # Space.kinds: polygons only (a numerical reference's domain)
    k, load = conductivity(d), d.pick(LOADS)
    parts, kinds = [], []
    if load != "source":
        parts.append(number(d.pick(AMPLITUDES)))
        kinds.append("constant_load")
    if load != "constant":
        parts.append(_source(d, domain))
        kinds.append("source")
    boundary: dict[str, str | list[str]] = {"*": "0"}
    if d.pick((False, True)):
        name, _, bump = _bump(d, domain)
        boundary[name] = bump
        kinds.append("boundary_bump")
    return Drawn({"k": k}, None, tuple(kinds), data=ProblemData(forcing=plus(*parts), boundary=boundary))


def stokes_numerical(d: Draw, domain: Region) -> Drawn:
    """A numerical reference of a Stokes flow (no closed form): nu, and a flow driven by a body force
    (each component a grammar sum), by a lid (one piece of the wall moving along itself with a bump
    profile, zero at its ends) or by both; every other piece a wall at rest. A lid moves along its
    piece, so no fluid crosses the boundary and div u = 0 is compatible with the data. The velocity
    alone is scored, as the published Stokes records score it: at a re-entrant corner the pressure is
    singular and its L2 error barely falls under refinement (docs/fresh_instances.md)."""
    assert isinstance(domain, Domain)  # Space.kinds: polygons only (a numerical reference's domain)
    nu, load = d.pick(STOKES_NU), d.pick(STOKES_LOADS)
    forcing, kinds = ["0", "0"], []
    if load != "lid":
        body = [solution(d, domain), solution(d, domain)]
        forcing = [join(terms) for terms in body]
        kinds += [f"force_{t.kind}" for terms in body for t in terms]
    boundary: dict[str, str | list[str]] = {"*": ["0", "0"]}
    if load != "body":
        name, along, bump = _bump(d, domain)
        boundary[name] = [bump, "0"] if along == "x" else ["0", bump]
        kinds.append("lid")
    data = ProblemData(forcing=forcing, boundary=boundary)
    return Drawn({"nu": nu}, None, tuple(kinds), data=data, pressure_compared=False)


def _periodic_k(d: Draw, r: str) -> Coefficient:
    """k for a case periodic along the other coordinate than `r`: a constant, or c0 + c1 r (k >= 1/2)."""
    if d.pick(("constant", "linear")) == "constant":
        return d.pick(CONDUCTIVITIES)
    return plus(number(d.pick(K_MEANS)), scaled(d.pick(K_SLOPES), r))


def poisson_periodic(d: Draw, domain: Region) -> Drawn:
    s = d.pick(DIRECTIONS)
    k = _periodic_k(d, other(s))
    u, kinds = periodic_solution(d, s)
    return Drawn({"k": k}, u, kinds, periodic=(s,))


def heat_periodic(d: Draw, domain: Region) -> Drawn:
    """As heat: u = cos(w t) S1 + sin(w t) S2, each part periodic in s."""
    s = d.pick(DIRECTIONS)
    k = _periodic_k(d, other(s))
    first, kinds = periodic_solution(d, s)
    second_kind: PeriodicKind = d.pick(("smooth", "oscillatory"))
    second = periodic_term(second_kind, d, s)
    w = number(d.pick(HEAT_FREQUENCIES))
    u = f"cos({w}*t)*({first}) + sin({w}*t)*({second})"
    return Drawn({"k": k}, u, (*kinds, second_kind), t_end=d.pick(HEAT_END_TIMES), periodic=(s,))


def convection_diffusion_periodic(d: Draw, domain: Region) -> Drawn:
    """A uniform b (a rotating one is not periodic), eps as for convection_diffusion."""
    s = d.pick(DIRECTIONS)
    eps, b = d.pick(DIFFUSIVITIES), _uniform_velocity(d)
    u, kinds = periodic_solution(d, s)
    return Drawn({"eps": eps, "b": b}, u, kinds, periodic=(s,))


def helmholtz_periodic(d: Draw, domain: Region) -> Drawn:
    s = d.pick(DIRECTIONS)
    k = d.pick(HELMHOLTZ_K)
    u, kinds = periodic_solution(d, s)
    return Drawn({"k": k}, u, kinds, periodic=(s,))


def elasticity_periodic(d: Draw, domain: Region) -> Drawn:
    s = d.pick(DIRECTIONS)
    E, nu = d.pick(YOUNG), d.pick(POISSON_RATIO)
    ux, kx = periodic_solution(d, s)
    uy, ky = periodic_solution(d, s)
    return Drawn({"E": E, "nu": nu}, [ux, uy], (*kx, *ky), periodic=(s,))


SQUARE = ("unit_square",)  # periodic sides are the unit square's
SPACES: dict[str, Space] = {
    "poisson": Space(poisson),
    "heat": Space(heat),
    "convection_diffusion": Space(convection_diffusion),
    "reaction_diffusion": Space(reaction_diffusion),
    "helmholtz": Space(helmholtz),
    "elasticity": Space(elasticity),
    "poisson_rough": Space(poisson_rough, POLYGONS, family="poisson"),
    "stokes_numerical": Space(stokes_numerical, STOKES_KINDS, family="stokes"),
    "poisson_periodic": Space(poisson_periodic, SQUARE, family="poisson", periodic=True),
    "heat_periodic": Space(heat_periodic, SQUARE, family="heat", periodic=True),
    "convection_diffusion_periodic": Space(
        convection_diffusion_periodic, SQUARE, family="convection_diffusion", periodic=True
    ),
    "helmholtz_periodic": Space(helmholtz_periodic, SQUARE, family="helmholtz", periodic=True),
    "elasticity_periodic": Space(elasticity_periodic, SQUARE, family="elasticity", periodic=True),
}

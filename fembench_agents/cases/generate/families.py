"""Each fresh family's space: its coefficients and parameters within the ranges
our calibration solvers meet their gates on, and the shape of its solution.
One function per family draws a `Drawn` (everything a case file needs but its
name, domain, grid and libraries); `SPACES` is the registry the generator reads.

The ranges keep a second-order method on the 65 x 65 grid (h = 1/64) in its
regime: a mesh Peclet number |b| h / (2 eps) below 0.6, Helmholtz k with
k h below 0.11, diffusion coefficients bounded below by 1/2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from fembench_agents.cases.domains import Domain
from fembench_agents.cases.generate.grammar import Draw, Term, join, number, plus, scaled, solution, term, wave
from fembench_agents.cases.model import Coefficient

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


@dataclass(frozen=True)
class Drawn:
    coefficients: dict[str, Coefficient]
    u: str | list[str]
    terms: tuple[str, ...]  # the kinds of the solution's terms, in order (all components)
    t_end: float | None = None


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


def _steady(d: Draw, domain: Domain) -> tuple[str, tuple[str, ...]]:
    terms = solution(d, domain)
    return join(terms), tuple(t.kind for t in terms)


def poisson(d: Draw, domain: Domain) -> Drawn:
    k = conductivity(d)
    u, kinds = _steady(d, domain)
    return Drawn({"k": k}, u, kinds)


def heat(d: Draw, domain: Domain) -> Drawn:
    """u = cos(w t) S1 + sin(w t) S2: two spatial parts turning into each other, so u0 = S1 is
    no multiple of u(t_end)."""
    k = conductivity(d)
    first = solution(d, domain)
    second: Term = term(d.pick(("smooth", "oscillatory")), d, domain)
    w = number(d.pick(HEAT_FREQUENCIES))
    u = f"cos({w}*t)*({join(first)}) + sin({w}*t)*({second.text})"
    return Drawn({"k": k}, u, (*(t.kind for t in first), second.kind), t_end=d.pick(HEAT_END_TIMES))


def convection_diffusion(d: Draw, domain: Domain) -> Drawn:
    eps = d.pick(DIFFUSIVITIES)
    if d.pick(("uniform", "rotating")) == "uniform":
        bx, by = d.pick(VELOCITY_COMPONENTS), d.pick(VELOCITY_COMPONENTS)
        if bx == 0 and by == 0:
            bx = Fraction(1)
        b: list[str] = [number(bx), number(by)]
    else:
        s = d.pick((Fraction(1), Fraction(2), Fraction(-1)))
        b = [scaled(s, "(1/2 - y)"), scaled(s, "(x - 1/2)")]
    u, kinds = _steady(d, domain)
    return Drawn({"eps": eps, "b": b}, u, kinds)


def reaction_diffusion(d: Draw, domain: Domain) -> Drawn:
    D, R = d.pick(REACTION_D), d.pick(REACTIONS)
    u, kinds = _steady(d, domain)
    return Drawn({"D": D, "R": R}, u, kinds)


def helmholtz(d: Draw, domain: Domain) -> Drawn:
    k = d.pick(HELMHOLTZ_K)
    u, kinds = _steady(d, domain)
    return Drawn({"k": k}, u, kinds)


def elasticity(d: Draw, domain: Domain) -> Drawn:
    E, nu = d.pick(YOUNG), d.pick(POISSON_RATIO)
    ux, kx = _steady(d, domain)
    uy, ky = _steady(d, domain)
    return Drawn({"E": E, "nu": nu}, [ux, uy], (*kx, *ky))


SPACES: dict[str, Callable[[Draw, Domain], Drawn]] = {
    "poisson": poisson,
    "heat": heat,
    "convection_diffusion": convection_diffusion,
    "reaction_diffusion": reaction_diffusion,
    "helmholtz": helmholtz,
    "elasticity": elasticity,
}

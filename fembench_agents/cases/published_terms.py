"""Reading the published records' PDE data where it is not a plain expression
(`published.convert` calls these): the reaction term, the time interval, the
initial data, the biharmonic's second boundary condition, and the condition on
the edges a per-edge Dirichlet list leaves out. Each follows what the published
oracle (pdebench/oracle/*.py) does with the record, since that is the problem
the record poses:

- reaction: `pde_params.reaction` {type, ...}: linear alpha u, cubic alpha u +
  beta u^3, allen_cahn lambda (u^3 - u), logistic rho u (1 - u); the diffusion is
  `epsilon` (`diffusion` in older records).
- time: `pde.time` {t0, t_end}; a Burgers record has none, and its oracle steps
  from t = 0 to `pde.t_final`, 0.1 when that is absent too (every published
  Burgers record): that interval is the problem it scores.
- initial data: `initial_condition`; where a manufactured solution exists the
  oracle starts from the solution at t0 instead, so the two must agree.
- biharmonic: the oracle solves two Dirichlet problems, w = -lap u with w equal to
  the exact -lap u on the boundary (manufactured records), or w = 0 (records
  without a solution: simply supported, u = g and lap u = 0).
- unlisted edges: the oracle applies Dirichlet data only on the listed edges, so
  the others carry the weak form's natural condition with zero data: a flow's
  nu du/dn - p n = 0 (do-nothing outflow of the Laplacian form), elasticity's
  sigma n = 0 (traction-free).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from fembench_agents.cases.cube_data import Z
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.published_domains import Excluded, T, X, Y, sym

U = sp.Symbol("u")
BURGERS_T_FINAL = 0.1  # the published Burgers oracle's default end time (it starts at t = 0)
NATURAL_ON_UNLISTED = {"stokes": "do-nothing", "navier_stokes": "do-nothing", "elasticity": "neumann"}


def reaction_term(params: dict[str, Any]) -> sp.Expr:
    """R(u) of a published reaction-diffusion record, as its oracle builds it."""
    reaction = params.get("reaction", {"type": "linear", "alpha": 0.0})
    kind = str(reaction.get("type", "linear")).lower()

    def number(key: str, default: float) -> sp.Expr:
        return sp.Float(float(reaction.get(key, default)))

    if kind == "linear":
        return number("alpha", 0.0) * U
    if kind in ("cubic", "poly3"):
        return number("alpha", 0.0) * U + number("beta", 1.0) * U**3
    if kind in ("allen_cahn", "allen-cahn"):
        lam = float(reaction.get("lambda", reaction.get("lam", 1.0)))
        return sp.Float(lam) * (U**3 - U)
    if kind in ("logistic", "fisher_kpp", "fisher-kpp"):
        return number("rho", 1.0) * U * (1 - U)
    raise Excluded(f"coefficient kind not read: reaction of type {kind!r}")


def diffusion(params: dict[str, Any]) -> float:
    if "epsilon" not in params and "diffusion" not in params:
        raise Excluded(f"coefficient kind not read: reaction_diffusion given by {sorted(params)}")
    return float(params["epsilon"] if "epsilon" in params else params["diffusion"])


def time_interval(family: str, pde: dict[str, Any]) -> tuple[float, float, bool]:
    """t0, t_end and whether the interval is the published oracle's default (not in the record)."""
    timing = pde.get("time") or {}
    if "t_end" in timing:
        return float(timing.get("t0", 0.0)), float(timing["t_end"]), False
    if family == "burgers":
        return 0.0, float(pde.get("t_final", BURGERS_T_FINAL)), "t_final" not in pde
    raise Excluded(f"time interval not stated: a {family} record without pde.time (t0, t_end)")


def initial_data(pde: dict[str, Any], solution: list[sp.Expr], t0: float, unstated: str | None = None) -> sp.Expr:
    """The record's initial field. Where a manufactured solution exists the published oracle
    starts from the solution at t0 (heat, Burgers, convection- and reaction-diffusion): a record
    without `initial_condition` gets that, and one whose field differs is refused. Without either,
    `unstated` is the oracle's own start where it has one (heat's oracle starts from 0)."""
    start = solution[0].subs(T, t0) if solution else None
    if "initial_condition" not in pde:
        if start is None and unstated is not None:
            return sym(unstated)
        if start is None:
            raise Excluded("initial data not stated: the record has no initial_condition and no manufactured solution")
        return start
    given = sym(pde["initial_condition"])
    if start is not None:
        pts = np.linspace(0.05, 0.95, 7)
        xs, ys, zs = np.meshgrid(pts, pts, pts)  # z read only by a 3D record's data
        a = compile_expr(str(given))(x=xs, y=ys, z=zs, t=t0)
        b = compile_expr(str(start))(x=xs, y=ys, z=zs, t=t0)
        if not np.allclose(a, b, rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(b).max()))):
            raise Excluded(
                f"initial data disagrees with the manufactured solution at t0 = {t0:g}: initial_condition "
                f"{pde['initial_condition']!r}, where the oracle starts from the solution"
            )
    return given


def laplacian(u: sp.Expr) -> sp.Expr:
    return sp.diff(u, X, 2) + sp.diff(u, Y, 2) + sp.diff(u, Z, 2)  # z: on the unit cube


def biharmonic_pair(solution: list[sp.Expr], boundary_value: sp.Expr) -> list[sp.Expr]:
    """The pair [u, lap u] our pieces carry, as the published oracle applies it: the exact
    solution and its Laplacian, or the record's u with lap u = 0 (simply supported)."""
    if solution:
        return [solution[0], laplacian(solution[0])]
    return [boundary_value, sp.Integer(0)]

"""Periodic boundaries of the published `periodic_square` records, read as each record
states them: `bc.periodic` as `{"on": ["x", "y"]}` or `{"direction": "x", "extents": [...]}`
(x: the left and right sides identified, y: the bottom and top), the other sides
Dirichlet where `bc.dirichlet` lists them (`on: y0`, ...). A record on periodic_square that
states Dirichlet data only is a plain rectangle.

A manufactured solution must itself be periodic where the record says so (its value and
its normal derivative agree on paired sides, as must the forcing and the coefficients);
a record whose data is not is excluded for that defect of its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from fembench_agents.cases.domains import Domain
from fembench_agents.cases.published_domains import Excluded, T, X, Y, as_list, restricted, sym

# each direction's pair of sides: (the side that is an image, its partner), and the published edge names
PAIRS = {"x": ("right", "left"), "y": ("top", "bottom")}
EDGE_OF = {"left": "x0", "right": "x1", "bottom": "y0", "top": "y1"}
BC_READ = "boundary condition not read: "


def directions(bc: dict[str, Any], box: tuple[float, float, float, float]) -> tuple[str, ...]:
    """The periodic directions a record states ("x", "y" or both), checked against its domain's box."""
    periodic = bc.get("periodic")
    if periodic is None:
        return ()
    if not isinstance(periodic, dict):
        raise Excluded(f"{BC_READ}periodic given as {periodic!r}")
    given = periodic.get("on", periodic.get("direction"))
    named = ["x", "y"] if given in ("both", "all") else as_list(given)
    if not named or any(d not in PAIRS for d in named) or len(set(named)) != len(named):
        raise Excluded(f"{BC_READ}periodic on {given!r} (expected x, y or both)")
    extents = periodic.get("extents")
    if extents is not None and not np.allclose(np.asarray(extents, dtype=float), box, rtol=0, atol=1e-12):
        raise Excluded(f"record defect: periodic extents {extents} are not the domain's {list(box)}")
    return tuple(sorted(named))


def partners(dirs: tuple[str, ...]) -> dict[str, str]:
    """Each periodic side's partner, both ways."""
    out: dict[str, str] = {}
    for d in dirs:
        image, source = PAIRS[d]
        out[image], out[source] = source, image
    return out


def dirichlet_sides(dirichlet: Any, periodic: dict[str, str], domain: Domain) -> dict[str, list[Any]] | None:
    """The published Dirichlet entries of a record with periodic sides, by our piece name: they must
    name exactly the sides that are not periodic (None: the record states no Dirichlet data)."""
    if dirichlet is None:
        free = [n for n, _, _ in domain.pieces if n not in periodic]
        if free:
            raise Excluded(f"{BC_READ}sides {[EDGE_OF[n] for n in free]} are neither periodic nor Dirichlet")
        return None
    entries = dirichlet if isinstance(dirichlet, list) else [dirichlet]
    names = [e.get("on") if isinstance(e, dict) else e for e in entries]
    side = {v: k for k, v in EDGE_OF.items()}
    wanted = sorted(EDGE_OF[n] for n, _, _ in domain.pieces if n not in periodic)
    if sorted(str(n) for n in names) != wanted:
        raise Excluded(
            f"{BC_READ}Dirichlet on {names} alongside periodic sides (expected one entry on each of {wanted})"
        )
    return {side[e["on"]]: [sym(v) for v in as_list(e.get("value", "0"))] for e in entries}


def check_periodic(
    exprs: dict[str, list[sp.Expr]], box: tuple[float, float, float, float], dirs: tuple[str, ...], t_end: float
) -> None:
    """Each expression (and, for `solution`, its normal derivative) takes the same values on paired
    sides, at sample points along them and in time; raises Excluded naming the first that does not."""
    x0, x1, y0, y1 = box
    s = np.linspace(0.0, 1.0, 13)[1:-1] * 0.999 + 0.0005
    times = np.linspace(0.0, max(t_end, 0.0), 4)
    for d in dirs:
        lo, hi, var, other = ((x0, x1, X, Y), (y0, y1, Y, X))[d == "y"]
        span = (y0 + s * (y1 - y0)) if d == "x" else (x0 + s * (x1 - x0))
        for what, comps in exprs.items():
            for e in comps:
                checks = [e, sp.diff(e, var)] if what == "solution" else [e]
                for f in checks:
                    fn = sp.lambdify((var, other, T), f, "numpy")
                    for t in times:
                        a = np.broadcast_to(fn(lo, span, t), span.shape)
                        b = np.broadcast_to(fn(hi, span, t), span.shape)
                        scale = max(1.0, float(np.max(np.abs(a))))
                        if not np.allclose(a, b, rtol=0, atol=1e-9 * scale):
                            derivative = " (its derivative across the sides)" if f is not e else ""
                            raise Excluded(
                                f"record defect: the {what}{derivative} is not periodic in {d} on "
                                f"[{lo:g}, {hi:g}] although the record states it periodic"
                            )


def periodic_traces(
    pde: dict[str, Any],
    solution: Any,
    dirichlet: Any,
    periodic: dict[str, str],
    domain: Domain,
    box: tuple[float, float, float, float],
) -> tuple[list[sp.Expr], dict[str, list[sp.Expr]]]:
    """The solution's components (zeros for a record without one) and the data of each Dirichlet
    piece of a record with periodic sides: the solution restricted there, which the record's own
    entries must equal; without a solution, the entries as given."""
    sides = dirichlet_sides(dirichlet, periodic, domain)
    if solution:
        u = [sym(e) for e in as_list(solution)]
    else:
        given = next(iter(sides.values())) if sides else [sym(e) for e in as_list(pde.get("source_term", "0"))]
        u = [sp.Integer(0)] * len(given)
    traces = {n: [restricted(c, a, b) for c in u] for n, a, b in domain.pieces if n not in periodic}
    for n, values in (sides or {}).items():
        if not solution:
            traces[n] = values
        elif not _same_on(values, traces[n], domain, n):
            raise Excluded(f"record defect: the Dirichlet data on {EDGE_OF[n]} is not the manufactured solution there")
    if solution:
        data = {"solution": u, "forcing": [sym(e) for e in as_list(pde.get("source_term", "0"))]}
        dirs = tuple(sorted(d for d, (image, _) in PAIRS.items() if image in periodic))
        check_periodic(data, box, dirs, float((pde.get("time") or {}).get("t_end", 1.0)))
    return u, traces


def _same_on(values: list[sp.Expr], traces: list[sp.Expr], domain: Domain, piece: str) -> bool:
    """Whether published per-edge data equals the solution's trace along the piece (sampled)."""
    (a, b) = next((a, b) for n, a, b in domain.pieces if n == piece)
    s = np.linspace(0.0, 1.0, 11)
    px, py = a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1])
    if len(values) != len(traces):
        return False
    for v, w in zip(values, traces, strict=True):
        for t in (0.0, 0.5, 1.0):
            fv = np.broadcast_to(sp.lambdify((X, Y, T), v, "numpy")(px, py, t), s.shape)
            fw = np.broadcast_to(sp.lambdify((X, Y, T), w, "numpy")(px, py, t), s.shape)
            if not np.allclose(fv, fw, rtol=1e-9, atol=1e-9):
                return False
    return True

"""Import of the published PDEAgent-Bench records (`data/benchmark_v2.jsonl` of
its public repository; the user supplies the file, nothing is downloaded)
into cases of this track, on the DOLFINx track only.

A record becomes a case when it is 2D on a domain built from its published geometry
exactly (published_domains.track_domain: ours where it is ours, else any axis-parallel
region: an L-shape anywhere, a rectangular hole of any size, the T-junction, a
rectangle in its own box; or a curved or slanted published domain given by its
geometry: circle, annulus, eccentric_annulus, sector, dumbbell, multi_hole,
square_with_hole with a circular or polygonal hole, star, gear, cases/shapes.py and
published_boundary.py, its pieces segments and circular arcs), of a family we have,
with its boundary conditions as it states them: Dirichlet data on the whole boundary
(one value on `all`, or on the unit square a list of per-edge entries (x0, x1, y0,
y1), each of our square's pieces then taking its edge's value as written; an edge the
list leaves out carries the condition the published oracle gives it, the weak form's
natural one with zero data: do-nothing for a flow, traction-free for elasticity), or
periodic sides with Dirichlet data on the others (published_periodic.py; on a
rectangle only). Every other record is excluded with its reason: a domain not in the
track with what differs, counted per kind, and the record's own defects (a periodic
record whose solution is not periodic, initial data that is not its solution at t0, a
zero solution, ...). Without a manufactured solution, the reference is a fine solve
with our DOLFINx calibration solver, kept only after the coarse-to-fine check of
cases/numerical.py (its error estimate at most 1/20 of the case's accuracy threshold).
An imported case keeps the published id, family and parameters, and carries two
agent-visible shapes in one case_spec (problem.SolverCase.spec_data): ours (boundary
data per boundary piece) and the published one (`pde`, `domain.type`, `bc`,
`output.grid`, `agent_knobs`), so that programs written for the published contract run
unchanged.

Leak-freedom: the published Dirichlet value is the exact solution on the whole
boundary. Here each boundary piece gets the solution restricted to it,
simplified, and the published `bc.dirichlet.value` becomes a blend of those
restrictions (blends.py: Gordon's transfinite interpolation on the pieces' lines,
the Coons blend on the unit square); equal to the solution on the boundary,
determined by the boundary data alone. A record without a manufactured solution keeps
its published bc (data, not the answer). The leak probe of cases/leak.py runs on every
agent-visible expression, the blend and the initial data included; a case that still
leaks (its forcing a multiple of its solution, say) is imported marked as leaking, with
the probe's finding.

What the published PDE data means is read as its oracle reads it
(published_terms.py): the reaction term of reaction-diffusion, transient
convection- and reaction-diffusion (kept as our families' transient variants),
Burgers' interval (its oracle's default when the record has none), the
biharmonic's second condition (lap u of the solution per piece, or 0 simply
supported; stated in the published view as `bc.laplacian`, a blend as for u).
Vector families keep the published output, a magnitude (ny, nx), as `u`; a flow
record's pressure is a field `p` compared up to a constant where it converges.
Time-dependent records keep t0 and t_end, not the published dt.

Decisions on the published quirks (reported by `import`): the legacy
`tolerance` (0.05 or 0.1, which the published evaluator uses as the accuracy
multiplier) is not applied by our gates (alpha_acc 10 for every case); an
`evaluation_config` nested inside `oracle_config` is read from there; no
threshold reaches the agent (the published case_spec shows them), while the
hidden record keeps them as the published evaluator reads them, for `score
--gates published` (published_import.published_thresholds). The
reference is the exact solution on the grid; e_base is our DOLFINx calibration
solver's error, and a case whose calibration error exceeds 0.05 is excluded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from fembench_agents.cases import cube, published_cube
from fembench_agents.cases.blends import blend
from fembench_agents.cases.builder import LAYOUT
from fembench_agents.cases.cube_data import Z
from fembench_agents.cases.domains import grid_coordinates
from fembench_agents.cases.expressions import ExpressionError, check_expr, compile_expr
from fembench_agents.cases.leak import best_multiple_error
from fembench_agents.cases.manufactured import equation
from fembench_agents.cases.model import (
    TRANSIENT_VARIANTS,
    BoundaryPiece,
    CaseSpec,
    FieldSpec,
    GridSpec,
    OutputContract,
    TimeSpec,
)
from fembench_agents.cases.published_boundary import imported_boundary
from fembench_agents.cases.published_coefficients import published_coefficients
from fembench_agents.cases.published_domains import (
    DOMAIN_REASON,
    EDGES,
    Excluded,
    X,
    Y,
    as_list,
    corner_jumps,
    dirichlet_entries,
    domain_box,
    edge_values,
    restricted,
    sym,
    track_domain,
)
from fembench_agents.cases.published_periodic import directions, partners, periodic_traces
from fembench_agents.cases.published_terms import (
    NATURAL_ON_UNLISTED,
    biharmonic_pair,
    initial_data,
    time_interval,
)
from fembench_agents.cases.shapes import domain_mask

LIBRARY = "dolfinx"
MAX_CALIBRATION_ERROR = 0.05
FAMILIES = {
    "poisson": "poisson",
    "heat": "heat",
    "convection_diffusion": "convection_diffusion",
    "reaction_diffusion": "reaction_diffusion",
    "linear_elasticity": "elasticity",
    "helmholtz": "helmholtz",
    "stokes": "stokes",
    "navier_stokes": "navier_stokes",
    "biharmonic": "biharmonic",
    "burgers": "burgers",
    "wave": "wave",
}
STEADY_HERE = ("stokes", "navier_stokes", "biharmonic")
TIMED_HERE = ("heat", "burgers", "wave")
FLOW = ("stokes", "navier_stokes")
HIDDEN_KEYS = ("manufactured_solution", "manufactured_u", "exact_solution")
# The published output of a vector family is a magnitude (ny, nx), kept as our `u`.
MAGNITUDES = {
    "elasticity": "displacement_magnitude",
    "stokes": "velocity_magnitude",
    "navier_stokes": "velocity_magnitude",
}


@dataclass
class ImportReport:
    read: int = 0
    imported: list[str] = field(default_factory=list)
    numerical: dict[str, float] = field(default_factory=dict)  # id -> its reference's error estimate
    excluded: dict[str, str] = field(default_factory=dict)  # id -> reason
    leaking: dict[str, str] = field(default_factory=dict)  # imported, marked: id -> how it leaks
    legacy_tolerance: list[str] = field(default_factory=list)
    nested_evaluation_config: list[str] = field(default_factory=list)
    forcing_derived: list[str] = field(default_factory=list)  # 3D: the stated source term was not u's
    thresholds_in_published_prompt: int = 0

    def reasons(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for reason in self.excluded.values():
            key = reason.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def domains(self) -> dict[str, int]:
        """The records excluded for their domain, counted by what their domain is."""
        counts: dict[str, int] = {}
        for reason in self.excluded.values():
            if reason.startswith(DOMAIN_REASON):
                key = reason[len(DOMAIN_REASON) :]
                counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def as_dict(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "imported": len(self.imported),
            "leak_free": len(self.imported) - len(self.leaking),
            "marked_leaking": self.leaking,
            "numerical_references": self.numerical,
            "excluded": len(self.excluded),
            "excluded_by_reason": self.reasons(),
            "excluded_domains": self.domains(),
            "excluded_cases": self.excluded,
            "decisions": {
                "legacy_tolerance_ignored": len(self.legacy_tolerance),
                "evaluation_config_read_from_oracle_config": self.nested_evaluation_config,
                "forcing_derived_from_the_solution": self.forcing_derived,
                "thresholds_removed_from_the_case_spec": self.thresholds_in_published_prompt,
            },
        }


def _show(expr: sp.Expr | str) -> str:
    text = str(expr)
    try:
        check_expr(text)
    except ExpressionError as exc:
        raise Excluded(f"unreadable expression: {exc}") from None
    return text


def _checked(text: str) -> str:
    """A published expression kept as written, once our expression language reads it."""
    sym(text)
    return _show(text)


def _one(values: list[str]) -> str | list[str]:
    return values[0] if len(values) == 1 else values


def _evaluation_config(record: dict[str, Any], report: ImportReport) -> dict[str, Any]:
    """The record's thresholds, merged as the published evaluator would find them: a
    config nested in oracle_config (one record: time_tolerance 20 there, 3 at the top)
    is reported; the top level wins. Only counted: our gates apply to every case."""
    config = dict(record.get("evaluation_config") or {})
    nested = record.get("oracle_config", {}).get("evaluation_config")
    if isinstance(nested, dict):
        report.nested_evaluation_config.append(record["id"])
        config = {**nested, **config}
    return config


def convert(record: dict[str, Any], report: ImportReport) -> tuple[CaseSpec, dict[str, Any], list[sp.Expr]]:
    """The case (ours), its published view and its manufactured solution (empty for a
    record without one: its reference is a fine solve); raises Excluded."""
    oc = record.get("oracle_config") or {}
    pde = oc.get("pde") or {}
    config = _evaluation_config(record, report)
    if config:
        report.thresholds_in_published_prompt += 1
        if "accuracy_tolerance" not in config and "tolerance" in config:
            report.legacy_tolerance.append(record["id"])
    grid = (oc.get("output") or {}).get("grid") or {}
    kind = (oc.get("domain") or {}).get("type")
    in_3d = published_cube.is_3d(oc)
    if in_3d and kind != cube.CUBE:
        raise Excluded(f"{DOMAIN_REASON}{kind} in 3D (the track's one 3D domain is the unit cube)")
    published_family = pde.get("type")
    if published_family not in FAMILIES:
        raise Excluded(f"family not in this track yet: {published_family}")
    family = FAMILIES[published_family]
    # an axis-parallel domain (a Domain), or a curved or slanted published one or the unit cube (its
    # kind's name: its pieces, segments, arcs or faces, from published_boundary.imported_boundary)
    track = cube.CUBE if in_3d else track_domain(oc.get("domain") or {})
    domain = track if not isinstance(track, str) else None
    geo = imported_boundary(track, oc.get("domain") or {}) if isinstance(track, str) else None
    if family in STEADY_HERE and pde.get("time"):
        raise Excluded(f"transient {published_family}: the track's family is steady")
    timed = family in TIMED_HERE or (family in TRANSIENT_VARIANTS and bool(pde.get("time")))
    manufactured = pde.get("manufactured_solution") or {}
    solution = manufactured.get("u")
    bc = oc.get("bc") or {}
    periodic: dict[str, str] = {}
    if domain is None:
        if "periodic" in bc:
            raise Excluded(f"boundary condition not read: periodic sides on a {track}")
    else:
        box = domain_box(domain, grid)
        periodic = partners(directions(bc, box)) if "periodic" in bc else {}
        if periodic and domain.name != "rectangle":
            raise Excluded(f"boundary condition not read: periodic sides on a {domain.name}")
    dirichlet = bc.get("dirichlet")
    if set(bc) - {"dirichlet", "periodic"} or (
        not periodic and (not isinstance(dirichlet, dict | list) or not dirichlet)
    ):
        raise Excluded("boundary condition not read: only Dirichlet data on the whole boundary")
    shown: dict[str, list[str]] = {}
    if in_3d and not solution:
        whole_data = dirichlet if isinstance(dirichlet, dict) else {}
        raise Excluded(published_cube.without_reference(family, pde, whole_data))
    piece_names = [n for n, _ in geo.pieces] if geo else [n for n, _, _ in track.pieces]  # type: ignore[union-attr]
    kinds = {piece: "dirichlet" for piece in piece_names}
    if periodic:
        # the record's own Dirichlet sides, valued by their data; the published view keeps bc as
        # published (per-edge traces and periodic pairs: data, not the answer)
        assert domain is not None
        u, traces = periodic_traces(pde, solution, dirichlet, periodic, domain, box)
        if family == "biharmonic":  # the Dirichlet sides carry [u, lap u], as every biharmonic piece
            pair = biharmonic_pair(u if solution else [], u[0])
            traces = {n: [restricted(c, a, b) for c in pair] for n, a, b in domain.pieces if n in traces}
    else:
        entries = dirichlet_entries(dirichlet)
        if entries is None:
            # Without a manufactured solution the published Dirichlet value is data, not the answer:
            # each boundary piece gets it restricted there, and the reference is a checked fine solve.
            whole: Any = dirichlet if isinstance(dirichlet, dict) else (dirichlet or [{}])[0]
            u = [sym(e) for e in as_list(solution or whole.get("value", "0"))]
            on_boundary = biharmonic_pair(u if solution else [], u[0]) if family == "biharmonic" else u
            if geo is not None:  # segments and arcs of a published geometry (published_boundary.py)
                traces = {piece: [geo.trace(c, where) for c in on_boundary] for piece, where in geo.pieces}
            else:
                assert domain is not None
                traces = {piece: [restricted(c, a, b) for c in on_boundary] for piece, a, b in domain.pieces}
        else:  # per-edge data on the square, each piece its edge's value as written; unlisted edges natural
            if family == "biharmonic":
                raise Excluded("boundary condition not read: per-edge Dirichlet data for a biharmonic record")
            name = domain.name if domain is not None else str(track)
            traces, kinds = edge_values(entries, name, solution, NATURAL_ON_UNLISTED.get(family))  # type: ignore[assignment]
            shown = {EDGES[e["on"]]: [_checked(str(v)) for v in as_list(e.get("value", "0"))] for e in entries}
            shown |= {piece: ["0"] * len(traces[piece]) for piece, k in kinds.items() if k != "dirichlet"}
            u = next(iter(traces.values()))
            if len({len(v) for v in traces.values()}) != 1:
                raise Excluded("boundary condition not read: per-edge values of different lengths")
    field = (oc.get("output") or {}).get("field")
    vector = family in MAGNITUDES
    components, magnitude = (published_cube.COMPONENTS, published_cube.MAGNITUDE_FIELD) if in_3d else (2, None)
    if len(u) != (components if vector else 1) or (field == (magnitude or MAGNITUDES.get(family))) != vector:
        raise Excluded(f"output not read: field {field!r} for a {published_family} solution of {len(u)} component(s)")
    # The pressure of a flow record is compared up to a constant (FieldSpec.up_to_constant); a constant
    # manufactured pressure (p = 0) leaves nothing to compare, its velocity is the whole reference.
    pressure: list[sp.Expr] = []
    if family in FLOW and solution:
        if "p" not in manufactured:
            raise Excluded("output not read: a flow record's manufactured solution without a pressure p")
        div = sp.simplify(sum((sp.diff(c, s) for c, s in zip(u, (X, Y, Z), strict=False)), sp.Integer(0)))
        if div != 0:  # stokes_3d_multifreq: div u = -2 pi cos(pi x) cos(2 pi y) cos(pi z)
            raise Excluded(f"manufactured velocity not divergence-free: div u = {div}; no flow solution has it")
        p = sym(manufactured["p"])
        # On the cube the published output (u_mag) is the whole reference: Taylor-Hood's P1 pressure on
        # the 8^3 calibration mesh of a 16^3 grid is 6% off where the viscous term dominates, and as the
        # largest field error it would loosen the velocity's target past the face blend (docs/pde_import.md).
        pressure = [] if in_3d or not (p.free_symbols & {X, Y, Z}) else [p]
    # A numerical flow reference has its p, unless the boundary data jumps at a corner (the lid of a
    # cavity): the pressure there grows as 1/r, is not square-integrable, and never converges in L2.
    # Nor where an open (do-nothing) edge meets a wall: the pressure is singular at that corner too,
    # and the published output is the velocity magnitude alone. (One value on the whole boundary of a
    # published geometry is continuous: only per-edge data on our square can jump.)
    open_edge = any(k != "dirichlet" for k in kinds.values())
    jumps = domain is not None and bool(corner_jumps(domain, traces))
    compare_p = bool(pressure) or (family in FLOW and not solution and not open_edge and not jumps)
    coefficients = published_coefficients(family, pde)
    stated = as_list(pde.get("source_term", "0"))
    derived = None
    if in_3d and solution:
        derived = published_cube.checked_forcing(family, coefficients, solution, manufactured.get("p"), stated)
    if derived is not None:  # the published oracle solves with the forcing of u, not the stated one
        report.forcing_derived.append(record["id"])
        stated = [str(e) for e in derived]
    forcing = [_show(sym(e)) for e in stated]
    time, default_time = None, False
    initial: str | list[str] | None = None
    if timed:
        # as heat: the interval is kept, the published dt is not (ours follows the grid: one step per spacing)
        t0, t_end, default_time = time_interval(family, pde)
        time = TimeSpec(t0=t0, t_end=t_end)
    if timed and family != "wave":
        initial = _show(initial_data(pde, u if solution else [], time.t0 if time else 0.0))
    elif family == "wave":
        if "initial_condition" not in pde or "initial_velocity" not in pde:
            raise Excluded("initial data not stated: a wave record needs initial_condition and initial_velocity")
        initial = [_show(sym(pde["initial_condition"])), _show(sym(pde["initial_velocity"]))]
    pieces = [
        BoundaryPiece(name=piece, kind="periodic", segment=(a, b), partner=periodic[piece])
        if piece in periodic
        else BoundaryPiece(
            name=piece,
            kind=kinds[piece],  # type: ignore[arg-type]
            segment=(a, b),
            value=_one(shown[piece] if shown else [_show(c) for c in traces[piece]]),
        )
        for piece, a, b in (domain.pieces if domain is not None else ())
    ]
    if geo is not None:
        pieces = [geo.piece(piece, where, _one([_show(c) for c in traces[piece]])) for piece, where in geo.pieces]
    # The published view: a manufactured record's boundary value becomes the blend of its traces
    # (the solution itself would be the answer); a record without one, or with periodic sides (its
    # Dirichlet sides given per edge), keeps its data as published. On a published geometry the blend
    # is its kind's (shape_blends.py), on an axis-parallel domain Gordon's (blends.py).
    dirichlet_pieces = [(n, a, b) for n, a, b in domain.pieces if n not in periodic] if domain else []

    def blended(c: sp.Expr) -> sp.Expr | str:
        if geo is not None:
            return geo.blend(c)
        assert domain is not None
        return blend(c, domain, dirichlet_pieces)

    published_bc = bc
    if solution and not periodic:
        published_bc = {"dirichlet": {"on": "all", "value": _one([_show(blended(c)) for c in u])}}
    if family == "biharmonic" and not periodic:
        # the second condition the published oracle applies, stated: lap u on the boundary (a blend of its
        # restrictions, as for u), or 0 for a record without a solution (simply supported)
        lap = _show(blended(biharmonic_pair(u, u[0])[1])) if solution else "0"
        published_bc = {**published_bc, "laplacian": {"on": "all", "value": lap}}
    try:
        grid_spec = (
            published_cube.grid_spec(grid)
            if in_3d
            else GridSpec(nx=int(grid["nx"]), ny=int(grid["ny"]), bbox=tuple(float(v) for v in grid["bbox"]))
        )
        shape = grid_spec.shape
        fields = {"u": FieldSpec(shape=shape)}
        if compare_p:
            fields["p"] = FieldSpec(shape=shape, up_to_constant=True)
        words = equation(family, time is not None, tuple(kinds.values()), grid_spec.dim)
        spec = CaseSpec(
            id=record["id"],
            family=family,  # type: ignore[arg-type]
            equation=words + _output_words(family, compare_p),
            coefficients=coefficients,
            forcing=forcing[0] if len(forcing) == 1 else forcing,
            boundary=pieces,
            initial=initial,
            time=time,
            domain=geo.spec if geo is not None else domain.spec(),  # type: ignore[union-attr]
            grid=grid_spec,
            output=OutputContract(fields=fields, layout=cube.LAYOUT if in_3d else LAYOUT),
            libraries=(LIBRARY,),
        )
    except (ValueError, KeyError) as exc:
        raise Excluded(f"record not read: {str(exc).splitlines()[0]}") from None
    view_pde = {k: v for k, v in pde.items() if k not in HIDDEN_KEYS}
    if default_time and time is not None:  # the oracle's default interval, stated in the record's own shape
        view_pde["time"] = {"t0": time.t0, "t_end": time.t_end}
    if derived is not None:  # the forcing the published oracle solves with, in the record's own shape
        view_pde["source_term"] = _one(forcing)
    view = {
        "id": record["id"],
        "pde_classification": record.get("pde_classification", {}),
        "pde": view_pde,
        "domain": oc.get("domain", {"type": "unit_square"}),
        "bc": published_bc,
        "output": oc.get("output", {}),
        "agent_knobs": [k for k in record.get("agent_knobs", []) if k.get("name") not in HIDDEN_KEYS],
    }
    return spec, view, [*u, *pressure] if solution else []


def _output_words(family: str, pressure: bool) -> str:
    if family == "elasticity":
        return "; the output is |u|, the displacement magnitude"
    if family in FLOW:
        return "; the output u is |u|, the velocity magnitude" + (", and p" if pressure else " (p is not compared)")
    return ""


def reference(spec: CaseSpec, u: list[sp.Expr]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The manufactured solution on the grid, per output field: `u` (a vector family's
    magnitude) and, for a flow record with a non-constant pressure, `p`."""
    coords = grid_coordinates(spec.grid)
    mask = domain_mask(spec.domain, spec.grid, spec.boundary)
    t = spec.time.t_end if spec.time else 0.0
    values = np.stack([compile_expr(str(c))(**coords, t=t) for c in u])
    ncomp = spec.grid.dim
    vector = spec.family in MAGNITUDES
    refs = {"u": np.sqrt((values[:ncomp] ** 2).sum(axis=0)) if vector else values[0]}
    if "p" in spec.output.fields:
        refs["p"] = values[ncomp]
    for arr in refs.values():
        arr[~mask] = np.nan
    return refs, mask


def published_values(view: dict[str, Any]) -> list[list[Any]]:
    """The published view's Dirichlet values, each a list of components: one (the blend, or a
    record's own data on `all`), or one per edge entry."""
    dirichlet = view["bc"].get("dirichlet")
    values = (
        []
        if dirichlet is None
        else [as_list(e.get("value", "0")) for e in (dirichlet if isinstance(dirichlet, list) else [dirichlet])]
    )  # periodic sides only: no boundary value at all
    if "laplacian" in view["bc"]:  # a biharmonic record's second condition, stated by us
        values.append(as_list(view["bc"]["laplacian"]["value"]))
    return values


def blend_error(view: dict[str, Any], spec: CaseSpec, ref: np.ndarray, mask: np.ndarray) -> float:
    """The published-shape boundary value (each, for per-edge data), evaluated on the whole
    grid, as an answer: the smallest error of its best multiple."""
    coords = grid_coordinates(spec.grid)
    t = spec.time.t_end if spec.time else 0.0
    errors = []
    for value in published_values(view):
        comps = [compile_expr(str(e))(**coords, t=t) for e in value]
        guess = np.sqrt(sum(c**2 for c in comps)) if len(comps) > 1 else comps[0]
        candidates = [guess, *comps] if len(comps) > 1 else [guess]
        errors += [best_multiple_error(c[mask], ref[mask]) for c in candidates]
    return min(errors, default=float("inf"))

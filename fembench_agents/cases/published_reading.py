"""What the import reads of a published record before it builds the case (cases/published.py):
its family, its domain as the track builds it (an axis-parallel `Domain`, or the kind's name of a
curved, slanted or 3D one with its pieces), its boundary conditions, and then each boundary
piece's data (traces of the solution, or of the published data) and which fields are compared.
Everything it cannot read is `Excluded` with the reason, here, before any solve."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from fembench_agents.cases import cube, published_cube
from fembench_agents.cases.cube_data import Z
from fembench_agents.cases.domains import Domain
from fembench_agents.cases.model import FLOW_FAMILIES as FLOW
from fembench_agents.cases.model import TRANSIENT_VARIANTS
from fembench_agents.cases.published_boundary import ImportedBoundary, imported_boundary
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
    show,
    sym,
    track_domain,
)
from fembench_agents.cases.published_periodic import directions, partners, periodic_traces
from fembench_agents.cases.published_terms import NATURAL_ON_UNLISTED, biharmonic_pair

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
# The published output of a vector family is a magnitude (ny, nx), kept as our `u`.
MAGNITUDES = {
    "elasticity": "displacement_magnitude",
    "stokes": "velocity_magnitude",
    "navier_stokes": "velocity_magnitude",
}


def checked(text: str) -> str:
    """A published expression kept as written, once our expression language reads it."""
    sym(text)
    return show(text)


def one(values: list[str]) -> str | list[str]:
    return values[0] if len(values) == 1 else values


@dataclass(frozen=True)
class PublishedRecord:
    """A published record as read: ours where the names differ (the family), the published
    parts as published (oracle_config's pde, bc, output grid)."""

    id: str
    oc: dict[str, Any]
    pde: dict[str, Any]
    grid: dict[str, Any]
    published_family: str
    family: str
    in_3d: bool
    track: Domain | str  # an axis-parallel domain, or the kind's name of one given by its geometry
    geo: ImportedBoundary | None  # the pieces of a domain given by its geometry (or the cube's)
    timed: bool
    manufactured: dict[str, Any]
    solution: Any
    bc: dict[str, Any]
    dirichlet: Any
    periodic: dict[str, str]  # piece -> its partner
    box: tuple[float, float, float, float] | None  # an axis-parallel domain's box

    @property
    def domain(self) -> Domain | None:
        return self.track if isinstance(self.track, Domain) else None

    @property
    def piece_names(self) -> list[str]:
        if self.geo is not None:
            return [n for n, _ in self.geo.pieces]
        assert self.domain is not None
        return [n for n, _, _ in self.domain.pieces]


def read_record(record: dict[str, Any]) -> PublishedRecord:
    """The record's family, domain and boundary conditions as the track reads them; raises
    Excluded for what it does not read."""
    oc = record.get("oracle_config") or {}
    pde = oc.get("pde") or {}
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
    geo = imported_boundary(track, oc.get("domain") or {}) if isinstance(track, str) else None
    if family in STEADY_HERE and pde.get("time"):
        raise Excluded(f"transient {published_family}: the track's family is steady")
    timed = family in TIMED_HERE or (family in TRANSIENT_VARIANTS and bool(pde.get("time")))
    manufactured = pde.get("manufactured_solution") or {}
    solution = manufactured.get("u")
    bc = oc.get("bc") or {}
    periodic: dict[str, str] = {}
    box = None
    if isinstance(track, str):
        if "periodic" in bc:
            raise Excluded(f"boundary condition not read: periodic sides on a {track}")
    else:
        box = domain_box(track, grid)
        periodic = partners(directions(bc, box)) if "periodic" in bc else {}
        if periodic and track.name != "rectangle":
            raise Excluded(f"boundary condition not read: periodic sides on a {track.name}")
    dirichlet = bc.get("dirichlet")
    if set(bc) - {"dirichlet", "periodic"} or (
        not periodic and (not isinstance(dirichlet, dict | list) or not dirichlet)
    ):
        raise Excluded("boundary condition not read: only Dirichlet data on the whole boundary")
    if in_3d and not solution and family not in published_cube.SERIES_FAMILIES:  # heat: cube_series.py
        whole_data = dirichlet if isinstance(dirichlet, dict) else {}
        raise Excluded(published_cube.without_reference(family, pde, whole_data))
    return PublishedRecord(
        record["id"], oc, pde, grid, published_family, family, in_3d, track, geo, timed,
        manufactured, solution, bc, dirichlet, periodic, box,
    )  # fmt: skip


@dataclass
class BoundaryData:
    """Each piece's data: `traces` the values of the solution's (or the published data's)
    components there, `kinds` each piece's condition, `shown` per-edge values as the record
    writes them (empty unless it gives per-edge data), `u` the solution's components (or the
    data a record without a solution gives on the whole boundary)."""

    u: list[sp.Expr]
    traces: dict[str, list[sp.Expr]]
    kinds: dict[str, str]
    shown: dict[str, list[str]] = field(default_factory=dict)


def boundary_data(r: PublishedRecord) -> BoundaryData:
    kinds = {piece: "dirichlet" for piece in r.piece_names}
    domain, family = r.domain, r.family
    if r.periodic:
        # the record's own Dirichlet sides, valued by their data; the published view keeps bc as
        # published (per-edge traces and periodic pairs: data, not the answer)
        assert domain is not None and r.box is not None
        u, traces = periodic_traces(r.pde, r.solution, r.dirichlet, r.periodic, domain, r.box)
        if family == "biharmonic":  # the Dirichlet sides carry [u, lap u], as every biharmonic piece
            pair = biharmonic_pair(u if r.solution else [], u[0])
            traces = {n: [restricted(c, a, b) for c in pair] for n, a, b in domain.pieces if n in traces}
        return BoundaryData(u, traces, kinds)
    entries = dirichlet_entries(r.dirichlet)
    if entries is None:
        # Without a manufactured solution the published Dirichlet value is data, not the answer:
        # each boundary piece gets it restricted there, and the reference is a checked fine solve.
        whole: Any = r.dirichlet if isinstance(r.dirichlet, dict) else (r.dirichlet or [{}])[0]
        u = [sym(e) for e in as_list(r.solution or whole.get("value", "0"))]
        on_boundary = biharmonic_pair(u if r.solution else [], u[0]) if family == "biharmonic" else u
        if r.geo is not None:  # segments and arcs of a published geometry (published_boundary.py)
            traces = {piece: [r.geo.trace(c, where) for c in on_boundary] for piece, where in r.geo.pieces}
        else:
            assert domain is not None
            traces = {piece: [restricted(c, a, b) for c in on_boundary] for piece, a, b in domain.pieces}
        return BoundaryData(u, traces, kinds)
    # per-edge data on the square, each piece its edge's value as written; unlisted edges natural
    if family == "biharmonic":
        raise Excluded("boundary condition not read: per-edge Dirichlet data for a biharmonic record")
    name = domain.name if domain is not None else str(r.track)
    traces, kinds = edge_values(entries, name, r.solution, NATURAL_ON_UNLISTED.get(family))
    shown = {EDGES[e["on"]]: [checked(str(v)) for v in as_list(e.get("value", "0"))] for e in entries}
    shown |= {piece: ["0"] * len(traces[piece]) for piece, k in kinds.items() if k != "dirichlet"}
    if len({len(v) for v in traces.values()}) != 1:
        raise Excluded("boundary condition not read: per-edge values of different lengths")
    return BoundaryData(next(iter(traces.values())), traces, kinds, shown)


def compared_fields(r: PublishedRecord, data: BoundaryData) -> tuple[list[sp.Expr], bool]:
    """The manufactured pressure kept as a reference field (empty where there is none to compare),
    and whether the case compares a pressure `p` at all; raises Excluded where the record's output
    or its flow solution is not read."""
    family, u = r.family, data.u
    field_name = (r.oc.get("output") or {}).get("field")
    vector = family in MAGNITUDES
    components, magnitude = (published_cube.COMPONENTS, published_cube.MAGNITUDE_FIELD) if r.in_3d else (2, None)
    if len(u) != (components if vector else 1) or (field_name == (magnitude or MAGNITUDES.get(family))) != vector:
        raise Excluded(
            f"output not read: field {field_name!r} for a {r.published_family} solution of {len(u)} component(s)"
        )
    # The pressure of a flow record is compared up to a constant (FieldSpec.up_to_constant); a constant
    # manufactured pressure (p = 0) leaves nothing to compare, its velocity is the whole reference.
    pressure: list[sp.Expr] = []
    if family in FLOW and r.solution:
        if "p" not in r.manufactured:
            raise Excluded("output not read: a flow record's manufactured solution without a pressure p")
        div = sp.simplify(sum((sp.diff(c, s) for c, s in zip(u, (X, Y, Z), strict=False)), sp.Integer(0)))
        if div != 0:  # stokes_3d_multifreq: div u = -2 pi cos(pi x) cos(2 pi y) cos(pi z)
            raise Excluded(f"manufactured velocity not divergence-free: div u = {div}; no flow solution has it")
        p = sym(r.manufactured["p"])
        # On the cube the published output (u_mag) is the whole reference: Taylor-Hood's P1 pressure on
        # the 8^3 calibration mesh of a 16^3 grid is 6% off where the viscous term dominates, and as the
        # largest field error it would loosen the velocity's target past the face blend (docs/pde_import.md).
        pressure = [] if r.in_3d or not (p.free_symbols & {X, Y, Z}) else [p]
    # A numerical flow reference has its p, unless the boundary data jumps at a corner (the lid of a
    # cavity): the pressure there grows as 1/r, is not square-integrable, and never converges in L2.
    # Nor where an open (do-nothing) edge meets a wall: the pressure is singular at that corner too,
    # and the published output is the velocity magnitude alone. (One value on the whole boundary of a
    # published geometry is continuous: only per-edge data on our square can jump.)
    open_edge = any(k != "dirichlet" for k in data.kinds.values())
    jumps = r.domain is not None and bool(corner_jumps(r.domain, data.traces))
    compare_p = bool(pressure) or (family in FLOW and not r.solution and not open_edge and not jumps)
    return pressure, compare_p

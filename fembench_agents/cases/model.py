"""Typed records of the PDE track.

Three shapes, three audiences:
- `CaseFile`: what a person writes (cases/definitions/<id>.toml).
- `CaseSpec`: what a solver agent sees (cases/case_specs.jsonl; its model is cases/case_spec.py).
  Never holds the manufactured solution, a reference value, a threshold or a calibration figure.
- `HiddenRecord`: what only the evaluator reads (cases/hidden/<id>.json, beside
  the reference array <id>.npz). Machine times (t_base) live elsewhere (see timing.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

SCHEMA_VERSION = 1

Family = Literal[
    "poisson",
    "heat",
    "convection_diffusion",
    "reaction_diffusion",
    "elasticity",
    "helmholtz",
    "biharmonic",
    "stokes",
    "navier_stokes",
    "burgers",
    "wave",
]
DomainName = Literal["unit_square", "l_shape", "square_hole", "channel_with_step", "cross", "unit_cube"]
# Our own curved domains: published kinds with geometry of ours inside the unit square (own_curved.py)
CurvedDomainName = Literal["circle", "annulus", "square_with_hole"]
# Published domains given by their geometry (cases/published_shapes.py): an imported case's domain keeps the
# published type and geometry_params, and its name is the published type.
PublishedDomainName = Literal[
    "circle", "annulus", "eccentric_annulus", "sector", "dumbbell", "multi_hole", "square_with_hole", "star", "gear"
]
# An imported case's domain, built from its published geometry (published_domains.py): an L-shape
# or a square with a hole keeps its kind's name with its own polygons; these two are not ours.
ImportedDomainName = Literal["rectangle", "t_junction"]
Expr = str  # an expression in x, y (z on the unit cube; t, u where the family says so); see expressions.py
Coefficient = Expr | float | list[Expr]

FAMILIES: tuple[str, ...] = Family.__args__  # type: ignore[attr-defined]
DOMAINS: tuple[str, ...] = DomainName.__args__  # type: ignore[attr-defined]
CURVED_DOMAINS: tuple[str, ...] = CurvedDomainName.__args__  # type: ignore[attr-defined]
# our domains whose size and placement a case file may give (`geometry`, own_geometry.py)
GEOMETRY_DOMAINS: tuple[str, ...] = ("l_shape", "square_hole", *CURVED_DOMAINS)
TIME_FAMILIES = ("heat", "burgers", "wave")
# steady unless the case gives a time interval: then du/dt joins the operator (a transient variant)
TRANSIENT_VARIANTS = ("convection_diffusion", "reaction_diffusion")
FLOW_FAMILIES = ("stokes", "navier_stokes")  # velocity u (2, ny, nx) and pressure p (ny, nx)
VECTOR_FAMILIES = ("elasticity", *FLOW_FAMILIES)


class FrozenModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GridSpec(FrozenModel):
    """The evaluation grid: x = linspace(bbox[0], bbox[1], nx), y = linspace(bbox[2], bbox[3], ny)
    and, on a 3D grid, z = linspace(bbox[4], bbox[5], nz). A published record keeps its own box
    (a disk of radius 0.8 about the origin is gridded on [-0.8, 0.8]^2)."""

    nx: int = Field(ge=9, le=257)
    ny: int = Field(ge=9, le=257)
    nz: int | None = Field(default=None, ge=9, le=257)
    bbox: tuple[float, ...] = (0.0, 1.0, 0.0, 1.0)

    @model_validator(mode="after")
    def _box(self) -> GridSpec:
        want = 4 if self.nz is None else 6
        if len(self.bbox) != want:
            raise ValueError(f"bbox must have {want} values for a {want // 2}D grid (nz {self.nz}); got {self.bbox}")
        if any(not self.bbox[k] < self.bbox[k + 1] for k in range(0, want, 2)):
            raise ValueError(
                f"bbox must be [x0, x1, y0, y1(, z0, z1)] with each lower bound below its upper; got {self.bbox}"
            )
        return self

    @model_serializer(mode="wrap")
    def _nz_only_in_3d(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A 2D grid reads as it did before 3D grids existed (case_specs.jsonl byte for byte)."""
        data: dict[str, Any] = handler(self)
        if data.get("nz") is None:
            data.pop("nz", None)
        return data

    @property
    def dim(self) -> int:
        return 2 if self.nz is None else 3

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of a scalar output on this grid: (ny, nx), or (nz, ny, nx) in 3D."""
        return (self.ny, self.nx) if self.nz is None else (self.nz, self.ny, self.nx)


def _aligned(grid: GridSpec, domain: str) -> None:
    # Domain corners sit at multiples of 1/8, so every grid line must hit them. Our own case
    # files (CaseFile) always keep to it; a CaseSpec need not: an imported case keeps its published
    # grid (50 x 50, or 100 x 100 on the L-shape, whose re-entrant corner (0.5, 0.5) is no grid point).
    if (grid.nx - 1) % 8 or (grid.ny - 1) % 8 or (grid.nz is not None and (grid.nz - 1) % 8):
        what = "nx - 1 and ny - 1" if grid.nz is None else "nx - 1, ny - 1 and nz - 1"
        raise ValueError(f"{what} must be multiples of 8 (domain corners lie on the grid)")
    cube = domain == "unit_cube"  # the one 3D domain (cube.py)
    if cube != (grid.nz is not None):
        raise ValueError(
            f"a case on {domain} needs a {'3D grid (nz)' if cube else '2D grid (no nz)'}; got nz {grid.nz}"
        )
    if cube and grid.bbox != (0.0, 1.0, 0.0, 1.0, 0.0, 1.0):
        raise ValueError(f"bbox must be [0, 1, 0, 1, 0, 1] for the unit cube; got {list(grid.bbox)}")
    if not cube and grid.bbox != (0.0, 1.0, 0.0, 1.0):
        raise ValueError(f"bbox must be [0, 1, 0, 1] for the track's own domains; got {list(grid.bbox)}")


class TimeSpec(FrozenModel):
    t0: float = 0.0
    t_end: float

    @model_validator(mode="after")
    def _order(self) -> TimeSpec:
        if not self.t_end > self.t0:
            raise ValueError("time.t_end must be greater than time.t0")
        return self


class Manufactured(FrozenModel):
    """The exact solution: u (scalar, or [ux, uy] for elasticity); for Stokes and
    Navier-Stokes a stream function (u = (d stream/dy, -d stream/dx), divergence-free
    by construction) and a pressure p; on the unit cube a Stokes velocity [ux, uy, uz]
    (checked divergence-free: 3D has no scalar stream function) and a pressure p."""

    u: Expr | list[Expr] | None = None
    stream: Expr | None = None
    p: Expr | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Manufactured:
        if (self.u is None) == (self.stream is None) or (self.stream is not None and self.p is None):
            raise ValueError("give either u (with p for a flow on the unit cube), or stream and p")
        return self


class ProblemData(FrozenModel):
    """The data of a case without a closed-form solution (its reference is a fine
    numerical solve): forcing, Dirichlet values per boundary piece name ("*" for
    every piece not named), initial data for time-dependent families."""

    forcing: Expr | list[Expr]
    boundary: dict[str, Expr | list[Expr]]
    initial: Expr | list[Expr] | None = None


class NaturalCondition(FrozenModel):
    """A boundary piece of a case file that is not Dirichlet: its data (the flux, or the flux
    plus alpha u) is derived from the manufactured solution, or given in `data.boundary`."""

    kind: Literal["neumann", "robin", "do-nothing"]
    alpha: Expr | float | None = None

    @model_validator(mode="after")
    def _alpha_only_for_robin(self) -> NaturalCondition:
        if (self.kind == "robin") != (self.alpha is not None):
            raise ValueError("alpha is given for a robin piece and only there")
        return self


class CaseFile(FrozenModel):
    """A human-written case definition."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    family: Family
    domain: DomainName | CurvedDomainName
    coefficients: dict[str, Coefficient] = {}
    manufactured: Manufactured | None = None
    data: ProblemData | None = None  # instead of `manufactured`: a numerical-reference case
    time: TimeSpec | None = None
    grid: GridSpec = GridSpec(nx=65, ny=65)
    libraries: tuple[str, ...] = ("numpy-scipy", "scikit-fem")
    natural: dict[str, NaturalCondition] = {}  # piece name -> its condition; every other piece is Dirichlet
    # the unit square's sides identified by translation: "x" the left and right, "y" the bottom and top
    periodic: tuple[Literal["x", "y"], ...] = ()
    note: str = ""  # for humans; never shown to a solver
    # the domain's size and placement as the published geometry_params of its kind (own_geometry.py);
    # None: the domain's fixed geometry
    geometry: dict[str, Any] | None = None
    # a flow's pressure scored beside its velocity (up to a constant); False: the velocity alone, as the
    # published Stokes records score it, where a re-entrant corner makes p singular and its L2 error stall
    pressure_compared: bool = True

    @field_validator("libraries")
    @classmethod
    def _some_library(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v:
            raise ValueError("libraries must name at least one track")
        return v

    @model_validator(mode="after")
    def _grid_aligned(self) -> CaseFile:
        _aligned(self.grid, self.domain)
        return self

    @model_validator(mode="after")
    def _geometry_of_a_kind_that_has_one(self) -> CaseFile:
        if self.geometry is not None and self.domain not in GEOMETRY_DOMAINS:
            raise ValueError(
                f"domain {self.domain} has a fixed geometry; `geometry` is for {', '.join(GEOMETRY_DOMAINS)}"
            )
        return self

    @model_validator(mode="after")
    def _periodic_on_the_square(self) -> CaseFile:
        if not self.periodic or (self.domain == "unit_square" and len(set(self.periodic)) == len(self.periodic)):
            return self
        got = f"{list(self.periodic)} on {self.domain}"
        raise ValueError(f"periodic sides are the unit square's, each direction once; got {got}")

    @model_validator(mode="after")
    def _pressure_of_a_flow(self) -> CaseFile:
        if not self.pressure_compared and self.family not in FLOW_FAMILIES:
            raise ValueError(f"pressure_compared is for {', '.join(FLOW_FAMILIES)}; {self.family} has no pressure")
        return self

    @model_validator(mode="after")
    def _one_reference(self) -> CaseFile:
        if (self.manufactured is None) == (self.data is None):
            raise ValueError("give exactly one of `manufactured` (exact solution) and `data` (numerical reference)")
        return self


class LibraryCalibration(FrozenModel):
    solver: str  # which calibration solver, with its resolution
    e_base: float  # its relative L2 error on the grid
    tau_acc: float  # max(alpha_acc * e_base, tau_min), materialised


class GateConfig(FrozenModel):
    alpha_acc: float = 10.0
    tau_min: float = 1e-6
    alpha_time: float = 3.0
    t_floor: float = 0.05  # seconds: t_base below this counts as this (noise floor)
    eps: float = 1e-300  # guards the relative error of a zero reference


class ReferenceCheck(FrozenModel):
    """How a numerical reference was accepted: solves at increasing refinement of the
    evaluation grid, each one's relative L2 distance to the finest, and the finest's
    own error estimate (its distance to the next coarser), which must lie far below
    the strictest accuracy threshold of the case."""

    solver: str
    refinements: tuple[int, ...]
    distances_to_finest: tuple[float, ...]
    error_estimate: float
    threshold: float  # the estimate had to be at most this


class PublishedThresholds(FrozenModel):
    """A published record's thresholds as the published evaluator reads them: the record's
    top-level `evaluation_config` only (it never reads one nested in `oracle_config`), each
    value as published or None where the record states none. How they become gates:
    gates.published_config."""

    accuracy_tolerance: float | None = None  # the accuracy multiplier of the oracle's error
    time_tolerance: float | None = None  # the time multiplier of the oracle's time
    tolerance: float | None = None  # legacy: the default of both multipliers


class HiddenRecord(FrozenModel):
    """Evaluator-only half of a case."""

    schema_version: int = SCHEMA_VERSION
    id: str
    reference_kind: Literal["manufactured", "numerical"] = "manufactured"
    solution: Expr | list[Expr] | None  # the manufactured solution; None for a numerical reference
    reference_check: ReferenceCheck | None = None  # numerical references only
    reference_file: str
    reference_sha256: str
    in_domain_points: int
    gates: GateConfig
    calibration: dict[str, LibraryCalibration]
    definition_sha256: str
    builder_version: int = 0  # a record is rebuilt when this or the definition's hash changes
    # Why what the solver sees gives the answer away (an imported case whose forcing is a
    # multiple of its solution, say): such a case is kept for the record and selected only
    # by its id, never by `all` or a pattern (runs.run.select_tasks).
    leak: str | None = None
    # An imported case's published thresholds (`--gates published` judges by them); None for our own.
    published: PublishedThresholds | None = None

    @model_serializer(mode="wrap")
    def _leak_only_when_marked(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A record written before `leak` or `published` existed reads the same and is rebuilt byte for byte."""
        data: dict[str, Any] = handler(self)
        for key in ("leak", "published"):
            if data.get(key) is None:
                data.pop(key, None)
        return data

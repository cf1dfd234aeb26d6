"""What a solver agent sees of a PDE case (`CaseSpec`, a line of cases/case_specs.jsonl): its
equation, coefficients, forcing, boundary pieces (segments, arcs or cube faces, each with its
kind and data), domain, evaluation grid and output contract. Never the manufactured solution, a
reference value, a threshold or a calibration figure (those are model.HiddenRecord's)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer, model_validator

from fembench_agents.cases.model import (
    SCHEMA_VERSION,
    Coefficient,
    DomainName,
    Expr,
    Family,
    FrozenModel,
    GridSpec,
    ImportedDomainName,
    PublishedDomainName,
    TimeSpec,
)

BoundaryKind = Literal["dirichlet", "neumann", "robin", "do-nothing", "periodic"]
BOUNDARY_KINDS: tuple[str, ...] = BoundaryKind.__args__  # type: ignore[attr-defined]
NATURAL_KINDS = ("neumann", "robin", "do-nothing")


def _without_none(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """A record written before these optional fields existed reads the same, byte for byte."""
    for key in keys:
        if data.get(key) is None:
            data.pop(key, None)
    return data


class Arc(FrozenModel):
    """The closed circular arc of points center + radius (cos a, sin a), a from `start` to `end`
    counter-clockwise (radians, start < end <= start + 2 pi: a whole circle is [0, 2 pi])."""

    center: tuple[float, float]
    radius: float = Field(gt=0)
    start: float
    end: float

    @model_validator(mode="after")
    def _span(self) -> Arc:
        if not 0 < self.end - self.start <= 2 * math.pi + 1e-12:
            raise ValueError(
                f"an arc runs counter-clockwise from start to at most start + 2 pi; got {self.start}, {self.end}"
            )
        return self


class Face(FrozenModel):
    """A closed face of the unit cube: the points with coordinate `axis` equal to `at`."""

    axis: Literal["x", "y", "z"]
    at: float


class BoundaryPiece(FrozenModel):
    """One piece of the boundary, a closed straight segment, a circular arc or a face of the unit
    cube, and its condition (the equation text of the case says what each kind means for its family): `dirichlet`
    u = value; `neumann` the flux k du/dn = value (n the outward unit normal; for elasticity the
    traction sigma n = value, traction-free when 0); `robin` k du/dn + alpha u = value;
    `do-nothing` for a flow nu du/dn - p n = value (an outflow: 0); `periodic` identified with
    its `partner` piece (a parallel segment of the same length) by translation, no data of its own."""

    name: str
    kind: BoundaryKind = "dirichlet"
    segment: tuple[tuple[float, float], tuple[float, float]] | None = None  # endpoints, closed segment
    arc: Arc | None = None
    face: Face | None = None  # 3D
    value: Expr | list[Expr] | None = None  # the data restricted to this piece, in x, y (z; and t)
    alpha: Expr | float | None = None  # a robin piece's coefficient, only there
    partner: str | None = None  # a periodic piece's image

    @model_validator(mode="after")
    def _condition(self) -> BoundaryPiece:
        if sum(place is not None for place in (self.segment, self.arc, self.face)) != 1:
            raise ValueError(f"boundary piece {self.name!r}: give exactly one of `segment`, `arc` (2D) and `face` (3D)")
        if self.kind == "periodic" and (self.partner is None or self.value is not None or self.segment is None):
            raise ValueError(f"periodic piece {self.name!r} is a segment, names its partner piece and has no value")
        if self.kind != "periodic" and (self.value is None or self.partner is not None):
            raise ValueError(f"{self.kind} piece {self.name!r} has a value and no partner")
        if (self.kind == "robin") != (self.alpha is not None):
            raise ValueError(f"boundary piece {self.name}: alpha is given for a robin piece and only there")
        return self

    @model_serializer(mode="wrap")
    def _only_what_the_kind_has(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A Dirichlet segment reads as it did before other kinds and arcs existed (case_specs.jsonl
        byte for byte)."""
        return _without_none(handler(self), ("segment", "arc", "face", "value", "alpha", "partner"))


class DomainSpec(FrozenModel):
    """The domain: a polygon with polygonal holes (ours, or an imported axis-parallel one), or a
    published domain given by its `type` and `geometry_params` as published (circle, annulus,
    star, ...; cases/published_shapes.py), whose polygonal loops, where it has any, are `outer` and `holes` too."""

    name: DomainName | ImportedDomainName | PublishedDomainName
    description: str
    outer: list[tuple[float, float]]  # counter-clockwise polygon; empty where the outer loop is curved
    holes: list[list[tuple[float, float]]] = []  # removed open polygons
    type: PublishedDomainName | None = None
    geometry_params: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _published_only_when_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_none(handler(self), ("type", "geometry_params"))


class FieldSpec(FrozenModel):
    shape: tuple[int, ...]
    dtype: str = "float64"
    # compared after subtracting the in-domain mean from both sides (a pressure fixed only up to a constant)
    up_to_constant: bool = False


class OutputContract(FrozenModel):
    fields: dict[str, FieldSpec]  # always "u", the primary unknown; a flow's pressure "p" too
    outside: Literal["nan"] = "nan"
    layout: str  # words for humans: axis order, grid coordinates

    @field_validator("fields")
    @classmethod
    def _has_u(cls, v: dict[str, FieldSpec]) -> dict[str, FieldSpec]:
        if "u" not in v:
            raise ValueError(f"an output contract has a field 'u' (the primary unknown); got {sorted(v)}")
        return v


class CaseSpec(FrozenModel):
    """Everything a solver agent may see about one case."""

    schema_version: int = SCHEMA_VERSION
    id: str
    family: Family
    equation: str
    coefficients: dict[str, Coefficient]
    forcing: Expr | list[Expr]
    boundary: list[BoundaryPiece]
    initial: Expr | list[Expr] | None = None
    time: TimeSpec | None = None
    domain: DomainSpec
    grid: GridSpec
    output: OutputContract
    libraries: tuple[str, ...]

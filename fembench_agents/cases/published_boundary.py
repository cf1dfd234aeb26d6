"""The boundary of an imported case on a curved or slanted published domain, given by its
geometry (cases/published_shapes.py: segments and arcs, their traces and blends in
cases/shape_blends.py), or on the unit cube (its six faces, their traces and the
3D Coons blend of cube_data.py). An axis-parallel domain (published_domains.track_domain returns its
Domain) takes published.py's own path instead: its segments, restricted traces and Gordon's
blend (cases/blends.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy as sp

from fembench_agents.cases import blend_algebra, cube, cube_data, shape_blends
from fembench_agents.cases.case_spec import Arc, BoundaryPiece, DomainSpec, Face
from fembench_agents.cases.model import Expr
from fembench_agents.cases.published_domains import Excluded
from fembench_agents.cases.published_shapes import published_shape
from fembench_agents.cases.shapes import GeometryError

Geometry = tuple[tuple[float, float], tuple[float, float]] | Arc | Face


@dataclass(frozen=True)
class ImportedBoundary:
    pieces: tuple[tuple[str, Geometry], ...]
    spec: DomainSpec
    _blend: Callable[[sp.Expr], sp.Expr | str] | None

    def trace(self, u: sp.Expr, geometry: Geometry) -> sp.Expr | str:
        """u restricted to a piece, in a form that does not determine the interior."""
        if isinstance(geometry, Face):
            return cube_data.face_trace(u, geometry)
        return blend_algebra.piece_trace(u, geometry)

    def blend(self, u: sp.Expr) -> sp.Expr | str:
        """The published view's one Dirichlet value: u on the whole boundary, built from its traces."""
        if self._blend is None:
            raise Excluded(f"published boundary value not built: no leak-free blend for the {self.spec.name} yet")
        try:
            return self._blend(u)
        except GeometryError as exc:
            raise Excluded(f"published boundary value not built: {self.spec.name}: {exc}") from None

    def piece(self, name: str, geometry: Geometry, value: Expr | list[Expr]) -> BoundaryPiece:
        if isinstance(geometry, Arc):
            return BoundaryPiece(name=name, arc=geometry, value=value)
        if isinstance(geometry, Face):
            return BoundaryPiece(name=name, face=geometry, value=value)
        return BoundaryPiece(name=name, segment=geometry, value=value)


# Kinds whose published value stays the manufactured solution, as published: the case is imported
# marked as leaking by the probe (shape_blends._star says why no compact blend is given).
AS_PUBLISHED = ("star", "gear")


def imported_boundary(name: str, domain: dict[str, Any]) -> ImportedBoundary:
    """`name` is the kind name published_domains.track_domain returns for a curved or slanted
    published `domain`, or the unit cube's."""
    if name == cube.CUBE:
        return ImportedBoundary(cube.FACES, cube.spec(), cube_data.coons_blend)
    shape = published_shape(domain)
    if name in AS_PUBLISHED:
        return ImportedBoundary(shape.pieces, shape.spec(), lambda u: u)
    return ImportedBoundary(shape.pieces, shape.spec(), lambda u: shape_blends.published_blend(shape, u))

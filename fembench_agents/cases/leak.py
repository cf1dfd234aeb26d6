"""The leak check. Every agent-visible expression of a case (forcing, each
boundary piece's data, whatever its kind, and a robin piece's alpha, each
coefficient, the initial data) is evaluated on the whole
evaluation grid (time-dependent ones at t_end), scaled by the least-squares
best scalar, and compared with the reference. If any of them would pass the
accuracy gate, the case leaks its solution."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fembench_agents.cases.case_spec import CaseSpec
from fembench_agents.cases.domains import grid_coordinates
from fembench_agents.cases.expressions import compile_expr


@dataclass(frozen=True)
class LeakProbe:
    source: str  # e.g. forcing[0], boundary[left][1], coefficients[k]
    error: float  # relative L2 error of the best scalar multiple


def _exprs(spec: CaseSpec) -> Iterator[tuple[str, Any]]:
    def comps(name: str, v: Any) -> Iterator[tuple[str, Any]]:
        if isinstance(v, list):
            for i, e in enumerate(v):
                yield f"{name}[{i}]", e
        else:
            yield name, v

    yield from comps("forcing", spec.forcing)
    for piece in spec.boundary:
        if piece.value is not None:  # a periodic piece carries no data, only its partner's name
            yield from comps(f"boundary[{piece.name}]", piece.value)
        if piece.alpha is not None:
            yield f"boundary[{piece.name}].alpha", piece.alpha
    for k, v in sorted(spec.coefficients.items()):
        yield from comps(f"coefficients[{k}]", v)
    if spec.initial is not None:
        yield from comps("initial", spec.initial)


def _candidates(spec: CaseSpec, ref: np.ndarray, mask: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
    coords = grid_coordinates(spec.grid)
    t = spec.time.t_end if spec.time else 0.0
    ncomp = ref.shape[0] if ref.ndim == spec.grid.dim + 1 else 1
    values: list[tuple[str, np.ndarray]] = []
    for name, e in _exprs(spec):
        fn = compile_expr(e)
        try:
            v = fn(**coords, t=t)
        except NameError:  # a reaction term R(u): try it on the grid coordinates' range too
            v = fn(u=coords["x"] + coords["y"])
        values.append((name, v[mask]))
    for name, v in values:
        if ncomp == 1:
            yield name, v[None]
        else:
            for c in range(ncomp):
                w = np.zeros((ncomp, v.size))
                w[c] = v
                yield f"{name} as component {c}", w
            yield f"{name} in every component", np.tile(v, (ncomp, 1))
    if ncomp > 1:  # vector-valued data as given
        groups: dict[str, list[np.ndarray]] = {}
        for name, v in values:
            if name.endswith("]") and "[" in name and name.rsplit("[", 1)[1][:-1].isdigit():
                groups.setdefault(name.rsplit("[", 1)[0], []).append(v)
        for base, vs in groups.items():
            if len(vs) == ncomp:
                yield f"{base} as a vector", np.stack(vs)


def best_multiple_error(v: np.ndarray, ref: np.ndarray, centre: bool = False) -> float:
    """Relative error of the best c * v against ref; with `centre` (a field fixed up to a
    constant) both are compared after removing their means, i.e. the best c * v + d."""
    v, ref = v.ravel(), ref.ravel()
    if not np.isfinite(v).all():
        return float("inf")
    if centre:
        v, ref = v - v.mean(), ref - ref.mean()
    vv = float(v @ v)
    c = float(v @ ref) / vv if vv > 0 else 0.0
    return float(np.linalg.norm(c * v - ref) / np.linalg.norm(ref))


def probe(spec: CaseSpec, reference: np.ndarray, mask: np.ndarray, centre: bool = False) -> list[LeakProbe]:
    ref = reference[..., mask]
    if ref.ndim == 1:
        ref = ref[None]
    return [LeakProbe(name, best_multiple_error(v, ref, centre)) for name, v in _candidates(spec, reference, mask)]


def leaks(spec: CaseSpec, reference: Mapping[str, np.ndarray], mask: np.ndarray, tau: float) -> list[LeakProbe]:
    """The probes that would pass an accuracy gate with threshold tau, for every output
    field (a field compared up to a constant is probed up to a constant)."""
    found = []
    for name, field in spec.output.fields.items():
        for p in probe(spec, reference[name], mask, field.up_to_constant):
            if p.error <= tau:
                found.append(p if len(spec.output.fields) == 1 else LeakProbe(f"{p.source} as {name}", p.error))
    return found

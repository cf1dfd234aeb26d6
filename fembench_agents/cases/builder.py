"""Case file -> (agent-visible CaseSpec, evaluator-only HiddenRecord, reference).

Building is deterministic: sympy derives the data, the reference is the
manufactured solution on the grid (NaN outside the domain), each library's
calibration solver runs once and its error, rounded to four significant
digits, becomes e_base. No time, host or path enters a record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sympy as sp

from fembench_agents.cases import gates, store
from fembench_agents.cases.domains import DOMAINS, grid_mask, grid_points
from fembench_agents.cases.expressions import compile_expr
from fembench_agents.cases.leak import leaks
from fembench_agents.cases.manufactured import EQUATIONS, CaseDefinitionError, derive, show
from fembench_agents.cases.model import (
    BoundaryPiece,
    CaseFile,
    CaseSpec,
    FieldSpec,
    GateConfig,
    HiddenRecord,
    LibraryCalibration,
    OutputContract,
)
from fembench_agents.cases.tracks import get_track

LAYOUT = (
    "rows are y, columns are x: u[..., j, i] is the value at (x_i, y_j), "
    "x = linspace(bbox[0], bbox[1], nx), y = linspace(bbox[2], bbox[3], ny); NaN outside the domain"
)


@dataclass(frozen=True)
class Built:
    spec: CaseSpec
    hidden: HiddenRecord
    reference: dict[str, np.ndarray]
    npz: bytes


def _one(values: list[str]) -> str | list[str]:
    return values[0] if len(values) == 1 else values


def make_spec(case: CaseFile) -> tuple[CaseSpec, list[sp.Expr]]:
    domain = DOMAINS[case.domain]
    d = derive(case, domain)
    pieces = [
        BoundaryPiece(name=name, segment=(a, b), value=_one([show(e) for e in vals]))
        for (name, a, b), vals in zip(domain.pieces, d.boundary, strict=True)
    ]
    shape = (case.grid.ny, case.grid.nx)
    fields = {"u": FieldSpec(shape=(2, *shape) if case.family == "elasticity" else shape)}
    spec = CaseSpec(
        id=case.id,
        family=case.family,
        equation=EQUATIONS[case.family],
        coefficients=dict(case.coefficients),
        forcing=_one([show(e) for e in d.forcing]),
        boundary=pieces,
        initial=None if d.initial is None else _one([show(e) for e in d.initial]),
        time=case.time,
        domain=domain.spec(),
        grid=case.grid,
        output=OutputContract(fields=fields, layout=LAYOUT),
        libraries=case.libraries,
    )
    return spec, d.solution


def reference(case: CaseFile, solution: list[sp.Expr]) -> np.ndarray:
    X, Y = grid_points(case.grid)
    mask = grid_mask(DOMAINS[case.domain], case.grid)
    t = case.time.t_end if case.time else 0.0
    ref = np.stack([compile_expr(str(e))(x=X, y=Y, t=t) for e in solution])
    ref[:, ~mask] = np.nan
    return ref if len(solution) > 1 else ref[0]


def reject_eigenfunction(case: CaseFile, spec: CaseSpec, ref: np.ndarray, mask: np.ndarray) -> None:
    """A forcing that is a scalar multiple of the solution (an eigenfunction) is refused."""
    X, Y = grid_points(case.grid)
    t = case.time.t_end if case.time else 0.0
    f = spec.forcing if isinstance(spec.forcing, list) else [spec.forcing]
    fv = np.stack([compile_expr(e)(x=X, y=Y, t=t)[mask] for e in f]).ravel()
    r = ref[..., mask].ravel()
    if float(fv @ fv) == 0.0:
        raise CaseDefinitionError(f"{case.id}: the forcing vanishes: the solution is harmonic-like; choose another")
    c = float(fv @ r) / float(fv @ fv)
    if np.linalg.norm(c * fv - r) <= 1e-8 * np.linalg.norm(r):
        raise CaseDefinitionError(
            f"{case.id}: the forcing is a multiple of the manufactured solution "
            "(an eigenfunction); choose a solution that is not"
        )


def _round(v: float) -> float:
    return float(f"{v:.4e}")


def build_case(case: CaseFile, definition_bytes: bytes, config: GateConfig | None = None) -> Built:
    config = config or GateConfig()
    spec, solution = make_spec(case)
    ref = reference(case, solution)
    mask = grid_mask(DOMAINS[case.domain], case.grid)
    reject_eigenfunction(case, spec, ref, mask)
    spec_dict = json.loads(spec.model_dump_json())
    calib: dict[str, LibraryCalibration] = {}
    for lib in case.libraries:
        out = get_track(lib).calibration_solver()(spec_dict)
        err = gates.relative_l2(out["u"], ref, mask)
        if not np.isfinite(err):
            raise CaseDefinitionError(f"{case.id}: calibration solver of {lib} returned non-finite values")
        info = out.get("solver_info", {})
        name = f"{lib}:{info.get('method', 'solver')}@{info.get('mesh_resolution', '?')}"
        e = _round(err)
        calib[lib] = LibraryCalibration(solver=name, e_base=e, tau_acc=_round(gates.tau_acc(e, config)))
    worst = max(c.tau_acc for c in calib.values())
    found = leaks(spec, ref, mask, worst)
    if found:
        raise CaseDefinitionError(
            f"{case.id}: agent-visible data pass the accuracy gate: "
            + ", ".join(f"{p.source} (error {p.error:.2e})" for p in found)
        )
    arrays = {"u": ref}
    npz = store.npz_bytes(arrays)
    hidden = HiddenRecord(
        id=case.id,
        solution=_one([str(e) for e in solution]),
        reference_file=f"{case.id}.npz",
        reference_sha256=store.sha256(npz),
        in_domain_points=int(mask.sum()),
        gates=config,
        calibration=calib,
        definition_sha256=store.sha256(definition_bytes),
    )
    return Built(spec=spec, hidden=hidden, reference=arrays, npz=npz)


def build_all(cases_dir: Path, only: list[str] | None = None) -> list[Built]:
    """Build every case (or those named) and write the records; returns what was built."""
    cases = store.load_definitions(cases_dir)
    if only:
        unknown = sorted(set(only) - {c.id for c in cases})
        if unknown:
            raise store.CaseStoreError(f"unknown case ids: {', '.join(unknown)}")
    built = []
    for case in cases:
        if only and case.id not in only:
            continue
        raw = (cases_dir / store.DEFINITIONS / f"{case.id}.toml").read_bytes()
        built.append(build_case(case, raw))
    write(cases_dir, built, partial=bool(only))
    return built


def write(cases_dir: Path, built: list[Built], partial: bool = False) -> None:
    hidden_dir = cases_dir / store.HIDDEN
    for b in built:
        store.write_if_changed(
            hidden_dir / f"{b.spec.id}.json", store.dumps(json.loads(b.hidden.model_dump_json())).encode()
        )
        store.write_if_changed(hidden_dir / b.hidden.reference_file, b.npz)
    specs = {b.spec.id: b.spec for b in built}
    if partial and (cases_dir / store.SPECS_FILE).exists():
        for old in store.load_specs(cases_dir):
            specs.setdefault(old.id, old)
    lines = [store.dumps_line(json.loads(specs[k].model_dump_json())) for k in sorted(specs)]
    store.write_if_changed(cases_dir / store.SPECS_FILE, ("\n".join(lines) + "\n").encode())

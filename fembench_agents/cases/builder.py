"""Case file -> (agent-visible CaseSpec, evaluator-only HiddenRecord, reference).

Building is deterministic: sympy derives the data, the reference is the
manufactured solution on the grid (NaN outside the domain) or, for a case
given by its data alone, a checked fine solve (numerical.py), each library's
calibration solver runs once and its error, rounded to four significant
digits, becomes e_base. No time, host or path enters a record.

Byte for byte, a rebuild reproduces a record on the machine that built it.
Another machine evaluates the same expressions and solves with other kernels
(numpy's SIMD exp and sin on AVX-512, BLAS blocking), which differ in the last
bits of the reference and can flip the last kept digit of an e_base:
`same_record` calls that the same record, and anything else a difference.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp

from fembench_agents.cases import gates, numerical, store
from fembench_agents.cases.case_spec import BoundaryPiece, CaseSpec, FieldSpec, OutputContract
from fembench_agents.cases.cube import CUBE
from fembench_agents.cases.cube_cases import cube_spec
from fembench_agents.cases.domains import grid_coordinates
from fembench_agents.cases.expressions import check_expr, compile_expr
from fembench_agents.cases.leak import leaks
from fembench_agents.cases.manufactured import (
    CaseDefinitionError,
    boundary_kinds,
    case_equation,
    check_time,
    derive,
    show,
)
from fembench_agents.cases.model import (
    FLOW_FAMILIES,
    VECTOR_FAMILIES,
    CaseFile,
    GateConfig,
    HiddenRecord,
    LibraryCalibration,
    ReferenceCheck,
)
from fembench_agents.cases.numerical import data_pieces
from fembench_agents.cases.own_curved import case_mask, curved_spec
from fembench_agents.cases.own_geometry import CURVED, polygon
from fembench_agents.cases.own_periodic import periodic_partners
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


BUILDER_VERSION = 2  # bump when a change here changes what a definition builds to

REFERENCE_RTOL = 1e-9  # of the field's largest value; the gates' tolerances are >= 1e-6 relative
RECORD_RTOL = 1e-3  # numbers kept to five significant digits: one flip of the last


def same_record(built: Built, spec: CaseSpec, hidden: HiddenRecord, reference: dict[str, np.ndarray]) -> bool:
    """Whether a fresh build is the committed record up to the last bits of
    floating point (see the module text): the same spec, the same hidden record
    but for the reference's hash and numbers within RECORD_RTOL, the same
    reference fields with NaN at the same points and values within
    REFERENCE_RTOL of the field's largest."""
    if built.spec != spec or set(built.reference) != set(reference):
        return False
    for name, fresh in built.reference.items():
        committed = reference[name]
        if fresh.shape != committed.shape or not np.array_equal(np.isnan(fresh), np.isnan(committed)):
            return False
        scale = float(np.nanmax(np.abs(committed), initial=0.0))
        if np.nanmax(np.abs(fresh - committed), initial=0.0) > REFERENCE_RTOL * scale:
            return False
    ours = json.loads(built.hidden.model_dump_json(exclude={"reference_sha256"}))
    theirs = json.loads(hidden.model_dump_json(exclude={"reference_sha256"}))
    return _same_numbers(ours, theirs)


def _same_numbers(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_numbers(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_numbers(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= RECORD_RTOL * max(abs(a), abs(b))
    return type(a) is type(b) and a == b


def _one(values: list[str]) -> str | list[str]:
    return values[0] if len(values) == 1 else values


def _contract(case: CaseFile) -> OutputContract:
    shape = (case.grid.ny, case.grid.nx)
    fields = {"u": FieldSpec(shape=(2, *shape) if case.family in VECTOR_FAMILIES else shape)}
    if case.family in FLOW_FAMILIES and case.pressure_compared:
        fields["p"] = FieldSpec(shape=shape, up_to_constant=True)
    return OutputContract(fields=fields, layout=LAYOUT)


def _expr_text(value: Any) -> Any:
    for e in value if isinstance(value, list) else [value]:
        check_expr(str(e))
    return value


def make_spec(case: CaseFile) -> tuple[CaseSpec, list[sp.Expr] | None]:
    if case.domain in CURVED:
        return curved_spec(case, _contract(case))
    if case.domain == CUBE:
        return cube_spec(case)
    domain = polygon(case.domain, case.geometry, case.grid)
    if case.data is not None:
        data = case.data
        values = data_pieces(data.boundary, [n for n, _, _ in domain.pieces], case.id)
        boundary = [_expr_text(v) for v in values]
        forcing, initial, solution = _expr_text(data.forcing), data.initial, None
        check_time(case)
        if (initial is None) != (case.time is None):
            raise CaseDefinitionError(f"{case.id}: a case with a time interval needs `data.initial`, and only it")
    else:
        d = derive(case, domain)
        boundary = [_one([show(e) for e in vals]) for vals in d.boundary]
        forcing = _one([show(e) for e in d.forcing])
        initial = None if d.initial is None else _one([show(e) for e in d.initial])
        solution = d.solution
    kinds = boundary_kinds(case, domain)
    partner = periodic_partners(case, solution)
    kinds = ["periodic" if name in partner else k for (name, _, _), k in zip(domain.pieces, kinds, strict=True)]
    pieces = [
        BoundaryPiece(
            name=name,
            kind=kind,  # type: ignore[arg-type]
            segment=(a, b),
            value=None if name in partner else value,
            alpha=case.natural[name].alpha if name in case.natural else None,
            partner=partner.get(name),
        )
        for (name, a, b), value, kind in zip(domain.pieces, boundary, kinds, strict=True)
    ]
    spec = CaseSpec(
        id=case.id,
        family=case.family,
        equation=case_equation(case, tuple(kinds)),
        coefficients=dict(case.coefficients),
        forcing=forcing,
        boundary=pieces,
        initial=initial,
        time=case.time,
        domain=domain.spec(),
        grid=case.grid,
        output=_contract(case),
        libraries=case.libraries,
    )
    return spec, solution


def reference(case: CaseFile, solution: list[sp.Expr]) -> dict[str, np.ndarray]:
    coords = grid_coordinates(case.grid)
    mask = case_mask(case.domain, case.grid, case.geometry)
    t = case.time.t_end if case.time else 0.0
    ref = np.stack([compile_expr(str(e))(**coords, t=t) for e in solution])
    ref[:, ~mask] = np.nan
    if case.family in FLOW_FAMILIES:
        return {"u": ref[:-1], "p": ref[-1]}  # the velocity's two or three components, then p
    return {"u": ref if len(solution) > 1 else ref[0]}


def reject_eigenfunction(case: CaseFile, spec: CaseSpec, ref: np.ndarray, mask: np.ndarray) -> None:
    """A forcing that is a scalar multiple of the solution (an eigenfunction) is refused."""
    coords = grid_coordinates(case.grid)
    t = case.time.t_end if case.time else 0.0
    f = spec.forcing if isinstance(spec.forcing, list) else [spec.forcing]
    fv = np.stack([compile_expr(e)(**coords, t=t)[mask] for e in f]).ravel()
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


def calibrate_libraries(
    case: CaseFile, spec: CaseSpec, ref: dict[str, np.ndarray], mask: np.ndarray, config: GateConfig
) -> dict[str, LibraryCalibration]:
    spec_dict = json.loads(spec.model_dump_json())
    calib: dict[str, LibraryCalibration] = {}
    for lib in case.libraries:
        track = get_track(lib)
        kinds, curved = tuple(p.kind for p in spec.boundary), spec.domain.geometry_params is not None
        why = track.refuses(case.family, kinds, spec.time is not None, dim=spec.grid.dim, curved=curved)
        if why is not None:
            raise CaseDefinitionError(f"{case.id}: track {lib} cannot solve it: {why}")
        out = track.calibration_solver()(spec_dict)
        err = gates.contract_error(out, ref, spec.output, mask, config.eps)
        if not np.isfinite(err):
            raise CaseDefinitionError(f"{case.id}: calibration solver of {lib} returned non-finite values")
        info = out.get("solver_info", {})
        name = f"{lib}:{info.get('method', 'solver')}@{info.get('mesh_resolution', '?')}"
        e = _round(err)
        calib[lib] = LibraryCalibration(solver=name, e_base=e, tau_acc=_round(gates.tau_acc(e, config)))
    return calib


def build_case(case: CaseFile, definition_bytes: bytes, config: GateConfig | None = None) -> Built:
    config = config or GateConfig()
    spec, solution = make_spec(case)
    mask = case_mask(case.domain, case.grid, case.geometry)
    check: ReferenceCheck | None = None
    if solution is not None:
        ref = reference(case, solution)
        reject_eigenfunction(case, spec, ref["u"], mask)
        calib = calibrate_libraries(case, spec, ref, mask, config)
    else:
        fine = numerical.solve_refinements(spec, mask)
        ref = fine.arrays
        calib = calibrate_libraries(case, spec, ref, mask, config)
        check = numerical.check(spec, fine, mask, min(c.tau_acc for c in calib.values()))
    worst = max(c.tau_acc for c in calib.values())
    found = leaks(spec, ref, mask, worst)
    if found:
        raise CaseDefinitionError(
            f"{case.id}: agent-visible data pass the accuracy gate: "
            + ", ".join(f"{p.source} (error {p.error:.2e})" for p in found)
        )
    npz = store.npz_bytes(ref)
    hidden = HiddenRecord(
        id=case.id,
        reference_kind="manufactured" if solution is not None else "numerical",
        solution=None if solution is None else _one([str(e) for e in solution]),
        reference_check=check,
        reference_file=f"{case.id}.npz",
        reference_sha256=store.sha256(npz),
        in_domain_points=int(mask.sum()),
        gates=config,
        calibration=calib,
        definition_sha256=store.sha256(definition_bytes),
        builder_version=BUILDER_VERSION,
    )
    return Built(spec=spec, hidden=hidden, reference=ref, npz=npz)


def _reuse(cases_dir: Path, case: CaseFile, raw: bytes, specs: dict[str, CaseSpec]) -> Built | None:
    """The committed record, if it was built from this definition by this builder version and
    the specs file still holds the spec built with it (a merge can pair one side's specs with the
    other side's records: the libraries are what such a pairing has disagreed on)."""
    try:
        hidden, arrays = store.load_hidden(cases_dir, case.id)
    except (store.CaseStoreError, OSError, ValueError):
        return None
    if (
        case.id not in specs
        or hidden.definition_sha256 != store.sha256(raw)
        or hidden.builder_version != BUILDER_VERSION
        or set(specs[case.id].libraries) != set(hidden.calibration)
    ):
        return None
    npz = (cases_dir / store.HIDDEN / hidden.reference_file).read_bytes()
    return Built(spec=specs[case.id], hidden=hidden, reference=arrays, npz=npz)


def build_all(cases_dir: Path, only: list[str] | None = None, force: bool = False, progress: Any = None) -> list[Built]:
    """Build every case (or those named) and write the records; returns every record
    written. A case whose committed record was built from the same definition bytes by
    the same builder version is reused, unless `force`."""
    cases = store.load_definitions(cases_dir)
    try:
        specs = {s.id: s for s in store.load_specs(cases_dir)}
    except store.CaseStoreError:
        specs = {}
    if only:
        unknown = sorted(set(only) - {c.id for c in cases})
        if unknown:
            raise store.CaseStoreError(f"unknown case ids: {', '.join(unknown)}")
    built = []
    for case in cases:
        if only and case.id not in only:
            continue
        raw = (cases_dir / store.DEFINITIONS / f"{case.id}.toml").read_bytes()
        old = None if force else _reuse(cases_dir, case, raw, specs)
        built.append(old or build_case(case, raw))
        if progress is not None:
            progress(case.id, old is not None)
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

"""Building, writing and validating imported cases (the rules are in
cases/published.py): one record -> case, reference, calibration error and
leak checks; a folder of them with the published views and the report."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fembench_agents.cases import gates, numerical, published_cube, published_graded, published_ladders, store
from fembench_agents.cases.builder import Built
from fembench_agents.cases.builder import write as write_records
from fembench_agents.cases.import_workers import RecordResult, build_all, merge
from fembench_agents.cases.leak import leaks
from fembench_agents.cases.manufactured import CaseDefinitionError
from fembench_agents.cases.model import (
    FLOW_FAMILIES,
    GateConfig,
    HiddenRecord,
    LibraryCalibration,
    PublishedThresholds,
    ReferenceCheck,
)
from fembench_agents.cases.problem import PUBLISHED_FILE, load_cases
from fembench_agents.cases.published import (
    LIBRARY,
    MAX_CALIBRATION_ERROR,
    ImportReport,
    blend_error,
    convert,
    reference,
)
from fembench_agents.cases.published_domains import Excluded
from fembench_agents.cases.published_shapes import domain_mask
from fembench_agents.cases.reference_memory import UNLIMITED, Budgeted

ZERO_SOLUTION = 1e-9  # a numerical reference whose scored field's largest value is below this is zero


def published_thresholds(record: dict[str, Any]) -> PublishedThresholds:
    """The record's thresholds as the published evaluator reads them: its top-level
    `evaluation_config` alone (one nested in oracle_config it never reads), as published."""
    config = record.get("evaluation_config") or {}
    keys = ("accuracy_tolerance", "time_tolerance", "tolerance")
    if not isinstance(config, dict):
        raise Excluded(f"record not read: evaluation_config is {type(config).__name__}, expected an object")
    try:
        return PublishedThresholds(**{k: float(config[k]) for k in keys if config.get(k) is not None})
    except (TypeError, ValueError) as exc:
        raise Excluded(f"record not read: evaluation_config {config}: {str(exc).splitlines()[0]}") from None


def build(
    record: dict[str, Any], report: ImportReport, config: GateConfig | None = None, budget: Any = UNLIMITED
) -> tuple[Built, dict]:
    """One record as a case and its published view; `budget` is the memory its solves share with
    the import's other workers (reference_memory.py)."""
    from fembench_agents.cases.calibration import dolfinx_fem  # imports dolfinx: only when importing

    config = config or GateConfig()
    solve = Budgeted(dolfinx_fem.solve, budget)
    spec, view, u = convert(record, report)
    thresholds = published_thresholds(record)
    data = json.loads(spec.model_dump_json())
    merged = {
        **view,
        **data,
        "domain": {**view["domain"], **data["domain"]},
        "output": {**view["output"], **data["output"]},
    }
    check: ReferenceCheck | None = None
    if u:
        try:
            ref, mask = reference(spec, u)
            out = solve(merged)
        except Exception as exc:  # a record our solver cannot run is reported, never fatal to the import
            raise Excluded(f"calibration solver failed: {type(exc).__name__}: {exc}") from None
        err = gates.contract_error(out, ref, spec.output, mask, config.eps)
        if not np.isfinite(err) or err > MAX_CALIBRATION_ERROR:
            # our mesh too coarse for the solution, or a forcing that is not the solution's
            cells = out.get("solver_info", {}).get("mesh_resolution", "?")
            raise Excluded(
                f"calibration error above {MAX_CALIBRATION_ERROR}: {err:.3g} "
                f"(our P2 solve on {cells} cells per axis against the manufactured solution)"
            )
        tau = float(f"{gates.tau_acc(float(f'{err:.4e}'), config):.4e}")
    else:
        mask = domain_mask(spec.domain, spec.grid, spec.boundary)
        reference_of = published_cube.series_reference if spec.grid.nz is not None else _numerical
        ref, out, err, tau, check = reference_of(spec, merged, mask, solve, config)
        report.numerical[spec.id] = check.error_estimate
    e_base = float(f"{err:.4e}")
    leak = _leak(spec, view, ref, mask, tau, [str(c) for c in u])
    npz = store.npz_bytes(ref)
    info = out.get("solver_info", {})
    hidden = HiddenRecord(
        id=spec.id,
        reference_kind="manufactured" if u else "numerical",
        solution=([str(c) for c in u] if len(u) > 1 else str(u[0])) if u else None,
        reference_check=check,
        reference_file=f"{spec.id}.npz",
        reference_sha256=store.sha256(npz),
        in_domain_points=int(mask.sum()),
        gates=config,
        calibration={
            LIBRARY: LibraryCalibration(
                solver=f"{LIBRARY}:{info.get('method', 'solver')}@{info.get('mesh_resolution', '?')}",
                e_base=e_base,
                tau_acc=tau,
            )
        },
        definition_sha256=store.sha256(json.dumps(record, sort_keys=True).encode()),
        leak=leak,
        published=thresholds,
    )
    return Built(spec=spec, hidden=hidden, reference=ref, npz=npz), view


def _numerical(
    spec: Any, merged: dict[str, Any], mask: np.ndarray, solve: Any, config: GateConfig
) -> tuple[dict[str, np.ndarray], dict[str, Any], float, float, ReferenceCheck]:
    """The reference of a record without a solution, with our 1x solve, its error, tau_acc and
    the check: the ladder's first rung whose reference passes (the last rung's verdict stands)."""
    ladder, beyond = published_ladders.ladder(spec, merged)
    solved: dict[int, dict[str, np.ndarray]] = {}
    for rung, refinements in enumerate(ladder, 1):
        try:
            fine = numerical.solve_refinements(spec, mask, solve, merged, refinements, solved)
        except Exception as exc:  # a record our solver cannot run is reported, never fatal to the import
            raise Excluded(f"calibration solver failed: {type(exc).__name__}: {exc}") from None
        solved.update(fine.solves)
        ref, out = fine.arrays, {**fine.solves[1], "solver_info": {"method": "p2"}}
        zero = zero_scored_field(ref)
        if zero is not None:
            raise Excluded(zero)
        err = gates.contract_error(out, ref, spec.output, mask, config.eps)
        try:
            if not np.isfinite(err) or err > MAX_CALIBRATION_ERROR:
                raise Excluded(
                    f"calibration error above {MAX_CALIBRATION_ERROR}: {err:.3g} "
                    f"(our solve against its {refinements[-1]}x refinement)"
                )
            tau = float(f"{gates.tau_acc(float(f'{err:.4e}'), config):.4e}")
            try:
                return ref, out, err, tau, numerical.check(spec, fine, mask, tau, LIBRARY)
            except CaseDefinitionError as exc:
                raise Excluded(f"numerical reference refused: {str(exc).partition(': ')[2]}") from None
        except Excluded as exc:
            if rung == len(ladder) and published_graded.applies(spec):  # a corner singularity: a graded mesh
                ref, err, tau, check = published_graded.graded_reference(spec, merged, mask, solved[1], solve, config)
                return ref, out, err, tau, check
            if rung == len(ladder):
                if beyond and str(exc).startswith(published_ladders.ESTIMATE_REFUSAL):
                    raise Excluded(f"{exc}; {beyond}") from None
                raise
    raise AssertionError("unreachable: the last rung returns or raises")


def zero_scored_field(ref: dict[str, np.ndarray]) -> str | None:
    """Why a numerical reference is no reference: its scored field u (a flow's velocity magnitude)
    is zero on the grid, whatever its pressure (a pressure balancing a gradient forcing is no
    answer to score; a flow's zero velocity is decided from its data before any solve: zero_flow.py)."""
    largest = float(np.nanmax(np.abs(ref["u"])))
    if largest > ZERO_SOLUTION:
        return None
    return f"record defect: its scored field u is zero on the grid (largest value {largest:.1e}), so no relative error is defined"


NUMERICAL_COST = 50.0  # a reference's solves (4x and 6x or 8x) against the one calibration solve
FLOW_COST = 2.25  # Taylor-Hood's unknowns per grid point (reference_memory.unknowns)


def expected_cost(record: dict[str, Any]) -> float:
    """A record's build cost in grid points solved, to order the workers' records (the largest
    first), read off the record as published: its grid, its time steps (one per grid spacing),
    a numerical reference's fine solves, a flow's unknowns. An order, not a measure."""
    oc = record.get("oracle_config") or {}
    pde = oc.get("pde") or {}
    grid = (oc.get("output") or {}).get("grid") or {}
    try:
        nx, ny = float(grid.get("nx") or 1), float(grid.get("ny") or 1) * float(grid.get("nz") or 1)
        time = pde.get("time") or {}
        steps = 1.0 + max(0.0, float(time.get("t_end", 0)) - float(time.get("t0", 0))) * nx if time else 1.0
    except (TypeError, ValueError):  # a malformed record: built (and excluded) wherever it falls
        return 0.0
    numerical = NUMERICAL_COST if not (pde.get("manufactured_solution") or {}).get("u") else 1.0
    flow = FLOW_COST if pde.get("type") in FLOW_FAMILIES else 1.0
    return nx * ny * steps * numerical * flow


def _leak(
    spec: Any,
    view: dict[str, Any],
    ref: dict[str, np.ndarray],
    mask: np.ndarray,
    tau: float,
    solution: Sequence[str] = (),
) -> str | None:
    """How the case, as the solver sees it, gives the answer away, or None. The
    boundary data is leak-free by construction (per edge, and the published
    `bc` value a blend of the edges); what is left is data that is the answer
    whatever the boundary (forcing or initial data a multiple of the solution)."""
    found = leaks(spec, ref, mask, tau)
    if found:
        return f"{found[0].source} passes the accuracy gate (error {found[0].error:.2e})"
    blended = blend_error(view, spec, ref["u"], mask)
    if blended <= tau:
        return f"the boundary blend passes the accuracy gate (error {blended:.2e})"
    # A component the blend reproduces exactly (u linear in one coordinate there: le_3d_asymmetric_mms's
    # u_y = x^2 (1 - x) y (1 - y) z) is given away even when the magnitude it makes is far off.
    visible = set(_strings(view)) | set(_strings(json.loads(spec.model_dump_json())))
    for k, component in enumerate(solution):
        if not _number(component) and component.replace(" ", "") in visible:
            return f"the case_spec states the solution's component {k}, {component}, as a boundary value or datum"
    return None


def import_records(
    lines: Iterable[str],
    only: set[str] | None = None,
    workers: int = 0,
    on_result: Callable[[dict[str, Any], RecordResult], None] | None = None,
) -> tuple[list[Built], list[dict], ImportReport]:
    """The records of a published file built into cases (in this process, or in `workers`
    worker processes: import_workers.py), the report's entries in the file's order either way."""
    report = ImportReport()
    read: list[tuple[int, dict[str, Any] | str]] = []  # line number -> record, or why it is not one
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or "id" not in record or "oracle_config" not in record:
                raise ValueError("not a benchmark record (id, oracle_config)")
        except ValueError as exc:
            read.append((number, f"record not read: {exc}"))
            continue
        if only is None or record["id"] in only:
            read.append((number, record))
    records = [r for _, r in read if isinstance(r, dict)]
    results = iter(
        build_all(
            build,
            records,
            workers,
            (lambda i, result: on_result(records[i], result)) if on_result else None,
            expected_cost,
        )
    )
    built, views = [], []
    for number, record in read:
        report.read += 1
        if not isinstance(record, dict):
            report.excluded[f"line {number}"] = record
            continue
        result = next(results)
        merge(report, result.report)
        if result.built is None or result.view is None:
            report.excluded[record["id"]] = result.excluded or "not built"
            continue
        built.append(result.built)
        views.append(result.view)
        report.imported.append(record["id"])
        if result.built.hidden.leak:
            report.leaking[record["id"]] = result.built.hidden.leak
    return built, views, report


REPORT_FILE = "import_report.json"


def _number(text: str) -> bool:
    """A constant component (u_z = 0) is known without any data."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value.replace(" ", "")
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def write(out_dir: Path, built: list[Built], views: list[dict[str, Any]], report: ImportReport) -> None:
    """An imported cases folder: case_specs.jsonl, hidden/, the published views, the report."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_records(out_dir, built)
    lines = [store.dumps_line(v) for v in sorted(views, key=lambda v: v["id"])]
    store.write_if_changed(out_dir / PUBLISHED_FILE, ("\n".join(lines) + "\n" if lines else "").encode())
    store.write_if_changed(out_dir / REPORT_FILE, (store.dumps(report.as_dict()) + "\n").encode())


def problems(cases_dir: Path) -> list[str]:
    """`cases validate` on an imported folder: every case leak-free (its boundary blend
    included) or marked as leaking with the reason, no solution text in what the solver
    sees, every record readable."""
    out: list[str] = []
    try:
        cases = load_cases(cases_dir)
    except store.CaseStoreError as exc:
        return [str(exc)]
    for case in cases:
        if case.published is None:
            out.append(f"{case.task_id}: no published view in {PUBLISHED_FILE}")
            continue
        try:
            hidden, arrays = store.load_hidden(cases_dir, case.task_id)
        except (store.CaseStoreError, OSError, ValueError) as exc:
            out.append(f"{case.task_id}: {exc}")
            continue
        # A published expression may contain the solution as a term (kappa = 1 + u/2): the leak
        # probe judges those by value; here no visible string may be the solution itself.
        visible = set(_strings(case.spec_data()))
        sols = hidden.solution if isinstance(hidden.solution, list) else [hidden.solution]
        given = [s for s in sols if s is not None and s.replace(" ", "") in visible]
        if not hidden.leak:  # a marked case leaks by its record's own account (the blend may be the solution)
            out += [f"{case.task_id}: the manufactured solution is given in the case_spec" for _ in given]
        tau = max(c.tau_acc for c in hidden.calibration.values())
        mask = domain_mask(case.spec.domain, case.spec.grid, case.spec.boundary)
        leak = _leak(case.spec, case.published, dict(arrays), mask, tau, [s for s in sols if s is not None])
        if leak and not hidden.leak:
            out.append(f"{case.task_id}: {leak}")
        elif hidden.leak and not leak:
            out.append(f"{case.task_id}: marked as leaking ({hidden.leak}) but the leak probe finds nothing")
    return out

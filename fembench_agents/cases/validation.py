"""`cases validate`: the committed records are what the definitions build,
every case is leak-free, and the track's rules hold (at least 110 cases, every
family on at least two domains, the evaluator-only half absent from the specs)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fembench_agents.cases import store
from fembench_agents.cases.generate.manifest import is_fresh
from fembench_agents.cases.leak import leaks
from fembench_agents.cases.problem import PUBLISHED_FILE
from fembench_agents.cases.published_shapes import domain_mask
from fembench_agents.kinds.review import Validation, ValidationOptions, ValidationProblem, ValidationProgress

MIN_CASES = 110


def problems(cases_dir: Path, rebuild: bool = True) -> list[str]:
    if (cases_dir / PUBLISHED_FILE).exists():  # an imported folder: no definitions to rebuild from
        from fembench_agents.cases.published_import import problems as imported_problems

        return imported_problems(cases_dir)
    out: list[str] = []
    try:
        defs = store.load_definitions(cases_dir)
        specs = {s.id: s for s in store.load_specs(cases_dir)}
    except store.CaseStoreError as exc:
        return [str(exc)]
    if set(specs) != {d.id for d in defs}:
        out.append(f"{store.SPECS_FILE} does not match the definitions: run `fembench-agents cases build`")
    domains: dict[str, set[str]] = defaultdict(set)
    for d in defs:
        domains[d.family].add(d.domain)
    if not is_fresh(cases_dir):  # the coverage rules are the committed set's; a fresh folder holds what was asked
        if len(defs) < MIN_CASES:
            out.append(f"only {len(defs)} cases; the track needs at least {MIN_CASES}")
        out += [f"family {f} on fewer than two domains" for f, ds in sorted(domains.items()) if len(ds) < 2]
    for d in defs:
        if d.id not in specs:
            continue
        try:
            hidden, arrays = store.load_hidden(cases_dir, d.id)
        except (store.CaseStoreError, OSError, ValueError) as exc:
            out.append(f"{d.id}: {exc}")
            continue
        spec = specs[d.id]
        spec_text = spec.model_dump_json()
        sols = hidden.solution if isinstance(hidden.solution, list) else [hidden.solution] if hidden.solution else []
        out += [f"{d.id}: the manufactured solution appears in the spec" for s in sols if s in spec_text]
        tau = max(c.tau_acc for c in hidden.calibration.values())
        mask = domain_mask(spec.domain, spec.grid, spec.boundary)  # the 2D, 3D or curved domain, no sympy
        out += [
            f"{d.id}: {p.source} passes the accuracy gate (error {p.error:.2e})" for p in leaks(spec, arrays, mask, tau)
        ]
        if rebuild:
            # sympy comes with the builder (half a second): only a rebuild needs it, not every command
            from fembench_agents.cases.builder import build_case, same_record

            raw = (cases_dir / store.DEFINITIONS / f"{d.id}.toml").read_bytes()
            if not same_record(build_case(d, raw, hidden.gates), spec, hidden, arrays):
                out.append(
                    f"{d.id}: the committed record differs from a fresh build: run `fembench-agents cases build`"
                )
    return out


def calibration_problems(cases_dir: Path, skip: Callable[[str, str], None]) -> tuple[list[str], int]:
    """Our calibration solver of every (case, available library) scored as an
    attempt at its own case, through the sandbox, with this machine's
    calibration: it must pass all three gates. Returns problems and how many
    solves were checked. A solve this machine's calibration has no time for (none at all, or
    a partial `calibrate --only`) is said to be unchecked at the fast gate, never passed."""
    from fembench_agents.cases import timing
    from fembench_agents.cases.calibrate import calibration_sandbox, each_case_library, gate_calibration
    from fembench_agents.cases.problem import load_cases
    from fembench_agents.cases.scorer import CaseScorer

    try:
        calibration: timing.MachineCalibration | None = timing.load(cases_dir)
    except timing.CalibrationMissing as exc:
        calibration = None
        skip("the fast gate", str(exc))
    cases = load_cases(cases_dir)
    pairs = list(each_case_library(cases, None, skip))
    untimed = {
        (case.task_id, lib)
        for case, lib in pairs
        if calibration is None or lib not in calibration.t_base.get(case.task_id, {})
    }
    if calibration is not None and untimed:
        skip(
            f"the fast gate of {len(untimed)} solves",
            f"calibration {calibration.machine} has no time for them: run `fembench-agents cases calibrate`",
        )
    out: list[str] = []
    # one solve per core at once: each is judged alone (a slow one is re-timed in fresh jobs)
    with calibration_sandbox({lib for _, lib in pairs}, workers=None) as sandbox:
        scorer = CaseScorer(sandbox, calibration)
        with ThreadPoolExecutor(sandbox.size) as pool:
            outcomes = list(pool.map(lambda pair: gate_calibration(scorer, *pair), pairs))
        for (case, lib), outcome in zip(pairs, outcomes, strict=True):
            if not outcome.passed and not ((case.task_id, lib) in untimed and outcome.reason == "not_timed"):
                out.append(
                    f"{case.task_id}: our {lib} calibration solver fails its own {outcome.failed_stage} gate "
                    f"({outcome.reason}; error {outcome.relative_l2_error}, time {outcome.solve_seconds})"
                )
    return out, len(pairs)


class CaseValidator:
    """`cases validate` (`KindValidator`): the records, then (when they hold and
    `options.calibration`) our calibration solvers against their own gates."""

    def validate(self, path: str, options: ValidationOptions, progress: ValidationProgress) -> Validation:
        cases_dir = Path(path)
        found = [
            ValidationProblem(task_id=None, check="records", message=p) for p in problems(cases_dir, options.rebuild)
        ]
        checked = 0
        if options.calibration and not found:
            more, checked = calibration_problems(
                cases_dir, lambda what, why: progress.note(f"not checked: {what}: {why}")
            )
            found += [ValidationProblem(task_id=None, check="calibration", message=p) for p in more]
        gated = f"; {checked} calibration solves pass their own gates" if options.calibration else ""
        return Validation(problems=found, summary=f"cases valid: leak-free, reproducible, coverage met{gated}")

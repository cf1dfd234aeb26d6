"""Scores one solver attempt at a PDE case: the attempt runs in the sandbox
(one `solve` job, its call timed inside the sandboxed process), the parent
applies the gates (gates.py) to what came back and the evaluator-only record.

Timing rule (documented in docs/pde_cases.md): every timing is the first call
of `solve` in a freshly forked sandbox process, after imports, around the
call, so an attempt is timed exactly as `cases calibrate` times our own
solvers. An attempt that is accurate but above the time target is timed again
in up to `retimes` fresh jobs and the fastest timing counts: noise only ever
adds time, so a re-timing can rescue a verdict that noise spoiled and never
spoil one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fembench_agents.cases import compat, gates, store
from fembench_agents.cases.model import GateConfig, HiddenRecord
from fembench_agents.cases.outcomes import CaseOutcome, CaseThresholds, GateSet
from fembench_agents.cases.problem import SOLVE, SolverCase
from fembench_agents.cases.published_shapes import domain_mask
from fembench_agents.cases.timing import CalibrationMissing, MachineCalibration
from fembench_agents.cases.tracks import Track, get_track
from fembench_agents.scoring import codec
from fembench_agents.scoring.extraction import parse_code
from fembench_agents.scoring.job_results import ended_how, error_info
from fembench_agents.scoring.outcomes import StageResult
from fembench_agents.scoring.sandbox import JobResult, Sandbox, SandboxPolicy
from fembench_agents.scoring.sandbox.jobs import SolveJob


@dataclass(frozen=True)
class CaseScoringConfig:
    solve_seconds: float = 120.0  # the executes gate's time limit for one solve job
    memory_mb: int = 4096
    retimes: int = 2
    gates: GateConfig | None = None  # None: each case's own record (alpha_acc 10, tau_min 1e-6, alpha_time 3)
    compat: tuple[str, ...] = ()  # compatibility options (cases/compat.py), off by default, recorded per outcome
    # "published": each case judged by its published record's multipliers (gates.published_config) on
    # the e_base and t_base ours measured; a case without them (our own) is refused
    gate_set: GateSet = "ours"


class NoPublishedThresholds(ValueError):
    """`gate_set="published"` on a case whose record has no published thresholds."""

    def __init__(self, case_id: str) -> None:
        super().__init__(
            f"case {case_id} has no published thresholds: the published gates judge an imported case by its "
            "record's own (our own cases have none; a case imported before they were kept needs `cases import` again)"
        )


@dataclass(frozen=True)
class _Hidden:
    record: HiddenRecord
    reference: dict[str, np.ndarray]
    mask: np.ndarray


class CaseScorer:
    """Safe to share between threads. `calibration` is this machine's t_base
    table; without it the fast gate is not judged (`not_timed`)."""

    def __init__(
        self,
        sandbox: Sandbox,
        calibration: MachineCalibration | None = None,
        config: CaseScoringConfig | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.calibration = calibration
        self.config = config or CaseScoringConfig()
        self._hidden: dict[str, _Hidden] = {}
        self._lock = threading.Lock()

    @property
    def calibration_id(self) -> str | None:
        return self.calibration.calibration_id if self.calibration is not None else None

    def close(self) -> None:
        """Nothing to release: the sandbox belongs to the caller."""

    def hidden(self, case: SolverCase) -> _Hidden:
        with self._lock:
            found = self._hidden.get(case.content_hash)
        if found is None:
            record, reference = store.load_hidden(case.cases_dir, case.task_id)
            mask = domain_mask(case.spec.domain, case.spec.grid, case.spec.boundary)
            found = _Hidden(record=record, reference=reference, mask=mask)
            with self._lock:
                self._hidden[case.content_hash] = found
        return found

    def t_base(self, case: SolverCase, library: str) -> float | None:
        if self.calibration is None:
            return None
        try:
            return self.calibration.lookup(case.task_id, library)
        except CalibrationMissing:
            return None

    def policy(self, case: SolverCase) -> SandboxPolicy:
        return SandboxPolicy(
            wall_seconds=self.config.solve_seconds,
            memory_mb=self.config.memory_mb,
            hidden_paths=(str(case.cases_dir.resolve()),),
        )

    def run_solve(
        self, case: SolverCase, code: str | None, calibration_module: str | None = None, library: str | None = None
    ) -> JobResult:
        job: SolveJob = {"kind": "solve", "spec": case.spec_data()}
        setup = get_track(library).job_setup if library is not None else None
        if setup is not None:
            job["setup"] = setup
        if calibration_module is not None:
            job["calibration"] = calibration_module
        else:
            job["implementation"] = {"code": code or "", "function": SOLVE}  # an attempt runs with no preamble
        return self.sandbox.run(job, self.policy(case))

    def score(self, case: SolverCase, library: str, text: str) -> CaseOutcome:
        if library not in case.spec.libraries:
            raise ValueError(f"case {case.task_id} is not offered on {library!r}; its libraries: {case.spec.libraries}")
        start = time.perf_counter()
        track = get_track(library)
        parsed = parse_code(text, (SOLVE,))
        if parsed.error:
            stage = StageResult(stage="executes", passed=False, reason=parsed.reason, detail=parsed.error)
            return CaseOutcome(
                task_id=case.task_id,
                passed=False,
                stages=(stage,),
                library=library,
                family=case.family,
                seconds=time.perf_counter() - start,
            )
        if self.config.gate_set == "published" and self.hidden(case).record.published is None:
            raise NoPublishedThresholds(case.task_id)
        code, substitutions = compat.apply(self.config.compat, parsed.code)
        bad = gates.disallowed_imports(code, track.allowed_imports)
        result = None if bad else self.run_solve(case, code, library=library)
        outcome = self.judge(
            case, library, result, bad_imports=bad, retime=lambda: self.run_solve(case, code, library=library)
        )
        explained = _explained(track, code, outcome)
        made = substitutions + explained.substitutions  # the program's rewrites, then its output's readings
        return explained.model_copy(update={"substitutions": made, "seconds": time.perf_counter() - start})

    def judge(
        self,
        case: SolverCase,
        library: str,
        result: JobResult | None,
        *,
        bad_imports: list[str] | None = None,
        retime: Callable[[], JobResult] | None = None,
    ) -> CaseOutcome:
        """The gates on a solve job's result (None: not run, `bad_imports` says why), its output
        read through the configured compatibility readings first (cases/compat.py)."""
        hidden = self.hidden(case)
        output: Any = None
        ended, message, error, timings = "ok", "", None, []
        if result is not None:
            frames = result.events("solve")
            built = result.events("build_error")
            if built:
                error = error_info(built[0])
                ended, message = "error", f"building the module failed: {error.summary}"
            elif not frames:
                ended, message = ended_how(result, "solve")
            elif frames[0].get("status") != "ok":
                error = error_info(frames[0])
                ended, message = "error", error.summary
            else:
                try:
                    output = codec.from_data(frames[0].get("value"))
                except Exception:  # whatever the child sent, a value that does not decode is not an answer
                    output = None
                timings.append(min(float(frames[0]["seconds"]), result.wall_seconds or float("inf")))
        reading = compat.read(self.config.compat, output, case.spec.output, case.spec.grid)
        output, wrong_layout = reading.output, reading.refused
        outcome = self._gates(case, library, hidden, output, timings, ended, message, bad_imports or [], wrong_layout)
        if retime is not None and outcome.reason == "too_slow":
            for _ in range(self.config.retimes):
                again = retime()
                frames = [f for f in again.events("solve") if f.get("status") == "ok"]
                if frames:
                    timings.append(min(float(frames[0]["seconds"]), again.wall_seconds or float("inf")))
                    outcome = self._gates(case, library, hidden, output, timings, ended, message, [], wrong_layout)
                if outcome.passed:
                    break
        isolation = result.isolation if result is not None else "unknown"
        return outcome.model_copy(update={"error": error, "isolation": isolation, "substitutions": reading.notes})

    def _gates(
        self,
        case: SolverCase,
        library: str,
        hidden: _Hidden,
        output: Any,
        timings: list[float],
        ended: str,
        message: str,
        bad_imports: list[str],
        wrong_layout: str | None = None,
    ) -> CaseOutcome:
        record = hidden.record
        calibration = record.calibration[library]
        ours = self.config.gates or record.gates
        if self.config.gate_set == "published":
            if record.published is None:
                raise NoPublishedThresholds(case.task_id)
            config, threshold = gates.published_config(record.published, ours), None
        else:
            # Under the record's own gates its stated tau_acc is the threshold: one number, one source.
            config, threshold = ours, calibration.tau_acc if self.config.gates is None else None
        t_base = self.t_base(case, library)
        gated = gates.evaluate(
            case.task_id,
            output,
            contract=case.spec.output,
            reference=hidden.reference,
            mask=hidden.mask,
            library=library,
            e_base=calibration.e_base,
            t_base=t_base,
            seconds=timings,
            config=config,
            threshold=threshold,
            ended=ended,
            message=message,
            bad_imports=bad_imports,
            wrong_layout=wrong_layout,
        )
        report, figures = gated.report, gated.hidden
        return CaseOutcome(
            task_id=case.task_id,
            passed=report.passed,
            stages=report.stages,
            library=library,
            family=case.family,
            relative_l2_error=report.relative_l2_error,
            solve_seconds=report.solve_seconds,
            timings=tuple(timings),
            max_abs_error=report.diagnostics.max_abs_error,
            rmse=report.diagnostics.rmse,
            solver_info=report.diagnostics.solver_info,
            thresholds=CaseThresholds(
                e_base=figures.e_base,
                tau_acc=figures.tau_acc,
                t_base=figures.t_base,
                tau_time=figures.tau_time,
                alpha_acc=config.alpha_acc,
                tau_min=config.tau_min,
                alpha_time=config.alpha_time,
                t_floor=config.t_floor,
                calibration=self.calibration.calibration_id if self.calibration is not None else None,
                gates=self.config.gate_set,
            ),
        )


def _explained(track: Track, code: str, outcome: CaseOutcome) -> CaseOutcome:
    """A failure the track knows the cause of (a preconditioner this build lacks) says so."""
    if track.explain_error is None or outcome.error is None:
        return outcome
    note = track.explain_error(code, f"{outcome.error.type}: {outcome.error.message}")
    if note is None:
        return outcome
    stages = tuple(
        s.model_copy(update={"detail": f"{s.detail}; {note}" if s.detail else note}) if not s.passed else s
        for s in outcome.stages
    )
    return outcome.model_copy(update={"stages": stages})

"""The three gates of a PDE attempt, as pure functions of what the sandbox
returns (the output arrays, whether it finished in time, its measured solve
times) and of the hidden figures (reference, thresholds, calibration time).

The result keeps two things apart:
- `AttemptReport`: facts about the attempt alone (which stage failed and why,
  which output field was malformed, its own error norms and time, what it
  said about itself). Safe to show its author; feedback builders read only this.
- `HiddenFigures`: the thresholds and calibration figures the verdict used.
  Evaluator-only: logs may keep it, prompts and feedback never see it.

Noise policy (fast gate): t_base is the median of repeated calibration solves
(timing.py) and is raised to a floor `t_floor` (default 0.05 s) before it is
multiplied by alpha_time, so a millisecond-scale calibration does not turn
scheduler jitter into failures. An attempt may be timed several times; the
gate uses the fastest, since noise only ever adds time. The accuracy verdict
has no noise: solvers are deterministic and the comparison is exact.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from fembench_agents.cases.case_spec import OutputContract
from fembench_agents.cases.model import GateConfig, PublishedThresholds
from fembench_agents.scoring.outcomes import StageResult, first_failed
from fembench_agents.vocabulary import FailureReason

Stage = Literal["executes", "accurate", "fast"]
DIAGNOSTIC_KEYS = (
    "mesh_resolution",
    "element_degree",
    "dofs",
    "iterations",
    "time_steps",
    "method",
    "ksp_type",
    "pc_type",
    "rtol",
)


class Diagnostics(BaseModel):
    """Auxiliary facts; never change a verdict. The errors are those of `u`, the
    primary unknown (a flow's velocity, not its pressure, which is fixed only up
    to a constant), inside the domain."""

    model_config = ConfigDict(frozen=True)
    max_abs_error: float | None = None
    rmse: float | None = None
    solver_info: dict[str, str | int | float | bool | None] = {}


class AttemptReport(BaseModel):
    """The attempt's own facts: what a feedback builder may use."""

    model_config = ConfigDict(frozen=True)
    case_id: str
    passed: bool
    stages: tuple[StageResult, ...]
    relative_l2_error: float | None = None
    solve_seconds: float | None = None
    diagnostics: Diagnostics = Diagnostics()

    @property
    def failed_stage(self) -> str | None:
        failed = first_failed(self.stages)
        return failed.stage if failed else None


class HiddenFigures(BaseModel):
    """What the verdict was measured against. Evaluator-only."""

    model_config = ConfigDict(frozen=True)
    library: str
    e_base: float
    tau_acc: float
    t_base: float | None
    tau_time: float | None
    config: GateConfig


class GateOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)
    report: AttemptReport
    hidden: HiddenFigures


# --- executes -----------------------------------------------------------------------------


def disallowed_imports(source: str, allowed: Sequence[str]) -> list[str]:
    """Imports in `source` outside the track's allowed top-level modules (static check)."""
    bad: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names if a.name.split(".")[0] not in allowed]
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level or mod.split(".")[0] not in allowed:
                bad.append("." * node.level + mod)
        elif isinstance(node, ast.Name) and node.id in ("__import__", "importlib"):
            bad.append(f"dynamic {node.id}")
    return list(dict.fromkeys(bad))


def check_output(output: Any, contract: OutputContract, mask: np.ndarray) -> StageResult:
    """Names, shapes, float dtype, finiteness at every in-domain point."""

    def fail(reason: FailureReason, detail: str) -> StageResult:
        return StageResult(stage="executes", passed=False, reason=reason, detail=detail)

    if not isinstance(output, Mapping):
        return fail("not_a_dict", f"solve returned {type(output).__name__}, expected a dict")
    for name, field in contract.fields.items():
        if name not in output:
            return fail("missing_field", f"output has no {name!r}")
        arr = output[name]
        if not isinstance(arr, np.ndarray):
            return fail("wrong_type", f"output[{name!r}] is {type(arr).__name__}, expected a numpy array")
        if arr.shape != tuple(field.shape):
            return fail("wrong_shape", f"output[{name!r}] has shape {arr.shape}, expected {tuple(field.shape)}")
        if not np.issubdtype(arr.dtype, np.floating):
            return fail("wrong_dtype", f"output[{name!r}] has dtype {arr.dtype}, expected a float dtype")
        bad = ~np.isfinite(arr[..., mask])
        if bad.any():
            return fail("non_finite", f"output[{name!r}] is NaN or infinite at {int(bad.sum())} in-domain grid points")
    return StageResult(stage="executes", passed=True)


def executes(
    output: Any,
    contract: OutputContract,
    mask: np.ndarray,
    *,
    ended: str = "ok",
    message: str = "",
    bad_imports: Sequence[str] = (),
    wrong_layout: str | None = None,
) -> StageResult:
    """ended: ok | timeout | error | crashed (how the sandboxed call ended). `wrong_layout`:
    why the output is not in the layout a compatibility reading expected (cases/compat.py)."""
    if bad_imports:
        return StageResult(stage="executes", passed=False, reason="disallowed_import", detail="; ".join(bad_imports))
    if ended != "ok":
        reasons: dict[str, FailureReason] = {"timeout": "timeout", "error": "runtime_error"}
        reason = reasons.get(ended, "crashed")
        return StageResult(stage="executes", passed=False, reason=reason, detail=message or None)
    if wrong_layout is not None:
        return StageResult(stage="executes", passed=False, reason="wrong_shape", detail=wrong_layout)
    return check_output(output, contract, mask)


# --- accurate -----------------------------------------------------------------------------


def relative_l2(u: np.ndarray, ref: np.ndarray, mask: np.ndarray, eps: float = 1e-300) -> float:
    """||u - ref|| / max(||ref||, eps) over in-domain points (all components).
    A non-finite in-domain value gives inf: it is never dropped."""
    a, b = np.asarray(u, dtype=float)[..., mask], np.asarray(ref, dtype=float)[..., mask]
    if not np.isfinite(a).all():
        return math.inf
    return float(np.linalg.norm(a - b) / max(float(np.linalg.norm(b)), eps))


def centred(u: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The field minus its mean over the in-domain points (for a field fixed up to a constant).
    Both sides are float arrays by then (`check_output`); a non-finite value would make the
    whole field NaN, which `relative_l2` reports as it would the value itself (inf)."""
    return u - float(np.mean(u[..., mask]))


def contract_error(
    output: Mapping[str, Any],
    reference: Mapping[str, np.ndarray],
    contract: OutputContract,
    mask: np.ndarray,
    eps: float,
) -> float:
    """The largest relative L2 error over the contract's fields; a field marked
    `up_to_constant` (a pressure) is compared after removing each side's in-domain mean."""
    errors = []
    for name, field in contract.fields.items():
        u, ref = output[name], reference[name]
        if field.up_to_constant:
            u, ref = centred(u, mask), centred(ref, mask)
        errors.append(relative_l2(u, ref, mask, eps))
    return max(errors)


def tau_acc(e_base: float, config: GateConfig) -> float:
    return max(config.alpha_acc * e_base, config.tau_min)


def accurate(error: float, tau: float) -> StageResult:
    ok = math.isfinite(error) and error <= tau
    return StageResult(
        stage="accurate",
        passed=ok,
        reason=None if ok else "too_inaccurate",
        detail=None if ok else f"relative L2 error {error:.3e} is above the accuracy target",
    )


# --- the published record's gates ---------------------------------------------------------

# The published evaluator's rule (its scripts/run_benchmark.py): a record's missing multiplier
# defaults to its legacy `tolerance`, a missing `tolerance` to 1.2; the accuracy threshold is
# max(oracle error x accuracy multiplier, 1e-6), the time threshold oracle time x time multiplier.
PUBLISHED_DEFAULT_TOLERANCE = 1.2
PUBLISHED_MIN_ERROR = 1e-6


def published_config(published: PublishedThresholds, ours: GateConfig) -> GateConfig:
    """The gates a published record states, in our terms: its multipliers become alpha_acc and
    alpha_time (applied to our calibration's e_base and t_base, which stand in for the published
    oracle's error and time), tau_min its minimum error. The noise floor t_floor and eps stay
    `ours`: they belong to how we measure, not to the record."""
    legacy = published.tolerance if published.tolerance is not None else PUBLISHED_DEFAULT_TOLERANCE
    return ours.model_copy(
        update={
            "alpha_acc": published.accuracy_tolerance if published.accuracy_tolerance is not None else legacy,
            "alpha_time": published.time_tolerance if published.time_tolerance is not None else legacy,
            "tau_min": PUBLISHED_MIN_ERROR,
        }
    )


# --- fast ---------------------------------------------------------------------------------


def tau_time(t_base: float, config: GateConfig) -> float:
    return config.alpha_time * max(t_base, config.t_floor)


def fast(seconds: Sequence[float], tau: float) -> tuple[StageResult, float]:
    """The fastest of the attempt's timings against tau; returns the stage and that time."""
    if not seconds:
        raise ValueError("fast gate needs at least one timing")
    best = float(min(seconds))
    ok = best <= tau
    return StageResult(
        stage="fast",
        passed=ok,
        reason=None if ok else "too_slow",
        detail=None if ok else f"solve took {best:.3f} s, above the time target",
    ), best


# --- all three ----------------------------------------------------------------------------


def _diagnostics(u: np.ndarray | None, ref: np.ndarray, mask: np.ndarray, info: Any) -> Diagnostics:
    clean: dict[str, str | int | float | bool | None] = {}
    if isinstance(info, Mapping):
        for k in (k for k in DIAGNOSTIC_KEYS if k in info):  # what the solver reported, nothing more
            v = info.get(k)
            if isinstance(v, str | int | float | bool) or v is None:
                clean[k] = v if not isinstance(v, str) else v[:80]
    if u is None:
        return Diagnostics(solver_info=clean)
    d = np.asarray(u, dtype=float)[..., mask] - np.asarray(ref, dtype=float)[..., mask]
    return Diagnostics(max_abs_error=float(np.max(np.abs(d))), rmse=float(np.sqrt(np.mean(d * d))), solver_info=clean)


def evaluate(
    case_id: str,
    output: Any,
    *,
    contract: OutputContract,
    reference: Mapping[str, np.ndarray],
    mask: np.ndarray,
    library: str,
    e_base: float,
    t_base: float | None,
    seconds: Sequence[float] = (),
    config: GateConfig | None = None,
    ended: str = "ok",
    message: str = "",
    bad_imports: Sequence[str] = (),
    threshold: float | None = None,
    wrong_layout: str | None = None,
) -> GateOutcome:
    """Stage by stage; stops at the first failure. Without t_base (no machine
    calibration) the fast gate is not judged and the attempt does not pass.
    `threshold`: the accuracy threshold the case's record states, which is then
    the one the verdict uses; None computes it from e_base under `config` (a
    verdict under other gates than the record's)."""
    config = config or GateConfig()
    ta = threshold if threshold is not None else tau_acc(e_base, config)
    tt = tau_time(t_base, config) if t_base is not None else None
    hidden = HiddenFigures(library=library, e_base=e_base, tau_acc=ta, t_base=t_base, tau_time=tt, config=config)
    stage = executes(
        output, contract, mask, ended=ended, message=message, bad_imports=bad_imports, wrong_layout=wrong_layout
    )
    stages = [stage]
    info = output.get("solver_info") if isinstance(output, Mapping) else None
    if not stage.passed:
        report = AttemptReport(
            case_id=case_id, passed=False, stages=tuple(stages), diagnostics=_diagnostics(None, np.zeros(0), mask, info)
        )
        return GateOutcome(report=report, hidden=hidden)
    error = contract_error(output, reference, contract, mask, config.eps)
    diag = _diagnostics(output["u"], reference["u"], mask, info)
    stages.append(accurate(error, ta))
    best: float | None = min(seconds) if seconds else None
    if stages[-1].passed:
        if tt is None or not seconds:
            stages.append(
                StageResult(
                    stage="fast",
                    passed=False,
                    reason="not_timed",
                    detail="no machine calibration or no timing: speed not judged",
                )
            )
        else:
            st, best = fast(seconds, tt)
            stages.append(st)
    report = AttemptReport(
        case_id=case_id,
        passed=all(s.passed for s in stages),
        stages=tuple(stages),
        relative_l2_error=error,
        solve_seconds=best,
        diagnostics=diag,
    )
    return GateOutcome(report=report, hidden=hidden)

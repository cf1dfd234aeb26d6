"""Hand-built run directories for report and viewer tests: episodes and their
attempts with outcomes written directly, so every figure is known in advance."""

from __future__ import annotations

from pathlib import Path

from fembench_agents.cases.outcomes import CaseOutcome, CaseThresholds
from fembench_agents.contracts import Feedback
from fembench_agents.messages import Message
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, RunLog, RunManifest, episode_key, write_manifest
from fembench_agents.scoring.outcomes import OutcomeBase, StageResult
from fembench_agents.suite.outcomes import FunctionOutcome, InputResult, TestResult, TestSuiteOutcome

MODEL = "mock/model"
TASK_1D = "FEM_1D_bar_CC0_H0_T0"
TASK_2D = "FEM_2D_quad_CC0_H1_T3"
TASK_3D = "MSA_3D_frame_CC1_H4_T1"
TASK_OTHER = "custom_task"


def function_outcome(task: str, statuses: list[tuple[str, float | None]] | None, passed: bool) -> FunctionOutcome:
    """`statuses`: (status, relative error) per input; None fails at parse."""
    if statuses is None:
        stages = (StageResult(stage="parse", passed=False, reason="syntax_error", detail="invalid syntax"),)
        return FunctionOutcome(task_id=task, passed=False, stages=stages)
    inputs = tuple(
        InputResult(index=i, status=s, relative_error=err)  # type: ignore[arg-type]
        for i, (s, err) in enumerate(statuses)
    )
    ran = all(s in ("match", "mismatch") for s, _ in statuses)
    stages = (
        StageResult(stage="parse", passed=True),
        StageResult(stage="imports", passed=True),
        StageResult(stage="execute", passed=ran, reason=None if ran else "runtime_error"),
    )
    if ran:
        stages += (StageResult(stage="correct", passed=passed, reason=None if passed else "wrong_output"),)
    return FunctionOutcome(task_id=task, passed=passed, stages=stages, inputs=inputs)


def suite_outcome(task: str, tests: list[tuple[bool, dict[str, bool]]]) -> TestSuiteOutcome:
    results = tuple(
        TestResult(name=f"test_{i}", present=True, passes_reference=ref, detected=det)
        for i, (ref, det) in enumerate(tests)
    )
    passed = all(t.joint for t in results)
    stage = StageResult(stage="tests", passed=passed, reason=None if passed else "failure_not_detected")
    return TestSuiteOutcome(task_id=task, passed=passed, stages=(stage,), tests=results)


def case_outcome(
    case: str, error: float | None, seconds: float | None, *, executed: bool = True, family: str = "poisson"
) -> CaseOutcome:
    thresholds = CaseThresholds(
        e_base=1e-4, tau_acc=1e-3, t_base=0.5, tau_time=1.0, alpha_acc=10, tau_min=1e-6, alpha_time=2, t_floor=0.1
    )
    stages = [StageResult(stage="executes", passed=executed)]
    if executed and error is not None:
        accurate = error <= thresholds.tau_acc
        stages.append(StageResult(stage="accurate", passed=accurate))
        if accurate and seconds is not None:
            stages.append(StageResult(stage="fast", passed=seconds <= 1.0))
    return CaseOutcome(
        task_id=case,
        passed=all(s.passed for s in stages) and len(stages) == 3,
        stages=tuple(stages),
        library="numpy-scipy",
        family=family,
        relative_l2_error=error,
        solve_seconds=seconds,
        thresholds=thresholds,
    )


def attempt(
    ep: EpisodeRecord, index: int, outcome: OutcomeBase | None, *, code: str = "def f():\n    return 1\n"
) -> AttemptRecord:
    messages = (
        Message(role="system", content="You write finite-element code."),
        Message(role="user", content=f"Write the function for {ep.task_id}, attempt {index}."),
    )
    return AttemptRecord(
        episode=ep.episode,
        task_id=ep.task_id,
        track=ep.track,
        agent=ep.agent,
        model=ep.model,
        repeat=ep.repeat,
        attempt_index=index,
        messages=messages,
        reply=f"Here is my attempt {index}.\n```python\n{code}```\n",
        model_error="timeout" if outcome is None else None,
        outcome=outcome,
        feedback=None if outcome is None or outcome.passed else Feedback(score=0.0, text=f"attempt {index} failed"),
    )


def episode(
    agent: str,
    task: str,
    repeat: int,
    passed: bool,
    *,
    track: str = "code",
    score: float | None = None,
    attempts: int = 1,
    model: str = MODEL,
    stage: tuple[str, str] | None = None,
) -> EpisodeRecord:
    failed = None if passed else (stage or ("correct", "wrong_output"))
    return EpisodeRecord(
        episode=episode_key(model, agent, track, task, repeat),
        task_id=task,
        track=track,  # type: ignore[arg-type]
        agent=agent,
        model=model,
        repeat=repeat,
        status="done",
        passed=passed,
        score=float(passed) if score is None else score,
        attempts=attempts,
        first_pass_attempt=attempts if passed else None,
        failed_stage=failed[0] if failed else None,  # type: ignore[arg-type]
        reason=failed[1] if failed else None,  # type: ignore[arg-type]
        prompt_tokens=100 * attempts,
        completion_tokens=40 * attempts,
        cost_usd=0.001 * attempts,
        model_seconds=0.5 * attempts,
        seconds=1.0 * attempts,
        model_calls=attempts,
    )


def make_run(directory: Path, run_id: str, records: list[AttemptRecord | EpisodeRecord]) -> Path:
    directory.mkdir(parents=True)
    write_manifest(directory, RunManifest(run_id=run_id, config={}, task_hashes={}, versions={}))
    with RunLog(directory) as log:
        for r in records:
            log.append(r)
    return directory

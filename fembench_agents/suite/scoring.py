"""The function tasks' scorer: function attempts (the code track) and
test-suite attempts (the tests track), in stages, in the sandbox, the same way
for every agent. Verdicts are computed here, in the parent, from data the
children return."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Literal, overload

from fembench_agents.scoring import codec
from fembench_agents.scoring.disclosure import NO_CODE, OwnCode, disclosed_error
from fembench_agents.scoring.extraction import check_imports, parse_code
from fembench_agents.scoring.job_results import ended_how
from fembench_agents.scoring.outcomes import ErrorInfo, StageResult
from fembench_agents.scoring.sandbox import JobResult, Sandbox, SandboxPolicy
from fembench_agents.scoring.sandbox.jobs import Implementation, TestsJob, TestSource
from fembench_agents.suite.comparison import compare_outputs
from fembench_agents.suite.model import Task
from fembench_agents.suite.outcomes import FunctionOutcome, InputResult, TestResult, TestSuiteOutcome
from fembench_agents.suite.references import ReferenceFailure as ReferenceFailure
from fembench_agents.suite.references import ReferenceOutput, attempt_preamble, call_job, task_implementation
from fembench_agents.vocabulary import FailureReason

DEFAULT_CALL_SECONDS = 10.0
TEST_SECONDS = 30.0


@dataclass(frozen=True)
class FunctionScoringConfig:
    call_seconds: float = DEFAULT_CALL_SECONDS
    test_seconds: float = TEST_SECONDS
    memory_mb: int = 2048


class FunctionScorer:
    """Scores attempts at function tasks on the code and tests tracks. Safe to share between threads."""

    calibration_id = None  # function verdicts depend on no machine calibration

    def __init__(self, sandbox: Sandbox, config: FunctionScoringConfig | None = None) -> None:
        self.sandbox = sandbox
        self.config = config or FunctionScoringConfig()
        self._references: dict[str, list[ReferenceOutput]] = {}
        self._lock = threading.Lock()

    # ----- policies and jobs -------------------------------------------------
    def _call_policy(self, task: Task) -> SandboxPolicy:
        per_call = task.time_limit or self.config.call_seconds
        wall = min(per_call * len(task.inputs) + 5.0, 900.0)
        return SandboxPolicy(wall_seconds=wall, memory_mb=self.config.memory_mb, hidden_paths=(_task_dir(task),))

    def _test_policy(self, task: Task, pairs: int) -> SandboxPolicy:
        """A tests job: `test_seconds` for each pair, which its coordinator enforces."""
        return SandboxPolicy(
            wall_seconds=self.config.test_seconds * pairs + 5.0,
            memory_mb=self.config.memory_mb,
            hidden_paths=(_task_dir(task),),
        )

    @staticmethod
    def _preamble(task: Task) -> list[str]:
        return attempt_preamble(task)

    @staticmethod
    def task_implementation(task: Task, function: str) -> Implementation:
        """A reference or expected-failure implementation (`references.task_implementation`)."""
        return task_implementation(task, function)

    # ----- reference outputs -------------------------------------------------
    def reference_outputs(self, task: Task) -> list[ReferenceOutput]:
        key = task.content_hash
        with self._lock:
            cached = self._references.get(key)
        if cached is not None:
            return cached
        outputs = self.run_reference(task)
        with self._lock:
            self._references[key] = outputs
        return outputs

    def run_reference(self, task: Task, function: str | None = None) -> list[ReferenceOutput]:
        job = call_job(task, self.task_implementation(task, function or task.main_name))
        result = self.sandbox.run(job, self._call_policy(task))
        frames = {f.get("index"): f for f in result.events("input")}
        if result.events("build_error"):
            raise ReferenceFailure(
                f"{task.task_id}: the module failed to build: {result.events('build_error')[0].get('message')}"
            )
        outputs = []
        for i in range(len(task.inputs)):
            frame = frames.get(i)
            if frame is None:
                raise ReferenceFailure(
                    f"{task.task_id}: reference gave no result on input {i} ({ended_how(result)[1]})"
                )
            if frame["status"] == "ok":
                outputs.append(ReferenceOutput(value=codec.from_data(frame["value"])))
            elif frame.get("error_type") == "UnserializableOutput":  # no value to compare with, not an exception
                raise ReferenceFailure(
                    f"{task.task_id}: the reference's output on input {i} cannot be sent back as data"
                )
            else:
                outputs.append(ReferenceOutput(raises=tuple(frame.get("error_mro", [frame.get("error_type")]))))
        return outputs

    # ----- function attempts -------------------------------------------------
    @overload
    def score(self, task: Task, track: Literal["code"], text: str) -> FunctionOutcome: ...
    @overload
    def score(self, task: Task, track: str, text: str) -> FunctionOutcome | TestSuiteOutcome: ...

    def score(self, task: Task, track: str, text: str) -> FunctionOutcome | TestSuiteOutcome:
        """The attempt `text` at `task` on the code or the tests track, through that track's stages."""
        if track == "code":
            return self.score_function(task, text)
        if track == "tests":
            return self.score_tests(task, text)
        raise ValueError(f"unknown track {track!r}; expected 'code' or 'tests'")

    def score_function(self, task: Task, text: str) -> FunctionOutcome:
        start = time.perf_counter()
        stages: list[StageResult] = []
        parsed = parse_code(text, (task.main_name,))
        parse = StageResult(stage="parse", passed=parsed.error is None, reason=parsed.reason, detail=parsed.error)
        stages.append(_timed(parse, since=start))
        if parsed.error:
            return FunctionOutcome(
                task_id=task.task_id, passed=False, stages=tuple(stages), seconds=time.perf_counter() - start
            )
        t0 = time.perf_counter()
        stages.append(_timed(_imports_stage(parsed.code, task), since=t0))
        if not stages[-1].passed:
            return FunctionOutcome(
                task_id=task.task_id, passed=False, stages=tuple(stages), seconds=time.perf_counter() - start
            )
        reference = self.reference_outputs(task)
        job = call_job(task, {"preamble": self._preamble(task), "code": parsed.code, "function": task.main_name})
        t0 = time.perf_counter()
        result = self.sandbox.run(job, self._call_policy(task))
        own = OwnCode.of(attempt=parsed.code, given=self._preamble(task))
        t1 = time.perf_counter()
        inputs, execute, correct = self._judge_calls(task, result, reference, own)
        stages.append(execute.model_copy(update={"seconds": t1 - t0}))  # the run; judging it is the correct stage's
        if correct is not None:
            stages.append(_timed(correct, since=t1))
        passed = all(s.passed for s in stages) and correct is not None
        return FunctionOutcome(
            task_id=task.task_id,
            passed=passed,
            stages=tuple(stages),
            inputs=tuple(inputs),
            isolation=result.isolation,
            seconds=time.perf_counter() - start,
        )

    def _judge_calls(
        self, task: Task, result: JobResult, reference: list[ReferenceOutput], own: OwnCode | None = None
    ) -> tuple[list[InputResult], StageResult, StageResult | None]:
        """Per-input results and the execute and correct stages; errors as
        their author may see them (`disclosure`), tracebacks into `own`."""
        own = own or NO_CODE
        build = result.events("build_error")
        if build:
            err = disclosed_error(build[0], own)
            return (
                [],
                StageResult(stage="execute", passed=False, reason="load_error", detail=err.summary),
                None,
            )
        frames = {f.get("index"): f for f in result.events("input") if isinstance(f.get("index"), int)}
        inputs: list[InputResult] = []
        execute_reason: FailureReason | None = None
        ended_reason, ended_detail = ended_how(result)
        for i, ref in enumerate(reference):
            frame = frames.get(i)
            if frame is None:
                status = ended_reason if execute_reason is None else "not_run"
                inputs.append(InputResult(index=i, status=status))  # type: ignore[arg-type]
                execute_reason = execute_reason or ended_reason
                continue
            seconds = float(frame.get("seconds", 0.0)) if isinstance(frame.get("seconds"), (int, float)) else None
            if frame.get("status") == "error":
                err = disclosed_error(frame, own)
                if ref.raises is None:
                    inputs.append(InputResult(index=i, status="error", error=err, seconds=seconds))
                    execute_reason = execute_reason or "runtime_error"
                elif ref.raises[0] in frame.get("error_mro", []):
                    inputs.append(InputResult(index=i, status="match", seconds=seconds))
                else:
                    inputs.append(
                        InputResult(index=i, status="mismatch", mismatch="wrong_exception", error=err, seconds=seconds)
                    )
                continue
            if ref.raises is not None:
                inputs.append(
                    InputResult(
                        index=i,
                        status="mismatch",
                        mismatch="expected_exception",
                        where=f"an exception of type {ref.raises[0]}",
                        seconds=seconds,
                    )
                )
                continue
            try:
                value = codec.from_data(frame.get("value"))
            except Exception:  # whatever the child sent, a value that does not decode is not an answer
                inputs.append(InputResult(index=i, status="mismatch", mismatch="unsupported_output", seconds=seconds))
                continue
            found = compare_outputs(value, ref.value, task.comparison)
            inputs.append(
                InputResult(index=i, status="match", seconds=seconds)
                if found is None
                else InputResult(
                    index=i,
                    status="mismatch",
                    mismatch=found.kind,
                    where=found.where,
                    relative_error=found.relative_error,
                    seconds=seconds,
                )
            )
        if execute_reason:
            bad = next(r for r in inputs if r.status in ("error", "timeout", "crashed"))
            detail = f"input {bad.index}: {bad.error.summary}" if bad.error else f"input {bad.index}: {ended_detail}"
            return inputs, StageResult(stage="execute", passed=False, reason=execute_reason, detail=detail), None
        wrong = [r for r in inputs if r.status == "mismatch"]
        correct = StageResult(
            stage="correct",
            passed=not wrong,
            reason="wrong_output" if wrong else None,
            detail=f"{len(wrong)} of {len(inputs)} verification inputs differ" if wrong else None,
        )
        return inputs, StageResult(stage="execute", passed=True), correct

    # ----- test-suite attempts -----------------------------------------------
    def run_pairs(
        self, task: Task, source: TestSource, implementations: list[Implementation], pairs: list[tuple[str, int]]
    ) -> list[JobResult]:
        """Each (test name, index into `implementations`) pair, in one job; the
        pairs' results in their order."""
        job: TestsJob = {
            "kind": "tests",
            "test": source,
            "implementations": implementations,
            "pairs": [{"test": name, "implementation": index} for name, index in pairs],
            "pair_seconds": self.config.test_seconds,
        }
        result = self.sandbox.run(job, self._test_policy(task, len(pairs)))
        return [result.pair(i) for i in range(len(pairs))]

    @staticmethod
    def test_passed(result: JobResult) -> bool:
        frames = result.events("test")
        return bool(frames) and frames[0].get("status") == "passed" and not result.timed_out

    def score_tests(self, task: Task, text: str) -> TestSuiteOutcome:
        start = time.perf_counter()
        stages: list[StageResult] = []
        parsed = parse_code(text, (), prefix="test_")
        parse = StageResult(stage="parse", passed=parsed.error is None, reason=parsed.reason, detail=parsed.error)
        stages.append(_timed(parse, since=start))
        missing = tuple(
            TestResult(name=t.name, present=False, detected={f.name: False for f in t.expected_failures})
            for t in task.tests
        )
        if parsed.error:
            return TestSuiteOutcome(
                task_id=task.task_id,
                passed=False,
                stages=tuple(stages),
                tests=missing,
                seconds=time.perf_counter() - start,
            )
        t0 = time.perf_counter()
        stages.append(_timed(_imports_stage(parsed.code, task), since=t0))
        if not stages[-1].passed:
            return TestSuiteOutcome(
                task_id=task.task_id,
                passed=False,
                stages=tuple(stages),
                tests=missing,
                seconds=time.perf_counter() - start,
            )
        t0 = time.perf_counter()
        present = [t for t in task.tests if t.name in parsed.functions]
        pairs = [(t.name, impl) for t in present for impl in (task.main_name, *(f.name for f in t.expected_failures))]
        names = list(dict.fromkeys(impl for _, impl in pairs))
        source: TestSource = {"preamble": self._preamble(task), "code": parsed.code}
        ran = (
            self.run_pairs(
                task,
                source,
                [self.task_implementation(task, name) for name in names],
                [(test, names.index(impl)) for test, impl in pairs],
            )
            if pairs
            else []
        )
        results = dict(zip(pairs, ran, strict=True))
        isolation = next((r.isolation for r in results.values()), "unknown")
        tests = []
        for t in task.tests:
            if t not in present:
                tests.append(next(m for m in missing if m.name == t.name))
                continue
            ref = results[(t.name, task.main_name)]
            ref_frames = ref.events("test") or ref.events("build_error")
            # a pair that ran out of time ended so, whatever its test wrote on its channel before
            ref_error = (
                ErrorInfo(type=ended_how(ref)[0])
                if ref.timed_out or not ref_frames
                else disclosed_error(
                    ref_frames[0], OwnCode.of(test=parsed.code, given=self._preamble(task)), with_message=False
                )
                if ref_frames[0].get("status") != "passed"
                else None
            )
            tests.append(
                TestResult(
                    name=t.name,
                    present=True,
                    passes_reference=self.test_passed(ref),
                    reference_error=ref_error,
                    detected={f.name: not self.test_passed(results[(t.name, f.name)]) for f in t.expected_failures},
                )
            )
        all_joint = all(r.joint for r in tests)
        stages.append(
            StageResult(
                stage="tests",
                passed=all_joint,
                reason=None if all_joint else _tests_reason(tests),
                seconds=time.perf_counter() - t0,
            )
        )
        return TestSuiteOutcome(
            task_id=task.task_id,
            passed=all_joint,
            stages=tuple(stages),
            tests=tuple(tests),
            isolation=isolation,
            seconds=time.perf_counter() - start,
        )

    def close(self) -> None:
        """Nothing to release: the sandbox belongs to the caller (kept for callers that close)."""


def _timed(stage: StageResult, *, since: float) -> StageResult:
    return stage.model_copy(update={"seconds": time.perf_counter() - since})


def _imports_stage(code: str, task: Task) -> StageResult:
    imports = check_imports(code, task.required_imports)
    return StageResult(
        stage="imports",
        passed=imports.ok,
        reason=None if imports.ok else "disallowed_import",
        detail=None if imports.ok else "; ".join(imports.disallowed),
    )


def _tests_reason(tests: list[TestResult]) -> FailureReason:
    if any(not t.present for t in tests):
        return "missing_test"
    if any(not t.passes_reference for t in tests):
        return "fails_on_reference"
    return "failure_not_detected"


def _task_dir(task: Task) -> str:
    import os

    return os.path.dirname(task.path)

"""`tasks validate`: proves a task is internally consistent.

Checks, each in the sandbox: the reference reproduces its own outputs
deterministically; an ideal answer (the reference plus the helpers the solver
is not given, importing only the allowed imports) passes the function track;
the task's own tests, submitted as a test-suite attempt, reach joint success
(pass on the reference, fail on every listed expected failure); each expected
failure differs from the reference on a verification input or is caught by a
test.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from fembench_agents.kinds.review import Validation, ValidationOptions, ValidationProblem, ValidationProgress
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.comparison import compare_outputs
from fembench_agents.suite.loader import load_offered
from fembench_agents.suite.model import Comparison, Task
from fembench_agents.suite.scoring import FunctionScorer, ReferenceFailure

_EXACT = Comparison(rtol=0.0, atol=0.0)


def ideal_answer(task: Task) -> str:
    parts = [*task.required_imports, "", *(h.source for h in task.unprovided_helpers()), task.main_source]
    return "\n".join(parts)


def validate_task(task: Task, evaluator: FunctionScorer) -> list[ValidationProblem]:
    problems: list[ValidationProblem] = []

    def problem(check: str, message: str) -> None:
        problems.append(ValidationProblem(task_id=task.task_id, check=check, message=message))

    if not task.tests:
        problem("tests", "the task has no test cases")
    for t in task.tests:
        if not t.expected_failures:
            problem("tests", f"{t.name} lists no expected failures")
    try:
        first = evaluator.run_reference(task)
        second = evaluator.run_reference(task)
    except ReferenceFailure as exc:
        problem("reference", str(exc))
        return problems
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        same = a.raises == b.raises and (a.raises is not None or compare_outputs(a.value, b.value, _EXACT) is None)
        if not same:
            problem("deterministic", f"the reference gives different outputs on input {i} in two runs")
    outcome = evaluator.score(task, "code", ideal_answer(task))
    if not outcome.passed:
        detail = next((s.detail or s.reason for s in outcome.stages if not s.passed), "")
        problem(
            "ideal_answer", f"the reference, as a solver would submit it, fails at {outcome.failed_stage}: {detail}"
        )
    suite = evaluator.score_tests(task, "\n\n".join(t.source for t in task.tests))
    if suite.failed_stage in ("parse", "imports"):
        detail = next((s.detail or s.reason for s in suite.stages if not s.passed), "")
        problem("tests", f"the task's tests fail the {suite.failed_stage} stage: {detail}")
    caught: set[str] = set()
    for result in suite.tests:
        if result.present and not result.passes_reference:
            err = result.reference_error
            problem(
                "tests",
                f"{result.name} fails on the reference ({err.type if err else 'no result'}"
                f"{': ' + ' | '.join(err.traceback[-2:]) if err and err.traceback else ''})",
            )
        for name, detected in result.detected.items():
            if detected:
                caught.add(name)
            elif result.present:
                problem("expected_failures", f"{result.name} does not catch {name}")
    for name in task.expected_failure_names:
        if name in caught:
            continue
        try:
            outputs = evaluator.run_reference(task, function=name)
        except ReferenceFailure:
            continue  # crashing differs from the reference
        if all(
            a.raises == b.raises
            and (a.raises is not None or compare_outputs(a.value, b.value, task.comparison) is None)
            for a, b in zip(outputs, first, strict=True)
        ):
            problem("expected_failures", f"{name} matches the reference on every input and no test catches it")
    return problems


class FunctionValidator:
    """`tasks validate` (`KindValidator`): every task module that loads, each task checked in the sandbox."""

    def validate(self, path: str, options: ValidationOptions, progress: ValidationProgress) -> Validation:
        with Sandbox(allow_weak_isolation=True) as sandbox:  # runs only the suite's own modules
            suite = load_offered(path, sandbox)
            for skip in suite.skipped:
                progress.note(f"skipped task {skip.name}: {skip.reason}")
            scorer = FunctionScorer(sandbox)
            progress.start(len(suite.tasks))
            problems: list[ValidationProblem] = []
            with ThreadPoolExecutor(max_workers=sandbox.size) as pool:
                for found in pool.map(lambda t: validate_task(t, scorer), suite.tasks):
                    problems += found
                    progress.advance()
            scorer.close()
        return Validation(
            valid=sorted({t.task_id for t in suite.tasks} - {p.task_id for p in problems if p.task_id}),
            problems=problems,
            skipped=suite.skipped,
            summary=f"{len(suite.tasks)} tasks valid",
        )

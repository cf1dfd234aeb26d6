"""What of a function task stays hidden from attempts (`KindHidden`): its
reference and the helpers it relies on, the reference outputs the evaluator
computes, and the names of its tests' expected failures. What a training task
may show a reflection step: its reference implementation (code track) or its
reference tests (tests track)."""

from __future__ import annotations

from fembench_agents.kinds.contract import AttemptScorer, HiddenMaterial, HiddenNumbers
from fembench_agents.suite.model import Task
from fembench_agents.suite.scoring import FunctionScorer, ReferenceFailure
from fembench_agents.suite.validation import ideal_answer

SOURCE_LABEL = "reference or its helpers"
OUTPUTS = "reference output"


def reference_material(task: Task) -> str:
    """The task's reference and every helper it relies on, given or not."""
    skip = {"task_info", *task.test_names, *task.expected_failure_names}
    parts = [task.main_source, *(s for n, s in task.module_functions.items() if n not in skip and n != task.main_name)]
    return "\n".join(parts)


def reference_tests(task: Task) -> str:
    """The task's own tests, as a tests-track answer would be written."""
    return "\n".join([*task.required_imports, "import pytest", "", *(t.source for t in task.tests)])


class FunctionHidden:
    """The code and tests tracks' hidden material (`KindHidden`)."""

    def material(self, problem: Task, scorer: AttemptScorer) -> HiddenMaterial:
        if not isinstance(scorer, FunctionScorer):
            raise TypeError(f"a function task's reference outputs need a FunctionScorer, got {type(scorer).__name__}")
        numbers: tuple[HiddenNumbers, ...] = ()
        notes: tuple[str, ...] = ()
        try:
            outputs = scorer.reference_outputs(problem)
        except ReferenceFailure as exc:
            notes = (f"no reference outputs for {problem.task_id}: {exc}",)
        else:
            numbers = (HiddenNumbers(OUTPUTS, [o.value for o in outputs if o.raises is None]),)
        return HiddenMaterial(
            source=reference_material(problem),
            source_label=SOURCE_LABEL,
            numbers=numbers,
            names=problem.expected_failure_names,
            notes=notes,
        )

    def visible(self, problem: Task) -> str:
        # the whole module: with `include_reference` a reflection step sees training references
        return problem.module_source

    def reference_answer(self, problem: Task, track: str) -> str:
        return reference_tests(problem) if track == "tests" else ideal_answer(problem)

    def oracle_program(self, problem: Task, track: str) -> str:
        return self.reference_answer(problem, track)

"""Feedback builders and prompts: every template renders from real outcomes, and
nothing the evaluator hides (reference outputs and sources, expected failures,
tolerances, time limits) reaches a feedback text or a prompt, for every task of
the suite."""

from __future__ import annotations

import ast
import inspect
import math
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT

from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.cases.outcomes import CaseOutcome
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import (
    FEEDBACK_DIR,
    TemplateFeedback,
    magnitude,
    outcome_score,
)
from fembench_agents.scoring.outcomes import StageResult
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.feedback import describe_mismatch
from fembench_agents.suite.loader import load_tasks
from fembench_agents.suite.model import Task
from fembench_agents.suite.outcomes import FunctionOutcome, InputResult
from fembench_agents.suite.outcomes import TestResult as CaseResult  # aliased: pytest would collect Test*
from fembench_agents.suite.outcomes import TestSuiteOutcome as SuiteOutcome
from fembench_agents.suite.scoring import DEFAULT_CALL_SECONDS, TEST_SECONDS, FunctionScorer, FunctionScoringConfig
from fembench_agents.suite.solver_view import function_stub

TEMPLATES = {p.name for p in FEEDBACK_DIR.glob("*.j2")}
FUNCTION_TEMPLATES = TEMPLATES - {"case.j2"}  # case.j2: PDE cases (tests/test_cases_scoring.py)
SLOW_CALL_SECONDS = 0.0371  # distinctive, so that it can be searched for


# ----------------------------------------------------------------- builder units


def fn_outcome(
    *stages: tuple[str, bool, str | None, str | None], inputs: tuple[InputResult, ...] = ()
) -> FunctionOutcome:
    return FunctionOutcome(
        task_id="T",
        passed=all(s[1] for s in stages) and stages[-1][0] == "correct",
        stages=tuple(StageResult(stage=a, passed=b, reason=c, detail=d) for a, b, c, d in stages),
        inputs=inputs,
    )


def test_every_template_is_chosen_by_some_outcome() -> None:
    fb = TemplateFeedback()
    cases = {
        "parse.j2": fn_outcome(("parse", False, "syntax_error", "SyntaxError: x (line 1)")),
        "imports.j2": fn_outcome(("parse", True, None, None), ("imports", False, "disallowed_import", "import os")),
        "runtime_error.j2": fn_outcome(
            ("parse", True, None, None),
            ("imports", True, None, None),
            ("execute", False, "load_error", "NameError: name 'q' is not defined"),
        ),
        "timeout.j2": fn_outcome(
            ("parse", True, None, None),
            ("imports", True, None, None),
            ("execute", False, "timeout", "input 0: the code did not finish"),
            inputs=(InputResult(index=0, status="timeout"),),
        ),
        "crashed.j2": fn_outcome(
            ("parse", True, None, None),
            ("imports", True, None, None),
            ("execute", False, "crashed", "input 2: the process was killed by signal 9"),
            inputs=(
                InputResult(index=0, status="match"),
                InputResult(index=1, status="match"),
                InputResult(index=2, status="crashed"),
            ),
        ),
        "wrong_output.j2": fn_outcome(
            ("parse", True, None, None),
            ("imports", True, None, None),
            ("execute", True, None, None),
            ("correct", False, "wrong_output", "1 of 1"),
            inputs=(
                InputResult(
                    index=0, status="mismatch", mismatch="value_mismatch", where="output[1]", relative_error=0.0042
                ),
            ),
        ),
        "case.j2": CaseOutcome(
            task_id="C",
            passed=False,
            stages=(StageResult(stage="executes", passed=False, reason="timeout"),),
            library="numpy-scipy",
            family="poisson",
        ),
        "passed.j2": fn_outcome(
            ("parse", True, None, None),
            ("imports", True, None, None),
            ("execute", True, None, None),
            ("correct", True, None, None),
        ),
        "tests.j2": SuiteOutcome(
            task_id="T",
            passed=False,
            stages=(
                StageResult(stage="parse", passed=True),
                StageResult(stage="imports", passed=True),
                StageResult(stage="tests", passed=False, reason="missing_test"),
            ),
            tests=(CaseResult(name="test_a", present=False, detected={"fail_x": False}),),
        ),
    }
    assert set(cases) == TEMPLATES
    for name, outcome in cases.items():
        assert fb.template_for(outcome) == name
        text = fb(outcome).text
        assert text and "{{" not in text and "{%" not in text
    load_error = fb(cases["runtime_error.j2"]).text
    assert "NameError: name 'q' is not defined" in load_error and "verification input" not in load_error
    wrong = fb(cases["wrong_output.j2"]).text
    assert "1 of 1 verification inputs" in wrong and "about 1e-2 relative" in wrong and "output[1]" in wrong
    assert "0.0042" not in wrong


def test_crash_feedback_names_the_input_once() -> None:
    outcome = fn_outcome(
        ("parse", True, None, None),
        ("imports", True, None, None),
        ("execute", False, "crashed", "input 2: the process was killed by signal 11 (a crash)"),
        inputs=(InputResult(index=2, status="crashed"),),
    )
    text = TemplateFeedback()(outcome).text
    assert "on verification input 2: the process was killed by signal 11" in text
    assert text.count("input 2") == 1


def test_parse_feedback_asks_for_what_the_track_wants() -> None:
    parse = (
        StageResult(
            stage="parse", passed=False, reason="missing_function", detail="no function whose name starts with 'test_'"
        ),
    )
    tests = SuiteOutcome(task_id="T", passed=False, stages=parse)
    function = FunctionOutcome(task_id="T", passed=False, stages=parse)
    assert "defines the requested test functions" in TemplateFeedback()(tests).text
    assert "defines the requested function" in TemplateFeedback()(function).text
    assert "defines my_fn" in TemplateFeedback(target="my_fn")(function).text


def test_scores_grow_with_the_stage_reached() -> None:
    def upto(stage: str, share: float = 0.0) -> FunctionOutcome:
        order = ["parse", "imports", "execute", "correct"]
        reason = {
            "parse": "syntax_error",
            "imports": "disallowed_import",
            "execute": "runtime_error",
            "correct": "wrong_output",
        }[stage]
        stages = [(s, True, None, None) for s in order[: order.index(stage)]] + [(stage, False, reason, None)]
        inputs = tuple(InputResult(index=i, status="match" if i < share * 4 else "mismatch") for i in range(4))
        return fn_outcome(*stages, inputs=inputs)

    scores = [
        outcome_score(upto("parse")),
        outcome_score(upto("imports")),
        outcome_score(upto("execute")),
        outcome_score(upto("correct", 0.0)),
        outcome_score(upto("correct", 0.5)),
        outcome_score(upto("correct", 0.75)),
    ]
    assert scores == sorted(scores) and len(set(scores)) == len(scores) and scores[-1] < 1.0
    suite = SuiteOutcome(
        task_id="T",
        passed=False,
        stages=(StageResult(stage="tests", passed=False),),
        tests=(
            CaseResult(name="a", present=True, passes_reference=True, detected={"f": True}),
            CaseResult(name="b", present=True, passes_reference=False),
        ),
    )
    assert outcome_score(suite) == 0.5


@pytest.mark.parametrize(
    "x, text",
    [
        (0.0042, "1e-2"),
        (3.2e-7, "1e-6"),
        (12.0, "1e1"),
        (None, "unknown"),
        (0.0, "unknown"),
        (float("nan"), "unknown"),
        (-1.0, "unknown"),
    ],
)
def test_magnitude_shows_only_an_order_of_magnitude(x: float | None, text: str) -> None:
    assert magnitude(x) == text


def test_describe_mismatch_never_shows_the_expected_exception_type() -> None:
    r = InputResult(index=0, status="mismatch", mismatch="expected_exception", where="an exception of type ValueError")
    assert "ValueError" not in describe_mismatch(r)


# ----------------------------------------------------------------- the real suite


@pytest.fixture(scope="module")
def suite(sandbox: Sandbox) -> list[Task]:
    tasks = load_tasks(ROOT / "tasks", sandbox)
    assert len(tasks) == 33
    return tasks


def positional_arity(task: Task) -> int:
    node = ast.parse(task.main_signature + "\n    ...").body[0]
    assert isinstance(node, ast.FunctionDef)
    return len(node.args.posonlyargs) + len(node.args.args) - len(node.args.defaults)


PERTURB = """

def _perturb(value):
    try:
        if isinstance(value, (bool, np.bool_)):
            return value
        if isinstance(value, (int, np.integer)):
            return value + 1
        if isinstance(value, (float, np.floating)):
            return value * 1.001 + 0.37
        if isinstance(value, np.ndarray):
            if value.dtype.kind in "iu":
                return value + 1
            if value.dtype.kind in "fc":
                return value * 1.001 + 0.37
            return value
        if isinstance(value, tuple):
            return tuple(_perturb(v) for v in value)
        if isinstance(value, list):
            return [_perturb(v) for v in value]
        if isinstance(value, dict):
            return {k: _perturb(v) for k, v in value.items()}
    except Exception:
        pass
    return value


def MAIN(*args, **kwargs):
    return _perturb(_reference_impl(*args, **kwargs))
"""


def reference_module(task: Task) -> str:
    """The task's reference as a stand-alone module (constants, unprovided helpers, reference)."""
    return FunctionScorer.task_implementation(task, task.main_name)["module_source"]


def perturbed_reference(task: Task) -> str:
    tree = ast.parse(reference_module(task))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == task.main_name:
            node.name = "_reference_impl"
    return ast.unparse(tree) + PERTURB.replace("MAIN", task.main_name)


def code_attempts(task: Task) -> dict[str, str]:
    m = task.main_name
    return {
        "parse_empty": "",
        "parse_syntax": "```python\ndef broken(:\n    pass\n```",
        "parse_missing": "def something_else():\n    return 1\n",
        "imports": f"import subprocess\n\ndef {m}(*args, **kwargs):\n    return subprocess.run(['true'])\n",
        "runtime": (
            f"def _pick(items, n):\n    return items[n + 10]\n\n\n"
            f"def {m}(*args, **kwargs):\n    return _pick([1, 2, 3], len(args))\n"
        ),
        "load_error": f"VALUE = [1, 2, 3][7]\n\ndef {m}(*args, **kwargs):\n    return VALUE\n",
        "crash": f"import numpy as np\n\ndef {m}(*args, **kwargs):\n    return np.ctypeslib.ctypes.string_at(8, 16)\n",
        "wrong_none": f"def {m}(*args, **kwargs):\n    return None\n",
        "wrong_perturbed": perturbed_reference(task),
        "passed": reference_module(task),
    }


def suite_attempts(task: Task) -> dict[str, str]:
    by_failures = sorted(task.tests, key=lambda t: len(t.expected_failures))
    lenient, strict = by_failures[0], by_failures[1]
    nones = ", ".join(["None"] * positional_arity(task))
    suite = (
        f"import numpy as np\n\n\ndef {lenient.name}(fcn):\n    assert fcn is not None\n\n\n"
        f"def {strict.name}(fcn):\n    result = fcn({nones})\n    assert result is None and False\n"
    )
    return {
        "tests_parse": "Sorry, no code this time.",
        "tests_imports": "import subprocess\n\ndef test_anything(fcn):\n    assert subprocess\n",
        "tests_missing": "def test_not_requested(fcn):\n    assert True\n",
        "tests_suite": suite,  # undetected failures, a test failing on the reference, missing tests
    }


SLEEP = "import numpy as np\n\ndef {m}(*args, **kwargs):\n    np.ctypeslib.ctypes.CDLL(None).sleep(1000)\n"


@pytest.fixture(scope="module")
def scored(suite: list[Task], evaluator: Evaluator) -> dict[str, list[tuple[str, FunctionOutcome | SuiteOutcome]]]:
    """Real outcomes of attempts at every task that reach every template."""
    assert all(any(line.strip() == "import numpy as np" for line in t.required_imports) for t in suite)
    assert all(len(t.tests) >= 2 for t in suite)
    results: dict[str, list[tuple[str, Any]]] = {t.task_id: [] for t in suite}
    with (
        Sandbox(workers=12) as slow_box,
        ThreadPoolExecutor(max_workers=12) as slow_pool,
        ThreadPoolExecutor(max_workers=2) as pool,
    ):
        slow = FunctionScorer(slow_box, FunctionScoringConfig(call_seconds=SLOW_CALL_SECONDS))
        timeouts = {t.task_id: slow_pool.submit(slow.score_function, t, SLEEP.format(m=t.main_name)) for t in suite}
        jobs = [
            (t.task_id, label, pool.submit(evaluator.score, t, "code", text))
            for t in suite
            for label, text in code_attempts(t).items()
        ]
        jobs += [
            (t.task_id, label, pool.submit(evaluator.score, t, "tests", text))
            for t in suite
            for label, text in suite_attempts(t).items()
        ]
        for task_id, label, future in jobs:
            results[task_id].append((label, future.result()))
        for task_id, future in timeouts.items():
            results[task_id].append(("timeout", future.result()))
        slow.close()
    return results


EXPECTED = {
    "parse_empty": ("parse.j2", "empty_reply"),
    "parse_syntax": ("parse.j2", "syntax_error"),
    "parse_missing": ("parse.j2", "missing_function"),
    "imports": ("imports.j2", "disallowed_import"),
    "runtime": ("runtime_error.j2", "runtime_error"),
    "load_error": ("runtime_error.j2", "load_error"),
    "crash": ("crashed.j2", "crashed"),
    "timeout": ("timeout.j2", "timeout"),
    "wrong_none": ("wrong_output.j2", "wrong_output"),
    "wrong_perturbed": ("wrong_output.j2", "wrong_output"),
    "passed": ("passed.j2", None),
    "tests_parse": ("parse.j2", "syntax_error"),
    "tests_imports": ("imports.j2", "disallowed_import"),
    "tests_missing": ("tests.j2", "missing_test"),
    "tests_suite": ("tests.j2", "missing_test"),
}


def test_attempts_reach_every_template_for_every_task(scored: dict[str, list[tuple[str, Any]]]) -> None:
    fb = TemplateFeedback()
    for task_id, outcomes in scored.items():
        got = {label: (fb.template_for(o), o.reason) for label, o in outcomes}
        if got["tests_suite"] == ("tests.j2", "fails_on_reference"):  # a task with two tests: none missing
            got["tests_suite"] = EXPECTED["tests_suite"]
        assert got == EXPECTED, task_id
        assert {fb.template_for(o) for _, o in outcomes} == FUNCTION_TEMPLATES
        suite = dict(outcomes)["tests_suite"]
        tests = {t.name: t for t in suite.tests}
        assert all(not t.present for t in dict(outcomes)["tests_missing"].tests), task_id
        assert any(not t.present for t in tests.values()) == (len(tests) > 2), task_id
        assert any(t.present and not t.passes_reference for t in tests.values()), task_id
        assert any(t.present and t.passes_reference and not t.detects_all for t in tests.values()), task_id
        perturbed = dict(outcomes)["wrong_perturbed"]
        assert any(r.mismatch for r in perturbed.inputs), task_id


def flat_floats(value: Any) -> Iterator[float]:
    if isinstance(value, dict):
        for v in value.values():
            yield from flat_floats(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from flat_floats(v)
    elif isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            for v in np.ravel(value):
                yield from flat_floats(complex(v) if value.dtype.kind == "c" else float(v))
        elif value.dtype == object:
            for v in value.ravel():
                yield from flat_floats(v)
    elif isinstance(value, complex):
        yield value.real
        yield value.imag
    elif isinstance(value, (float, np.floating)):
        yield float(value)


def distinctive(x: float) -> bool:
    """Worth searching for: finite, not tiny, and needing three or more significant digits."""
    return math.isfinite(x) and abs(x) > 1e-12 and float(f"{abs(x):.2g}") != abs(x)


def number_forms(x: float) -> set[str]:
    a = abs(x)
    forms = {repr(a), f"{a:.6g}", f"{a:.3g}", f"{a:.4f}", str(round(a, 3)), str(round(a, 4)), f"{a:.6e}"}
    return {f for f in forms if len(f.strip("0.")) >= 3}


def norm(text: str) -> str:
    """Whitespace collapsed and docstring quotes dropped, so that a line matches however it is indented."""
    return " ".join(text.replace('"""', " ").replace("'''", " ").split())


def long_lines(*sources: str, limit: int = 25) -> set[str]:
    return {norm(line) for source in sources for line in source.splitlines() if len(norm(line)) > limit}


NUMBER = re.compile(r"(?<![\w.])\d[\d.]*(?:e[+-]?\d+)?")


def numbers_in(text: str) -> set[str]:
    """Every number written in `text`, as written (a sign is not part of it)."""
    return set(NUMBER.findall(text)) | {n.rstrip(".") for n in NUMBER.findall(text)}


def secrets_of(task: Task, evaluator: Evaluator) -> dict[str, set[str]]:
    numbers = {
        form
        for ref in evaluator.scorer_for("code").reference_outputs(task)
        if ref.raises is None
        for x in flat_floats(ref.value)
        if distinctive(x)
        for form in number_forms(x)
    }
    ef_sources = [f.source for t in task.tests for f in t.expected_failures]
    wall = SLOW_CALL_SECONDS * len(task.inputs) + 5.0
    limits = {repr(SLOW_CALL_SECONDS), repr(wall), f"{wall:.3g}", repr(DEFAULT_CALL_SECONDS), repr(TEST_SECONDS)}
    if task.time_limit:
        limits |= {repr(task.time_limit), f"{task.time_limit:g} s", f"{task.time_limit:g} seconds"}
    return {
        "reference output": numbers,
        "reference source line": long_lines(task.main_source, *(h.source for h in task.unprovided_helpers())),
        "expected-failure source line": long_lines(*ef_sources),
        "tolerance": {
            "1e-06",
            "1e-09",
            "0.000001",
            "rtol",
            "atol",
            "tolerance",
            repr(task.comparison.rtol),
            repr(task.comparison.atol),
        },
        "time limit": limits,
    }


def leaks(text: str, secrets: dict[str, set[str]]) -> list[str]:
    flat = norm(text)
    numbers = numbers_in(flat)
    found = []
    for kind, items in secrets.items():
        for item in items:
            if (item in numbers) if NUMBER.fullmatch(item) else (item in flat):
                found.append(f"{kind}: {item!r}")
    return found


def test_no_feedback_text_leaks_what_the_evaluator_hides(
    scored: dict[str, list[tuple[str, Any]]], suite: list[Task], evaluator: Evaluator
) -> None:
    builders = [TemplateFeedback(), TemplateFeedback(target="the function", tests_target="the tests")]
    by_id = {t.task_id: t for t in suite}
    problems = []
    checked = 0
    for task_id, outcomes in scored.items():
        task = by_id[task_id]
        secrets = secrets_of(task, evaluator)
        assert secrets["reference source line"] and secrets["expected-failure source line"], task_id
        for label, outcome in outcomes:
            for fb in builders:
                feedback = fb(outcome)
                checked += 1
                problems += [f"{task_id} {label}: {leak}" for leak in leaks(feedback.text, secrets)]
                # the efs' names are what a test suite's feedback is allowed to name; their code is not
    assert checked == 2 * 15 * 33
    assert not problems, "\n".join(problems[:40])
    # at least some tasks have reference outputs worth searching for
    assert sum(bool(secrets_of(t, evaluator)["reference output"]) for t in suite) > 25


def test_the_leak_check_itself_finds_planted_secrets(suite: list[Task], evaluator: Evaluator) -> None:
    """The searches above can fail: a text quoting a secret is caught."""
    task = next(t for t in suite if t.task_id.startswith("MSA_3D_local_elastic_stiffness"))
    secrets = secrets_of(task, evaluator)
    number = next(iter(secrets["reference output"]))
    ref_line = next(iter(secrets["reference source line"]))
    ef_line = next(iter(secrets["expected-failure source line"]))
    for planted in (
        f"the value should be {number}.",
        f"at:   {ref_line}",
        f"-  {ef_line}",
        "with rtol 1e-06",
        f"within {SLOW_CALL_SECONDS} s",
    ):
        assert leaks(f"Your previous function failed.\n{planted}\nFix it.", secrets), planted
    assert not leaks("Your previous function raised an exception on verification input 3.", secrets)


# ----------------------------------------------------------------- prompts of the real suite


def public_text(task: Task) -> str:
    """What a solver may see anyway: signature, docstring, helpers, imports, test names and docstrings."""
    parts = [function_stub(task), *(h.source for h in task.helpers), *task.required_imports]
    parts += [f"def {t.name}(fcn):\n{t.docstring}" for t in task.tests]
    return norm("\n".join(parts))  # one line: a hidden line may match across the public text's line breaks


def hidden_lines(task: Task) -> set[str]:
    """Lines of the reference, the helpers a solver must write, the expected failures and the
    test bodies, except those that are also part of what is public."""
    sources = [
        task.main_source,
        *(h.source for h in task.unprovided_helpers()),
        *(f.source for t in task.tests for f in t.expected_failures),
        *(t.source for t in task.tests),
    ]
    public = public_text(task)
    return {line for line in long_lines(*sources) if line not in public}


def prompt_problems(task: Task, prompt: str) -> list[str]:
    flat = norm(prompt)
    problems = [f"{task.task_id}: source line {line!r}" for line in hidden_lines(task) if line in flat]
    return problems + [
        f"{task.task_id}: expected failure {name!r}"
        for name in task.expected_failure_names
        if re.search(rf"\b{re.escape(name)}\b", prompt)
    ]


@pytest.mark.parametrize("scaffold", ["single_shot", "template_guided"])
@pytest.mark.parametrize("track", ["code", "tests"])
def test_prompts_show_no_hidden_source_and_no_expected_failure_names(
    suite: list[Task], scaffold: str, track: str
) -> None:
    renderer = PromptRenderer()
    problems = []
    for task in suite:
        prompt = renderer.task_prompt(task, track, scaffold)  # type: ignore[arg-type]
        flat = norm(prompt)
        assert hidden_lines(task) and task.expected_failure_names, task.task_id
        problems += prompt_problems(task, prompt)
        # what is public does reach it
        assert task.main_signature.split("(")[0] in prompt
        assert all(norm(line) in flat for line in task.main_docstring.splitlines() if line.strip())
        if track == "tests":
            assert all(f"def {t.name}(fcn):" in prompt for t in task.tests)
    assert not problems, "\n".join(problems[:40])


def test_the_prompt_check_itself_finds_planted_secrets(suite: list[Task]) -> None:
    task = suite[0]
    line = sorted(hidden_lines(task))[0]
    name = task.expected_failure_names[0]
    assert not prompt_problems(task, PromptRenderer().task_prompt(task, "code"))
    for planted in (line, f"Unlike {name}, do it right."):
        leaky = task.model_copy(update={"main_docstring": task.main_docstring + "\n" + planted})
        assert prompt_problems(task, PromptRenderer().task_prompt(leaky, "code")), planted


def test_skeleton_of_every_task_is_runnable_and_built_from_the_stub(suite: list[Task]) -> None:
    renderer = PromptRenderer()
    for task in suite:
        skeleton = renderer.skeleton(task, "code")
        assert norm(skeleton).find(norm(function_stub(task))) >= 0, task.task_id
        namespace: dict[str, Any] = {}
        exec(compile(skeleton, f"<skeleton {task.task_id}>", "exec"), namespace)
        fn = namespace[task.main_name]
        required = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        with pytest.raises(NotImplementedError):
            fn(*[None] * len(required))
        assert not (hidden_lines(task) & long_lines(skeleton)), task.task_id
        assert skeleton in renderer.task_prompt(task, "code", "template_guided")


def test_feedback_templates_and_scaffolds_are_where_the_product_says(tmp_path: Path) -> None:
    assert FEEDBACK_DIR == ROOT / "feedback"
    assert TEMPLATES == {
        "parse.j2",
        "imports.j2",
        "runtime_error.j2",
        "timeout.j2",
        "crashed.j2",
        "wrong_output.j2",
        "passed.j2",
        "tests.j2",
        "case.j2",
    }
    # a template folder of one's own is honoured
    (tmp_path / "passed.j2").write_text("CUSTOM {{ target }}")
    custom = TemplateFeedback(template_dir=tmp_path, target="the thing")
    outcome = fn_outcome(
        ("parse", True, None, None),
        ("imports", True, None, None),
        ("execute", True, None, None),
        ("correct", True, None, None),
    )
    assert custom(outcome).text == "CUSTOM the thing"

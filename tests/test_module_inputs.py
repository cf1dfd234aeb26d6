"""Task modules whose verification inputs hold functions (FEM-Bench passes body
forces as lambdas): they load unchanged, the inputs are built where attempts
run, tests pass functions through the proxy, and nothing an attempt reaches
through such a function is hidden from the solver. And a module that does not
load is skipped by name, never sinking the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, scale_source, write_module

from fembench_agents.scoring.codec import TASK_INPUT
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_each, load_task
from fembench_agents.suite.validation import ideal_answer, validate_task

# Our own task in the published format: a distributed load given as a function.
LOADS = '''
import numpy as np


def element_share(h):
    """Half of an element's length: what each of its two nodes carries."""
    return 0.5 * h


def _sample_point(a, b):
    return 0.5 * (a + b)


def nodal_loads(x_nodes, load_fn=None):
    """Lumped nodal loads of a distributed axial load q(x) on a 1D mesh.

    Each element [x_i, x_(i+1)] of length h gives element_share(h) * q(midpoint)
    to each of its two nodes; no load_fn means no load. Returns an array of
    len(x_nodes).
    """
    x = np.asarray(x_nodes, dtype=float)
    f = np.zeros(len(x))
    if load_fn is None:
        return f
    for i in range(len(x) - 1):
        q = load_fn(_sample_point(x[i], x[i + 1]))
        f[i:i + 2] += element_share(x[i + 1] - x[i]) * q
    return f


def test_total_of_a_uniform_load(fcn):
    """A uniform load q on [0, 2] gives nodal loads that sum to 2 q."""
    f = fcn(np.array([0.0, 1.0, 2.0]), lambda x: 3.0)
    assert np.isclose(f.sum(), 6.0)


def test_load_sampled_at_midpoints(fcn):
    """The load function is called once per element, at its midpoint."""
    seen = []

    def q(x):
        seen.append(float(x))
        return 1.0

    fcn(np.array([0.0, 2.0, 3.0]), q)
    assert seen == [1.0, 2.5]


def fail_quarter_share(x_nodes, load_fn=None):
    x = np.asarray(x_nodes, dtype=float)
    f = np.zeros(len(x))
    for i in range(len(x) - 1):
        f[i:i + 2] += 0.25 * (x[i + 1] - x[i]) * load_fn(0.5 * (x[i] + x[i + 1]))
    return f


def fail_left_end(x_nodes, load_fn=None):
    x = np.asarray(x_nodes, dtype=float)
    f = np.zeros(len(x))
    for i in range(len(x) - 1):
        f[i:i + 2] += 0.5 * (x[i + 1] - x[i]) * load_fn(x[i])
    return f


SCALE = 2.5


def task_info():
    return {
        "task_id": "nodal_loads_CC0_H2_T2",
        "task_short_description": "lumped nodal loads of a distributed load function",
        "created_date": "2026-01-01",
        "created_by": "tests",
        "main_fcn": nodal_loads,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [element_share],
        "reference_verification_inputs": [
            [np.array([0.0, 1.0, 2.0]), lambda x: 3.0],
            [np.array([0.0, 1.0, 3.0])],
            [np.linspace(0.0, 1.0, 5), lambda x: SCALE * np.sin(x)],
            [np.array([0.0, 0.5, 2.0]), lambda x: element_share(x)],
        ],
        "test_cases": [
            {"test_code": test_total_of_a_uniform_load, "expected_failures": [fail_quarter_share]},
            {"test_code": test_load_sampled_at_midpoints, "expected_failures": [fail_left_end]},
        ],
    }
'''

# An attempt that reaches for the reference through a load function's globals.
THROUGH_GLOBALS = """
import numpy as np

def nodal_loads(x_nodes, load_fn=None):
    return load_fn.__globals__["{name}"](x_nodes, load_fn)
"""


@pytest.fixture(scope="module")
def loads_task(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    path = write_module(tmp_path_factory.mktemp("loads"), "nodal_loads_CC0_H2_T2.py", LOADS)
    return load_task(path, sandbox)


def test_inputs_holding_functions_load_and_stay_in_the_module(loads_task) -> None:  # type: ignore[no-untyped-def]
    assert loads_task.builds_inputs
    assert [isinstance(x, dict) and TASK_INPUT in x for x in loads_task.inputs] == [True, False, True, True]
    assert [x[TASK_INPUT] for x in loads_task.inputs if isinstance(x, dict)] == [0, 2, 3]
    assert loads_task.decoded_inputs()[0] is None


def test_the_reference_is_computed_on_the_built_inputs(evaluator: Evaluator, loads_task) -> None:  # type: ignore[no-untyped-def]
    outputs = evaluator.scorer_for("code").run_reference(loads_task)
    assert [o.raises for o in outputs] == [None] * 4
    assert outputs[0].value.tolist() == [1.5, 3.0, 1.5]
    assert outputs[1].value.tolist() == [0.0, 0.0, 0.0]
    assert outputs[3].value.tolist() == [0.25 * 0.125, 0.25 * 0.125 + 0.75 * 0.625, 0.75 * 0.625]


def test_the_task_validates_with_functions_through_the_proxy(evaluator: Evaluator, loads_task) -> None:  # type: ignore[no-untyped-def]
    assert validate_task(loads_task, evaluator.scorer_for("code")) == []  # type: ignore[arg-type]
    suite = evaluator.score(loads_task, "tests", "\n\n".join(t.source for t in loads_task.tests))
    assert [(t.name, t.passes_reference, t.detected) for t in suite.tests] == [
        ("test_total_of_a_uniform_load", True, {"fail_quarter_share": True}),
        ("test_load_sampled_at_midpoints", True, {"fail_left_end": True}),
    ]


def test_a_correct_attempt_passes_and_a_wrong_one_fails(evaluator: Evaluator, loads_task) -> None:  # type: ignore[no-untyped-def]
    assert evaluator.score(loads_task, "code", ideal_answer(loads_task)).passed
    wrong = ideal_answer(loads_task).replace("_sample_point(x[i], x[i + 1])", "x[i]")
    outcome = evaluator.score(loads_task, "code", wrong)
    assert outcome.failed_stage == "correct"
    assert [r.status for r in outcome.inputs] == ["match", "match", "mismatch", "mismatch"]


@pytest.mark.parametrize("name", ["nodal_loads", "_sample_point", "fail_left_end", "test_total_of_a_uniform_load"])
def test_a_function_input_reaches_nothing_hidden(evaluator: Evaluator, loads_task, name: str) -> None:  # type: ignore[no-untyped-def]
    outcome = evaluator.score(loads_task, "code", THROUGH_GLOBALS.format(name=name))
    assert outcome.failed_stage == "execute"
    assert outcome.stages[-1].detail == ("input 0: RuntimeError: not available while the verification inputs are built")


def test_a_given_helper_and_constants_stay_usable_by_the_inputs(evaluator: Evaluator, loads_task) -> None:  # type: ignore[no-untyped-def]
    # input 3's lambda calls the given helper element_share; input 2's reads the constant SCALE
    outcome = evaluator.score(loads_task, "code", ideal_answer(loads_task))
    assert [r.status for r in outcome.inputs] == ["match"] * 4


CALLBACK_RULES = """
import numpy as np
import pytest

def test_total_of_a_uniform_load(fcn):
    def q(x):
        raise ValueError("no load here")
    with pytest.raises(ValueError, match="no load here"):  # raised in the test's function, through the reference
        fcn(np.array([0.0, 1.0]), q)
    assert fcn(np.array([0.0, 1.0]), np.cos).tolist() == [0.5 * np.cos(0.5)] * 2  # a numpy function crosses too

def test_load_sampled_at_midpoints(fcn):
    fcn(np.array([0.0, 2.0]), lambda x: fcn(np.array([0.0, 1.0]))[0])
"""


def test_functions_passed_by_a_test_run_in_the_test_and_cannot_call_fcn(evaluator: Evaluator, loads_task) -> None:  # type: ignore[no-untyped-def]
    outcome = evaluator.score(loads_task, "tests", CALLBACK_RULES)
    first, second = outcome.tests
    assert (first.passes_reference, first.detected) == (True, {"fail_quarter_share": True})
    assert second.passes_reference is False
    assert second.reference_error is not None and second.reference_error.type == "RuntimeError"


# ----- a module that does not load is skipped, by name, with the reason ---------------------------------

CLI_WITH_SCRIPTS = (
    "from fembench_agents.models.scripted import ensure_registered; ensure_registered(); "
    "from fembench_agents.cli import main; main()"
)


def cli(*commands: list[str | Path], cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """The CLI as a user runs it, the commands at once (each process costs seconds)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb"}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("FEMBENCH_TASKS", None)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CLI_WITH_SCRIPTS, *map(str, args)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    results = []
    for args, proc in zip(commands, procs, strict=True):
        out, err = proc.communicate(timeout=300)
        results.append(subprocess.CompletedProcess(args, proc.returncode, out, err))
    return results


@pytest.fixture(scope="module")
def mixed_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    suite = tmp_path_factory.mktemp("mixed") / "suite"
    write_module(suite, "nodal_loads_CC0_H2_T2.py", LOADS)
    write_module(suite, "scale_vector_CC0_H0_T0.py", scale_source())
    write_module(suite, "broken_task_CC0_H0_T0.py", "def task_info(:\n")
    write_module(suite, "no_info_CC0_H0_T0.py", "import numpy as np\n")
    return suite


SKIPPED = [
    ("broken_task_CC0_H0_T0", "broken_task_CC0_H0_T0.py: syntax error on line 1: invalid syntax"),
    (
        "no_info_CC0_H0_T0",
        "no_info_CC0_H0_T0.py: task_info key 'task_info': TaskKeyError: task_info['task_info']: the module defines no task_info() function",
    ),
]


def _skipped(entries: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(e["name"], e["reason"].rsplit("/", 1)[-1]) for e in entries]


def test_load_each_skips_each_bad_module_by_name(sandbox: Sandbox, mixed_suite: Path) -> None:
    loaded = load_each(mixed_suite, sandbox)
    assert [t.task_id for t in loaded.tasks] == ["nodal_loads_CC0_H2_T2", "scale_vector_CC0_H0_T0"]
    assert _skipped([s.model_dump() for s in loaded.skipped]) == SKIPPED
    assert [s.path for s in loaded.skipped] == [
        str(mixed_suite / "broken_task_CC0_H0_T0.py"),
        str(mixed_suite / "no_info_CC0_H0_T0.py"),
    ]


def test_score_and_validate_go_on_without_the_bad_modules(sandbox: Sandbox, mixed_suite: Path, tmp_path: Path) -> None:
    loads = load_task(mixed_suite / "nodal_loads_CC0_H2_T2.py", sandbox)
    folder = tmp_path / "completions"
    folder.mkdir()
    (folder / "nodal_loads_CC0_H2_T2_code_m.py").write_text(ideal_answer(loads))
    (folder / "nodal_loads_CC0_H2_T2_test_m.py").write_text("\n\n".join(t.source for t in loads.tests))
    scores, validation = tmp_path / "scores.json", tmp_path / "validation.json"

    scored, validated = cli(
        ["score", folder, "--tasks", mixed_suite, "--json", scores],
        ["tasks", "validate", mixed_suite, "--json", validation],
        cwd=tmp_path,
    )

    for run in (scored, validated):
        assert run.returncode == 3, run.stdout + run.stderr
        assert "skipped task broken_task_CC0_H0_T0: " in run.stderr
        assert "2 task(s) skipped: broken_task_CC0_H0_T0, no_info_CC0_H0_T0" in run.stderr
    data = json.loads(scores.read_text())
    assert _skipped(data["skipped_tasks"]) == SKIPPED
    assert data["function_outcomes"]["m"]["nodal_loads_CC0_H2_T2"]["passed"] is True
    assert data["test_outcomes"]["m"]["nodal_loads_CC0_H2_T2"]["passed"] is True
    assert [(s["tasks"], s["functions_correct"]) for s in data["summaries"]] == [(2, 1)]
    report = json.loads(validation.read_text())
    assert report["valid"] == ["nodal_loads_CC0_H2_T2", "scale_vector_CC0_H0_T0"]
    assert report["problems"] == []
    assert _skipped(report["skipped"]) == SKIPPED
    assert "2 tasks valid" in validated.stdout


def test_run_and_compare_go_on_and_record_the_skipped_modules(mixed_suite: Path, tmp_path: Path) -> None:
    ran, compared = cli(
        ["run", "--model", "scripted/echo", "--tasks", "all", "--tasks-path", mixed_suite,
         "--out", tmp_path / "run", "--cache", tmp_path / "cache1"],
        ["compare", "--models", "scripted/echo", "--agents", "single-shot", "--tasks-path", mixed_suite,
         "--out", tmp_path / "grid", "--cache", tmp_path / "cache2"],
        cwd=tmp_path,
    )  # fmt: skip
    for run, manifest in ((ran, tmp_path / "run"), (compared, tmp_path / "grid" / "scripted-echo__single-shot")):
        assert run.returncode == 3, run.stdout + run.stderr
        assert "2 task(s) skipped: broken_task_CC0_H0_T0, no_info_CC0_H0_T0" in run.stderr
        data = json.loads((manifest / "manifest.json").read_text())
        assert _skipped(data["skipped_tasks"]) == SKIPPED
        assert sorted(data["task_hashes"]) == ["nodal_loads_CC0_H2_T2", "scale_vector_CC0_H0_T0"]


def test_a_second_module_with_a_task_id_already_loaded_is_skipped_under_that_id(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    first = write_module(tmp_path, "scale_vector_CC0_H0_T0.py", scale_source())
    write_module(tmp_path, "scale_vector_copy.py", scale_source())
    loaded = load_each(tmp_path, sandbox)
    assert [t.path for t in loaded.tasks] == [str(first)]
    assert [s.model_dump() for s in loaded.skipped] == [
        {
            "name": "scale_vector_CC0_H0_T0",
            "path": str(tmp_path / "scale_vector_copy.py"),
            "reason": f"duplicate task id 'scale_vector_CC0_H0_T0' (also in {first})",
        }
    ]


JITTERY = '''
import time
import numpy as np


def jittery_scale(x, factor):
    """factor * x, off by a trillionth that changes from run to run."""
    return factor * np.asarray(x, dtype=float) + 1e-12 * (time.perf_counter_ns() % 1_000_003 + 1)


def test_scales(fcn):
    assert np.allclose(fcn([1.0, 2.0], 3.0), [3.0, 6.0])


def fail_unscaled(x, factor):
    return np.asarray(x, dtype=float)


def task_info():
    return {
        "task_id": "jittery_scale", "task_short_description": "scale", "created_date": "2026-01-01",
        "created_by": "tests", "main_fcn": jittery_scale, "required_imports": ["import time", "import numpy as np"],
        "fcn_dependencies": [], "reference_verification_inputs": [[[1.0, 2.0], 3.0]],
        "test_cases": [{"test_code": test_scales, "expected_failures": [fail_unscaled]}],
    }
'''


def test_a_reference_whose_outputs_differ_between_runs_by_any_amount_is_not_deterministic(
    evaluator: Evaluator, sandbox: Sandbox, tmp_path: Path
) -> None:
    task = load_task(write_module(tmp_path, "jittery_scale.py", JITTERY), sandbox)
    # within the task's own tolerance, and still a problem: a reference must give the same bits twice
    scorer = evaluator.scorer_for("code")
    assert [(p.check, p.message) for p in validate_task(task, scorer)] == [  # type: ignore[arg-type]
        ("deterministic", "the reference gives different outputs on input 0 in two runs")
    ]


def test_compare_over_both_function_tracks_runs_each_into_its_own_directory(mixed_suite: Path, tmp_path: Path) -> None:
    experiment = tmp_path / "both.toml"
    experiment.write_text(
        'name = "both"\nmodels = ["scripted/echo"]\nagents = ["single-shot"]\n'
        f'tasks = "scale_vector_CC0_H0_T0"\ntasks_path = "{mixed_suite}"\ntracks = ["code", "tests"]\n'
    )
    (compared,) = cli(["compare", "--experiment", experiment, "--out", tmp_path / "grid"], cwd=tmp_path)
    assert compared.returncode == 3, compared.stdout + compared.stderr  # the suite's two broken modules
    runs = sorted(p.parent.name for p in (tmp_path / "grid").glob("*/manifest.json"))
    assert runs == ["scripted-echo__single-shot__code", "scripted-echo__single-shot__tests"]
    for run in runs:
        manifest = json.loads((tmp_path / "grid" / run / "manifest.json").read_text())
        assert manifest["config"]["track"] == run.rsplit("__", 1)[1]

"""The command line, run as a user runs it (a subprocess), on copies of tasks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import FEM_1D, GOOD_SCALE_TESTS, scale_source, write_module

from fembench_agents.kinds.review import SavedAttempt
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.folder import find_completions
from fembench_agents.suite.loader import load_tasks
from fembench_agents.suite.validation import ideal_answer

CLI = str(Path(sys.executable).with_name("fembench-agents"))
MESH = "FEM_1D_uniform_mesh_CC0_H0_T0"
STIFFNESS = "FEM_1D_local_elastic_stiffness_CC0_H3_T1"
ELASTIC = "FEM_1D_linear_elastic_CC0_H0_T0"


def cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("FEMBENCH_TASKS", None)
    return subprocess.run([CLI, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def fem_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cli") / "fem_1d"
    shutil.copytree(FEM_1D, d)
    return d


def _commands(help_text: str) -> list[str]:
    return [
        line.split()[1]
        for line in help_text.splitlines()
        if line.startswith("│ ") and line.split()[1].isalpha() and not line.split()[1].startswith("-")
    ]


def test_the_script_and_python_m_list_the_same_commands(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb"}
    script = subprocess.run([CLI, "--help"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    module = subprocess.run(
        [sys.executable, "-m", "fembench_agents.cli", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert script.returncode == module.returncode == 0
    assert (
        _commands(script.stdout)
        == _commands(module.stdout)
        == [
            "optimize",
            "run",
            "compare",
            "report",
            "replay",
            "score",
            "view",
            "parity",  # a command; the groups follow
            "cases",
            "models",
            "sandbox",
            "tasks",
        ]
    )


def test_tasks_list_and_show(fem_copy: Path) -> None:
    run = cli("tasks", "list", "--tasks", fem_copy, cwd=fem_copy.parent)
    assert run.returncode == 0, run.stderr
    for task_id in (MESH, STIFFNESS, ELASTIC):
        assert task_id in run.stdout
    assert "CC0/H3/T1" in run.stdout
    assert f"{len(list(fem_copy.glob('*.py')))} tasks in" in run.stdout

    run = cli("tasks", "show", MESH, "--tasks", fem_copy / f"{MESH}.py", cwd=fem_copy.parent)
    assert run.returncode == 0, run.stderr
    assert "def generate_uniform_mesh_1d(x_min: float, x_max: float, num_elements: int)" in run.stdout
    assert "test_uniform_mesh_geometry_and_connectivity" in run.stdout
    assert "import numpy as np" in run.stdout
    # the prompt-facing view never shows the reference body or the expected failures
    assert "np.column_stack" not in run.stdout and "fail_" not in run.stdout


def test_tasks_show_unknown_id_exits_2(fem_copy: Path) -> None:
    run = cli("tasks", "show", "no_such_task", "--tasks", fem_copy / f"{MESH}.py", cwd=fem_copy.parent)
    assert run.returncode == 2
    assert "no task 'no_such_task'" in run.stderr


def test_tasks_validate_good_task(fem_copy: Path) -> None:
    run = cli("tasks", "validate", fem_copy / f"{MESH}.py", cwd=fem_copy.parent)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 tasks valid" in run.stdout


def test_tasks_validate_broken_task_exits_1_with_a_problems_table(tmp_path: Path) -> None:
    # test_negative_factor_raises never calls fcn: it cannot catch fail_no_check
    source = scale_source("broken_scale_CC0_H0_T0").replace(
        "with pytest.raises(ValueError):\n        fcn(np.array([1.0]), -1.0)",
        'with pytest.raises(ValueError):\n        raise ValueError("always")',
    )
    write_module(tmp_path / "suite", "broken.py", source)
    run = cli("tasks", "validate", tmp_path / "suite", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "1 problems" in run.stdout
    assert "broken_scale_CC0_H0_T0" in run.stdout
    assert "test_negative_factor_raises does not catch fail_no_check" in run.stdout


def test_malformed_task_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    source = scale_source().replace('"created_by": "tests",', "")
    path = write_module(tmp_path / "suite", "no_author.py", source)
    run = cli("tasks", "list", "--tasks", tmp_path / "suite", cwd=tmp_path)
    assert run.returncode == 2
    assert "no_author.py" in run.stderr and "created_by" in run.stderr
    assert path.exists()


@pytest.mark.parametrize(
    "args",
    [
        ("tasks", "list", "--tasks", "/nonexistent/tasks"),
        ("score", "/nonexistent/folder"),
        ("tasks", "frobnicate"),
    ],
)
def test_bad_arguments_exit_2(tmp_path: Path, args: tuple[str, ...]) -> None:
    run = cli(*args, cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.strip()


def test_a_completion_belongs_to_the_longest_task_id_its_name_starts_with(tmp_path: Path) -> None:
    names = [
        "bar_code_gpt.py",  # task "bar", code, label "gpt"
        "bar_test_code_gpt.py",  # task "bar_test" (not task "bar"'s tests labelled "code_gpt")
        "bar_test_test_x_y.py",  # task "bar_test", tests, label "x_y"
        "bar_code_.py",  # no label
        "barn_code_a.py",  # no task "barn"
        "bar_test_a.txt",  # not Python
    ]
    for name in names:
        (tmp_path / name).write_text("")
    tasks: list[Any] = [SimpleNamespace(task_id="bar", leak=None), SimpleNamespace(task_id="bar_test", leak=None)]
    found, unmatched = find_completions(tmp_path, tasks)
    assert found == [
        SavedAttempt("bar", "code", "gpt", tmp_path / "bar_code_gpt.py"),
        SavedAttempt("bar_test", "code", "gpt", tmp_path / "bar_test_code_gpt.py"),
        SavedAttempt("bar_test", "tests", "x_y", tmp_path / "bar_test_test_x_y.py"),
    ]
    assert unmatched == ["bar_code_.py", "barn_code_a.py"]


def test_score_folder_writes_summary_json(tmp_path: Path) -> None:
    task_dir = tmp_path / "tasks"
    task_dir.mkdir()
    for task_id in (MESH, STIFFNESS):
        shutil.copy(FEM_1D / f"{task_id}.py", task_dir)
    write_module(task_dir, "scale.py", scale_source())
    with Sandbox(workers=1) as sandbox:
        tasks = {t.task_id: t for t in load_tasks(task_dir, sandbox)}
    folder = tmp_path / "completions"
    folder.mkdir()
    # label "good": every function right, and every task's own tests
    for task_id, task in tasks.items():
        (folder / f"{task_id}_code_good.py").write_text(f"```python\n{ideal_answer(task)}\n```\n")
        (folder / f"{task_id}_test_good.py").write_text("\n\n".join(t.source for t in task.tests))
    # label "bad": one right function, one wrong, one disallowed import; half of two suites
    mesh = tasks[MESH]
    (folder / f"{MESH}_code_bad.py").write_text(ideal_answer(mesh))
    (folder / f"{STIFFNESS}_code_bad.py").write_text(
        "import numpy as np\ndef linear_bar_element_stiffness(x_elem, E, A, n_gauss):\n    return np.eye(2)\n"
    )
    (folder / "scale_vector_CC0_H0_T0_code_bad.py").write_text(
        "import os\ndef scale_vector(x, factor):\n    return x\n"
    )
    (folder / f"{MESH}_test_bad.py").write_text(mesh.tests[0].source)
    (folder / "scale_vector_CC0_H0_T0_test_bad.py").write_text(GOOD_SCALE_TESTS.replace("[3.0, 6.0]", "[3.0, 7.0]"))
    (folder / "notes.py").write_text("# not a completion\n")
    out = tmp_path / "scores.json"

    run = cli("score", folder, "--tasks", task_dir, "--json", out, cwd=tmp_path)

    assert run.returncode == 0, run.stderr
    data = json.loads(out.read_text())
    summaries = {s["label"]: s for s in data["summaries"]}
    n = len(tasks)
    assert n == 3
    assert summaries["good"] == {
        "label": "good",
        "tasks": n,
        "functions_correct": n,
        "mean_joint_test_success": 1.0,
        "mean_reference_pass": 1.0,
        "mean_failure_detection": 1.0,
        "fresh_tasks": 0,  # no --fresh-inputs
        "fresh_functions_correct": 0,
    }
    bad = summaries["bad"]
    assert bad["tasks"] == n and bad["functions_correct"] == 1
    mesh_share = 1 / len(mesh.tests)  # one of the mesh task's tests
    scale_share = 1 / 2  # test_scales_values fails on the reference; the other reaches joint success
    assert bad["mean_joint_test_success"] == pytest.approx((mesh_share + scale_share) / n)
    assert bad["mean_reference_pass"] == pytest.approx((mesh_share + scale_share) / n)
    # failures detected: the mesh task's first test detects 4 of the task's 6, the scale tests both of theirs
    # (the one failing the reference included); the third task has no suite
    assert bad["mean_failure_detection"] == pytest.approx((4 / 6 + 2 / 2) / n)
    assert data["unmatched_files"] == ["notes.py"]
    fn_bad = data["function_outcomes"]["bad"]
    assert (fn_bad[MESH]["passed"], fn_bad[STIFFNESS]["passed"]) == (True, False)
    assert fn_bad[STIFFNESS]["stages"][-1]["reason"] == "wrong_output"
    assert fn_bad["scale_vector_CC0_H0_T0"]["stages"][-1]["reason"] == "disallowed_import"
    assert set(data["test_outcomes"]["good"]) == set(tasks)
    assert set(data["test_outcomes"]["bad"]) == {MESH, "scale_vector_CC0_H0_T0"}
    assert f"1/{n}" in run.stdout and f"{n}/{n}" in run.stdout
    # the printed table: the same figures, each in its column
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in run.stdout.splitlines() if line.startswith("│")]
    assert rows == [["bad", "1/3", "0.333", "0.333", "0.556"], ["good", "3/3", "1.000", "1.000", "1.000"]]
    assert "1 files matched no task" in run.stderr

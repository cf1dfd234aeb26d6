"""The Python front door: the same run the CLI makes, read back as rows."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pde_solvers as ps
import pytest
from conftest import CORRECT_SCALE, ROOT, scale_source, write_module

import fembench_agents as fb
from fembench_agents.cases import timing
from fembench_agents.kinds import unregister_kind
from fembench_agents.messages import Message
from fembench_agents.models import register_script, unregister_script


def test_run_open_and_report_from_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tasks_dir = tmp_path / "tasks"
    tasks_dir.mkdir()
    write_module(tasks_dir, "scale_api_CC0_H0_T0.py", scale_source("scale_api_CC0_H0_T0"))
    name = f"api{uuid.uuid4().hex[:8]}"
    register_script(name, lambda messages: f"```python\n{CORRECT_SCALE.strip()}\n```")
    try:
        assert [t.task_id for t in fb.load_tasks(tasks_dir)] == ["scale_api_CC0_H0_T0"]
        run_dir = fb.run(f"scripted/{name}", "single-shot", tasks_path=tasks_dir, repeats=2, out=tmp_path / "run")
        # without `out`: runs/MODEL__AGENT__TRACK, so the two tracks of one model and agent never share a run
        monkeypatch.chdir(tmp_path)
        tests_dir = fb.run(f"scripted/{name}", "single-shot", tasks_path=tasks_dir, track="tests")
        assert (
            tests_dir == Path("runs") / f"scripted-{name}__single-shot__tests"
            and (tests_dir / "manifest.json").is_file()
        )
    finally:
        unregister_script(name)
    view = fb.open_run(run_dir)
    rows = view.episode_rows()
    assert [(r["run"], r["task_id"], r["repeat"], r["passed"], r["attempts"]) for r in rows] == [
        ("run", "scale_api_CC0_H0_T0", 0, True, 1),
        ("run", "scale_api_CC0_H0_T0", 1, True, 1),
    ]
    assert len(view.attempts()) == 2
    report = fb.build_report([run_dir])
    assert (report.groups[0].passed, report.groups[0].episodes) == (2, 2)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        fb.nothing  # noqa: B018


def test_importing_a_part_loads_only_that_part() -> None:
    """The sandbox's workers import the package; the API and pydantic stay out."""
    code = (
        "import sys, fembench_agents.scoring.sandbox.zygote\n"
        "assert 'fembench_agents.api' not in sys.modules and 'pydantic' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_compare_from_python_runs_the_grid_the_command_line_runs(tmp_path: Path) -> None:
    tasks_dir = tmp_path / "tasks"
    tasks_dir.mkdir()
    write_module(tasks_dir, "scale_api_CC0_H0_T0.py", scale_source("scale_api_CC0_H0_T0"))
    name = f"api{uuid.uuid4().hex[:8]}"
    register_script(name, lambda messages: f"```python\n{CORRECT_SCALE.strip()}\n```")
    try:
        run_dirs = fb.compare(
            [f"scripted/{name}"], ["single-shot", "feedback-loop:2"], tasks_path=tasks_dir, out=tmp_path / "grid"
        )
    finally:
        unregister_script(name)
    assert run_dirs == [
        tmp_path / "grid" / f"scripted-{name}__single-shot",
        tmp_path / "grid" / f"scripted-{name}__feedback-loop-2",
    ]
    report = fb.build_report(run_dirs)
    assert sorted((g.agent, g.passed, g.episodes) for g in report.groups) == [
        ("feedback-loop:2", 1, 1),
        ("single-shot", 1, 1),
    ]


# ----------------------------------------------------------------- docs/python_api.md, one example per kind


def documented_examples() -> dict[str, str]:
    """The fenced Python blocks of docs/python_api.md that name themselves `# example: ...`."""
    text = (ROOT / "docs" / "python_api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    return {b.splitlines()[0].removeprefix("# example: "): b for b in blocks if b.startswith("# example: ")}


def example_replies(messages: list[Message]) -> str:
    """A right answer once the feedback loop repairs: the function, the tests, the solver, the sum."""
    prompt = messages[-1].content
    repairing = "Your previous" in prompt or "previous solver" in prompt
    if "solve(spec)` returning {'total'" in prompt:
        return "```python\ndef solve(spec):\n    return {'total': float(sum(spec['numbers']))}\n```"
    if "case_spec" in prompt:
        return f"```python\n{ps.CORRECT if repairing else ps.WRONG_BOUNDARY}\n```"
    return "no code yet" if not repairing else "still no code"


def test_the_documented_examples_run_for_each_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    examples = documented_examples()
    assert sorted(examples) == ["PDE cases", "a kind of your own", "function tasks"]
    cases = tmp_path / "cases"
    shutil.copytree(ROOT / "cases", cases, ignore=shutil.ignore_patterns("calibration"))
    calibration = {ps.CASE: {"numpy-scipy": 1.0}}
    timing.save(
        cases, timing.MachineCalibration(machine=timing.machine_name(), fingerprint={}, repeats=1, t_base=calibration)
    )
    shutil.copytree(ROOT / "tests", tmp_path / "tests", ignore=shutil.ignore_patterns("__pycache__", "fixtures"))
    shutil.copytree(ROOT / "tests" / "fixtures" / "sums_feedback", tmp_path / "tests" / "fixtures" / "sums_feedback")
    monkeypatch.chdir(tmp_path)
    name = f"api-docs-{uuid.uuid4().hex[:8]}"
    register_script(name, example_replies)
    found: dict[str, dict[str, Any]] = {}
    try:
        for title, code in examples.items():
            code = code.replace('MODEL = "local"', f'MODEL = "scripted/{name}"')
            code = code.replace('TASKS = "tasks"', f"TASKS = {str(ROOT / 'tasks')!r}")
            code = code.replace('CASES = "cases"', f"CASES = {str(cases)!r}")
            namespace: dict[str, Any] = {}
            exec(compile(code, f"docs/python_api.md ({title})", "exec"), namespace)
            found[title] = namespace
    finally:
        unregister_script(name)
        unregister_kind("sums")
    function = found["function tasks"]
    assert function["correct"] == {"code": 0.0, "tests": 0.0}  # a reply with no code passes nothing
    assert [r["task_id"] for r in function["rows"]] == ["FEM_1D_uniform_mesh_CC0_H0_T0"]
    assert sorted(p.name for p in (tmp_path / "runs" / "api" / "grid").iterdir() if p.is_dir()) == [
        f"scripted-{name}__feedback-loop-2",
        f"scripted-{name}__single-shot",
    ]
    pde = found["PDE cases"]
    assert pde["stages"] == {} and pde["group"].passed == 1  # repaired on the accuracy feedback
    assert (pde["episode"].passed, pde["episode"].attempts) == (True, 2)
    sums = found["a kind of your own"]
    assert (sums["group"].track, sums["group"].passed, sums["group"].episodes) == ("sums", 2, 2)

"""The Python front door: the same run the CLI makes, read back as rows."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import CORRECT_SCALE, ROOT, scale_source, write_module

import fembench_agents as fb
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

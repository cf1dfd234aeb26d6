"""Runs: the run directory (manifest + append-only log), concurrency, the
response cache, kill -9 and resume, replay and re-scoring, the CLI commands on
a recorded run, and experiment files."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CORRECT_SCALE, ROOT, scale_source, write_module

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fembench_agents import api
from fembench_agents.cli import runs as cli_runs
from fembench_agents.messages import Message, ModelParams
from fembench_agents.models import (
    ClientOptions,
    ReplayModel,
    ResponseCache,
    RetryPolicy,
    UnrecordedRequestError,
    make_client,
    register_script,
    unregister_script,
)
from fembench_agents.optimize.settings import load_settings
from fembench_agents.runs.experiments import Experiment, load_experiment
from fembench_agents.runs.log import (
    LOG_NAME,
    AttemptRecord,
    EpisodeRecord,
    ModelCallRecord,
    episode_key,
    read_log,
    read_manifest,
)
from fembench_agents.runs.reader import finished_episodes
from fembench_agents.runs.replay import compare_runs, episode_turns, rescore
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.runs.selection import select_tasks
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_task
from fembench_agents.suite.model import Task

FAST = ClientOptions(retry=RetryPolicy(max_retries=1, initial_delay=0.001, max_delay=0.01))
SCALE = "scale_vector_CC0_H0_T0"
MODE = "mode_plain_CC1_H0_T0"

WRONG_SCALE = """
import numpy as np

def scale_vector(x, factor):
    if factor < 0:
        raise ValueError("negative factor")
    return factor * np.asarray(x, dtype=float) + 1.0
"""

CORRECT_MODE = """
import numpy as np

def smallest_mode(K):
    w, v = np.linalg.eigh(K)
    return float(w[0]), v[:, 0]
"""


def fenced(code: str) -> str:
    return f"```python\n{code.strip()}\n```\n"


def repairing_reply(messages: list[Message]) -> str:
    """Scale: wrong until shown feedback; mode: right at once."""
    prompt = messages[-1].content
    if "smallest_mode" in prompt:
        return fenced(CORRECT_MODE)
    return fenced(CORRECT_SCALE if "returned wrong results" in prompt else WRONG_SCALE)


@pytest.fixture
def script_name() -> Iterator[str]:
    name = f"runs{uuid.uuid4().hex[:10]}"
    yield name
    unregister_script(name)


@pytest.fixture(scope="module")
def two_tasks(load: Callable[[str], Task]) -> list[Task]:
    return [load(SCALE), load(MODE)]


def attempts_of(records: list[Any]) -> list[AttemptRecord]:
    return [r for r in records if isinstance(r, AttemptRecord)]


def episodes_of(records: list[Any]) -> list[EpisodeRecord]:
    return [r for r in records if isinstance(r, EpisodeRecord)]


def do_run(
    config: RunConfig,
    tasks: list[Task],
    out: Path,
    evaluator: Evaluator,
    *,
    cache: ResponseCache | None = None,
    client: Any = None,
) -> list[EpisodeRecord]:
    client = client or make_client(config.model, config.params, options=FAST, cache=cache)
    return asyncio.run(execute_run(config, tasks, out, client, evaluator))


# ----------------------------------------------------------------- the run directory


def test_execute_run_writes_manifest_and_log(
    evaluator: Evaluator, two_tasks: list[Task], script_name: str, tmp_path: Path
) -> None:
    register_script(script_name, repairing_reply)
    config = RunConfig(
        model=f"scripted/{script_name}",
        agent="feedback-loop:3",
        tasks=f"{SCALE},{MODE}",
        repeats=2,
        params=ModelParams(temperature=0.2, max_tokens=900),
    )
    seen: list[EpisodeRecord] = []
    client = make_client(config.model, config.params, options=FAST)
    episodes = asyncio.run(execute_run(config, two_tasks, tmp_path / "run", client, evaluator, on_episode=seen.append))
    manifest = read_manifest(tmp_path / "run")
    assert manifest.config == config.identity() and manifest.config["agent"] == "feedback-loop:3"
    assert "concurrency" not in manifest.config
    assert manifest.task_hashes == {t.task_id: t.content_hash for t in two_tasks}
    assert "pydantic" in manifest.versions and manifest.run_id == "run"

    records = read_log(tmp_path / "run")
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [
        "log.jsonl",
        "manifest.json",
    ]  # as README names them
    lines = (tmp_path / "run" / LOG_NAME).read_text().splitlines()
    assert len(lines) == len(records) and all(json.loads(line)["schema_version"] == 1 for line in lines)
    # an attempt's outcome carries its own schema's version, read back apart from the record's
    outcomes = [json.loads(line)["outcome"] for line in lines if json.loads(line)["type"] == "attempt"]
    assert len(outcomes) == 6 and all(o["schema_version"] == 1 for o in outcomes)
    assert [(e.task_id, e.repeat) for e in episodes] == [(MODE, 0), (MODE, 1), (SCALE, 0), (SCALE, 1)]
    assert sorted(e.episode for e in seen) == sorted(e.episode for e in episodes)
    assert all(e.status == "done" and e.passed for e in episodes)
    assert {e.task_id: e.attempts for e in episodes} == {SCALE: 2, MODE: 1}
    assert all(e.model_seconds > 0 and e.prompt_tokens > 0 for e in episodes)
    for ep in episodes:
        own = [r for r in records if r.episode == ep.episode]
        # per episode: call, attempt, call, attempt, ..., episode; in that order
        kinds = [r.type for r in own]
        assert kinds == ["model_call", "attempt"] * ep.attempts + ["episode"]
        assert own[-1] == ep
        calls = [r for r in own if isinstance(r, ModelCallRecord)]
        assert [c.request.params.seed for c in calls] == [ep.repeat] * ep.attempts
        assert all(c.request.params.temperature == 0.2 for c in calls)
    assert finished_episodes(records).keys() == {e.episode for e in episodes}


def test_episodes_overlap_under_concurrency(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    state = {"now": 0, "max": 0}

    async def slow(messages: list[Message]) -> str:
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        await asyncio.sleep(0.3)
        state["now"] -= 1
        return fenced(CORRECT_SCALE)

    register_script(script_name, slow)
    config = RunConfig(model=f"scripted/{script_name}", agent="single-shot", tasks=SCALE, repeats=4, concurrency=3)
    started = time.perf_counter()
    episodes = do_run(config, [scale_task], tmp_path / "parallel", evaluator)
    parallel = time.perf_counter() - started
    assert len(episodes) == 4 and all(e.passed for e in episodes)
    assert 2 <= state["max"] <= 3

    assert parallel < 4 * 0.3 + 30  # (a bound that only catches a hang; timing on a shared machine varies)

    state.update(now=0, max=0)
    serial_config = RunConfig(model=config.model, agent="single-shot", tasks=SCALE, repeats=4, concurrency=1)
    do_run(serial_config, [scale_task], tmp_path / "serial", evaluator)
    assert state["max"] == 1


def test_repeated_identical_run_is_served_from_the_cache(
    evaluator: Evaluator, two_tasks: list[Task], script_name: str, tmp_path: Path
) -> None:
    script = register_script(script_name, repairing_reply)
    cache = ResponseCache(tmp_path / "cache")
    config = RunConfig(model=f"scripted/{script_name}", agent="feedback-loop:3", tasks="*_CC*", repeats=1)
    first = do_run(config, two_tasks, tmp_path / "a", evaluator, cache=cache)
    calls = script.calls
    assert calls == 3  # scale: wrong then right; mode: right
    second = do_run(config, two_tasks, tmp_path / "b", evaluator, cache=cache)
    assert script.calls == calls  # no provider call the second time
    responses = [r.response for r in read_log(tmp_path / "b") if isinstance(r, ModelCallRecord)]
    assert len(responses) == 3 and all(r is not None and r.cached for r in responses)
    assert [e.cost_usd for e in second] == [e.cost_usd for e in first]  # each sample at its recorded cost
    assert [(e.model_calls, e.reused_calls) for e in second] == [(e.model_calls, e.model_calls) for e in first]
    assert [(e.task_id, e.passed, e.attempts) for e in first] == [(e.task_id, e.passed, e.attempts) for e in second]
    assert compare_runs(read_log(tmp_path / "a"), read_log(tmp_path / "b")) == []


def test_resuming_a_finished_run_does_nothing(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    script = register_script(script_name, lambda m: fenced(CORRECT_SCALE))
    config = RunConfig(model=f"scripted/{script_name}", agent="single-shot", tasks=SCALE, repeats=2)
    first = do_run(config, [scale_task], tmp_path / "r", evaluator)
    size = (tmp_path / "r" / LOG_NAME).stat().st_size
    again = do_run(dataclasses.replace(config, concurrency=1), [scale_task], tmp_path / "r", evaluator)
    assert script.calls == 2
    assert (tmp_path / "r" / LOG_NAME).stat().st_size == size
    assert [e.episode for e in again] == [e.episode for e in first]


def test_a_run_directory_holding_another_run_refuses_to_resume(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    register_script(script_name, lambda m: fenced(CORRECT_SCALE))
    config = RunConfig(model=f"scripted/{script_name}", agent="single-shot", tasks=SCALE)
    do_run(config, [scale_task], tmp_path / "r", evaluator)
    log = (tmp_path / "r" / LOG_NAME).read_text()
    for other in (
        RunConfig(model=config.model, agent="feedback-loop:2", tasks=SCALE),
        RunConfig(model=config.model, agent="single-shot", tasks=SCALE, track="tests"),
        RunConfig(model=config.model, agent="single-shot", tasks=SCALE, repeats=3),
        RunConfig(model=config.model, agent="single-shot", tasks=SCALE, params=ModelParams(temperature=0.7)),
    ):
        with pytest.raises(ValueError, match="holds a different run"):
            do_run(other, [scale_task], tmp_path / "r", evaluator)
    # (not model_copy: it would carry over the cached content_hash)
    changed = Task.model_validate(
        {**scale_task.model_dump(), "module_source": scale_task.module_source + "\n# edited\n"}
    )
    assert changed.content_hash != scale_task.content_hash
    with pytest.raises(ValueError, match=f"tasks changed.*{SCALE}"):
        do_run(config, [changed], tmp_path / "r", evaluator)
    assert (tmp_path / "r" / LOG_NAME).read_text() == log  # nothing appended
    # transport-only settings may change between sessions
    ok = RunConfig(
        model=config.model, agent="single-shot", tasks=SCALE, concurrency=5, params=ModelParams(timeout=12.0)
    )
    assert len(do_run(ok, [scale_task], tmp_path / "r", evaluator)) == 1


def test_a_torn_last_log_line_is_dropped_and_the_run_resumes(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    script = register_script(script_name, lambda m: fenced(CORRECT_SCALE))
    config = RunConfig(model=f"scripted/{script_name}", agent="single-shot", tasks=SCALE, repeats=2)
    do_run(config, [scale_task], tmp_path / "r", evaluator)
    path = tmp_path / "r" / LOG_NAME
    lines = path.read_text().splitlines(keepends=True)
    last = lines[-1]
    assert json.loads(last)["type"] == "episode"
    # a writer killed while writing the last episode record
    path.write_text("".join(lines[:-1]) + last[: len(last) // 2])
    records = read_log(tmp_path / "r")
    assert len(records) == len(lines) - 1
    lost = json.loads(last)["episode"]
    assert lost not in finished_episodes(records)

    episodes = do_run(config, [scale_task], tmp_path / "r", evaluator)
    assert script.calls == 3  # only the episode whose record was torn is redone
    assert len(episodes) == 2 and all(e.status == "done" for e in episodes)
    text = path.read_text()
    assert text.endswith("\n") and last[: len(last) // 2] + "\n" not in text
    final = [json.loads(line) for line in text.splitlines()]  # every line is whole JSON
    assert Counter(r["episode"] for r in final if r["type"] == "episode") == Counter(e.episode for e in episodes)


def test_a_malformed_line_inside_the_log_is_an_error_naming_the_line(tmp_path: Path) -> None:
    (tmp_path / LOG_NAME).write_text('{"type": "nonsense"}\n{"also": "bad"}\n')
    with pytest.raises(ValueError, match=rf"{LOG_NAME}:1"):
        read_log(tmp_path)


DRIVER = r"""
import asyncio, sys
from pathlib import Path
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite.loader import load_task
from fembench_agents.models import make_client, register_script
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.sandbox import Sandbox

task_path, out, name, calls_path, reply, repeats = sys.argv[1:]

async def slow(messages):
    with open(calls_path, "a") as fh:
        fh.write("call\n")
    await asyncio.sleep(0.4)
    return reply

register_script(name, slow)
with Sandbox(workers=1) as sandbox:
    task = load_task(task_path, sandbox)
    evaluator = Evaluator(sandbox)
    config = RunConfig(model=f"scripted/{name}", agent="single-shot", tasks=task.task_id,
                       repeats=int(repeats), concurrency=2)
    asyncio.run(execute_run(config, [task], Path(out), make_client(config.model), evaluator))
print("driver finished")
"""


def test_kill_9_and_resume_redoes_no_finished_episode(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    repeats = 10
    out = tmp_path / "run"
    calls_file = tmp_path / "calls.txt"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            DRIVER,
            scale_task.path,
            str(out),
            script_name,
            str(calls_file),
            fenced(CORRECT_SCALE),
            str(repeats),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    log = out / LOG_NAME
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if log.exists() and log.read_text().count('"type":"episode"') >= 3:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the driver ended before it was killed: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL

    before_text = log.read_text()
    before = read_log(out)
    done_before = finished_episodes(before)
    assert 3 <= len(done_before) < repeats
    driver_calls = calls_file.read_text().count("call")
    assert driver_calls >= len(done_before)

    script = register_script(script_name, lambda m: fenced(CORRECT_SCALE))
    config = RunConfig(model=f"scripted/{script_name}", agent="single-shot", tasks=SCALE, repeats=repeats)
    episodes = do_run(config, [scale_task], out, evaluator)

    assert script.calls == repeats - len(done_before)  # finished episodes were not redone
    after = read_log(out)
    all_keys = {episode_key(config.model, "single-shot", "code", SCALE, r) for r in range(repeats)}
    done_counts = Counter(e.episode for e in episodes_of(after) if e.status == "done")
    assert set(done_counts) == all_keys and set(done_counts.values()) == {1}
    assert {e.episode for e in episodes} == all_keys and all(e.passed for e in episodes)
    # nothing finished before the kill was lost or rewritten
    whole = before_text[: before_text.rfind("\n") + 1]
    assert log.read_text().startswith(whole)
    for key, record in done_before.items():
        assert finished_episodes(after)[key] == record
        assert len([a for a in attempts_of(after) if a.episode == key]) == 1


# ----------------------------------------------------------------- replay and re-scoring


@pytest.fixture(scope="module")
def recorded(evaluator: Evaluator, two_tasks: list[Task], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished feedback-loop run recorded with a script that is gone afterwards."""
    name = f"recorded{uuid.uuid4().hex[:8]}"
    register_script(name, repairing_reply)
    out = tmp_path_factory.mktemp("recorded") / "run"
    config = RunConfig(model=f"scripted/{name}", agent="feedback-loop:3", tasks=f"{SCALE},{MODE}", repeats=2)
    try:
        do_run(config, two_tasks, out, evaluator)
    finally:
        unregister_script(name)  # a replay that called the provider would now fail
    return out


@pytest.fixture(scope="module")
def changed_task_dir(task_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same tasks, but the scale task's reference adds one: recorded attempts now score differently."""
    d = tmp_path_factory.mktemp("changed_tasks")
    for f in task_dir.glob("*.py"):
        shutil.copy(f, d / f.name)
    source = scale_source()
    assert source.count("    return factor * x\n") == 1
    write_module(d, f"{SCALE}.py", source.replace("    return factor * x\n", "    return factor * x + 1.0\n"))
    return d


@pytest.fixture(scope="module")
def changed_scale(sandbox: Sandbox, changed_task_dir: Path) -> Task:
    return load_task(changed_task_dir / f"{SCALE}.py", sandbox)


def config_of(run_dir: Path) -> RunConfig:
    c = read_manifest(run_dir).config
    return RunConfig(**{**c, "params": ModelParams(**c["params"])})


def test_replay_reproduces_identical_outcomes(
    recorded: Path, evaluator: Evaluator, two_tasks: list[Task], changed_scale: Task, tmp_path: Path
) -> None:
    original = read_log(recorded)
    assert len(attempts_of(original)) == 6
    model = ReplayModel.from_records(original)
    episodes = asyncio.run(execute_run(config_of(recorded), two_tasks, tmp_path / "replay", model, evaluator))
    replayed = read_log(tmp_path / "replay")
    assert compare_runs(original, replayed) == []
    assert [(e.episode, e.passed, e.attempts) for e in episodes] == [
        (e.episode, e.passed, e.attempts) for e in sorted(episodes_of(original), key=lambda e: (e.task_id, e.repeat))
    ]
    assert [a.reply for a in attempts_of(replayed)] != [] and sorted(a.reply for a in attempts_of(replayed)) == sorted(
        a.reply for a in attempts_of(original)
    )

    # the same replay under a changed reference is reported as changed
    model = ReplayModel.from_records(original)
    asyncio.run(execute_run(config_of(recorded), [changed_scale, two_tasks[1]], tmp_path / "changed", model, evaluator))
    changes = compare_runs(original, read_log(tmp_path / "changed"))
    assert changes and all(SCALE in c.episode for c in changes)


def test_replay_of_an_unrecorded_request_fails_loudly_naming_task_and_attempt(
    recorded: Path, evaluator: Evaluator, two_tasks: list[Task], tmp_path: Path
) -> None:
    original = read_log(recorded)
    dropped = next(
        r for r in original if isinstance(r, ModelCallRecord) and r.task_id == SCALE and r.attempt_index == 1
    )
    model = ReplayModel.from_records([r for r in original if r is not dropped])
    started = time.perf_counter()
    with pytest.raises(UnrecordedRequestError) as info:
        asyncio.run(execute_run(config_of(recorded), two_tasks, tmp_path / "replay", model, evaluator))
    message = str(info.value)
    assert SCALE in message and "attempt 1" in message and f"repeat {dropped.episode[-1]}" in message
    assert time.perf_counter() - started < 30
    # it is not recorded as a model failure to be retried later
    assert not [e for e in episodes_of(read_log(tmp_path / "replay")) if e.status == "error"]


def test_a_failing_episode_stops_the_others_of_its_run(
    recorded: Path, evaluator: Evaluator, two_tasks: list[Task], tmp_path: Path
) -> None:
    """The loop may live on after a run failed (a compare grid, an optimizer): the run's
    other episodes must not go on calling the model and writing to its closed log."""
    original = read_log(recorded)
    calls: list[str] = []
    model = ReplayModel.from_records(
        [
            r
            for r in original
            if not (isinstance(r, ModelCallRecord) and r.task_id == MODE and r.episode.endswith("|0"))
        ],
        on_call=lambda request, response, error, context: calls.append(context.episode),
    )
    out = tmp_path / "replay"
    loop_errors: list[dict[str, Any]] = []

    async def main() -> tuple[int, int]:
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: loop_errors.append(ctx))
        with pytest.raises(UnrecordedRequestError):
            await execute_run(config_of(recorded), two_tasks, out, model, evaluator)
        at_failure = (len(calls), (out / LOG_NAME).stat().st_size)
        await asyncio.sleep(1.5)  # the loop lives on
        return at_failure

    n_calls, size = asyncio.run(main())
    assert len(calls) == n_calls and (out / LOG_NAME).stat().st_size == size
    assert not loop_errors
    assert all(json.loads(line) for line in (out / LOG_NAME).read_text().splitlines())


def test_replay_reproduces_a_recorded_provider_failure(
    evaluator: Evaluator, two_tasks: list[Task], script_name: str, tmp_path: Path
) -> None:
    from fembench_agents.models._litellm import litellm

    def reply(messages: list[Message]) -> str:
        if "smallest_mode" in messages[-1].content:
            raise litellm.RateLimitError(message="outage", llm_provider="scripted", model=script_name)
        return fenced(CORRECT_SCALE)

    register_script(script_name, reply)
    config = RunConfig(model=f"scripted/{script_name}", agent="single-shot", tasks=f"{SCALE},{MODE}")
    episodes = do_run(config, two_tasks, tmp_path / "run", evaluator)
    assert [e.status for e in episodes] == ["error", "done"]
    original = read_log(tmp_path / "run")
    asyncio.run(execute_run(config, two_tasks, tmp_path / "replay", ReplayModel.from_records(original), evaluator))
    assert compare_runs(original, read_log(tmp_path / "replay")) == []


def test_rescore_finds_no_change_under_the_same_evaluator(
    recorded: Path, evaluator: Evaluator, two_tasks: list[Task], changed_scale: Task
) -> None:
    tasks = {t.task_id: t for t in two_tasks}
    assert rescore(recorded, tasks, evaluator) == []
    changes = rescore(recorded, {**tasks, SCALE: changed_scale}, evaluator)
    assert {(c.episode.split("|")[-2], c.attempt_index) for c in changes} == {(SCALE, 0), (SCALE, 1)}
    assert all(c.before != c.after for c in changes)
    with pytest.raises(ValueError, match=MODE):
        rescore(recorded, {SCALE: tasks[SCALE]}, evaluator)


def test_episode_turns_step_through_the_feedback_loop(recorded: Path) -> None:
    turns = episode_turns(recorded, SCALE)
    assert len(turns) == 2
    for end, attempts in turns:
        assert end is not None and end.passed and end.attempts == 2
        assert [a.attempt_index for a in attempts] == [0, 1]
        assert attempts[0].feedback.text in attempts[1].messages[-1].content
    assert episode_turns(recorded, "no_such_task") == []


# ----------------------------------------------------------------- the CLI on a recorded run

CLI = str(Path(sys.executable).parent / "fembench-agents")


@pytest.fixture(scope="module")
def cli(
    recorded: Path, task_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every CLI call, started at once (each on its own copy of the run). Replays
    under changed tasks are checked in-process (test_replay_reproduces_identical_outcomes,
    test_rescore_finds_no_change_under_the_same_evaluator): each CLI process costs seconds."""
    base = tmp_path_factory.mktemp("cli")

    def copy(name: str) -> Path:
        target = base / name
        shutil.copytree(recorded, target, ignore=shutil.ignore_patterns("replay"))
        return target

    tampered = copy("tampered")
    log = tampered / LOG_NAME
    kept = [
        line
        for line in log.read_text().splitlines(keepends=True)
        if not (json.loads(line)["type"] == "model_call" and json.loads(line)["task_id"] == MODE)
    ]
    log.write_text("".join(kept))
    not_a_run = base / "not_a_run"
    not_a_run.mkdir()
    commands = {
        "replay": ["replay", str(copy("replay")), "--tasks", str(task_dir)],
        "rescore": ["replay", str(copy("rescore")), "--rescore", "--tasks", str(task_dir)],
        "show": ["replay", str(recorded), "--show", SCALE],
        "show_unknown": ["replay", str(recorded), "--show", "no_such_task"],
        "report": ["report", str(recorded), "--full"],
        "report_not_a_run": ["report", str(not_a_run)],
        "replay_tampered": ["replay", str(tampered), "--tasks", str(task_dir)],
        "replay_not_a_run": ["replay", str(not_a_run), "--tasks", str(task_dir)],
    }
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "400", "NO_COLOR": "1"}
    procs = {
        k: subprocess.Popen([CLI, *args], cwd=base, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for k, args in commands.items()
    }
    results = {}
    for key, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        results[key] = subprocess.CompletedProcess(commands[key], proc.returncode, out, err)
    results["_base"] = base  # type: ignore[assignment]
    return results


def test_cli_replay_of_a_recorded_run_is_identical(cli: dict[str, Any]) -> None:
    r = cli["replay"]
    assert r.returncode == 0, r.stderr
    assert "replayed: every attempt's outcome is identical" in r.stdout
    replayed = read_log(cli["_base"] / "replay" / "replay")
    assert len(attempts_of(replayed)) == 6


def test_cli_rescore(cli: dict[str, Any]) -> None:
    assert cli["rescore"].returncode == 0, cli["rescore"].stderr
    assert "re-scored: every attempt's outcome is identical" in cli["rescore"].stdout


def test_cli_replay_show_steps_through_the_loop(cli: dict[str, Any]) -> None:
    r = cli["show"]
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.count("attempt 0: prompt") == 2 and out.count("attempt 1: prompt") == 2
    assert "failed at correct (wrong_output)" in out and "outcome: passed" in out
    assert "returned wrong results" in out and "feedback (score" in out
    assert out.count("episode: passed after 2 attempts") == 2
    assert MODE not in out
    unknown = cli["show_unknown"]
    assert unknown.returncode == 2 and "no attempts at 'no_such_task'" in unknown.stderr


def test_cli_report_on_a_recorded_run(cli: dict[str, Any], recorded: Path) -> None:
    r = cli["report"]
    assert r.returncode == 0, r.stderr
    model = read_manifest(recorded).config["model"]
    assert "Summary" in r.stdout and "Stage failures" in r.stdout
    assert model in r.stdout and "feedback-loop:3" in r.stdout
    assert "4/4" in r.stdout  # every episode passed
    bad = cli["report_not_a_run"]
    assert bad.returncode == 2 and "not a run directory" in bad.stderr


def test_cli_replay_of_a_tampered_log_fails_loudly(cli: dict[str, Any]) -> None:
    r = cli["replay_tampered"]
    assert r.returncode not in (0, 1)
    text = r.stdout + r.stderr
    assert MODE in text and "attempt 0" in text and "no recorded response" in text
    assert "Traceback" not in text
    bad = cli["replay_not_a_run"]
    assert bad.returncode == 2 and "not a run directory" in bad.stderr


# ----------------------------------------------------------------- configs and experiment files


def test_run_config_and_task_selection_errors(two_tasks: list[Task]) -> None:
    with pytest.raises(ValueError, match="track"):
        RunConfig(model="m", agent="single-shot", track="solver")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="repeats"):
        RunConfig(model="m", agent="single-shot", repeats=0)
    with pytest.raises(ValueError, match="concurrency"):
        RunConfig(model="m", agent="single-shot", concurrency=0)
    assert [t.task_id for t in select_tasks(two_tasks, "mode_*")] == [MODE]
    assert [t.task_id for t in select_tasks(two_tasks, f" {SCALE} , {MODE}")] == [MODE, SCALE]
    assert len(select_tasks(two_tasks, "all")) == 2
    with pytest.raises(ValueError, match="'nothing_\\*' matches no task"):
        select_tasks(two_tasks, f"{SCALE},nothing_*")


GOOD_EXPERIMENT = """
name = "grid"
models = ["scripted/a", "scripted/b"]
agents = ["single-shot", "feedback-loop:3"]
tasks = "FEM_1D_*"
repeats = 2

[params]
temperature = 0.5
max_tokens = 100
"""


def test_experiment_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "grid.toml"
    path.write_text(GOOD_EXPERIMENT)
    exp = load_experiment(path)
    assert exp.models == ["scripted/a", "scripted/b"] and exp.repeats == 2
    assert exp.params.temperature == 0.5 and exp.params.max_tokens == 100 and exp.track == "code"
    shipped = load_experiment(ROOT / "experiments" / "scaffolds_embedded.toml")
    assert shipped.models == ["local"] and "feedback-loop:3" in shipped.agents


def test_the_every_family_experiment_covers_every_family_on_a_track_that_supports_it() -> None:
    from fembench_agents.cases.problem import load_cases
    from fembench_agents.cases.tracks import get_track

    exp = load_experiment(ROOT / "experiments" / "pde_families_embedded.toml")
    chosen = select_tasks(load_cases(ROOT / "cases"), exp.cases)
    families = sorted(c.spec.family for c in chosen)
    assert len(chosen) == 11 and families == sorted(set(families))
    assert set(families) == {
        "biharmonic", "burgers", "convection_diffusion", "elasticity", "heat", "helmholtz",
        "navier_stokes", "poisson", "reaction_diffusion", "stokes", "wave",
    }  # fmt: skip
    assert exp.libraries == ["scikit-fem"]
    assert all(get_track("scikit-fem").supports(c.spec.family, c.spec.domain.name) for c in chosen)
    assert all("scikit-fem" in c.spec.libraries for c in chosen)


@pytest.mark.parametrize(
    "text, key",
    [
        ('models = ["m"]\nagents = ["single-shot"]\n', "name"),
        ('name = "x"\nagents = ["single-shot"]\n', "models"),
        ('name = "x"\nmodels = []\nagents = ["single-shot"]\n', "models"),
        ('name = "x"\nmodels = ["m"]\nagents = ["single-shot"]\nrepeats = 0\n', "repeats"),
        ('name = "x"\nmodels = ["m"]\nagents = ["single-shot"]\ntrack = "solver"\n', "track"),
        ('name = "x"\nmodels = ["m"]\nagents = ["single-shot"]\nrepeat = 3\n', "repeat"),
        ('name = "x"\nmodels = ["m"]\nagents = ["single-shot"]\n[params]\ntemperature = "hot"\n', "params.temperature"),
        ('name = "x"\nmodels = ["m"]\nagents = ["single-shot"]\n[params]\ntop_k = 3\n', "params"),
        ('name = "x"\nmodels = "m"\nagents = ["single-shot"]\n', "models"),
    ],
)
def test_experiment_file_errors_name_the_file_and_key(text: str, key: str, tmp_path: Path) -> None:
    path = tmp_path / "bad_experiment.toml"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        load_experiment(path)
    message = str(info.value)
    assert str(path) in message
    assert f": {key}:" in message
    if "top_k" in text:
        assert "'top_k'" in message


def test_experiment_file_syntax_and_missing_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('name = "x\nmodels = [\n')
    with pytest.raises(ValueError, match=r"broken\.toml.*not valid TOML.*line"):
        load_experiment(path)
    with pytest.raises(ValueError, match=r"missing\.toml does not exist"):
        load_experiment(tmp_path / "missing.toml")


def test_compare_refuses_an_optimize_experiment_by_name() -> None:
    with pytest.raises(
        ValueError, match=r"gepa_fembench_protocol\.toml: a 'optimize' experiment.*fembench-agents optimize"
    ):
        load_experiment(ROOT / "experiments" / "gepa_fembench_protocol.toml")


def test_an_experiment_file_without_a_kind_is_of_the_kind_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "plain.toml"
    path.write_text('name = "plain"\nmodel = "m"\nreflection_model = "r"\nheldout = "h"\nseed = 3\n')
    assert load_settings(path, {}).seed == 3
    path.write_text('kind = "compare"\n' + path.read_text())
    with pytest.raises(ValueError, match=r"plain\.toml: a 'compare' experiment, not a 'optimize' one"):
        load_settings(path, {})


def test_cli_rescore_prints_each_changed_attempt_before_and_after(
    recorded: Path, evaluator: Evaluator, changed_scale: Task, two_tasks: list[Task], changed_task_dir: Path
) -> None:
    cli = str(Path(sys.executable).parent / "fembench-agents")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "2000", "NO_COLOR": "1"}
    done = subprocess.run(
        [cli, "replay", str(recorded), "--rescore", "--tasks", str(changed_task_dir)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # a change is a failure of the replay
    expected = rescore(recorded, {t.task_id: t for t in (changed_scale, two_tasks[1])}, evaluator)
    assert expected and {c.episode.split("|")[3] for c in expected} == {SCALE}
    # each change in its order, its recorded outcome first (the console wraps long lines: compared without spaces)
    printed = [f"re-scored: {len(expected)} attempts changed"]
    printed += [f"{c.episode} #{c.attempt_index} before: {c.before} after: {c.after}" for c in expected]
    assert "".join(done.stdout.split()) == "".join("".join(printed).split())


def test_a_run_s_defaults_are_the_readme_s_wherever_a_run_is_described() -> None:
    """Every task of the code track once, two episodes at once, model calls at that concurrency: the
    CLI, the Python API, an experiment file and the config the runner reads agree."""
    expected = {"tasks": "all", "track": "code", "repeats": 1, "concurrency": 2}
    config = RunConfig(model="m", agent="a")
    assert {k: getattr(config, k) for k in expected} == expected and config.model_concurrency is None
    experiment = Experiment(name="e", models=["m"], agents=["a"])
    assert {k: getattr(experiment, k) for k in expected} == expected and experiment.model_concurrency is None
    assert (experiment.cases, experiment.libraries, experiment.tracks) == ("all", [], [])
    api_defaults = inspect.signature(api.run).parameters
    assert {k: api_defaults[k].default for k in expected} == expected
    cli_defaults = inspect.signature(cli_runs.run).parameters
    assert {k: cli_defaults[k].default for k in expected} == expected
    assert cli_defaults["model_concurrency"].default is None

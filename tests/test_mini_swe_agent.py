"""The mini-swe-agent solver offline with our scripted provider: a solving
episode recorded, priced and replayed; feedback in the same conversation; the
step, cost and time caps as outcomes; a PDE case solved in its case
workspace; and hidden markers that no command can read."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fembench_agents.agents import make_agent
from fembench_agents.agents.coding.workspace import VIRTUAL_ROOT
from fembench_agents.agents.mini_swe import MiniSweOptions, make_mini_swe_agent
from fembench_agents.agents.mini_swe.agent import EpisodeTrace, MiniSweAgent
from fembench_agents.messages import Message, ModelParams
from fembench_agents.models import ClientOptions, ReplayModel, make_client, register_script, unregister_script
from fembench_agents.runs.episode_budget import EpisodeBudget
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, ModelCallRecord, RunLog, episode_key, read_log
from fembench_agents.runs.replay import compare_runs
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.runs.session import EpisodeSession
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import TemplateFeedback
from fembench_agents.suite.model import Task

ROOT = Path(__file__).resolve().parents[1]
CORRECT = """import numpy as np
import pytest


def scale_vector(x, factor):
    if factor < 0:
        raise ValueError("negative factor")
    return factor * np.asarray(x, dtype=float)
"""
WRONG = CORRECT.replace("factor * np.asarray(x, dtype=float)", "np.asarray(x, dtype=float) + factor")
SUBMIT = "THOUGHT: done.\n\n```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"


def command(text: str) -> str:
    """An assistant reply in mini-swe-agent's text format: a thought and one command."""
    return f"THOUGHT: next step.\n\n```mswea_bash_command\n{text}\n```"


def write(code: str, name: str = "solution.py") -> str:
    return command(f"cat <<'EOF' > {name}\n{code.rstrip()}\nEOF")


def turns(messages: list[Message]) -> int:
    return sum(m.role == "assistant" for m in messages)


def scripted(name: str, replies: list[str] | Callable[[list[Message]], Any]) -> Iterator[Any]:
    script = register_script(name, replies)
    try:
        yield script
    finally:
        unregister_script(name)


@pytest.fixture
def script_name() -> str:
    return f"mswe-{uuid.uuid4().hex[:8]}"


async def run_one(
    agent: MiniSweAgent, task: Task, model: Any, evaluator: Evaluator, out: Path
) -> tuple[EpisodeTrace, EpisodeRecord]:
    key = episode_key(model.model, agent.name, "code", task.task_id, 0)
    with RunLog(out) as log:
        session = EpisodeSession(
            task=task,
            track="code",
            model=model,
            params=ModelParams(seed=0),
            evaluator=evaluator,
            feedback=TemplateFeedback(),
            log=log,
            episode=key,
            agent=agent.name,
            repeat=0,
        )
        started = time.perf_counter()
        trace = await agent.run(task, session)
        record = session.summary(started)
        log.append(record)
    return trace, record


def solving_script(messages: list[Message]) -> str:
    n = turns(messages)
    if n == 0:
        return write(CORRECT)
    if n == 1:
        return command("python check.py")
    assert "CHECK PASSED" in messages[-1].content, messages[-1].content
    return SUBMIT


def test_options_and_spec() -> None:
    assert make_agent("mini-swe-agent").name == "mini-swe-agent"
    agent = make_agent("mini-swe-agent:attempts=2,steps=5,cost=0.5,seconds=60")
    assert agent.name == "mini-swe-agent:attempts=2,steps=5,cost=0.5,seconds=60"
    assert make_mini_swe_agent("3").options == MiniSweOptions(attempts=3)
    with pytest.raises(
        ValueError,
        match="mini-swe-agent: unknown option 'iterations'; known: attempts, command_seconds, cost, seconds, steps",
    ):
        make_agent("mini-swe-agent:iterations=3")
    with pytest.raises(ValueError, match="option 'max_steps'"):
        make_agent("mini-swe-agent:steps=0")


def test_scripted_run_is_recorded_priced_and_replayed(
    scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    for script in scripted(script_name, solving_script):
        config = RunConfig(model=f"scripted/{script_name}", agent="mini-swe-agent", tasks=scale_task.task_id)
        out = tmp_path / "run"
        model = make_client(config.model, options=ClientOptions(token_prices=(1e-6, 2e-6)))
        [record] = asyncio.run(execute_run(config, [scale_task], out, model, evaluator))
        assert record.status == "done" and record.passed and record.attempts == 1
        assert (record.model_calls, record.reused_calls) == (3, 0)  # every call of the attempt, not one
        original = read_log(out)
        calls = [r for r in original if isinstance(r, ModelCallRecord)]
        assert len(calls) == script.calls == 3
        assert record.prompt_tokens == sum(c.response.usage.prompt_tokens for c in calls)  # type: ignore[union-attr]
        assert record.cost_usd == pytest.approx(sum(c.response.cost_usd for c in calls))  # type: ignore[union-attr,misc]
        assert [m.role for m in calls[2].request.messages] == [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
        ]
        observation = calls[2].request.messages[-1].content
        assert observation.startswith("<returncode>0</returncode>\n<output>\nCHECK PASSED")
        assert not any("fembench-mini-swe-" in m.content for c in calls for m in c.request.messages)
        [attempt] = [r for r in original if isinstance(r, AttemptRecord)]
        assert attempt.response is not None and attempt.response.finish_reason == "finished"
        assert attempt.reply.strip() == CORRECT.strip()
        # the replay answers every call from the log and asks no model
        replayed = tmp_path / "replay"
        asyncio.run(execute_run(config, [scale_task], replayed, ReplayModel.from_records(original), evaluator))
        assert script.calls == 3
        assert compare_runs(original, read_log(replayed)) == []
        [again] = [r for r in read_log(replayed) if isinstance(r, EpisodeRecord)]
        assert (again.model_calls, again.reused_calls) == (3, 3)


def test_feedback_is_sent_in_the_same_conversation(
    scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    def repairing(messages: list[Message]) -> str:
        if "did not pass (attempt 1 of 2)" in messages[-1].content:
            return write(CORRECT)
        return SUBMIT if turns(messages) in (1, 3) else write(WRONG)

    for script in scripted(script_name, repairing):
        agent = make_mini_swe_agent("attempts=2")
        trace, record = asyncio.run(
            run_one(agent, scale_task, make_client(f"scripted/{script_name}"), evaluator, tmp_path)
        )
        assert [(a.stop_reason, a.passed) for a in trace.attempts] == [("finished", False), ("finished", True)]
        assert record.passed and record.attempts == 2 and script.calls == 4
        last = [r for r in read_log(tmp_path) if isinstance(r, ModelCallRecord)][-1]
        roles = [m.role for m in last.request.messages]
        assert roles == ["system", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
        assert "Evaluator feedback:" in last.request.messages[5].content


def test_step_cap_and_format_errors_are_outcomes(
    scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    for script in scripted(script_name, lambda messages: command(f"echo step {turns(messages)}")):
        trace, record = asyncio.run(
            run_one(
                make_mini_swe_agent("steps=3"),
                scale_task,
                make_client(f"scripted/{script_name}"),
                evaluator,
                tmp_path / "a",
            )
        )
        assert script.calls == 3 and [a.stop_reason for a in trace.attempts] == ["step_cap"]
        assert record.status == "done" and not record.passed
        attempt = next(r for r in read_log(tmp_path / "a") if isinstance(r, AttemptRecord))
        assert "raise NotImplementedError" in attempt.reply  # the untouched stub was scored
    for script in scripted(script_name, ["no command here"] * 5):
        trace, _ = asyncio.run(
            run_one(
                make_mini_swe_agent(""), scale_task, make_client(f"scripted/{script_name}"), evaluator, tmp_path / "b"
            )
        )
        assert script.calls == 3 and [a.stop_reason for a in trace.attempts] == ["format_errors"]
        requests = [r.request for r in read_log(tmp_path / "b") if isinstance(r, ModelCallRecord)]
        assert requests[1].messages[-1].content.startswith("Format error: Expected exactly 1 action, found 0.")


def test_cost_and_wall_clock_caps(scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str) -> None:
    for script in scripted(
        script_name, lambda messages: write(WRONG) if turns(messages) == 0 else command("python check.py")
    ):
        model = make_client(f"scripted/{script_name}", options=ClientOptions(token_prices=(1e-4, 1e-4)))
        trace, record = asyncio.run(
            run_one(make_mini_swe_agent("cost=0.02,attempts=3"), scale_task, model, evaluator, tmp_path / "a")
        )
        assert script.calls == 1 and [a.stop_reason for a in trace.attempts] == ["cost_cap"]
        assert record.attempts == 1 and record.cost_usd is not None and record.cost_usd > 0.02
    for _script in scripted(
        script_name, lambda messages: write(CORRECT) if turns(messages) == 0 else command("sleep 20")
    ):
        started = time.monotonic()
        trace, record = asyncio.run(
            run_one(
                make_mini_swe_agent("seconds=4,command_seconds=2"),
                scale_task,
                make_client(f"scripted/{script_name}"),
                evaluator,
                tmp_path / "b",
            )
        )
        assert time.monotonic() - started < 20
        assert [a.stop_reason for a in trace.attempts] == ["time_cap"] and record.passed  # the file written before
        sleeps = [r.request for r in read_log(tmp_path / "b") if isinstance(r, ModelCallRecord)][2:]
        assert sleeps and "<exception>the command was killed after 2 s</exception>" in sleeps[0].messages[-1].content


def test_the_run_s_episode_budget_ends_the_episode_not_only_the_attempt(
    scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    for script in scripted(
        script_name, lambda messages: write(WRONG) if turns(messages) == 0 else command("python check.py")
    ):
        agent = make_mini_swe_agent("attempts=3")
        model = make_client(f"scripted/{script_name}")
        key = episode_key(model.model, agent.name, "code", scale_task.task_id, 0)
        with RunLog(tmp_path) as log:
            session = EpisodeSession(
                task=scale_task,
                track="code",
                model=model,
                params=ModelParams(seed=0),
                evaluator=evaluator,
                feedback=TemplateFeedback(),
                log=log,
                episode=key,
                agent=agent.name,
                repeat=0,
                caps=EpisodeBudget(calls=2),
            )
            trace = asyncio.run(agent.run(scale_task, session))
            record = session.summary(time.perf_counter())
        # the third call is refused: the written file is scored once, and no later attempt starts
        assert script.calls == 2
        assert [(a.stop_reason, a.detail, a.passed) for a in trace.attempts] == [
            ("episode_budget", "episode budget reached: calls (calls=2)", False)
        ]
        assert (record.attempts, record.budget_stop) == (1, "calls")


def test_a_failing_model_ends_the_episode_as_an_error(
    scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    def broken(messages: list[Message]) -> str:
        raise RuntimeError("provider exploded")

    for _script in scripted(script_name, broken):
        config = RunConfig(model=f"scripted/{script_name}", agent="mini-swe-agent", tasks=scale_task.task_id)
        [record] = asyncio.run(execute_run(config, [scale_task], tmp_path, make_client(config.model), evaluator))
        assert record.status == "error" and "provider exploded" in (record.error or "")
        assert record.error_kind == "bad request"


def test_hidden_data_is_unreachable_from_the_shell(
    scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    secret = f"SECRET-{uuid.uuid4().hex}"
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    markers = [Path(scale_task.path).resolve().parent / f"marker-{secret[-8:]}.txt", run_dir / "marker.txt"]
    for marker in markers:
        marker.write_text(secret)
    probes = []
    for marker in markers:
        probes += [
            command(f"cat {marker}"),
            command(f"cat ../../..{marker}; ls {marker.parent}"),
            command(f"cat /proc/*/root{marker} /proc/*/cwd/{marker.name} 2>&1 | head -5"),
            command(f"ln -sf {marker} link.txt; cat link.txt; echo $PWD"),
        ]
    probes += [
        command("grep -rl --exclude-dir=.venv SECRET- /tmp /work /root /home 2>/dev/null | head; ls /work/main/tasks"),
        SUBMIT,
    ]
    try:
        for script in scripted(script_name, probes):
            trace, _ = asyncio.run(
                run_one(make_mini_swe_agent(""), scale_task, make_client(f"scripted/{script_name}"), evaluator, run_dir)
            )
            assert script.calls == len(probes) and [a.stop_reason for a in trace.attempts] == ["finished"]
            seen = "\n".join(
                m.content for r in read_log(run_dir) if isinstance(r, ModelCallRecord) for m in r.request.messages
            )
            assert secret not in seen
            assert "No such file or directory" in seen and f"\n{VIRTUAL_ROOT}\n" in seen
            assert "fembench-mini-swe-" not in seen
    finally:
        for marker in markers:
            marker.unlink(missing_ok=True)


def test_a_pde_case_is_solved_in_its_case_workspace(tmp_path: Path, script_name: str) -> None:
    import pde_solvers as ps

    from fembench_agents.cases import timing
    from fembench_agents.cases.problem import load_cases
    from fembench_agents.cases.scorer import CaseScorer
    from fembench_agents.scoring.sandbox import Sandbox

    cases_dir = tmp_path / "cases"
    shutil.copytree(ROOT / "cases", cases_dir, ignore=shutil.ignore_patterns("calibration"))
    timing.save(
        cases_dir,
        timing.MachineCalibration(
            machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={ps.CASE: {"numpy-scipy": 1.0}}
        ),
    )

    def solver(messages: list[Message]) -> str:
        n = turns(messages)
        if n == 0:
            return command("ls")
        if n == 1:
            assert (
                messages[-1].content
                == "<returncode>0</returncode>\n<output>\nTASK.md\ncase_spec.json\ncheck.py\nsolver.py\n</output>"
            )
            return write(ps.CORRECT, "solver.py")
        if n == 2:
            return command("python check.py")
        assert "CHECK PASSED" in messages[-1].content
        return SUBMIT

    for script in scripted(script_name, solver):
        config = RunConfig(model=f"scripted/{script_name}", agent="mini-swe-agent", tasks=ps.CASE, track="numpy-scipy")
        with Sandbox(workers=1) as sandbox:
            evaluator = Evaluator(sandbox, scorers={"pde": CaseScorer(sandbox, timing.load(cases_dir))})
            [record] = asyncio.run(
                execute_run(config, load_cases(cases_dir), tmp_path / "run", make_client(config.model), evaluator)
            )
            evaluator.close()
        assert record.status == "done" and record.passed and script.calls == 4


@pytest.mark.local_model
def test_real_run_against_the_local_model(scale_task: Task, evaluator: Evaluator, tmp_path: Path) -> None:
    """SmolLM2-135M over loopback HTTP cannot solve the task; the episode must
    still end in a stop reason, record every call and score the final file."""
    from fembench_agents.models import open_client

    params = ModelParams(max_tokens=200, timeout=120)
    config = RunConfig(model="local", agent="mini-swe-agent:steps=3", tasks=scale_task.task_id, params=params)
    with open_client("local", params) as model:
        [record] = asyncio.run(execute_run(config, [scale_task], tmp_path, model, evaluator))
    assert record.status == "done" and record.attempts == 1 and not record.passed
    records = read_log(tmp_path)
    calls = [r for r in records if isinstance(r, ModelCallRecord)]
    assert 1 <= len(calls) <= 3 and all(c.response is not None and c.request.model == "local/smollm2" for c in calls)
    assert record.prompt_tokens == sum(c.response.usage.prompt_tokens or 0 for c in calls)  # type: ignore[union-attr]
    assert record.cost_usd == 0.0
    [attempt] = [r for r in records if isinstance(r, AttemptRecord)]
    assert attempt.outcome is not None and attempt.response is not None
    assert attempt.response.finish_reason in ("finished", "step_cap", "format_errors")

"""The OpenHands agent: offline with the SDK's TestLLM and with our scripted
provider through litellm, caps, confinement of its tools, cost accounting,
replay from the log, and one real run against the embedded local model.
The OpenHands import takes tens of seconds: it happens once per module."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from standin import StandIn

from fembench_agents.agents import make_agent
from fembench_agents.agents.coding.workspace import VIRTUAL_ROOT, create_workspace
from fembench_agents.agents.openhands import OpenHandsOptions, make_openhands_agent
from fembench_agents.agents.openhands.agent import EpisodeTrace, OpenHandsAgent
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.agents.totals import CallTotals
from fembench_agents.messages import Message, ModelParams, ModelResponse, Usage
from fembench_agents.models import (
    ClientOptions,
    ReplayModel,
    make_client,
    register_script,
    unregister_script,
)
from fembench_agents.runs.log import (
    AttemptRecord,
    EpisodeRecord,
    ModelCallRecord,
    RunLog,
    episode_key,
    read_log,
)
from fembench_agents.runs.replay import compare_runs
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.runs.session import EpisodeSession
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import TemplateFeedback
from fembench_agents.suite.model import Task

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(Path(sys.prefix) / "bin" / "python")
SOLUTION = f"{VIRTUAL_ROOT}/solution.py"
CORRECT = """import numpy as np
import pytest


def scale_vector(x, factor):
    if factor < 0:
        raise ValueError("negative factor")
    return factor * np.asarray(x, dtype=float)
"""
WRONG = CORRECT.replace("factor * np.asarray(x, dtype=float)", "np.asarray(x, dtype=float) + factor")


def call(name: str, **params: str) -> str:
    """An assistant reply calling a tool in the SDK's text format."""
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params.items())
    return f"<function={name}>\n{body}</function>"


def write(code: str) -> str:
    return call("file_editor", command="create", path=SOLUTION, file_text=code)


RUN_CHECK = call("terminal", command="python check.py")
FINISH = call("finish", message="done")


def last_user(messages: list[Message]) -> str:
    return next(m.content for m in reversed(messages) if m.role == "user")


def turns(messages: list[Message]) -> int:
    return sum(m.role == "assistant" for m in messages)


@pytest.fixture(scope="module")
def runtime() -> Any:
    """The OpenHands import, once for the module."""
    from fembench_agents.agents.openhands import runtime as rt

    return rt


def scripted(name: str, replies: list[str] | Callable[[list[Message]], Any]) -> Iterator[Any]:
    script = register_script(name, replies)
    try:
        yield script
    finally:
        unregister_script(name)


@pytest.fixture
def script_name() -> str:
    return f"oh-{uuid.uuid4().hex[:8]}"


async def run_one(
    agent: OpenHandsAgent, task: Task, model: Any, evaluator: Evaluator, out: Path, params: ModelParams | None = None
) -> tuple[EpisodeTrace, EpisodeRecord]:
    """One episode through a real EpisodeSession and run log, keeping the trace."""
    params = params or ModelParams(seed=0)
    key = episode_key(model.model, agent.name, "code", task.task_id, 0)
    with RunLog(out) as log:
        session = EpisodeSession(
            task=task,
            track="code",
            model=model,
            params=params,
            evaluator=evaluator,
            feedback=TemplateFeedback(),
            log=log,
            episode=key,
            agent=agent.name,
            repeat=0,
        )
        import time

        started = time.perf_counter()
        trace = await agent.run(task, session)
        record = session.summary(started)
        log.append(record)
    return trace, record


# ------------------------------------------------------------------ no OpenHands import


def test_cli_and_agents_do_not_import_openhands() -> None:
    code = (
        "import sys, fembench_agents.cli, fembench_agents.agents.prompted, fembench_agents.agents.openhands\n"
        "from fembench_agents.agents import make_agent\n"
        "make_agent('openhands:attempts=2')\n"
        "bad = sorted(m for m in sys.modules if m == 'openhands' or m.startswith('openhands.'))\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run(
        [PYTHON, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_options_and_spec() -> None:
    assert OpenHandsOptions.parse("") == OpenHandsOptions()
    opts = OpenHandsOptions.parse("attempts=3,iterations=12,cost=0.5,seconds=60")
    assert (opts.attempts, opts.max_iterations, opts.max_cost_usd, opts.max_seconds) == (3, 12, 0.5, 60.0)
    assert OpenHandsOptions.parse("2").attempts == 2
    agent = make_agent("openhands:attempts=3")
    assert isinstance(agent, OpenHandsAgent) and agent.options.attempts == 3
    assert agent.name == "openhands:attempts=3" and make_agent("openhands").name == "openhands"
    with pytest.raises(ValueError, match="unknown option 'colour'"):
        make_openhands_agent("colour=red")
    with pytest.raises(ValueError, match="attempts"):
        make_openhands_agent("attempts=0")


def test_workspace_holds_only_public_parts(scale_task: Task) -> None:
    prompt = PromptRenderer().task_prompt(scale_task, "code")
    ws = create_workspace(scale_task, "code", prompt)
    try:
        files = {p.name: p.read_text() for p in ws.dir.iterdir()}
        assert set(files) == {"TASK.md", "solution.py", "check.py"}
        everything = "\n".join(files.values())
        for hidden in (
            "fail_adds",
            "fail_no_check",
            "np.allclose(fcn",
            "[0.5, 4.0]",
            "task_info",
            "test_negative_factor_raises",
            "must be non-negative",
        ):
            assert hidden not in everything, hidden
        assert not (ws.dir.parent / "control").resolve().is_relative_to(ws.dir)

        def check() -> subprocess.CompletedProcess[str]:
            return subprocess.run([PYTHON, "check.py"], cwd=ws.dir, capture_output=True, text=True, timeout=60)

        stub = check()
        assert stub.returncode == 1 and "still a stub" in stub.stdout
        ws.solution.write_text(CORRECT)
        assert check().returncode == 0 and "CHECK PASSED" in check().stdout
        ws.solution.write_text(CORRECT.replace("(x, factor)", "(x, scale)"))
        assert "signature" in check().stdout
        ws.solution.write_text("import os\n" + CORRECT)
        assert "'os' is not allowed" in check().stdout
    finally:
        ws.remove()
    assert not ws.root.exists()


def test_tests_track_workspace(scale_task: Task) -> None:
    ws = create_workspace(scale_task, "tests", PromptRenderer().task_prompt(scale_task, "tests"))
    try:
        assert ws.solution.name == "test_solution.py"
        stub = ws.solution.read_text()
        assert "def test_scales_values(fcn):" in stub and "fail_adds" not in stub
        done = subprocess.run([PYTHON, "check.py"], cwd=ws.dir, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout
    finally:
        ws.remove()


def test_case_workspace_holds_the_spec_a_skeleton_and_a_check_that_runs_the_solver() -> None:
    import pde_solvers

    from fembench_agents.cases import store
    from fembench_agents.cases.problem import load_cases

    case = next(c for c in load_cases(ROOT / "cases") if c.task_id == pde_solvers.CASE)
    ws = create_workspace(case, "numpy-scipy", PromptRenderer().task_prompt(case, "numpy-scipy"))
    try:
        files = {p.name: p.read_text() for p in ws.dir.iterdir()}
        assert set(files) == {"TASK.md", "solver.py", "check.py", "case_spec.json"}
        assert json.loads(files["case_spec.json"]) == case.spec_data()
        record, _ = store.load_hidden(ROOT / "cases", case.task_id)
        everything = "\n".join(files.values())
        assert record.solution not in everything and "e_base" not in everything and "tau_acc" not in everything

        def check() -> subprocess.CompletedProcess[str]:
            return subprocess.run([PYTHON, "check.py"], cwd=ws.dir, capture_output=True, text=True, timeout=120)

        assert check().returncode == 0  # the skeleton runs and returns the right shape
        ws.solution.write_text(pde_solvers.TRANSPOSED_SHAPE)
        assert "CHECK FAILED: output['u'] must be a numpy array of shape (49, 49)" in check().stdout
        ws.solution.write_text("import os\n" + pde_solvers.CORRECT)
        assert "'os' is not allowed" in check().stdout
        ws.solution.write_text(pde_solvers.CORRECT)
        assert "CHECK PASSED" in check().stdout
    finally:
        ws.remove()


# ------------------------------------------------------------------ conversations


def test_testllm_conversation_writes_checks_and_finishes(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path
) -> None:
    from openhands.sdk.llm import Message as SDKMessage
    from openhands.sdk.llm import MessageToolCall, TextContent
    from openhands.sdk.testing import TestLLM

    def tool(i: int, name: str, **args: Any) -> SDKMessage:
        import json

        return SDKMessage(
            role="assistant",
            content=[TextContent(text="")],
            tool_calls=[MessageToolCall(id=f"call_{i}", name=name, arguments=json.dumps(args), origin="completion")],
        )

    llm = TestLLM.from_messages(
        [
            tool(1, "file_editor", command="create", path=SOLUTION, file_text=CORRECT),
            tool(2, "terminal", command="python check.py > check.out; cat check.out"),
            tool(3, "finish", message="implemented and checked"),
        ]
    )
    agent = OpenHandsAgent(llm_factory=lambda bridge: llm, keep_workspace=True)
    # TestLLM answers every call; the scripted model only stands behind the session (and must be
    # registered, or the test depends on another test having registered the provider first)
    for _ in scripted("echo", []):
        model = make_client("scripted/echo")
        trace, record = asyncio.run(run_one(agent, scale_task, model, evaluator, tmp_path))
    try:
        assert llm.remaining_responses == 0
        assert [a.stop_reason for a in trace.attempts] == ["finished"]
        assert "CHECK PASSED" in (Path(trace.workspace) / "check.out").read_text()
        assert record.passed and record.status == "done" and record.attempts == 1
        attempts = [r for r in read_log(tmp_path) if isinstance(r, AttemptRecord)]
        assert attempts[0].reply == CORRECT and attempts[0].response.finish_reason == "finished"
    finally:
        import shutil

        shutil.rmtree(Path(trace.workspace).parent, ignore_errors=True)


def solving_script(messages: list[Message]) -> str:
    """Writes the file, runs the check, finishes once the check passed."""
    n = turns(messages)
    if n == 0:
        return "Let me write the solution.\n" + write(CORRECT)
    if n == 1:
        return RUN_CHECK
    assert "CHECK PASSED" in last_user(messages), last_user(messages)
    return FINISH


def test_scripted_run_is_recorded_priced_and_replayed(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    for script in scripted(script_name, solving_script):
        options = ClientOptions(token_prices=(1e-6, 2e-6))
        model = make_client(f"scripted/{script_name}", options=options)
        agent = make_openhands_agent("")
        trace, record = asyncio.run(run_one(agent, scale_task, model, evaluator, tmp_path))
        assert record.passed and [a.stop_reason for a in trace.attempts] == ["finished"]
        records = read_log(tmp_path)
        calls = [r for r in records if isinstance(r, ModelCallRecord)]
        assert len(calls) == script.calls == 3
        assert all(c.response and c.response.usage.prompt_tokens and c.response.cost_usd for c in calls)
        # the episode's tokens and cost are the sum of its calls (what `report` shows)
        assert record.prompt_tokens == sum(c.response.usage.prompt_tokens for c in calls)  # type: ignore[union-attr]
        assert record.cost_usd == pytest.approx(sum(c.response.cost_usd for c in calls))  # type: ignore[union-attr,misc]
        # ... and the SDK's own metrics agree with our records
        assert trace.metrics_agree and trace.sdk_prompt_tokens == record.prompt_tokens
        assert trace.sdk_cost_usd == pytest.approx(record.cost_usd)
        # every request is plain messages with no episode-specific path in it
        for c in calls:
            assert c.request.messages[0].role == "system"
            assert not any("fembench-openhands-" in m.content for m in c.request.messages)
        observation = calls[2].request.messages[-1].content
        assert "CHECK PASSED" in observation and f"[Current working directory: {VIRTUAL_ROOT}]" in observation
        assert f"[Python interpreter: {PYTHON}]" in observation


def test_replay_answers_every_call_from_the_log(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    for script in scripted(script_name, solving_script):
        config = RunConfig(model=f"scripted/{script_name}", agent="openhands", tasks=scale_task.task_id)
        out = tmp_path / "run"
        model = make_client(config.model)
        asyncio.run(execute_run(config, [scale_task], out, model, evaluator))
        original = read_log(out)
        calls_before = script.calls
        replayed = tmp_path / "replay"
        asyncio.run(execute_run(config, [scale_task], replayed, ReplayModel.from_records(original), evaluator))
        assert script.calls == calls_before  # no model was asked
        again = read_log(replayed)
        assert compare_runs(original, again) == []
        ends = [r for r in again if isinstance(r, EpisodeRecord)]
        assert ends[0].passed and ends[0].status == "done"
        hashes = lambda rs: [r.request_hash for r in rs if isinstance(r, ModelCallRecord)]  # noqa: E731
        assert hashes(again) == hashes(original) and len(hashes(original)) == 3


def test_against_a_server_the_log_holds_exactly_the_requests_it_received(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked from outside: every request an OpenAI-compatible server on
    loopback received is a model-call record in the log, in order, and
    nothing else is; replaying the run sends the server nothing."""

    def reply(messages: list[dict[str, Any]]) -> str:
        return solving_script(
            [
                Message(role=m["role"], content=_text(m["content"]))
                for m in messages
                if m.get("role") in ("system", "user", "assistant")
            ]
        )

    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    server = StandIn(reply)
    try:
        config = RunConfig(
            model="openai/standin",
            agent="openhands",
            tasks=scale_task.task_id,
            params=ModelParams(api_base=server.api_base),
        )
        out = tmp_path / "run"
        asyncio.run(execute_run(config, [scale_task], out, make_client(config.model, config.params), evaluator))
        original = read_log(out)
        calls = [r for r in original if isinstance(r, ModelCallRecord)]
        assert len(server.bodies) == len(calls) == 3
        for body, record in zip(server.bodies, calls, strict=True):
            sent = [(m["role"], _text(m["content"])) for m in body["messages"]]
            assert sent == [(m.role, m.content) for m in record.request.messages]
        received = len(server.bodies)
        asyncio.run(
            execute_run(config, [scale_task], tmp_path / "replay", ReplayModel.from_records(original), evaluator)
        )
        assert len(server.bodies) == received
        assert compare_runs(original, read_log(tmp_path / "replay")) == []
    finally:
        server.close()


def _text(content: Any) -> str:
    """A message's text, whether the client sent a string or content parts."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def test_feedback_is_sent_in_the_same_conversation(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    def repairing(messages: list[Message]) -> str:
        n = turns(messages)
        if n == 0:
            return write(WRONG)
        if n == 1:
            return FINISH
        if n == 2:
            assert "did not pass (attempt 1 of 2)" in last_user(messages)
            return write(CORRECT)
        return FINISH

    for script in scripted(script_name, repairing):
        agent = make_openhands_agent("attempts=2")
        model = make_client(f"scripted/{script_name}")
        trace, record = asyncio.run(run_one(agent, scale_task, model, evaluator, tmp_path))
        assert record.passed and record.first_pass_attempt == 1 and record.attempts == 2
        assert (script.calls, record.model_calls) == (4, 4)  # two calls per attempt, each counted
        attempts = [r for r in read_log(tmp_path) if isinstance(r, AttemptRecord)]
        assert [a.outcome.passed for a in attempts] == [False, True]  # type: ignore[union-attr]
        assert "Evaluator feedback" in attempts[1].messages[-1].content
        assert attempts[1].messages[-1].content.count(attempts[0].feedback.text.strip()) == 1  # type: ignore[union-attr]
        # one conversation: the repair request still holds the first attempt's turns
        feedback_request = script.seen[2]
        assert sum(m.role == "assistant" for m in feedback_request) == 2
        assert [a.stop_reason for a in trace.attempts] == ["finished", "finished"]


# ------------------------------------------------------------------ caps


def test_iteration_cap_is_an_outcome(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    for script in scripted(script_name, lambda messages: call("terminal", command=f"echo step {turns(messages)}")):
        agent = make_openhands_agent("iterations=3")
        trace, record = asyncio.run(
            run_one(agent, scale_task, make_client(f"scripted/{script_name}"), evaluator, tmp_path)
        )
        assert script.calls == 3 and [a.stop_reason for a in trace.attempts] == ["iteration_cap"]
        assert record.status == "done" and not record.passed and record.attempts == 1
        attempt = next(r for r in read_log(tmp_path) if isinstance(r, AttemptRecord))
        assert attempt.outcome is not None and attempt.response.finish_reason == "iteration_cap"  # type: ignore[union-attr]
        assert "raise NotImplementedError" in attempt.reply  # the untouched stub was scored


def test_cost_cap_stops_before_the_next_call(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    for script in scripted(script_name, lambda messages: write(WRONG) if turns(messages) == 0 else RUN_CHECK):
        model = make_client(f"scripted/{script_name}", options=ClientOptions(token_prices=(1e-4, 1e-4)))
        agent = make_openhands_agent("cost=0.05,attempts=3")  # one call costs > 0.1 (over 1,000 prompt tokens)
        trace, record = asyncio.run(run_one(agent, scale_task, model, evaluator, tmp_path))
        assert script.calls == 1 and [a.stop_reason for a in trace.attempts] == ["cost_cap"]
        assert record.status == "done" and record.attempts == 1 and record.cost_usd and record.cost_usd > 0.05
        attempt = next(r for r in read_log(tmp_path) if isinstance(r, AttemptRecord))
        assert attempt.reply.strip() == WRONG.strip() and attempt.outcome is not None and not attempt.outcome.passed


def test_wall_clock_cap_interrupts_a_slow_model(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    async def slow(messages: list[Message]) -> str:
        if turns(messages) == 0:
            return write(CORRECT)
        await asyncio.sleep(30)
        return FINISH

    for _script in scripted(script_name, slow):
        agent = make_openhands_agent("seconds=5")
        import time

        started = time.monotonic()
        trace, record = asyncio.run(
            run_one(agent, scale_task, make_client(f"scripted/{script_name}"), evaluator, tmp_path)
        )
        assert time.monotonic() - started < 25
        assert [a.stop_reason for a in trace.attempts] == ["time_cap"]
        assert record.status == "done" and record.passed  # the file written before the cap is the attempt


def test_a_failing_model_ends_the_episode_as_an_error(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    def broken(messages: list[Message]) -> str:
        raise RuntimeError("provider exploded")

    for _script in scripted(script_name, broken):
        config = RunConfig(model=f"scripted/{script_name}", agent="openhands", tasks=scale_task.task_id)
        [record] = asyncio.run(execute_run(config, [scale_task], tmp_path, make_client(config.model), evaluator))
        assert record.status == "error" and "provider exploded" in (record.error or "")
        assert record.error_kind == "bad request"  # the script's crash is a bad request: not retried, may stop a run
        failed = [r for r in read_log(tmp_path) if isinstance(r, ModelCallRecord)]
        assert failed and failed[0].error and failed[0].response is None


# ------------------------------------------------------------------ confinement


def test_hidden_data_is_unreachable_from_the_workspace(
    runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path, script_name: str
) -> None:
    """Markers planted in the task directory and the run directory never reach
    the model, by any path the agent's terminal or file editor can take."""
    secret = f"SECRET-{uuid.uuid4().hex}"
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    markers = [Path(scale_task.path).resolve().parent / f"marker-{secret[-8:]}.txt", run_dir / "marker.txt"]
    for marker in markers:
        marker.write_text(secret)
    probes: list[str] = []
    for marker in markers:
        absolute = str(marker)
        probes += [
            call("terminal", command=f"cat {absolute}"),
            call("terminal", command=f"cat ../../..{absolute}; cat ../..{absolute}; ls {marker.parent}"),
            call("terminal", command=f"cat /proc/*/root{absolute} /proc/*/cwd/{marker.name} 2>&1 | head -5"),
            call("terminal", command=f"ln -sf {absolute} link.txt; cat link.txt"),
            call("file_editor", command="view", path=absolute),
            call("file_editor", command="view", path=f"../../..{absolute}"),
            call("file_editor", command="view", path=f"{VIRTUAL_ROOT}/link.txt"),
        ]
    probes += [
        call(
            "terminal",
            command="grep -rl --exclude-dir=.venv SECRET- /tmp /work /root /home 2>/dev/null | head; ls /work/main/tasks",
        ),
        FINISH,
    ]
    try:
        for script in scripted(script_name, probes):
            asyncio.run(
                run_one(
                    make_openhands_agent("iterations=40"),
                    scale_task,
                    make_client(f"scripted/{script_name}"),
                    evaluator,
                    run_dir,
                )
            )
            assert script.calls == len(probes)
            requests = [r.request for r in read_log(run_dir) if isinstance(r, ModelCallRecord)]
            seen = "\n".join(m.content for r in requests for m in r.messages)
            assert secret not in seen
            assert "outside the workspace" in seen and "symbolic link" in seen  # the editor refused
            assert "No such file or directory" in seen  # the terminal sees nothing there
            assert "fembench-openhands-" not in seen  # nor the workspace's real location
            assert "\x1b[A" not in seen and "command has no new output" not in seen  # every probe ran to its end
    finally:
        for marker in markers:
            marker.unlink(missing_ok=True)


# ------------------------------------------------------------------ the embedded local model


@pytest.mark.local_model
def test_real_run_against_the_local_model(runtime: Any, scale_task: Task, evaluator: Evaluator, tmp_path: Path) -> None:
    """SmolLM2-135M over loopback HTTP cannot solve the task; the run must still
    complete, record every call, and score the final file."""
    from fembench_agents.models import open_client

    params = ModelParams(max_tokens=200, timeout=120)
    config = RunConfig(model="local", agent="openhands:iterations=3", tasks=scale_task.task_id, params=params)
    with open_client("local", params) as model:
        [record] = asyncio.run(execute_run(config, [scale_task], tmp_path, model, evaluator))
    assert record.status == "done" and record.attempts == 1 and not record.passed
    records = read_log(tmp_path)
    calls = [r for r in records if isinstance(r, ModelCallRecord)]
    assert 1 <= len(calls) <= 3 and all(c.response is not None for c in calls)
    assert all(c.request.model == "local/smollm2" for c in calls)
    assert record.prompt_tokens == sum(c.response.usage.prompt_tokens or 0 for c in calls)  # type: ignore[union-attr]
    assert record.cost_usd == 0.0  # the local model is free, not unpriced
    [attempt] = [r for r in records if isinstance(r, AttemptRecord)]
    assert attempt.outcome is not None and attempt.response is not None
    assert attempt.response.finish_reason in ("finished", "iteration_cap", "stuck", "agent_error")


def test_an_attempts_standing_response_adds_up_its_calls() -> None:
    def call(stamp: str, h: str, cost: float | None, cached: bool = False) -> ModelResponse:
        return ModelResponse(
            text="", usage=Usage(prompt_tokens=10, completion_tokens=2), cost_usd=cost, latency_seconds=0.5,
            timestamp=stamp, request_hash=h, cached=cached,
        )  # fmt: skip

    totals = CallTotals()
    for response in (call("T1", "h1", 0.25), call("T2", "h2", 0.5, cached=True), call("T3", "h3", 1.0)):
        totals.add(response)
    standing = totals.as_response("done", "finish")
    # tokens and time of every call, the cost of those paid for now, the first call's time, the last request
    assert (standing.usage.prompt_tokens, standing.usage.completion_tokens, standing.latency_seconds) == (30, 6, 1.5)
    assert (standing.cost_usd, standing.timestamp, standing.request_hash) == (1.25, "T1", "h3")
    totals.add(call("T4", "h4", None))
    assert totals.as_response("done", "finish").cost_usd is None  # one unpriced call: the attempt is unpriced

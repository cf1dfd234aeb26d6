"""First contact with a real provider: a missing key is refused before any
call, errors retrying cannot fix are not retried, a run stops after a few
episodes fail alike and resumes later, the terminal says what went wrong, the
exit status tells a clean run from a partial one, and `models check` tests a
key and a server. Remote providers are played by the scripted provider and by
a loopback HTTP server speaking the OpenAI chat API."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import CORRECT_SCALE, ROOT
from standin import StandIn

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fembench_agents.messages import CallContext, Message, ModelParams, Usage
from fembench_agents.models import (
    ClientOptions,
    ModelCallError,
    RetryPolicy,
    make_client,
    register_script,
    unregister_script,
)
from fembench_agents.models._litellm import litellm
from fembench_agents.models.check import ModelCheck
from fembench_agents.models.cost import prices_per_million
from fembench_agents.models.credentials import PLACEHOLDER_KEY, credential_problems
from fembench_agents.runs.health import FailureStreak, RunStopped
from fembench_agents.runs.log import EpisodeRecord, read_log
from fembench_agents.runs.reader import finished_episodes
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite.model import Task

FAST = ClientOptions(retry=RetryPolicy(max_retries=4, initial_delay=0.001, max_delay=0.01))
CTX = CallContext(task_id="FEM_1D_demo", attempt="r0/a0")
SCALE = "scale_vector_CC0_H0_T0"
MODE = "mode_plain_CC1_H0_T0"
SECRET = "sk-test-SECRET-0123456789abcdef"
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


def fenced(code: str) -> str:
    return f"```python\n{code.strip()}\n```\n"


@pytest.fixture
def script_name() -> Iterator[str]:
    name = f"first{uuid.uuid4().hex[:10]}"
    yield name
    unregister_script(name)


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No provider key in the environment, and no .env file from the working directory up."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ----------------------------------------------------------------- errors retrying cannot fix


def _http(status: int) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", "http://provider.invalid/v1/chat/completions"))


PERMANENT: dict[str, Callable[[str], Exception]] = {
    "authentication": lambda m: litellm.AuthenticationError(message="invalid key", llm_provider="scripted", model=m),
    "permission": lambda m: litellm.PermissionDeniedError(
        message="no access", llm_provider="scripted", model=m, response=_http(403)
    ),
    "unknown model": lambda m: litellm.NotFoundError(message="no such model", llm_provider="scripted", model=m),
    "bad request": lambda m: litellm.BadRequestError(message="bad field", llm_provider="scripted", model=m),
    "context window exceeded": lambda m: litellm.ContextWindowExceededError(
        message="too long", model=m, llm_provider="scripted"
    ),
}


@pytest.mark.parametrize("kind", sorted(PERMANENT))
def test_errors_retrying_cannot_fix_are_tried_once(script_name: str, kind: str) -> None:
    def refuse(messages: list[Message]) -> str:
        raise PERMANENT[kind](script_name)

    script = register_script(script_name, refuse)
    client = make_client(f"scripted/{script_name}", options=FAST)
    with pytest.raises(ModelCallError) as info:
        asyncio.run(client.complete([Message(role="user", content="x")], CTX))
    assert script.calls == 1
    assert info.value.permanent == kind and info.value.retries == 0


def test_openai_missing_credentials_is_an_authentication_error_not_a_server_error(script_name: str) -> None:
    """litellm reports the OpenAI SDK's refusal to send without a key as an internal server error."""

    def refuse(messages: list[Message]) -> str:
        raise litellm.InternalServerError(
            message="OpenAIException - Missing credentials. Please pass an `api_key`",
            llm_provider="openai",
            model=script_name,
        )

    script = register_script(script_name, refuse)
    with pytest.raises(ModelCallError) as info:
        asyncio.run(
            make_client(f"scripted/{script_name}", options=FAST).complete([Message(role="user", content="x")], CTX)
        )
    assert script.calls == 1 and info.value.permanent == "authentication"


def test_transient_errors_are_still_retried(script_name: str) -> None:
    script = register_script(script_name, ["ok"], fail_first=2, failure="server_error")
    response = asyncio.run(
        make_client(f"scripted/{script_name}", options=FAST).complete([Message(role="user", content="x")], CTX)
    )
    assert script.calls == 3 and response.text == "ok" and response.retries == 2


# ----------------------------------------------------------------- credentials before any call


def test_a_missing_key_is_named_with_where_it_can_go(no_keys: Path) -> None:
    assert credential_problems(["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-20241022", "openai/gpt-4o-mini"]) == [
        "model 'openai/gpt-4o-mini' needs OPENAI_API_KEY, which is not set: put it in the environment or in a "
        ".env file",
        "model 'anthropic/claude-3-5-haiku-20241022' needs ANTHROPIC_API_KEY, which is not set: put it in the "
        "environment or in a .env file",
    ]


def test_models_that_need_no_key_are_not_blocked(no_keys: Path) -> None:
    assert credential_problems(["local", "local/smollm2", "scripted/echo"]) == []
    assert credential_problems(["openai/gpt-4o-mini"], api_base="http://127.0.0.1:9/v1") == []
    # credentials from an AWS profile or gcloud, or a server on this machine: litellm cannot see them
    assert (
        credential_problems(
            ["bedrock/anthropic.claude-3-haiku-20240307-v1:0", "vertex_ai/gemini-1.5-flash", "ollama/llama3"]
        )
        == []
    )


def test_a_key_in_a_dotenv_file_counts(no_keys: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (no_keys / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    try:
        assert credential_problems(["openai/gpt-4o-mini"]) == []
    finally:
        os.environ.pop("OPENAI_API_KEY", None)


def test_a_server_without_a_key_gets_a_placeholder_and_a_set_key_is_kept(
    no_keys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = ModelParams(api_base="http://127.0.0.1:9/v1")
    assert make_client("openai/served", params)._api_key == PLACEHOLDER_KEY
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert make_client("openai/served", params)._api_key is None  # litellm reads the environment's key


# ----------------------------------------------------------------- early stop and resume (in-process)


def _episode(status: str, kind: str | None = None, error: str | None = None) -> EpisodeRecord:
    return EpisodeRecord(
        episode="e",
        task_id="t",
        track="code",
        agent="single-shot",
        model="m",
        repeat=0,
        status=status,
        passed=status == "done",
        score=0.0,
        attempts=1,  # type: ignore[arg-type]
        error=error,
        error_kind=kind,
    )


def _failed(message: str, kind: str | None = "authentication") -> EpisodeRecord:
    return _episode(
        "error",
        kind,
        f"ModelCallError: model call failed (model 'm', task 't', attempt 'a') after 0 retries: {message}",
    )


def test_the_streak_counts_only_the_same_permanent_error_in_a_row() -> None:
    streak = FailureStreak(3)
    for record in (
        _failed("bad key req_1"),
        _failed("bad key req_2"),
        _episode("done"),
        _failed("bad key req_3"),
        _failed("bad key req_4"),
        _failed("other"),
        _failed("rate limited", kind=None),
        _failed("bad key req_5"),
        _failed("bad key req_6"),
    ):
        streak.observe(record, 10)
    with pytest.raises(RunStopped) as info:
        streak.observe(_failed("bad key req_7"), 4)
    stop = info.value
    assert (stop.kind, stop.failed, stop.not_run, stop.message) == ("authentication", 3, 4, "bad key req_7")
    assert str(stop) == (
        "run stopped early: 3 episodes in a row failed with the same authentication error; 4 episodes not run"
    )


def test_a_run_stops_after_three_alike_failures_and_resumes_them(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    def refuse(messages: list[Message]) -> str:
        raise litellm.AuthenticationError(message="invalid x-api-key", llm_provider="scripted", model=script_name)

    script = register_script(script_name, refuse)
    config = RunConfig(model=f"scripted/{script_name}", agent="single-shot", tasks=SCALE, repeats=6, concurrency=1)
    out = tmp_path / "run"
    with pytest.raises(RunStopped) as info:
        asyncio.run(execute_run(config, [scale_task], out, make_client(config.model, options=FAST), evaluator))
    assert script.calls == 3  # one call per episode, none retried, and the other three never started
    assert (info.value.failed, info.value.not_run, info.value.kind) == (3, 3, "authentication")
    episodes = [r for r in read_log(out) if isinstance(r, EpisodeRecord)]
    assert [(e.status, e.error_kind) for e in episodes] == [("error", "authentication")] * 3
    assert finished_episodes(read_log(out)) == {}

    script = register_script(script_name, lambda m: fenced(CORRECT_SCALE))  # the key was fixed
    resumed = asyncio.run(execute_run(config, [scale_task], out, make_client(config.model, options=FAST), evaluator))
    assert script.calls == 6  # the three failed episodes and the three never run
    assert [e.passed for e in resumed] == [True] * 6


def test_a_stop_under_concurrency_cancels_the_episodes_in_flight(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    async def refuse(messages: list[Message]) -> str:
        await asyncio.sleep(0.05)
        raise litellm.AuthenticationError(message="invalid x-api-key", llm_provider="scripted", model=script_name)

    script = register_script(script_name, refuse)
    config = RunConfig(model=f"scripted/{script_name}", agent="single-shot", tasks=SCALE, repeats=8, concurrency=2)
    out = tmp_path / "run"
    loop_errors: list[dict[str, Any]] = []

    async def main() -> RunStopped:
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: loop_errors.append(ctx))
        with pytest.raises(RunStopped) as info:
            await execute_run(config, [scale_task], out, make_client(config.model, options=FAST), evaluator)
        calls = script.calls
        await asyncio.sleep(0.5)  # nothing goes on calling the model after the stop
        assert script.calls == calls <= 4  # the third failure's partner may have been in flight
        return info.value

    stop = asyncio.run(main())
    assert not loop_errors
    ended = [r for r in read_log(out) if isinstance(r, EpisodeRecord)]
    assert len(ended) in (3, 4)  # the partner may have ended too
    assert (stop.failed, stop.not_run) == (3, 8 - len(ended))
    register_script(script_name, lambda m: fenced(CORRECT_SCALE))
    resumed = asyncio.run(execute_run(config, [scale_task], out, make_client(config.model, options=FAST), evaluator))
    assert [e.passed for e in resumed] == [True] * 8


def test_transient_failures_do_not_stop_a_run(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    script = register_script(script_name, ["never served"], fail_first=100, failure="server_error")
    config = RunConfig(model=f"scripted/{script_name}", agent="single-shot", tasks=SCALE, repeats=4, concurrency=1)
    client = make_client(config.model, options=ClientOptions(retry=RetryPolicy(max_retries=1, initial_delay=0.001)))
    episodes = asyncio.run(execute_run(config, [scale_task], tmp_path / "run", client, evaluator))
    assert script.calls == 8  # every episode tried, each call retried once
    assert [(e.status, e.error_kind) for e in episodes] == [("error", None)] * 4


# ----------------------------------------------------------------- models check, in-process parts


def test_prices_per_million_as_litellm_knows_them() -> None:
    per_in, per_out = prices_per_million("openai/gpt-4o-mini")  # type: ignore[misc]
    assert (round(per_in, 6), round(per_out, 6)) == (0.15, 0.6)
    assert prices_per_million("scripted/nothing-priced") is None
    assert prices_per_million("scripted/x", ClientOptions(token_prices=(0.0, 0.0))) == (0.0, 0.0)
    # a server hosting a known model is priced as that model; explicit prices win over both
    hosted = prices_per_million("openai/local-server", ClientOptions(price_as="openai/gpt-4o-mini"))
    assert hosted is not None and (round(hosted[0], 6), round(hosted[1], 6)) == (0.15, 0.6)
    both = ClientOptions(price_as="openai/gpt-4o-mini", token_prices=(1e-6, 2e-6))
    assert prices_per_million("openai/local-server", both) == (1.0, 2.0)


def test_model_check_lines() -> None:
    usage = Usage(prompt_tokens=14, completion_tokens=2)
    assert ModelCheck("openai/gpt-4o-mini", True, latency_seconds=0.4213, usage=usage, prices=(0.15, 0.6)).line() == (
        "openai/gpt-4o-mini: answered in 0.42 s, 14 prompt + 2 completion "
        "tokens, $0.15 / $0.6 per million tokens (input / output)"
    )
    assert ModelCheck("m/x", True, latency_seconds=1, usage=usage).line().endswith(", unpriced")
    assert ModelCheck("local", True, usage=usage, prices=(0.0, 0.0)).line().endswith(", free")
    assert ModelCheck("m/x", True, "AuthenticationError: bad").line() == "m/x: no answer: AuthenticationError: bad"
    assert ModelCheck("m/x", False, "needs K").line() == "m/x: not called: needs K"


# ----------------------------------------------------------------- the CLI against a loopback stand-in


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    server = StandIn(fenced(CORRECT_SCALE))
    yield server
    server.close()


@pytest.fixture
def refusing_stand_in() -> Iterator[StandIn]:
    server = StandIn("", refuse=True)
    yield server
    server.close()


Command = tuple[list[str | Path], dict[str, str]]  # arguments, provider keys set


# The CLI with the scripted test provider registered (its `scripted/echo` model
# answers with the prompt), as the tests that use it register it.
CLI_WITH_SCRIPTS = (
    "from fembench_agents.models.scripted import ensure_registered; ensure_registered(); "
    "from fembench_agents.cli import main; main()"
)


def cli_all(commands: dict[str, Command], cwd: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """The CLI as a user runs it, importing this checkout's package, with only
    the given keys set; the commands run at once (each process costs seconds)."""
    procs = {}
    for name, (args, keys) in commands.items():
        env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
        env.update(
            keys, PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True", COLUMNS="250", NO_COLOR="1", TERM="dumb"
        )
        procs[name] = subprocess.Popen(
            [sys.executable, "-c", CLI_WITH_SCRIPTS, *map(str, args)],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    results = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        results[name] = subprocess.CompletedProcess(commands[name][0], proc.returncode, out, err)
    return results


def cli(*args: str | Path, cwd: Path, keys: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return cli_all({"one": (list(args), keys or {})}, cwd)["one"]


def test_cli_refuses_a_missing_key_before_anything_starts(tmp_path: Path) -> None:
    done = cli_all(
        {
            "run": (["run", "--model", "openai/gpt-4o-mini", "--tasks", "FEM_1D_*", "--out", tmp_path / "run"], {}),
            "compare": (
                [
                    "compare",
                    "--models",
                    "openai/gpt-4o-mini,anthropic/claude-3-5-haiku-20241022,scripted/echo",
                    "--agents",
                    "single-shot",
                    "--out",
                    tmp_path / "grid",
                ],
                {},
            ),
            "optimize": (
                [
                    "optimize",
                    "--model",
                    "local",
                    "--reflection-model",
                    "anthropic/claude-3-5-haiku-20241022",
                    "--heldout",
                    "FEM_1D_*",
                    "--out",
                    tmp_path / "opt",
                ],
                {"OPENAI_API_KEY": SECRET},
            ),
        },
        tmp_path,
    )
    run, both, optimize = done["run"], done["compare"], done["optimize"]
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        "error: model 'openai/gpt-4o-mini' needs OPENAI_API_KEY, which is not set: put it in the environment "
        "or in a .env file"
    ]
    assert not (tmp_path / "run").exists()
    assert both.returncode == 2
    assert both.stderr.splitlines() == [
        "error: model 'openai/gpt-4o-mini' needs OPENAI_API_KEY, which is not set: put it in the environment "
        "or in a .env file",
        "error: model 'anthropic/claude-3-5-haiku-20241022' needs ANTHROPIC_API_KEY, which is not set: put it in "
        "the environment or in a .env file",
    ]
    assert not (tmp_path / "grid").exists()
    assert optimize.returncode == 2
    assert optimize.stderr.splitlines() == [
        "error: model 'anthropic/claude-3-5-haiku-20241022' needs ANTHROPIC_API_KEY, which is not set: put it in "
        "the environment or in a .env file"
    ]
    assert not (tmp_path / "opt").exists()


def test_cli_run_stops_early_says_why_exits_1_and_resumes(stand_in: StandIn, task_dir: Path, tmp_path: Path) -> None:
    stand_in.refuse = True
    args = (
        "run",
        "--model",
        "openai/stand-in",
        "--api-base",
        stand_in.api_base,
        "--tasks",
        SCALE,
        "--tasks-path",
        task_dir,
        "--repeats",
        "5",
        "--concurrency",
        "1",
        "--out",
        tmp_path / "run",
    )
    stopped = cli(*args, cwd=tmp_path, keys={"OPENAI_API_KEY": SECRET})
    assert stopped.returncode == 1, stopped.stderr
    assert stand_in.requests == [f"Bearer {SECRET}"] * 3  # not retried, and the run stopped after three
    assert "Summary" in stopped.stdout and "0/3" in stopped.stdout  # the (short) report came first
    summary = stopped.stderr.splitlines()[-4:]
    assert summary == [
        "3 episodes ended in a model error:",
        "  AuthenticationError: litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API "
        "key provided: [redacted] (3 episodes)",
        "run stopped early: 3 episodes in a row failed with the same authentication error; 2 episodes not run",
        "run the same command again to resume: failed and unstarted episodes are retried",
    ]
    assert SECRET not in stopped.stdout + stopped.stderr

    stand_in.refuse = False  # the key was fixed
    resumed = cli(*args, cwd=tmp_path, keys={"OPENAI_API_KEY": SECRET})
    assert resumed.returncode == 0, resumed.stderr
    assert len(stand_in.requests) == 3 + 5  # the three failed episodes and the two never run
    assert "model error" not in resumed.stderr and "5/5" in resumed.stdout


def test_cli_partial_run_exits_1_and_names_the_error(stand_in: StandIn, task_dir: Path, tmp_path: Path) -> None:
    stand_in.too_long = "smallest_mode"  # one task's prompt is too long, the other's is fine
    run = cli(
        "run",
        "--model",
        "openai/stand-in",
        "--api-base",
        stand_in.api_base,
        "--tasks",
        f"{SCALE},{MODE}",
        "--tasks-path",
        task_dir,
        "--repeats",
        "2",
        "--concurrency",
        "1",
        "--out",
        tmp_path / "run",
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stderr
    assert len(stand_in.requests) == 4  # the context window is not retried either
    assert "run stopped early" not in run.stderr  # a success came between the failures
    assert run.stderr.splitlines()[-3:] == [
        "2 episodes ended in a model error:",
        "  ContextWindowExceededError: litellm.ContextWindowExceededError: litellm.BadRequestError: "
        "ContextWindowExceededError: OpenAIException - This model's maximum context length is 4096 tokens "
        "(2 episodes)",
        "run the same command again to resume: failed and unstarted episodes are retried",
    ]


def test_cli_models_check_against_a_server(stand_in: StandIn, refusing_stand_in: StandIn, tmp_path: Path) -> None:
    done = cli_all(
        {
            "ok": (["models", "check", "openai/gpt-4o-mini", "--api-base", stand_in.api_base], {}),
            "bad": (
                [
                    "models",
                    "check",
                    "openai/stand-in",
                    "anthropic/claude-3-5-haiku-20241022",
                    "--api-base",
                    refusing_stand_in.api_base,
                ],
                {"OPENAI_API_KEY": SECRET},
            ),
            "missing": (["models", "check", "openai/gpt-4o-mini", "scripted/echo"], {}),
        },
        tmp_path,
    )
    ok, bad, missing = done["ok"], done["bad"], done["missing"]
    assert ok.returncode == 0, ok.stderr
    assert re.fullmatch(
        r"openai/gpt-4o-mini: answered in \d+\.\d\d s, 11 prompt \+ 7 completion tokens, "
        r"\$0\.15 / \$0\.6 per million tokens \(input / output\)\n",
        ok.stdout,
    ), ok.stdout
    assert stand_in.requests == [f"Bearer {PLACEHOLDER_KEY}"]  # a server that needs no key is not blocked

    assert bad.returncode == 1
    assert len(refusing_stand_in.requests) == 2  # one each, the refusal not retried
    lines = bad.stdout.splitlines()
    assert lines[0] == (
        "openai/stand-in: no answer: AuthenticationError: litellm.AuthenticationError: "
        "AuthenticationError: OpenAIException - Incorrect API key provided: [redacted]"
    )
    assert lines[1].startswith("anthropic/claude-3-5-haiku-20241022: no answer: ")

    assert missing.returncode == 1
    first, second = missing.stdout.splitlines()
    assert first == (
        "openai/gpt-4o-mini: not called: needs OPENAI_API_KEY, which is not set: put it in the "
        "environment or in a .env file"
    )
    assert re.fullmatch(
        r"scripted/echo: answered in \d+\.\d\d s, \d+ prompt \+ \d+ completion tokens, unpriced", second
    ), second


@pytest.mark.local_model
def test_cli_models_check_the_embedded_model(tmp_path: Path) -> None:
    run = cli("models", "check", "local", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert re.fullmatch(r"local: answered in \d+\.\d\d s, \d+ prompt \+ \d+ completion tokens, free\n", run.stdout), (
        run.stdout
    )

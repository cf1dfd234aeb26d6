"""The model client: scripted provider through real litellm, retries, limits,
cost, cache, replay, key hygiene, and the embedded local model over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fembench_agents.contracts import ModelClient
from fembench_agents.messages import (
    CallContext,
    Message,
    ModelParams,
    ModelRequest,
    ModelResponse,
    Usage,
)
from fembench_agents.models import (
    ClientOptions,
    LiteLLMClient,
    ModelCallError,
    ReplayModel,
    ResponseCache,
    RetryPolicy,
    UnrecordedRequestError,
    call_cost,
    load_env,
    make_client,
    open_client,
    register_script,
    unregister_script,
)
from fembench_agents.models._litellm import litellm
from fembench_agents.runs.log import ModelCallRecord, RunLog, episode_key

FAST = ClientOptions(retry=RetryPolicy(max_retries=3, initial_delay=0.001, max_delay=0.01))
CTX = CallContext(task_id="FEM_1D_demo", attempt="r0/a1")
Call = tuple[ModelRequest, ModelResponse | None, str | None, CallContext]


def run[T](coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro

    return asyncio.run(main())


def user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


@pytest.fixture
def script_name() -> Any:
    name = f"t{uuid.uuid4().hex[:10]}"
    yield name
    unregister_script(name)


def recorder() -> tuple[list[Call], Callable[..., None]]:
    calls: list[Call] = []

    def on_call(request: ModelRequest, response: ModelResponse | None, error: str | None, context: CallContext) -> None:
        calls.append((request, response, error, context))

    return calls, on_call


# -- scripted provider through litellm.acompletion ---------------------------------------------


def test_scripted_answers_through_real_litellm(script_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    script = register_script(script_name, ["first", "second"])
    seen: list[str] = []
    real = litellm.acompletion

    async def spy(**kwargs: Any) -> Any:
        seen.append(kwargs["model"])
        return await real(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    client = make_client(f"scripted/{script_name}")

    async def two() -> list[ModelResponse]:
        return [await client.complete(user("q1"), CTX), await client.complete(user("q2"), CTX)]

    first, second = run(two())

    assert (first.text, second.text) == ("first", "second")
    assert seen == [f"scripted/{script_name}"] * 2 and script.calls == 2
    assert first.finish_reason == "stop" and not first.cached and first.retries == 0
    assert first.usage.prompt_tokens and first.usage.completion_tokens
    assert first.request_hash == ModelRequest(model=client.model, messages=tuple(user("q1"))).request_hash()
    assert first.timestamp and first.latency_seconds > 0


def test_scripted_callable_sees_typed_messages_and_system_prompt(script_name: str) -> None:
    script = register_script(script_name, lambda msgs: f"{len(msgs)}:{msgs[-1].content.upper()}")
    client = make_client(f"scripted/{script_name}", system_prompt="You write FEM code.")
    response = run(client.complete(user("hello"), CTX))
    assert response.text == "2:HELLO"
    assert [m.role for m in script.seen[0]] == ["system", "user"]
    assert script.seen[0][0].content == "You write FEM code."
    # messages that open with their own system prompt (an agent's) keep it, and only it
    own = [Message(role="system", content="Agent's prompt."), *user("again")]
    run(client.complete(own, CTX))
    assert script.seen[1] == own


def test_script_out_of_replies_is_a_clear_non_retried_error(script_name: str) -> None:
    script = register_script(script_name, ["only"])
    client = make_client(f"scripted/{script_name}", options=FAST)
    run(client.complete(user("a"), CTX))
    with pytest.raises(ModelCallError, match="no reply left"):
        run(client.complete(user("b"), CTX))
    assert script.calls == 2  # BadRequest is not retried


# -- retries -------------------------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["rate_limit", "server_error", "timeout"])
def test_transient_failures_are_retried(script_name: str, failure: Any) -> None:
    script = register_script(script_name, ["ok"], fail_first=2, failure=failure)
    calls, on_call = recorder()
    client = make_client(f"scripted/{script_name}", options=FAST, on_call=on_call)
    response = run(client.complete(user("x"), CTX))
    assert response.text == "ok" and response.retries == 2
    assert script.calls == 3
    assert len(calls) == 1 and calls[0][1] == response and calls[0][2] is None


def test_retries_exhausted_raise_typed_error_and_are_reported(script_name: str) -> None:
    script = register_script(script_name, ["never"], fail_first=100, failure="server_error")
    calls, on_call = recorder()
    client = make_client(f"scripted/{script_name}", options=FAST, on_call=on_call)
    with pytest.raises(ModelCallError) as info:
        run(client.complete(user("x"), CTX))
    err = info.value
    assert script.calls == FAST.retry.max_retries + 1 and err.retries == FAST.retry.max_retries
    for part in (f"scripted/{script_name}", "FEM_1D_demo", "r0/a1", "InternalServerError"):
        assert part in str(err)
    assert len(calls) == 1
    request, response, error, context = calls[0]
    assert response is None and error is not None and "InternalServerError" in error and context == CTX
    assert request.request_hash() == err.request_hash


def test_per_call_timeout_is_enforced_and_retried(script_name: str) -> None:
    async def slow(msgs: list[Message]) -> str:
        await asyncio.sleep(5)
        return "late"

    script = register_script(script_name, slow)
    client = make_client(
        f"scripted/{script_name}",
        ModelParams(timeout=0.05),
        options=ClientOptions(retry=RetryPolicy(max_retries=1, initial_delay=0.0)),
    )
    started = time.perf_counter()
    with pytest.raises(ModelCallError, match="Timeout"):
        run(client.complete(user("x"), CTX))
    assert script.calls == 2 and time.perf_counter() - started < 2


def test_backoff_grows_is_capped_and_jitter_is_seeded() -> None:
    plain = RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=5.0, jitter_seed=None)
    assert [plain.delay(k, plain.rng()) for k in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    seeded = RetryPolicy(initial_delay=1.0, multiplier=2.0, max_delay=100.0, jitter_seed=7)
    rng_a, rng_b = seeded.rng(), seeded.rng()
    a = [seeded.delay(k, rng_a) for k in range(4)]
    assert a == [seeded.delay(k, rng_b) for k in range(4)]
    assert all(0.5 * 2**k <= d <= 2**k for k, d in enumerate(a))


def test_client_sleeps_the_policy_delays(script_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    register_script(script_name, ["ok"], fail_first=3)
    policy = RetryPolicy(max_retries=3, initial_delay=0.5, multiplier=3.0, jitter_seed=None)
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def fake_sleep(delay: float, *args: Any) -> None:
        slept.append(delay)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    client = make_client(f"scripted/{script_name}", options=ClientOptions(retry=policy))
    assert run(client.complete(user("x"), CTX)).retries == 3
    assert [d for d in slept if d > 0] == [0.5, 1.5, 4.5]


# -- concurrency ---------------------------------------------------------------------------------


def test_concurrency_limit_is_respected_and_calls_overlap(script_name: str) -> None:
    state = {"now": 0, "max": 0}

    async def tracked(msgs: list[Message]) -> str:
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        await asyncio.sleep(0.05)
        state["now"] -= 1
        return msgs[-1].content

    register_script(script_name, tracked)
    client = make_client(f"scripted/{script_name}", options=ClientOptions(concurrency=3))

    async def many() -> list[ModelResponse]:
        return await asyncio.gather(*(client.complete(user(f"q{i}"), CTX) for i in range(10)))

    responses = run(many())
    assert [r.text for r in responses] == [f"q{i}" for i in range(10)]
    assert state["max"] == 3


# -- cost ----------------------------------------------------------------------------------------


def test_cost_from_litellm_price_map_for_a_known_model() -> None:
    usage = Usage(prompt_tokens=1000, completion_tokens=1000)
    cost_in, cost_out = litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=1000, completion_tokens=1000)
    cost = call_cost("gpt-4o-mini", usage)
    assert cost is not None and cost > 0 and cost == pytest.approx(cost_in + cost_out)


def test_unknown_model_costs_none_not_zero(script_name: str) -> None:
    assert call_cost("scripted/whatever", Usage(prompt_tokens=10, completion_tokens=5)) is None
    assert call_cost("gpt-4o-mini", Usage()) is None
    register_script(script_name, ["x"])
    assert run(make_client(f"scripted/{script_name}").complete(user("q"), CTX)).cost_usd is None


def test_scripted_call_priced_as_a_known_model(script_name: str) -> None:
    register_script(script_name, ["a reply of several words"])
    client = make_client(f"scripted/{script_name}", options=ClientOptions(price_as="gpt-4o-mini"))
    response = run(client.complete(user("price me"), CTX))
    usage = response.usage
    assert usage.prompt_tokens and usage.completion_tokens
    cost_in, cost_out = litellm.cost_per_token(
        model="gpt-4o-mini", prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
    )
    assert response.cost_usd == pytest.approx(cost_in + cost_out) and (response.cost_usd or 0) > 0
    priced = ClientOptions(token_prices=(1e-6, 2e-6))
    assert call_cost("anything", Usage(prompt_tokens=10, completion_tokens=5), priced) == pytest.approx(2e-5)


# -- cache ---------------------------------------------------------------------------------------


def test_cache_serves_repeats_without_calling_the_provider(script_name: str, tmp_path: Path) -> None:
    script = register_script(script_name, ["one", "two"])
    calls, on_call = recorder()
    cache = ResponseCache(tmp_path / "cache")
    client = make_client(
        f"scripted/{script_name}", options=ClientOptions(price_as="gpt-4o-mini"), cache=cache, on_call=on_call
    )
    first = run(client.complete(user("same"), CTX))
    second = run(client.complete(user("same"), CTX))
    assert script.calls == 1
    assert not first.cached and (first.cost_usd or 0) > 0
    # the same sample asked again: its recorded cost, marked as not spent again
    assert second.cached and second.cost_usd == first.cost_usd and second.text == "one"
    assert second.usage == first.usage and second.request_hash == first.request_hash
    assert [c[1].cached for c in calls if c[1]] == [False, True]
    # where earlier versions wrote it too: a cache directory outlives upgrades
    h = first.request_hash
    assert h is not None and (tmp_path / "cache" / h[:2] / f"{h}.json").is_file()
    # a new client on the same directory (a resumed run) hits too; a different request misses
    other = make_client(f"scripted/{script_name}", cache=ResponseCache(tmp_path / "cache"))
    assert run(other.complete(user("same"), CTX)).cached
    assert run(other.complete(user("different"), CTX)).text == "two"
    assert script.calls == 2


def test_two_samples_of_one_prompt_are_two_requests(script_name: str, tmp_path: Path) -> None:
    script = register_script(script_name, ["first", "second"])
    client = make_client(f"scripted/{script_name}", cache=ResponseCache(tmp_path))
    answers = [run(client.complete(user("same"), CallContext(sample=s))).text for s in ("e attempt 1", "e attempt 2")]
    assert answers == ["first", "second"] and script.calls == 2
    assert run(client.complete(user("same"), CallContext(sample="e attempt 2"))).text == "second"  # resumed
    assert script.calls == 2


def test_a_recording_made_before_samples_were_named_still_replays() -> None:
    unnamed = ModelRequest(model="scripted/x", messages=(Message(role="user", content="q"),))
    replay = ReplayModel("scripted/x", {unnamed.request_hash(): [ModelResponse(text="old")]})
    answer = run(replay.complete([Message(role="user", content="q")], CallContext(sample="e attempt 0")))
    assert answer.text == "old" and answer.replayed


def test_cache_key_ignores_timeout_but_not_sampling(script_name: str, tmp_path: Path) -> None:
    script = register_script(script_name, ["a", "b"])
    client = make_client(f"scripted/{script_name}", cache=ResponseCache(tmp_path))
    run(client.complete(user("q"), CTX, ModelParams(timeout=10)))
    assert run(client.complete(user("q"), CTX, ModelParams(timeout=20))).cached
    assert not run(client.complete(user("q"), CTX, ModelParams(temperature=0.7))).cached
    assert script.calls == 2


def test_cache_is_safe_under_concurrent_identical_requests(script_name: str, tmp_path: Path) -> None:
    async def slow(msgs: list[Message]) -> str:
        await asyncio.sleep(0.02)
        return msgs[-1].content

    script = register_script(script_name, slow)
    client = make_client(f"scripted/{script_name}", cache=ResponseCache(tmp_path))

    async def burst() -> list[ModelResponse]:
        return await asyncio.gather(*(client.complete(user(f"q{i % 3}"), CTX) for i in range(12)))

    responses = run(burst())
    assert script.calls == 3
    assert sum(not r.cached for r in responses) == 3
    assert [r.text for r in responses] == [f"q{i % 3}" for i in range(12)]
    entries = list(tmp_path.rglob("*.json"))
    assert len(entries) == 3 and not list(tmp_path.rglob("*.tmp"))
    assert all(json.loads(p.read_text())["response"]["cached"] is False for p in entries)


# -- replay --------------------------------------------------------------------------------------


def _record_run(script_name: str, run_dir: Path, prompts: list[str]) -> list[ModelResponse]:
    register_script(script_name, lambda msgs: f"answer to {msgs[-1].content}")
    log = RunLog(run_dir)

    def on_call(request: ModelRequest, response: ModelResponse | None, error: str | None, context: CallContext) -> None:
        log.append(
            ModelCallRecord(
                episode=episode_key(request.model, "single", "code", context.task_id, 0),
                task_id=context.task_id,
                attempt_index=0,
                request=request,
                request_hash=request.request_hash(),
                response=response,
                error=error,
            )
        )

    client = make_client(f"scripted/{script_name}", ModelParams(temperature=0.3), on_call=on_call)

    async def all_prompts() -> list[ModelResponse]:
        return [await client.complete(user(p), CallContext(task_id=p, attempt="0")) for p in prompts]

    responses = run(all_prompts())
    log.close()
    return responses


def test_replay_reproduces_a_recorded_run_without_calls(script_name: str, tmp_path: Path) -> None:
    original = _record_run(script_name, tmp_path, ["t1", "t2"])
    unregister_script(script_name)  # a replay that called the provider would now fail
    replay = ReplayModel.from_log(tmp_path)
    assert replay.model == f"scripted/{script_name}" and len(replay) == 2
    assert replay.params.temperature == 0.3  # the recording's params are the default

    async def again() -> list[ModelResponse]:
        return [await replay.complete(user(p), CallContext(task_id=p, attempt="0")) for p in ("t2", "t1")]

    assert run(again()) == [r.model_copy(update={"replayed": True}) for r in (original[1], original[0])]


def test_replay_fails_loudly_on_an_unseen_request(script_name: str, tmp_path: Path) -> None:
    _record_run(script_name, tmp_path, ["t1"])
    calls, on_call = recorder()
    replay = ReplayModel.from_log(tmp_path, on_call=on_call)
    with pytest.raises(UnrecordedRequestError) as info:
        run(replay.complete(user("never asked"), CallContext(task_id="MSA_3D_x", attempt="r2/a3")))
    assert "MSA_3D_x" in str(info.value) and "r2/a3" in str(info.value)
    assert not isinstance(info.value, ModelCallError)
    assert len(calls) == 1 and calls[0][1] is None
    with pytest.raises(ValueError, match="no calls of model"):
        ReplayModel.from_log(tmp_path, model="openai/gpt-4o")


def test_replay_serves_repeats_of_one_request_in_order() -> None:
    request = ModelRequest(model="m/x", messages=tuple(user("q")))
    answers = [ModelResponse(text=t, request_hash=request.request_hash()) for t in ("r0", "r1")]
    replay = ReplayModel("m/x", {request.request_hash(): answers})

    async def thrice() -> list[str]:
        return [(await replay.complete(user("q"), CTX)).text for _ in range(3)]

    assert run(thrice()) == ["r0", "r1", "r1"]


def test_replay_gives_each_episode_its_own_answer_to_a_shared_prompt() -> None:
    request = ModelRequest(model="m/x", messages=tuple(user("same prompt")))
    records = [
        ModelCallRecord(
            episode=f"m/x|single|code|T|{rep}",
            task_id="T",
            attempt_index=0,
            request=request,
            request_hash=request.request_hash(),
            response=ModelResponse(text=f"repeat {rep}", request_hash=request.request_hash()),
        )
        for rep in (0, 1)
    ]
    replay = ReplayModel.from_records(records)

    async def reversed_and_concurrent() -> list[str]:
        contexts = [CallContext(task_id="T", episode=f"m/x|single|code|T|{rep}") for rep in (1, 0)]
        answers = await asyncio.gather(*(replay.complete(user("same prompt"), c) for c in contexts))
        return [a.text for a in answers]

    assert run(reversed_and_concurrent()) == ["repeat 1", "repeat 0"]
    assert len(replay) == 2


# -- keys ----------------------------------------------------------------------------------------


def test_keys_never_reach_records_or_errors(script_name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env_key, explicit_key = "sk-env-SECRET-0123456789", "sk-explicit-SECRET-9876543210"
    monkeypatch.setenv("OPENAI_API_KEY", env_key)

    def leaky(msgs: list[Message]) -> str:  # a provider error that echoes the keys back
        raise litellm.AuthenticationError(
            message=f"bad keys {env_key} / {explicit_key}", llm_provider="scripted", model=script_name
        )

    register_script(script_name, leaky)
    calls, on_call = recorder()
    client = LiteLLMClient(
        f"scripted/{script_name}",
        ModelParams(api_base=f"http://h/v1?key={explicit_key}"),
        options=FAST,
        on_call=on_call,
        api_key=explicit_key,
    )
    with pytest.raises(ModelCallError) as info:
        run(client.complete(user("x"), CTX))
    recorded = calls[0][0].model_dump_json() + str(calls[0][2]) + str(info.value) + repr(client)
    assert "AuthenticationError" in recorded
    assert env_key not in recorded and explicit_key not in recorded


def test_dotenv_loads_without_overriding(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("FEMBENCH_TEST_A=from-file\nFEMBENCH_TEST_B=from-file\n")
    monkeypatch.setenv("FEMBENCH_TEST_B", "from-env")
    monkeypatch.delenv("FEMBENCH_TEST_A", raising=False)
    assert load_env(tmp_path / ".env")
    assert os.environ["FEMBENCH_TEST_A"] == "from-file" and os.environ["FEMBENCH_TEST_B"] == "from-env"
    monkeypatch.delenv("FEMBENCH_TEST_A")


# -- factory -------------------------------------------------------------------------------------


def test_factory_rejects_bad_names_clearly() -> None:
    with pytest.raises(ValueError, match="local model server"):
        make_client("local")
    with pytest.raises(ValueError, match="no script named 'nope"):
        make_client("scripted/nope-not-registered")
    with pytest.raises(ValueError, match="provider"):
        make_client("definitely-not-a-model")
    assert make_client("openai/gpt-4o-mini").model == "openai/gpt-4o-mini"


def test_clients_satisfy_the_model_client_contract(script_name: str) -> None:
    register_script(script_name, ["x"])
    assert isinstance(make_client(f"scripted/{script_name}"), ModelClient)
    assert isinstance(ReplayModel("m/x", {}), ModelClient)


# -- the embedded local model, over real HTTP ----------------------------------------------------


@pytest.mark.local_model
def test_local_model_server_answers_over_http() -> None:
    calls, on_call = recorder()
    with open_client("local", ModelParams(max_tokens=24), on_call=on_call) as client:
        response = run(client.complete(user("Say hello."), CTX))
        server_base = client.params.api_base
    assert server_base and server_base.startswith("http://127.0.0.1:")
    assert response.text.strip() and response.finish_reason in {"stop", "length"}
    assert response.usage.prompt_tokens and response.usage.completion_tokens
    assert response.cost_usd == 0.0 and client.model == "local/smollm2"
    assert len(calls) == 1 and calls[0][0].model == "local/smollm2"
    with pytest.raises(ModelCallError):  # the server is gone after the block
        run(make_client_after_stop(client).complete(user("x"), CTX))


def make_client_after_stop(client: LiteLLMClient) -> LiteLLMClient:
    return LiteLLMClient(
        client.model,
        client.params,
        litellm_model=client.litellm_model,
        api_key="local-no-key",
        options=ClientOptions(retry=RetryPolicy(max_retries=0)),
    )

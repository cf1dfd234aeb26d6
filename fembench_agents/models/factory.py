"""From a model name to a client, through a registry of model sources:
`local` (or `local/smollm2`) is the embedded server, a source registered by
`register_model_source` claims its own names (the tests' scripted models),
anything else goes to litellm
(`openai/...`, `anthropic/...`, `gemini/...`, `together_ai/...`, or any
OpenAI-compatible server via `params.api_base`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace

from fembench_agents.messages import ModelParams
from fembench_agents.models._litellm import litellm
from fembench_agents.models.cache import ResponseCache
from fembench_agents.models.client import LiteLLMClient, OnCall
from fembench_agents.models.config import ClientOptions
from fembench_agents.models.cost import prices_per_million
from fembench_agents.models.credentials import PLACEHOLDER_KEY, missing_keys, unknown_provider_advice
from fembench_agents.models.keys import load_env
from fembench_agents.models.local_server import LocalModelServer
from fembench_agents.models.names import LOCAL_MODEL, is_local


@dataclass(frozen=True)
class ClientSpec:
    """What a client is built from: the recorded name, what litellm is asked
    for when it differs, a key to hand litellm, parameters and options."""

    name: str
    params: ModelParams | None
    options: ClientOptions | None
    litellm_model: str | None = None
    api_key: str | None = None


Prepare = Callable[[ClientSpec, "LocalModelServer | None"], ClientSpec]


@dataclass(frozen=True)
class ModelSource:
    """A kind of model name that is not litellm's own: `claims` recognises its
    names, `prepare` turns them into what a litellm client needs, `provider` is
    the name its model-call limit is shared under."""

    provider: str
    claims: Callable[[str], bool]
    prepare: Prepare
    # (input, output) USD per token its names are billed at; None: litellm's price map decides
    token_prices: Callable[[str], tuple[float, float] | None] | None = None


_SOURCES: dict[str, ModelSource] = {}


def register_model_source(source: ModelSource) -> None:
    """One entry per kind of model name; anything no source claims goes to litellm."""
    _SOURCES[source.provider] = source


def _source_of(name: str) -> ModelSource | None:
    return next((s for s in _SOURCES.values() if s.claims(name)), None)


def _prepare_local(spec: ClientSpec, server: LocalModelServer | None) -> ClientSpec:
    if server is None or not server.running:
        raise ValueError(
            f"model {spec.name!r} needs the local model server running; use open_client(...) or pass local_server="
        )
    # The server answers one request at a time: more in flight only queue there.
    options = (spec.options or ClientOptions()).model_copy(update={"concurrency": 1})
    if options.token_prices is None and options.price_as is None:
        options = options.model_copy(update={"token_prices": (0.0, 0.0)})  # it is free, not unpriced
    return ClientSpec(
        LOCAL_MODEL,
        (spec.params or ModelParams()).model_copy(update={"api_base": server.api_base}),
        options,
        server.litellm_model,
        server.api_key,
    )


def _prepare_litellm(spec: ClientSpec) -> ClientSpec:
    _check_provider(spec.name, spec.params)
    load_env()
    if spec.params is not None and spec.params.api_base is not None and missing_keys(spec.name):
        # A server that needs a key answers 401, which is not retried.
        return replace(spec, api_key=PLACEHOLDER_KEY)
    return spec


register_model_source(ModelSource("local", is_local, _prepare_local, lambda _: (0.0, 0.0)))


def make_client(
    model_name: str,
    params: ModelParams | None = None,
    *,
    options: ClientOptions | None = None,
    cache: ResponseCache | None = None,
    on_call: OnCall | None = None,
    system_prompt: str | None = None,
    local_server: LocalModelServer | None = None,
) -> LiteLLMClient:
    """A client for `model_name`; ValueError names what is wrong with a bad one.
    `local` needs a running `local_server` (see `open_client`)."""
    spec = ClientSpec(model_name.strip(), params, options)
    source = _source_of(spec.name)
    spec = source.prepare(spec, local_server) if source is not None else _prepare_litellm(spec)
    return LiteLLMClient(
        spec.name,
        spec.params,
        options=spec.options,
        cache=cache,
        on_call=on_call,
        system_prompt=system_prompt,
        litellm_model=spec.litellm_model,
        api_key=spec.api_key,
    )


def model_prices(model_name: str, options: ClientOptions | None = None) -> tuple[float, float] | None:
    """(input, output) USD per million tokens as `model_name`'s calls are billed:
    explicit `options` prices, else its model source's (the embedded model is
    free), else litellm's price map; None when unpriced. Needs no running server."""
    name = model_name.strip()
    source = _source_of(name)
    options = options or ClientOptions()
    if source is not None and source.token_prices is not None and options.token_prices is None:
        own = source.token_prices(name)
        if own is not None:
            options = options.model_copy(update={"token_prices": own})
    return prices_per_million(name, options)


def priced_by_litellm(model_name: str) -> bool:
    """Whether `model_name`'s price comes from litellm's price map (no model source prices it)."""
    source = _source_of(model_name.strip())
    return source is None or source.token_prices is None


def provider_of(model_name: str, params: ModelParams | None = None) -> str:
    """The provider that serves `model_name` (`local`, `scripted`, `openai`, ...),
    which a run's model-call limit is shared by."""
    name = model_name.strip()
    source = _source_of(name)
    if source is not None:
        return source.provider
    try:
        return str(litellm.get_llm_provider(name, api_base=params.api_base if params else None)[1])
    except Exception:
        return name.split("/", 1)[0]


def _check_provider(name: str, params: ModelParams | None) -> None:
    if not name:
        raise ValueError("model name is empty")
    try:
        litellm.get_llm_provider(name, api_base=params.api_base if params else None)
    except Exception as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(unknown_provider_advice(name, first_line)) from None


@contextmanager
def open_client(
    model_name: str,
    params: ModelParams | None = None,
    *,
    options: ClientOptions | None = None,
    cache: ResponseCache | None = None,
    on_call: OnCall | None = None,
    system_prompt: str | None = None,
) -> Iterator[LiteLLMClient]:
    """Like make_client, and starts (then stops) the local model server when the name asks for it."""
    with ExitStack() as stack:
        server = stack.enter_context(LocalModelServer()) if is_local(model_name) else None
        yield make_client(
            model_name,
            params,
            options=options,
            cache=cache,
            on_call=on_call,
            system_prompt=system_prompt,
            local_server=server,
        )

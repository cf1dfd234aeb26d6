"""From a model name to a client: `local` (or `local/smollm2`) is the embedded
server, `scripted/<name>` a registered script, anything else goes to litellm
(`openai/...`, `anthropic/...`, `gemini/...`, `together_ai/...`, or any
OpenAI-compatible server via `params.api_base`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from fembench_agents.messages import ModelParams
from fembench_agents.models._litellm import litellm
from fembench_agents.models.cache import ResponseCache
from fembench_agents.models.client import LiteLLMClient, OnCall
from fembench_agents.models.config import ClientOptions
from fembench_agents.models.credentials import PLACEHOLDER_KEY, missing_keys
from fembench_agents.models.keys import load_env
from fembench_agents.models.local_server import LocalModelServer
from fembench_agents.models.names import LOCAL_MODEL, LOCAL_NAMES, is_local, is_scripted
from fembench_agents.models.scripted import PROVIDER as SCRIPTED
from fembench_agents.models.scripted import get_script


def make_client(model_name: str, params: ModelParams | None = None, *,
                options: ClientOptions | None = None, cache: ResponseCache | None = None,
                on_call: OnCall | None = None, system_prompt: str | None = None,
                local_server: LocalModelServer | None = None) -> LiteLLMClient:
    """A client for `model_name`; ValueError names what is wrong with a bad one.
    `local` needs a running `local_server` (see `open_client`)."""
    name = model_name.strip()
    litellm_model, api_key = None, None
    if name in LOCAL_NAMES:
        if local_server is None or not local_server.running:
            raise ValueError(f"model {model_name!r} needs the local model server running; "
                             "use open_client(...) or pass local_server=")
        name, litellm_model, api_key = LOCAL_MODEL, local_server.litellm_model, local_server.api_key
        params = (params or ModelParams()).model_copy(update={"api_base": local_server.api_base})
        # The server answers one request at a time: more in flight only queue there.
        options = (options or ClientOptions()).model_copy(update={"concurrency": 1})
        if options.token_prices is None and options.price_as is None:
            options = options.model_copy(update={"token_prices": (0.0, 0.0)})  # it is free, not unpriced
    elif is_scripted(name):
        script = name.removeprefix(f"{SCRIPTED}/")
        if get_script(script) is None:
            raise ValueError(f"no script named {script!r}: register it first with register_script({script!r}, ...)")
    else:
        _check_provider(name, params)
        load_env()
        if params is not None and params.api_base is not None and missing_keys(name):
            api_key = PLACEHOLDER_KEY  # a server that needs a key answers 401, which is not retried
    return LiteLLMClient(name, params, options=options, cache=cache, on_call=on_call,
                         system_prompt=system_prompt, litellm_model=litellm_model, api_key=api_key)


def provider_of(model_name: str, params: ModelParams | None = None) -> str:
    """The provider that serves `model_name` (`local`, `scripted`, `openai`, ...),
    which a run's model-call limit is shared by."""
    name = model_name.strip()
    if name in LOCAL_NAMES:
        return "local"
    if name.startswith(f"{SCRIPTED}/"):
        return SCRIPTED
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
        raise ValueError(f"litellm does not know which provider serves {name!r}; write it as "
                         f"'<provider>/<model>' (e.g. 'openai/gpt-4o-mini'): {first_line}") from None


@contextmanager
def open_client(model_name: str, params: ModelParams | None = None, *,
                options: ClientOptions | None = None, cache: ResponseCache | None = None,
                on_call: OnCall | None = None, system_prompt: str | None = None) -> Iterator[LiteLLMClient]:
    """Like make_client, and starts (then stops) the local model server when the name asks for it."""
    with ExitStack() as stack:
        server = stack.enter_context(LocalModelServer()) if is_local(model_name) else None
        yield make_client(model_name, params, options=options, cache=cache, on_call=on_call,
                          system_prompt=system_prompt, local_server=server)

"""Model clients: litellm for every provider, our response cache, a scripted
provider for tests, replay from a run log, and the embedded local model.

The names below are imported on first use: litellm's import costs seconds, and
a command that only checks a model's name or key (`models.credentials`, which
imports this package first) must not pay for it."""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

if TYPE_CHECKING:
    from fembench_agents.models.cache import ResponseCache
    from fembench_agents.models.client import LiteLLMClient, OnCall
    from fembench_agents.models.config import ClientOptions, RetryPolicy
    from fembench_agents.models.cost import call_cost
    from fembench_agents.models.errors import LocalServerError, ModelCallError, UnrecordedRequestError
    from fembench_agents.models.factory import (
        LOCAL_MODEL,
        is_local,
        make_client,
        model_prices,
        open_client,
        priced_by_litellm,
        provider_of,
    )
    from fembench_agents.models.keys import load_env, redact
    from fembench_agents.models.local_server import LocalModelServer, smollm2_gguf
    from fembench_agents.models.recorded import ReplayModel
    from fembench_agents.models.scripted import Script, register_script, unregister_script

_HOME = {
    "ResponseCache": "cache",
    "LiteLLMClient": "client",
    "OnCall": "client",
    "ClientOptions": "config",
    "RetryPolicy": "config",
    "call_cost": "cost",
    "LocalServerError": "errors",
    "ModelCallError": "errors",
    "UnrecordedRequestError": "errors",
    "LOCAL_MODEL": "factory",
    "is_local": "factory",
    "make_client": "factory",
    "model_prices": "factory",
    "priced_by_litellm": "factory",
    "open_client": "factory",
    "provider_of": "factory",
    "load_env": "keys",
    "redact": "keys",
    "LocalModelServer": "local_server",
    "smollm2_gguf": "local_server",
    "ReplayModel": "recorded",
    "Script": "scripted",
    "register_script": "scripted",
    "unregister_script": "scripted",
}
__all__ = [
    "ClientOptions",
    "LOCAL_MODEL",
    "LiteLLMClient",
    "LocalModelServer",
    "LocalServerError",
    "ModelCallError",
    "OnCall",
    "ReplayModel",
    "ResponseCache",
    "RetryPolicy",
    "Script",
    "UnrecordedRequestError",
    "call_cost",
    "is_local",
    "load_env",
    "make_client",
    "model_prices",
    "priced_by_litellm",
    "open_client",
    "provider_of",
    "redact",
    "register_script",
    "smollm2_gguf",
    "unregister_script",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value

"""Model clients: litellm for every provider, our response cache, a scripted
provider for tests, replay from a run log, and the embedded local model."""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before anything imports litellm

from fembench_agents.models.cache import ResponseCache  # noqa: E402
from fembench_agents.models.client import LiteLLMClient, OnCall  # noqa: E402
from fembench_agents.models.config import ClientOptions, RetryPolicy  # noqa: E402
from fembench_agents.models.cost import call_cost  # noqa: E402
from fembench_agents.models.errors import LocalServerError, ModelCallError, UnrecordedRequestError  # noqa: E402
from fembench_agents.models.factory import (  # noqa: E402
    LOCAL_MODEL,
    is_local,
    make_client,
    open_client,
    provider_of,
)
from fembench_agents.models.keys import load_env, redact  # noqa: E402
from fembench_agents.models.local_server import LocalModelServer, smollm2_gguf  # noqa: E402
from fembench_agents.models.recorded import ReplayModel  # noqa: E402
from fembench_agents.models.scripted import Script, register_script, unregister_script  # noqa: E402

__all__ = [
    "LOCAL_MODEL",
    "ClientOptions",
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
    "open_client",
    "provider_of",
    "redact",
    "register_script",
    "smollm2_gguf",
    "unregister_script",
]

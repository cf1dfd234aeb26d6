"""Which credentials a model's provider needs, checked before a run starts.

litellm knows which environment variables each provider reads
(`litellm.validate_environment`). The embedded model, scripted models and
servers named by `api_base` are never blocked: a server may need no key, and
if it does, its refusal is an authentication error that is not retried."""

from __future__ import annotations

from collections.abc import Iterable

from fembench_agents.models._litellm import litellm
from fembench_agents.models.keys import load_env
from fembench_agents.models.names import is_local, is_scripted

# Providers whose credentials may come from elsewhere than the environment
# variables litellm checks (AWS profiles and instance roles, gcloud's application
# default credentials), or that default to a server on this machine (Ollama):
# refusing them on litellm's word would refuse working set-ups.
AMBIENT_CREDENTIALS = frozenset(
    {
        "bedrock",
        "bedrock_converse",
        "sagemaker",
        "sagemaker_chat",
        "vertex_ai",
        "vertex_ai_beta",
        "ollama",
        "ollama_chat",
    }
)
# Handed to the OpenAI SDK for an `api_base` server when no key is set: the SDK
# refuses to send a request without one, and a server that needs none ignores it.
PLACEHOLDER_KEY = "no-key"


def missing_keys(model: str) -> list[str]:
    """The environment variables (after loading a .env file) that `model`'s
    provider needs and that are not set; empty when nothing is missing or
    litellm does not know the provider (the factory names that problem)."""
    if is_local(model) or is_scripted(model) or _provider(model) in AMBIENT_CREDENTIALS:
        return []
    load_env()
    found = litellm.validate_environment(model=model.strip())
    return [] if found.get("keys_in_environment") else list(found.get("missing_keys") or [])


def _provider(model: str) -> str | None:
    try:
        return str(litellm.get_llm_provider(model.strip())[1])
    except Exception:  # an unknown provider: the factory names that problem
        return None


def credential_problems(models: Iterable[str], api_base: str | None = None) -> list[str]:
    """One line per model whose credentials are missing, saying which variable
    and where it can go. Nothing is checked for a server named by `api_base`."""
    if api_base is not None:
        return []
    problems = []
    for model in dict.fromkeys(models):
        missing = missing_keys(model)
        if missing:
            problems.append(f"model {model!r} {missing_key_advice(missing)}")
    return problems


def missing_key_advice(missing: list[str]) -> str:
    return f"needs {' / '.join(missing)}, which is not set: put it in the environment or in a .env file"

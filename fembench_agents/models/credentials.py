"""Which credentials a model's provider needs, checked before a run starts.

litellm knows which environment variables each provider reads
(`litellm.validate_environment`); its answers for the pinned version are read
from provider_table.py first, so a missing key or an unknown model is refused
before litellm's import, which is slow. The embedded model, scripted models and
servers named by `api_base` are never blocked: a server may need no key, and
if it does, its refusal is an authentication error that is not retried."""

from __future__ import annotations

import os
from collections.abc import Iterable

from fembench_agents.models.keys import load_env
from fembench_agents.models.names import is_local, is_scripted
from fembench_agents.models.provider_table import provider_table

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
    provider = _provider(model)
    known = provider_table().missing_keys(provider, os.environ) if provider else None
    if known is not None:
        return known
    from fembench_agents.models._litellm import litellm  # the table cannot tell: litellm's import, slow

    found = litellm.validate_environment(model=model.strip())
    return [] if found.get("keys_in_environment") else list(found.get("missing_keys") or [])


def _provider(model: str) -> str | None:
    name = model.strip()
    known = provider_table().provider(name)
    if known is not None or provider_table().unknown(name):
        return known
    from fembench_agents.models._litellm import litellm

    try:
        return str(litellm.get_llm_provider(name)[1])
    except Exception:  # an unknown provider: the factory names that problem
        return None


def unknown_model(model: str, api_base: str | None = None) -> str | None:
    """The factory's refusal of a name litellm places with no provider, decided from the
    table (None where the table cannot tell, or a server named by `api_base` serves it)."""
    name = model.strip()
    if api_base is not None or is_local(name) or is_scripted(name) or not provider_table().unknown(name):
        return None
    return unknown_provider_advice(name, "LLM Provider NOT provided")


def unknown_provider_advice(name: str, cause: str) -> str:
    return (
        f"litellm does not know which provider serves {name!r}; write it as "
        f"'<provider>/<model>' (e.g. 'openai/gpt-4o-mini'): {cause}"
    )


def credential_problems(models: Iterable[str], api_base: str | None = None) -> list[str]:
    """One line per model whose credentials are missing, saying which variable
    and where it can go. Nothing is checked for a server named by `api_base`."""
    if api_base is not None:
        return []
    problems = []
    for model in dict.fromkeys(models):
        unknown = unknown_model(model)
        if unknown:
            problems.append(unknown)
            continue
        missing = missing_keys(model)
        if missing:
            problems.append(f"model {model!r} {missing_key_advice(missing)}")
    return problems


def missing_key_advice(missing: list[str]) -> str:
    return f"needs {' / '.join(missing)}, which is not set: put it in the environment or in a .env file"

"""Model names that need no provider: the embedded local model and scripted models."""

from __future__ import annotations

SCRIPTED = "scripted"  # the tests' scripted models: scripted/<name>
LOCAL_MODEL = "local/smollm2"
LOCAL_NAMES = frozenset({"local", LOCAL_MODEL})


def is_local(model_name: str) -> bool:
    return model_name.strip() in LOCAL_NAMES


def is_scripted(model_name: str) -> bool:
    return model_name.strip().startswith(f"{SCRIPTED}/")

"""Write fembench_agents/models/providers.json from the installed litellm: which
provider serves a model name, and which environment variables each provider
needs. `run`, `compare` and `optimize` refuse a missing key or an unknown model
from this table in about a second, instead of after litellm's import (5-30 s);
names the table cannot decide still go to litellm. tests/test_provider_table.py
checks the table against the installed litellm, so an upgrade that changes an
answer fails there and names this script.

    .venv/bin/python scripts/provider_table.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# Providers whose credential check signs in over the network (a device-code flow): never
# asked here, so the table leaves them to litellm at run time.
SIGN_IN = frozenset({"github_copilot", "chatgpt"})
OUT = Path(__file__).resolve().parent.parent / "fembench_agents" / "models" / "providers.json"


def build() -> dict[str, object]:
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    import litellm

    litellm.suppress_debug_info = True
    # Keys are read from the environment: clear every variable litellm might accept so each
    # provider's answer is the full list of what it needs.
    saved = dict(os.environ)
    for name in list(os.environ):
        if any(part in name for part in ("KEY", "TOKEN", "SECRET", "API_BASE", "API_VERSION", "PROJECT", "REGION")):
            del os.environ[name]
    try:
        models: dict[str, str] = {}
        for name in sorted(litellm.model_cost):
            if name.split("/", 1)[0] in SIGN_IN:
                continue
            try:
                models[name] = str(litellm.get_llm_provider(name)[1])
            except Exception:  # litellm itself cannot place it: left to litellm at run time
                continue
        keys: dict[str, dict[str, list[str]]] = {}
        disagree: set[str] = set()
        samples: dict[str, list[str]] = {}
        for name, provider in models.items():
            samples.setdefault(provider, []).append(name)
        for provider in _provider_names(litellm):
            answers = {
                tuple(litellm.validate_environment(model=name).get("missing_keys") or [])
                for name in [f"{provider}/any-model", *samples.get(provider, [])[:20]]
            }
            rule = _rule(litellm, provider, list(answers.pop())) if len(answers) == 1 else None
            if rule is not None:
                keys[provider] = rule
            else:  # the keys depend on the model, or on which ones are set: litellm decides at run time
                disagree.add(provider)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return {
        "litellm_version": litellm.__version__ if hasattr(litellm, "__version__") else _version(),
        "providers": _provider_names(litellm),
        "keys": keys,
        "models": models,
    }


def _rule(litellm: object, provider: str, needed: list[str]) -> dict[str, list[str]] | None:
    """How `provider`'s keys are satisfied: {"all": keys} when litellm wants every one of
    them, {"any": keys} when one is enough (GEMINI_API_KEY or GOOGLE_API_KEY); None when
    it is neither. Unsatisfied, litellm names the whole list either way."""
    if len(needed) < 2:
        return {"all": needed}

    def satisfied(names: list[str]) -> bool:
        for name in names:
            os.environ[name] = "set"
        try:
            found = litellm.validate_environment(model=f"{provider}/any-model")  # type: ignore[attr-defined]
            return bool(found.get("keys_in_environment"))
        finally:
            for name in names:
                del os.environ[name]

    singles = [satisfied([name]) for name in needed]
    if all(singles):
        return {"any": needed}
    if not any(singles) and satisfied(needed):
        return {"all": needed}
    return None


def _provider_names(litellm: object) -> list[str]:
    names = {getattr(p, "value", p) for p in litellm.provider_list}  # type: ignore[attr-defined]
    return sorted(str(n) for n in names if str(n) not in SIGN_IN)


def _version() -> str:
    from importlib.metadata import version

    return version("litellm")


def main() -> int:
    table = build()
    OUT.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {len(table['models'])} model names, {len(table['keys'])} providers' keys")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())

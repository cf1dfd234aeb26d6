"""litellm's answers, read without importing litellm: which provider serves a
model name and which environment variables the provider needs, written by
scripts/provider_table.py from the pinned litellm into providers.json.

litellm's import costs 5-30 s; `run`, `compare` and `optimize` refuse a missing
key or an unknown model before it, from this table. Where the table cannot
decide (a bare name litellm places by its own rules, a provider whose keys
depend on the model) the caller asks litellm. tests/test_provider_table.py
holds the table to the installed litellm's answers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

TABLE = Path(__file__).with_name("providers.json")


@dataclass(frozen=True)
class KeyRule:
    names: tuple[str, ...]
    needs_all: bool  # every one of them, or (False) any one


@dataclass(frozen=True)
class ProviderTable:
    litellm_version: str
    providers: frozenset[str]
    keys: dict[str, KeyRule]  # provider -> the variables it needs
    models: dict[str, str]  # a name litellm's price map lists -> its provider

    def provider(self, name: str) -> str | None:
        """The provider litellm gives `name`, or None where the table cannot tell."""
        if name in self.models:
            return self.models[name]
        prefix, slash, rest = name.partition("/")
        return prefix if slash and rest and prefix in self.providers else None

    def unknown(self, name: str) -> bool:
        """True where litellm would refuse `name` as naming no provider: a
        `prefix/model` whose prefix is no provider and which the price map does
        not list. A bare name is never judged here (litellm has rules of its own)."""
        prefix, slash, _ = name.partition("/")
        return bool(slash) and prefix not in self.providers and name not in self.models

    def missing_keys(self, provider: str, environment: Mapping[str, str]) -> list[str] | None:
        """What litellm would name as missing for `provider` in `environment`: nothing
        when its rule is met, otherwise its whole list; None where the table has no rule."""
        rule = self.keys.get(provider)
        if rule is None:
            return None
        present = [bool(environment.get(name)) for name in rule.names]
        met = all(present) if rule.needs_all else any(present)
        return [] if met or not rule.names else list(rule.names)


@cache
def provider_table() -> ProviderTable:
    data = json.loads(TABLE.read_text())
    return ProviderTable(
        litellm_version=str(data["litellm_version"]),
        providers=frozenset(data["providers"]),
        keys={p: _rule(rule) for p, rule in data["keys"].items()},
        models=dict(data["models"]),
    )


def _rule(data: dict[str, list[str]]) -> KeyRule:
    (mode, names), *_ = data.items()
    return KeyRule(tuple(names), needs_all=mode == "all")

"""The registry of task kinds: track name -> `TaskKind`.

The built-in kinds register themselves when their module is imported; the
modules are named here as text, so the core never imports a kind (and a kind
of your own only needs `register_kind`). Everything outside a kind's package
asks this registry, never which kind it holds."""

from __future__ import annotations

import importlib
import threading
from typing import Any

from fembench_agents.kinds.contract import TaskKind

# One entry per built-in kind package: importing the module registers its tracks.
BUILTIN_KINDS = ("fembench_agents.suite.kind", "fembench_agents.cases.kind")

_KINDS: dict[str, TaskKind] = {}
_lock = threading.Lock()
_loaded = False


def register_kind(kind: TaskKind) -> TaskKind:
    """Add `kind` under its track; a track is registered once (the same object again is a no-op)."""
    with _lock:
        known = _KINDS.get(kind.track)
        if known is not None and known is not kind:
            raise ValueError(f"track {kind.track!r} is already registered (by {type(known).__name__})")
        _KINDS[kind.track] = kind
    return kind


def unregister_kind(track: str) -> None:
    """Remove a registered track (a test's own kind, when the test ends)."""
    with _lock:
        _KINDS.pop(track, None)


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    for module in BUILTIN_KINDS:
        importlib.import_module(module)
    _loaded = True


def tracks() -> tuple[str, ...]:
    """Every registered track, built-in ones first (in BUILTIN_KINDS' order, whichever
    module was imported first), then in registration order."""
    _load_builtins()
    return tuple(sorted(_KINDS, key=lambda track: _builtin_rank(_KINDS[track])))


def _builtin_rank(kind: TaskKind) -> int:
    module = type(kind).__module__
    return BUILTIN_KINDS.index(module) if module in BUILTIN_KINDS else len(BUILTIN_KINDS)


def kind_for(track: str) -> TaskKind:
    """The kind registered under `track`; a ValueError naming the known tracks otherwise."""
    _load_builtins()
    try:
        return _KINDS[track]
    except KeyError:
        raise ValueError(f"unknown track {track!r}; known: {', '.join(tracks())}") from None


def kind_of_outcome(outcome: Any) -> TaskKind:
    """The first kind whose outcome type `outcome` is (code and tests differ by type)."""
    _load_builtins()
    for kind in _KINDS.values():
        if type(outcome) is kind.outcome_type:
            return kind
    raise ValueError(f"no registered kind scores to {type(outcome).__name__}")


def outcome_types() -> dict[str, type[Any]]:
    """Outcome models by the `kind` tag a log writes for them."""
    _load_builtins()
    found: dict[str, type[Any]] = {}
    for kind in _KINDS.values():
        tag = kind.outcome_type.model_fields["kind"].default
        found.setdefault(tag, kind.outcome_type)
    return found

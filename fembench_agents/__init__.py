"""Compare, repair and optimize LLM solver agents on computational-mechanics
code generation. The Python API (`load_tasks`, `run`, `compare`, `score_folder`,
`replay`, `open_run`, `build_report`) lives in `fembench_agents.api` and is loaded on first
use, so that importing any part of the package (the sandbox's workers import
it) loads nothing more than that part."""

from __future__ import annotations

import importlib
from typing import Any

_API = ("load_tasks", "run", "compare", "score_folder", "replay", "open_run", "build_report", "RunView")
__all__ = list(_API)


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module("fembench_agents.api"), name)
    raise AttributeError(f"module 'fembench_agents' has no attribute {name!r}")

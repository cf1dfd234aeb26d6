"""Versions and commit, for manifests and provenance."""

from __future__ import annotations

import functools
import importlib.metadata
import subprocess
from pathlib import Path
from typing import Any

PACKAGES = ("fembench-agents", "gepa", "litellm", "numpy", "pydantic")


@functools.cache
def environment() -> dict[str, Any]:
    versions = {}
    for pkg in PACKAGES:
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            pass
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path(__file__).resolve().parent
        )
        commit = out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"versions": versions, "git_commit": commit}

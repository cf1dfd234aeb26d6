"""The Python and package versions a function task's prompt states."""

from __future__ import annotations

import ast
import functools
import sys

from fembench_agents.suite.model import Task


def environment(task: Task) -> tuple[str, dict[str, str]]:
    """The task's own versions when it declares them (`python_version`,
    `package_versions`), otherwise those the sandbox runs, for the packages the
    task's imports name (standard-library modules have no version of their own)."""
    python = task.python_version or f"{sys.version_info.major}.{sys.version_info.minor}"
    if task.package_versions:
        return python, dict(task.package_versions)
    versions: dict[str, str] = {}
    for module in imported_modules(task.required_imports):
        found = _installed_version(module)
        if found is not None:
            versions[found[0]] = found[1]
    return python, versions


def imported_modules(imports: tuple[str, ...]) -> list[str]:
    """Top-level module names of `import x` / `from x import y` lines, in order."""
    found: list[str] = []
    for line in imports:
        try:
            tree = ast.parse(line)
        except SyntaxError:
            continue
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            found += [n.split(".")[0] for n in names]
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=64)
def _installed_version(module: str) -> tuple[str, str] | None:
    """The distribution that provides `module` and its version (scanning the
    installed distributions takes a second: once per module and process)."""
    import importlib.metadata

    dists = _distributions().get(module, [])
    return (dists[0], importlib.metadata.version(dists[0])) if dists else None


@functools.lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    import importlib.metadata

    return dict(importlib.metadata.packages_distributions())

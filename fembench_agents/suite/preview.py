"""A function task's prompt-facing parts read from its module's text, without
running it: what a dry run renders prompts from. Loading a task executes its
module in the sandbox (`loader.load_task`), which a dry run must not start.

`task_info()` must end in `return {...}` whose prompt-facing keys are
literals or names of module-level functions (every published task's is); the
verification inputs, which are computed, are not read. A module written
otherwise is skipped with the key it could not read."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

from fembench_agents.kinds.contract import SkippedTask
from fembench_agents.scoring.sandbox.describe import _signature
from fembench_agents.suite.loader import TaskFormatError, _to_task, task_files
from fembench_agents.suite.model import Task

# task_info's keys -> the names the loader's description gives them
_STRINGS = {
    "task_id": "task_id",
    "task_short_description": "short_description",
    "created_date": "created_date",
    "created_by": "created_by",
}


def _info_dict(tree: ast.Module, path: Path) -> ast.Dict:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "task_info":
            last = node.body[-1] if node.body else None
            if isinstance(last, ast.Return) and isinstance(last.value, ast.Dict):
                return last.value
            raise TaskFormatError(
                path, "task_info", "does not end in `return {...}`: cannot be read without running it"
            )
    raise TaskFormatError(path, "task_info", "the module defines no task_info() function")


class _Module:
    """The module's top-level functions and the literal keys of its task_info dict."""

    def __init__(self, path: Path, source: str) -> None:
        self.path, self.source = path, source
        tree = ast.parse(source, str(path))
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        info = _info_dict(tree, path)
        self.info = {k.value: v for k, v in zip(info.keys, info.values, strict=True) if isinstance(k, ast.Constant)}

    def literal(self, key: str) -> Any:
        if key not in self.info:
            raise TaskFormatError(self.path, key, "missing required key")
        try:
            return ast.literal_eval(self.info[key])
        except ValueError:
            raise TaskFormatError(self.path, key, "not a literal: cannot be read without running the module") from None

    def function(self, node: ast.expr, key: str) -> dict[str, str]:
        if not isinstance(node, ast.Name) or node.id not in self.functions:
            raise TaskFormatError(self.path, key, "expected the name of a module-level function")
        fn = self.functions[node.id]
        first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
        lines = self.source.splitlines(keepends=True)[first - 1 : fn.end_lineno]
        return {"name": fn.name, "source": "".join(lines), "docstring": ast.get_docstring(fn) or ""}

    def functions_of(self, key: str) -> list[dict[str, str]]:
        node = self.info.get(key)
        if not isinstance(node, ast.List | ast.Tuple):
            raise TaskFormatError(self.path, key, "expected a literal list of functions")
        return [self.function(item, key) for item in node.elts]


def _tests(module: _Module) -> list[dict[str, Any]]:
    node = module.info.get("test_cases")
    if not isinstance(node, ast.List | ast.Tuple):
        raise TaskFormatError(module.path, "test_cases", "expected a literal list of dicts")
    tests = []
    for case in node.elts:
        if not isinstance(case, ast.Dict):
            raise TaskFormatError(module.path, "test_cases", "expected a literal dict per test")
        entry = {k.value: v for k, v in zip(case.keys, case.values, strict=True) if isinstance(k, ast.Constant)}
        test = module.function(entry["test_code"], "test_cases") if "test_code" in entry else None
        fails = entry.get("expected_failures")
        if test is None or not isinstance(fails, ast.List | ast.Tuple):
            raise TaskFormatError(module.path, "test_cases", "each entry needs test_code and expected_failures")
        failures = [module.function(f, "test_cases") for f in fails.elts]
        tests.append(
            {
                **test,
                "expected_failures": [{"name": f["name"], "source": f["source"]} for f in failures],
            }
        )
    return tests


def preview_task(path: str | os.PathLike[str]) -> Task:
    """The task at `path` as `load_task` would give it for its prompts, with no
    verification inputs; TaskFormatError names a key that cannot be read unrun."""
    path = Path(path)
    source = path.read_text()
    try:
        module = _Module(path, source)
    except SyntaxError as exc:
        raise TaskFormatError(path, None, f"syntax error on line {exc.lineno}: {exc.msg}") from None
    main = module.function(module.info.get("main_fcn", ast.Constant(None)), "main_fcn")
    described = {
        **{name: module.literal(key) for key, name in _STRINGS.items()},
        "main_name": main["name"],
        "main_source": main["source"],
        "main_docstring": main["docstring"],
        "main_signature": _signature(main["source"]),
        "helpers": [{"name": h["name"], "source": h["source"]} for h in module.functions_of("fcn_dependencies")],
        "required_imports": module.literal("required_imports"),
        "inputs": [],
        "tests": _tests(module),
        "module_functions": {},
        "extensions": {k: module.literal(k) for k in ("python_version", "package_versions") if k in module.info},
    }
    return _to_task(path, source, described)


def preview_suite(path: str | os.PathLike[str]) -> tuple[list[Task], list[SkippedTask]]:
    """Every task under `path` that reads unrun, and each other module with its reason."""
    tasks: dict[str, Task] = {}
    skipped: list[SkippedTask] = []
    for f in task_files(path):
        try:
            task = preview_task(f)
        except (TaskFormatError, ValueError, OSError) as exc:
            skipped.append(SkippedTask(name=f.stem, path=str(f), reason=str(exc)[:500]))
            continue
        tasks.setdefault(task.task_id, task)
    return sorted(tasks.values(), key=lambda t: t.task_id), skipped

"""Loads function-task modules (TASK_FORMAT.md), unchanged, from a file or a directory.

The module is executed in the sandbox, not in this process: a task is code,
and its reference outputs are computed where attempts run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fembench_agents.kinds.contract import ProblemsUnavailable, SkippedTask
from fembench_agents.scoring import codec
from fembench_agents.scoring.error_text import shortened
from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy
from fembench_agents.suite.fresh_spec import FreshInputs, parameter_names
from fembench_agents.suite.model import Comparison, SourceFunction, Task, TestCase, Tier


class TaskFormatError(ValueError):
    """A task module is malformed; names the file and the offending key."""

    def __init__(self, path: str | os.PathLike[str], key: str | None, message: str) -> None:
        where = f"{path}" + (f": task_info key {key!r}" if key else "")
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.key = key


DESCRIBE_POLICY = SandboxPolicy(wall_seconds=60.0, memory_mb=2048)


def task_files(path: str | os.PathLike[str]) -> list[Path]:
    p = Path(path)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise FileNotFoundError(f"no task file or directory at {p}")
    return sorted(f for f in p.rglob("*.py") if not f.name.startswith("_"))


def load_task(path: str | os.PathLike[str], sandbox: Sandbox) -> Task:
    path = Path(path)
    source = path.read_text()
    try:
        compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise TaskFormatError(path, None, f"syntax error on line {exc.lineno}: {exc.msg}") from None
    result = sandbox.run({"kind": "describe", "source": source, "filename": str(path.resolve())}, DESCRIBE_POLICY)
    described = result.events("task")
    if not described:
        invalid = result.events("invalid")
        if invalid:
            err = invalid[0]
            raise TaskFormatError(path, err.get("key"), f"{err.get('error_type')}: {err.get('message')}")
        why = "timed out" if result.timed_out else f"exited with {result.exit_code or result.signal}"
        raise TaskFormatError(path, None, f"executing the module failed ({why}) {shortened(result.stderr, 300)}")
    return _to_task(path, source, described[0]["task"])


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors())


def _comparison(path: Path, value: Any) -> Comparison:
    if value is None:
        return Comparison()
    if not isinstance(value, dict):
        raise TaskFormatError(path, "comparison", f"expected a dict (rtol, atol, rules), got {type(value).__name__}")
    try:
        return Comparison.model_validate(value)
    except ValidationError as exc:
        raise TaskFormatError(path, "comparison", _problems(exc)) from None


def _fresh_inputs(path: Path, value: Any, signature: str) -> FreshInputs | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TaskFormatError(path, "fresh_inputs", f"expected a dict (draws, fixed), got {type(value).__name__}")
    try:
        spec = FreshInputs.model_validate(value)
        spec.check_parameters(parameter_names(signature))
    except ValidationError as exc:
        raise TaskFormatError(path, "fresh_inputs", _problems(exc)) from None
    except ValueError as exc:
        raise TaskFormatError(path, "fresh_inputs", str(exc)) from None
    return spec


def _to_task(path: Path, source: str, d: dict[str, Any]) -> Task:
    ext = {k: codec.from_data(v) for k, v in d.get("extensions", {}).items()}
    comparison = _comparison(path, ext.get("comparison"))
    fresh_inputs = _fresh_inputs(path, ext.get("fresh_inputs"), d["main_signature"])
    try:
        return Task(
            task_id=d["task_id"],
            short_description=d["short_description"],
            created_date=d["created_date"],
            created_by=d["created_by"],
            path=str(path.resolve()),
            module_source=source,
            main_name=d["main_name"],
            main_signature=d["main_signature"],
            main_docstring=d["main_docstring"],
            main_source=d["main_source"],
            helpers=tuple(SourceFunction(**h) for h in d["helpers"]),
            required_imports=tuple(d["required_imports"]),
            inputs=tuple(d["inputs"]),
            tests=tuple(
                TestCase(
                    name=t["name"],
                    source=t["source"],
                    docstring=t["docstring"],
                    expected_failures=tuple(SourceFunction(**f) for f in t["expected_failures"]),
                )
                for t in d["tests"]
            ),
            module_functions=d["module_functions"],
            tier=Tier.from_task_id(d["task_id"]),
            comparison=comparison,
            time_limit=ext.get("time_limit"),
            python_version=ext.get("python_version"),
            package_versions=ext.get("package_versions") or {},
            fresh_inputs=fresh_inputs,
        )
    except ValidationError as exc:
        # The fields validated here are the optional task_info keys, under the same names.
        loc = exc.errors()[0]["loc"]
        raise TaskFormatError(path, str(loc[0]) if loc else None, _problems(exc)) from None


@dataclass(frozen=True)
class LoadedSuite:
    tasks: list[Task]
    skipped: list[SkippedTask] = field(default_factory=list)


def load_each(path: str | os.PathLike[str], sandbox: Sandbox) -> LoadedSuite:
    """Every task under `path` that loads; each other module is skipped with
    its reason, so one bad module never sinks a command."""
    tasks: dict[str, Task] = {}
    skipped: list[SkippedTask] = []
    for f in task_files(path):
        try:
            task = load_task(f, sandbox)
        except Exception as exc:  # noqa: BLE001 - whatever stops a module from loading skips it
            reason = str(exc) if isinstance(exc, TaskFormatError) else f"{type(exc).__name__}: {exc}"
            skipped.append(SkippedTask(name=f.stem, path=str(f), reason=shortened(reason, 500)))
            continue
        if task.task_id in tasks:
            reason = f"duplicate task id {task.task_id!r} (also in {tasks[task.task_id].path})"
            skipped.append(SkippedTask(name=task.task_id, path=str(f), reason=reason))
            continue
        tasks[task.task_id] = task
    return LoadedSuite(sorted(tasks.values(), key=lambda t: t.task_id), skipped)


def load_offered(path: str, sandbox: Sandbox) -> LoadedSuite:
    """`load_each`, for a command: ProblemsUnavailable when there is no task
    module at `path` or none of them loads."""
    try:
        loaded = load_each(path, sandbox)
    except FileNotFoundError as exc:
        raise ProblemsUnavailable(str(exc)) from None
    if loaded.skipped and not loaded.tasks:
        raise ProblemsUnavailable(f"no task in {path} could be loaded", loaded.skipped)
    return loaded


def load_tasks(path: str | os.PathLike[str], sandbox: Sandbox) -> list[Task]:
    """Every task under `path`; duplicate ids are an error naming both files."""
    tasks: dict[str, Task] = {}
    for f in task_files(path):
        task = load_task(f, sandbox)
        if task.task_id in tasks:
            raise TaskFormatError(f, "task_id", f"duplicate id {task.task_id!r} (also in {tasks[task.task_id].path})")
        tasks[task.task_id] = task
    return sorted(tasks.values(), key=lambda t: t.task_id)

"""What the sandbox runs for a task besides an attempt: a reference or an expected
failure reduced to what it needs, and the preamble an attempt runs after."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from typing import Any

from fembench_agents.scoring.sandbox.jobs import CallJob, Implementation
from fembench_agents.suite.model import Task


class ReferenceFailure(RuntimeError):
    """The task's own reference cannot produce outputs: the task is broken."""


@dataclass(frozen=True)
class ReferenceOutput:
    """What the reference did on one input: returned `value` or raised `raises`."""

    value: Any = None
    raises: tuple[str, ...] | None = None  # exception type names, most specific first


def attempt_preamble(task: Task) -> list[str]:
    """The allowed imports and the helpers the task gives, run before an attempt's code."""
    return ["\n".join(task.required_imports), *(h.source for h in task.helpers)]


def task_implementation(task: Task, function: str) -> Implementation:
    """A reference or expected-failure implementation, built from the module
    reduced to what it needs (see `implementation_source`)."""
    drop = (*task.test_names, *task.expected_failure_names, "task_info", task.main_name)
    return {
        "module_source": implementation_source(task.module_source, function, task.main_name, drop),
        "function": task.main_name,
    }


@functools.lru_cache(maxsize=256)
def implementation_source(module_source: str, function: str, main_name: str, drop: tuple[str, ...]) -> str:
    """The task module without the module-level functions in `drop` (tests,
    expected failures, task_info, the reference), with `function` renamed to
    `main_name`, stripped of its docstring and defined last. The process that
    runs it (apart from the generated test's: see `runner.run_test`) holds
    nothing but imports, constants, helpers and the one implementation, so
    every implementation of a task looks alike from inside and none of the
    others (nor the reference) can be reached."""
    tree = ast.parse(module_source)
    body: list[ast.stmt] = []
    chosen: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (*drop, function):
            if node.name == function:
                chosen = node  # a later definition wins, as when the module runs
            continue
        body.append(node)
    if chosen is not None:
        chosen.name = main_name
        if ast.get_docstring(chosen, clean=False) is not None:
            chosen.body = chosen.body[1:] or [ast.Pass()]
        body.append(chosen)
    return ast.unparse(ast.Module(body=body, type_ignores=[]))


def call_job(task: Task, implementation: Implementation) -> CallJob:
    """`implementation` called on every verification input of `task`; inputs
    that cannot cross as data come with the module that builds them."""
    job: CallJob = {"kind": "call", "implementation": implementation, "inputs": list(task.inputs)}
    if task.builds_inputs:
        job["input_module"] = input_module_source(task.module_source, ("task_info", *task.helper_names))
    return job


_STUB = ast.parse("raise RuntimeError('not available while the verification inputs are built')").body


@functools.lru_cache(maxsize=256)
def input_module_source(module_source: str, keep: tuple[str, ...]) -> str:
    """The task module with the body of every module-level function not in
    `keep` replaced by a raise. A callable input (a lambda) keeps the module's
    globals, and the process that calls it may be an attempt's: through them
    it must reach nothing the solver is not shown (the reference, expected
    failures, tests, helpers a T3 solver writes itself). `task_info` still
    runs, as its dict only names those functions."""
    tree = ast.parse(module_source)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in keep:
            node.args = ast.arguments(
                posonlyargs=[],
                args=[],
                vararg=ast.arg("args"),
                kwonlyargs=[],
                kw_defaults=[],
                kwarg=ast.arg("kwargs"),
                defaults=[],
            )
            node.body = list(_STUB)
            node.decorator_list = []
            node.returns = None
    return ast.unparse(ast.fix_missing_locations(tree))

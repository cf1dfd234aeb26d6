"""What the sandbox runs for a task besides an attempt: a reference or an expected
failure reduced to what it needs, and the preamble an attempt runs after."""

from __future__ import annotations

import ast
import copy
import functools
import re
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
    runs it (apart from the generated test's: see `proxy.run_test`) holds
    nothing but imports, constants, helpers and the one implementation, so
    every implementation of a task looks alike from inside and none of the
    others (nor the reference) can be reached.

    Cut from the module's own lines, parsed once per module (`_statements`):
    a task module is ~20 KB, and parsing it again and printing it back for
    each of its ~8 implementations cost a `score` of every task ~2.7 s in the
    parent. A function whose docstring or name cannot be cut cleanly from its
    lines is printed back from its syntax tree instead."""
    lines = module_source.splitlines(keepends=True)
    kept: list[int] = []
    chosen: _Statement | None = None
    for statement in _statements(module_source):
        if statement.name in (*drop, function):
            if statement.name == function:
                chosen = statement  # a later definition wins, as when the module runs
            continue
        kept += range(statement.first, statement.last + 1)
    body = "".join(lines[i] for i in dict.fromkeys(kept))
    if body and not body.endswith("\n"):
        body += "\n"  # the module's last line, with a function defined after it here
    if chosen is None:
        return body
    return body + _renamed_without_docstring(lines, chosen, main_name)


@dataclass(frozen=True)
class _Statement:
    """A module-level statement: the function it defines (None for any other
    statement), its first and last line (0-based, decorators included), and
    for a function its `def` line, its docstring's lines and columns, and
    whether the docstring is its whole body."""

    name: str | None
    first: int
    last: int
    node: ast.stmt


@functools.lru_cache(maxsize=64)
def _statements(module_source: str) -> tuple[_Statement, ...]:
    out = []
    for node in ast.parse(module_source).body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))]) - 1
        name = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        out.append(_Statement(name, first, (node.end_lineno or node.lineno) - 1, node))
    return tuple(out)


def _renamed_without_docstring(lines: list[str], statement: _Statement, main_name: str) -> str:
    node = statement.node
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    text = lines[statement.first : statement.last + 1]
    header = node.lineno - 1 - statement.first
    renamed, count = re.subn(rf"\bdef\s+{re.escape(node.name)}\b", f"def {main_name}", text[header], count=1)
    doc = node.body[0] if ast.get_docstring(node, clean=False) is not None else None
    if count != 1 or (doc is not None and not _owns_its_lines(lines, doc)):
        return _printed_back(node, main_name)
    text[header] = renamed
    if doc is not None:
        start, end = doc.lineno - 1 - statement.first, (doc.end_lineno or doc.lineno) - 1 - statement.first
        indent = lines[doc.lineno - 1][: doc.col_offset]
        text[start : end + 1] = [f"{indent}pass\n"] if len(node.body) == 1 else []
    return "".join(text)


def _owns_its_lines(lines: list[str], doc: ast.stmt) -> bool:
    """The docstring starts its line (so it is not on a line of the signature)
    and ends its line but for a comment."""
    rest = lines[(doc.end_lineno or doc.lineno) - 1][doc.end_col_offset :].strip()
    return not lines[doc.lineno - 1][: doc.col_offset].strip() and (not rest or rest.startswith("#"))


def _printed_back(node: ast.FunctionDef | ast.AsyncFunctionDef, main_name: str) -> str:
    node = copy.copy(node)  # the name and body are replaced, not changed in place
    node.name = main_name
    if ast.get_docstring(node, clean=False) is not None:
        node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(node) + "\n"


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

"""Executes a task module (inside the sandbox) and reports its task_info as plain data."""

from __future__ import annotations

import inspect
import linecache
import types
from typing import Any

from fembench_agents.scoring import codec

REQUIRED_KEYS = (
    "task_id",
    "task_short_description",
    "created_date",
    "created_by",
    "main_fcn",
    "required_imports",
    "fcn_dependencies",
    "reference_verification_inputs",
    "test_cases",
)
OPTIONAL_KEYS = ("python_version", "package_versions", "comparison", "time_limit", "fresh_inputs")


class TaskKeyError(ValueError):
    """A task_info key is missing or has the wrong type; `key` names it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"task_info[{key!r}]: {message}")
        self.key = key


def _function(value: Any, key: str, ns: dict[str, Any]) -> types.FunctionType:
    if not isinstance(value, types.FunctionType):
        raise TaskKeyError(key, f"expected a function object, got {type(value).__name__}")
    if ns.get(value.__name__) is not value:
        raise TaskKeyError(key, f"function {value.__name__!r} must be defined at module level")
    return value  # type: ignore[return-value]


def _source(fn: types.FunctionType) -> str:
    return inspect.getsource(fn)


def _signature(source: str) -> str:
    """The def line(s) exactly as written, annotations included."""
    import ast
    import textwrap

    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    node.body = [ast.Expr(ast.Constant(...))]
    node.decorator_list = []
    return ast.unparse(node).rsplit("\n", 1)[0]


def _str_list(value: Any, key: str) -> list[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TaskKeyError(key, "expected a list of strings")
    return list(value)


def describe_module(source: str, filename: str) -> dict[str, Any]:
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns: dict[str, Any] = {"__name__": "__task__", "__file__": filename}
    exec(compile(source, filename, "exec", dont_inherit=True), ns)
    info_fn = ns.get("task_info")
    if not callable(info_fn):
        raise TaskKeyError("task_info", "the module defines no task_info() function")
    info = info_fn()
    if not isinstance(info, dict):
        raise TaskKeyError("task_info", f"task_info() must return a dict, got {type(info).__name__}")
    for key in REQUIRED_KEYS:
        if key not in info:
            raise TaskKeyError(key, "missing required key")
    for key in ("task_id", "task_short_description", "created_date", "created_by"):
        if not isinstance(info[key], str) or not info[key].strip():
            raise TaskKeyError(key, "expected a non-empty string")
    main = _function(info["main_fcn"], "main_fcn", ns)
    deps = info["fcn_dependencies"]
    if not isinstance(deps, (list, tuple)):
        raise TaskKeyError("fcn_dependencies", "expected a list of functions")
    helpers = [_function(d, "fcn_dependencies", ns) for d in deps]
    inputs = info["reference_verification_inputs"]
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TaskKeyError("reference_verification_inputs", "expected a non-empty list of argument lists")
    encoded_inputs = []
    for i, args in enumerate(inputs):
        if not isinstance(args, (list, tuple)):
            raise TaskKeyError("reference_verification_inputs", f"entry {i} is not a list of arguments")
        data = codec.to_data(list(args))
        # Callables and the module's own objects are built where attempts run (`runner.run_call`).
        encoded_inputs.append({codec.TASK_INPUT: i} if "__unsupported__" in repr(data) else data)
    cases = info["test_cases"]
    if not isinstance(cases, (list, tuple)):
        raise TaskKeyError("test_cases", "expected a list of {test_code, expected_failures} dicts")
    tests = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or "test_code" not in case or "expected_failures" not in case:
            raise TaskKeyError("test_cases", f"entry {i} needs keys 'test_code' and 'expected_failures'")
        test = _function(case["test_code"], "test_cases", ns)
        fails = case["expected_failures"]
        if not isinstance(fails, (list, tuple)):
            raise TaskKeyError("test_cases", f"entry {i}: expected_failures must be a list of functions")
        tests.append(
            {
                "name": test.__name__,
                "source": _source(test),
                "docstring": inspect.getdoc(test) or "",
                "expected_failures": [
                    {"name": f.__name__, "source": _source(_function(f, "test_cases", ns))} for f in fails
                ],
            }
        )
    module_functions = {
        k: _source(v) for k, v in ns.items() if isinstance(v, types.FunctionType) and v.__globals__ is ns
    }
    extensions = {k: codec.to_data(info[k]) for k in OPTIONAL_KEYS if k in info}
    unknown = sorted(set(info) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    return {
        "task_id": info["task_id"],
        "short_description": info["task_short_description"],
        "created_date": info["created_date"],
        "created_by": info["created_by"],
        "main_name": main.__name__,
        "main_source": _source(main),
        "main_docstring": inspect.getdoc(main) or "",
        "main_signature": _signature(_source(main)),
        "helpers": [{"name": h.__name__, "source": _source(h)} for h in helpers],
        "required_imports": _str_list(info["required_imports"], "required_imports"),
        "inputs": encoded_inputs,
        "tests": tests,
        "module_functions": module_functions,
        "extensions": extensions,
        "unknown_keys": unknown,
    }

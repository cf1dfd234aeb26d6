"""What every job kind shares inside the confined child: building an
implementation from source, reporting an exception as plain data, seeding,
and the frame writer of the result channel."""

from __future__ import annotations

import linecache
import os
import random
import traceback
import types
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.random as _numpy_random  # held here: seeding never reaches it through numpy (`fresh_view`)

from fembench_agents.scoring.error_text import MESSAGE_LIMIT, shortened

ATTEMPT_FILE = "<attempt>"
TEST_FILE = "<test>"
GIVEN_FILE = "<given>"
_GIVEN_PREFIX = "<given:"  # the file name of each given source, numbered (`exec_given`)
TASK_FILE = "<task>"


class FrameWriter:
    def __init__(self, fd: int) -> None:
        self._fd = fd

    def emit(self, frame: dict[str, Any]) -> None:
        import json

        data = (json.dumps(frame, allow_nan=False) + "\n").encode()
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]


def close_all_but(keep: Iterable[int]) -> None:
    """Close every descriptor above stderr but `keep`: one close_range(2) per
    gap, where closing each of a thousand numbers cost a new process ~1 ms."""
    low = 3
    for fd in sorted(set(keep)):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, 1 << 20)


def register_source(filename: str, source: str) -> None:
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def fresh_namespace(name: str) -> dict[str, Any]:
    """A module's globals; `exec` adds `__builtins__`, the builtins' dict, as in any imported module."""
    return {"__name__": name}


def exec_source(source: str, filename: str, ns: dict[str, Any]) -> None:
    exec(compile(source, filename, "exec", dont_inherit=True), ns)


def exec_given(sources: Iterable[str], ns: dict[str, Any], compiled: list[types.CodeType] | None = None) -> None:
    """The code an attempt or a test suite is given (the task's imports, then each helper). Each
    source runs under a file name of its own, so that its traceback lines carry their text (linecache
    holds one source per name); `error_frame` reports them all as GIVEN_FILE. `compiled`: each
    source compiled already (`compile_sources`)."""
    for i, source in enumerate(sources):
        filename = f"{_GIVEN_PREFIX}{i}>"
        register_source(filename, source)
        if compiled is None:
            exec_source(source, filename, ns)
        else:
            exec(compiled[i], ns)


def compile_sources(preamble: list[str], code: str, filename: str) -> tuple[list[types.CodeType], types.CodeType]:
    """A source and what it is given, compiled as `exec_given` and `exec_source` would: once for
    all the pairs of a tests job, by its coordinator, where compiling runs nothing of it."""
    given = [compile(s, f"{_GIVEN_PREFIX}{i}>", "exec", dont_inherit=True) for i, s in enumerate(preamble)]
    return given, compile(code, filename, "exec", dont_inherit=True)


def build_implementation(spec: dict[str, Any]) -> Callable[..., Any]:
    """The function under test. A task implementation (reference or expected
    failure) comes as a module the parent reduced to imports, helpers and that
    one implementation under the main name (`Evaluator.task_implementation`),
    so this process never holds the others; an attempt comes as its code
    after the allowed imports and given helpers."""
    name = spec["function"]
    if spec.get("module_source") is not None:
        ns = fresh_namespace("__task__")
        exec_source(spec["module_source"], TASK_FILE, ns)
        fn = ns.get(name)
        if not isinstance(fn, types.FunctionType):
            raise NameError(f"the task module does not define a function named {name!r}")
        return fn
    ns = fresh_namespace("__candidate__")
    exec_given(spec.get("preamble", ()), ns)
    register_source(ATTEMPT_FILE, spec["code"])
    exec_source(spec["code"], ATTEMPT_FILE, ns)
    fn = ns.get(name)
    if not callable(fn):
        raise NameError(f"the code does not define a function named {name!r}")
    return fn


def error_frame(exc: BaseException, own_files: tuple[str, ...]) -> dict[str, Any]:
    frames = traceback.extract_tb(exc.__traceback__)
    named = ((GIVEN_FILE if f.filename.startswith(_GIVEN_PREFIX) else f.filename, f) for f in frames)
    lines = [
        f"{filename}, line {f.lineno}, in {f.name}: {(f.line or '').strip()}"
        for filename, f in named
        if filename in own_files
    ]
    mro = [c.__name__ for c in type(exc).__mro__]
    try:
        message = shortened(str(exc), MESSAGE_LIMIT)
    except BaseException:  # a hostile __str__
        message = "<unprintable message>"
    return {"error_type": type(exc).__name__, "error_mro": mro, "message": message, "traceback": lines[-8:]}


def seed_generators() -> None:
    random.seed(0)
    _numpy_random.seed(0)


def seed_default_rng() -> None:
    # np.random.default_rng() without a seed draws OS entropy; a score must not.
    original = _numpy_random.default_rng

    def default_rng(seed: Any = None) -> np.random.Generator:
        return original(0 if seed is None else seed)

    _numpy_random.default_rng = default_rng

"""Runs one job inside a confined child and streams its results as JSON lines.

Nothing here decides a verdict: it reports what happened (values, exceptions,
whether a test raised) and the parent judges. Job kinds:
- describe: execute a task module and report its task_info as plain data;
- call: build an implementation and call it on each input;
- test: build an implementation and run one test function against it.
"""

from __future__ import annotations

import builtins
import linecache
import os
import random
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from fembench_agents import codec

ATTEMPT_FILE = "<attempt>"
TEST_FILE = "<test>"
GIVEN_FILE = "<given>"
TASK_FILE = "<task>"
_MSG_LIMIT = 600


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


def _register_source(filename: str, source: str) -> None:
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def _fresh_namespace(name: str) -> dict[str, Any]:
    return {"__name__": name, "__builtins__": builtins}


def _exec(source: str, filename: str, ns: dict[str, Any]) -> None:
    exec(compile(source, filename, "exec", dont_inherit=True), ns)


def build_implementation(spec: dict[str, Any]) -> Callable[..., Any]:
    """The function under test. A task implementation (reference or expected
    failure) comes as a module the parent reduced to imports, helpers and that
    one implementation under the main name (`Evaluator.task_implementation`),
    so this process never holds the others; an attempt comes as its code
    after the allowed imports and given helpers."""
    name = spec["function"]
    if spec.get("module_source") is not None:
        ns = _fresh_namespace("__task__")
        _exec(spec["module_source"], TASK_FILE, ns)
        fn = ns.get(name)
        if not isinstance(fn, types.FunctionType):
            raise NameError(f"the task module does not define a function named {name!r}")
        return fn
    ns = _fresh_namespace("__candidate__")
    for source in spec.get("preamble", ()):
        _exec(source, GIVEN_FILE, ns)
    _register_source(ATTEMPT_FILE, spec["code"])
    _exec(spec["code"], ATTEMPT_FILE, ns)
    fn = ns.get(name)
    if not callable(fn):
        raise NameError(f"the code does not define a function named {name!r}")
    return fn


def _error_frame(exc: BaseException, own_files: tuple[str, ...]) -> dict[str, Any]:
    frames = traceback.extract_tb(exc.__traceback__)
    lines = [f"{f.filename}, line {f.lineno}, in {f.name}: {(f.line or '').strip()}"
             for f in frames if f.filename in own_files]
    mro = [c.__name__ for c in type(exc).__mro__]
    try:
        message = str(exc)[:_MSG_LIMIT]
    except BaseException:  # a hostile __str__
        message = "<unprintable message>"
    return {"error_type": type(exc).__name__, "error_mro": mro, "message": message,
            "traceback": lines[-8:]}


def _seed() -> None:
    random.seed(0)
    np.random.seed(0)


def _seed_default_rng() -> None:
    # np.random.default_rng() without a seed draws OS entropy; a score must not.
    original = np.random.default_rng

    def default_rng(seed: Any = None) -> np.random.Generator:
        return original(0 if seed is None else seed)

    np.random.default_rng = default_rng


def run_call(job: dict[str, Any], out: FrameWriter) -> None:
    try:
        fn = build_implementation(job["implementation"])
    except BaseException as exc:
        out.emit({"event": "build_error", **_error_frame(exc, (ATTEMPT_FILE, GIVEN_FILE))})
        return
    for index, encoded in enumerate(job["inputs"]):
        args = codec.from_data(encoded)
        _seed()
        start = time.perf_counter()
        try:
            value = fn(*args)
            seconds = time.perf_counter() - start
            try:
                frame = {"event": "input", "index": index, "status": "ok", "seconds": seconds,
                         "value": codec.to_data(value)}
            except BaseException as exc:
                frame = {"event": "input", "index": index, "status": "error", "seconds": seconds,
                         "error_type": "UnserializableOutput", "error_mro": ["UnserializableOutput"],
                         "message": f"{type(exc).__name__}", "traceback": []}
        except BaseException as exc:
            frame = {"event": "input", "index": index, "status": "error",
                     "seconds": time.perf_counter() - start, **_error_frame(exc, (ATTEMPT_FILE,))}
        out.emit(frame)
    out.emit({"event": "done"})


def run_test(job: dict[str, Any], out: FrameWriter) -> None:
    try:
        impl = build_implementation(job["implementation"])
    except BaseException as exc:
        out.emit({"event": "build_error", "side": "implementation", **_error_frame(exc, ())})
        return
    spec = job["test"]
    try:
        if spec.get("module_source") is not None:
            ns = _fresh_namespace("__task__")
            _exec(spec["module_source"], TASK_FILE, ns)
        else:
            ns = _fresh_namespace("__tests__")
            for source in spec.get("preamble", ()):
                _exec(source, GIVEN_FILE, ns)
            _register_source(TEST_FILE, spec["code"])
            _exec(spec["code"], TEST_FILE, ns)
        test_fn = ns[spec["name"]]
    except BaseException as exc:
        out.emit({"event": "build_error", "side": "test", **_error_frame(exc, (TEST_FILE,))})
        return
    _seed()
    start = time.perf_counter()
    try:
        test_fn(impl)
    except BaseException as exc:
        out.emit({"event": "test", "status": "failed", "seconds": time.perf_counter() - start,
                  **_error_frame(exc, (TEST_FILE,))})
        return
    out.emit({"event": "test", "status": "passed", "seconds": time.perf_counter() - start})


def run_describe(job: dict[str, Any], out: FrameWriter) -> None:
    from fembench_agents.sandbox.describe import describe_module

    try:
        out.emit({"event": "task", "task": describe_module(job["source"], job["filename"])})
    except BaseException as exc:
        out.emit({"event": "invalid", **_error_frame(exc, ()), "key": getattr(exc, "key", None)})


RUNNERS = {"call": run_call, "test": run_test, "describe": run_describe}


def run_job(job: dict[str, Any], out: FrameWriter) -> None:
    _seed_default_rng()
    RUNNERS[job["kind"]](job, out)

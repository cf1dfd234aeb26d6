"""Runs one job inside a confined child and streams its results as JSON lines.

Nothing here decides a verdict: it reports what happened (values, exceptions,
whether a test raised) and the parent judges. Job kinds:
- describe: execute a task module and report its task_info as plain data;
- call: build an implementation and call it on each input;
- tests: run test functions against implementations, each (test,
  implementation) pair in fresh processes of its own (`pairs`), the
  implementation built and called in a process apart from the test's
  (`proxy.run_test`);
- solve: call a PDE solver once on its case_spec, timed around the call only
  (imports and building the module happen before the clock starts);
- probe: nothing, to learn the isolation a job gets.
"""

from __future__ import annotations

import importlib
import sys
import time
from typing import Any

from fembench_agents.scoring import codec
from fembench_agents.scoring.sandbox.fresh_view import reveal
from fembench_agents.scoring.sandbox.implementation import (
    ATTEMPT_FILE,
    GIVEN_FILE,
    TASK_FILE,
    FrameWriter,
    build_implementation,
    error_frame,
    exec_source,
    fresh_namespace,
    seed_default_rng,
    seed_generators,
)
from fembench_agents.scoring.sandbox.pairs import run_pairs


def module_inputs(source: str) -> list[Any]:
    """The verification inputs as the task module builds them (see `jobs.CallJob`)."""
    ns = fresh_namespace("__task__")
    exec_source(source, TASK_FILE, ns)
    inputs = ns["task_info"]()["reference_verification_inputs"]
    return [list(args) for args in inputs]


def _arguments(encoded: Any, built: list[Any] | None) -> list[Any]:
    if isinstance(encoded, dict) and codec.TASK_INPUT in encoded:
        if built is None:
            raise ValueError("the job brings no module to build its verification inputs")
        return list(built[int(encoded[codec.TASK_INPUT])])
    return codec.from_data(encoded)  # type: ignore[no-any-return]


def run_call(job: dict[str, Any], out: FrameWriter) -> None:
    # Inputs first, so nothing the implementation does when it is built can touch them.
    try:
        built = module_inputs(job["input_module"]) if job.get("input_module") else None
    except BaseException as exc:
        frame = error_frame(exc, ())
        frame["message"] = f"the task's verification inputs could not be built: {frame['error_type']}"
        out.emit({"event": "build_error", **frame})
        return
    try:
        fn = build_implementation(job["implementation"])
    except BaseException as exc:
        out.emit({"event": "build_error", **error_frame(exc, (ATTEMPT_FILE, GIVEN_FILE))})
        return
    for index, encoded in enumerate(job["inputs"]):
        args = _arguments(encoded, built)
        seed_generators()
        start = time.perf_counter()
        try:
            value = fn(*args)
            seconds = time.perf_counter() - start
            try:
                frame = {
                    "event": "input",
                    "index": index,
                    "status": "ok",
                    "seconds": seconds,
                    "value": codec.to_data(value),
                }
            except BaseException as exc:
                frame = {
                    "event": "input",
                    "index": index,
                    "status": "error",
                    "seconds": seconds,
                    "error_type": "UnserializableOutput",
                    "error_mro": ["UnserializableOutput"],
                    "message": f"{type(exc).__name__}",
                    "traceback": [],
                }
        except BaseException as exc:
            frame = {
                "event": "input",
                "index": index,
                "status": "error",
                "seconds": time.perf_counter() - start,
                **error_frame(exc, (ATTEMPT_FILE, GIVEN_FILE)),  # the helpers it was given are its author's to read
            }
        out.emit(frame)


def run_solve(job: dict[str, Any], out: FrameWriter) -> None:
    if "setup" in job:
        importlib.import_module(job["setup"]).prepare_job()  # our module, before any attempt code
    if "calibration" in job:
        # Preloaded by the worker: nothing new is imported, and what it imported then is given back
        # as it left it (hiding concerns attempts, whose imports happen in the job).
        reveal()
        solver = sys.modules[job["calibration"]].solve
    else:
        try:
            solver = build_implementation(job["implementation"])
        except BaseException as exc:
            out.emit({"event": "build_error", **error_frame(exc, (ATTEMPT_FILE,))})
            return
    seed_generators()
    start = time.perf_counter()
    try:
        value = solver(job["spec"])
    except BaseException as exc:  # only an answer's time is judged
        out.emit({"event": "solve", "status": "error", **error_frame(exc, (ATTEMPT_FILE,))})
        return
    seconds = time.perf_counter() - start
    try:
        frame = {"event": "solve", "status": "ok", "seconds": seconds, "value": codec.to_data(value)}
    except BaseException as exc:
        frame = {
            "event": "solve",
            "status": "error",
            "error_type": "UnserializableOutput",
            "message": type(exc).__name__,
        }
    out.emit(frame)


def run_describe(job: dict[str, Any], out: FrameWriter) -> None:
    from fembench_agents.scoring.sandbox.describe import describe_module

    try:
        out.emit({"event": "task", "task": describe_module(job["source"], job["filename"])})
    except BaseException as exc:
        out.emit({"event": "invalid", **error_frame(exc, ()), "key": getattr(exc, "key", None)})


def run_probe(job: dict[str, Any], out: FrameWriter) -> None:
    """An empty job: its isolation frame says what confinement this machine gives."""


RUNNERS = {"call": run_call, "solve": run_solve, "describe": run_describe, "probe": run_probe}


def run_job(job: dict[str, Any], out: FrameWriter, policy: dict[str, Any], namespaced: bool) -> None:
    if job["kind"] == "tests":
        run_pairs(job, out, policy, namespaced)  # runs nothing of the attempt in this process
        return
    seed_default_rng()
    RUNNERS[job["kind"]](job, out)

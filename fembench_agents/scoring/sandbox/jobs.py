"""The jobs the sandbox runs, typed. They cross into the child as JSON; these
are TypedDicts (plain dicts at run time), so the child imports nothing to
read them and mypy checks every job the parent builds.

- describe: execute a task module, report its task_info as plain data;
- call: build an implementation, call it on each input;
- tests: run test functions against implementations, each pair in processes
  of its own, the implementation apart from the test;
- solve: build a PDE solver (an attempt, or one of our calibration solvers
  preloaded in the worker) and call `solve(case_spec)` once, timed;
- probe: nothing, to learn the isolation a job gets.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class Implementation(TypedDict):
    """The function under test: a task implementation (`module_source`, the
    module reduced to what it needs) or an attempt (`code` after the allowed
    imports and given helpers in `preamble`), named `function`."""

    function: str
    module_source: NotRequired[str]
    preamble: NotRequired[list[str]]
    code: NotRequired[str]


class TestSource(TypedDict):
    """Where tests come from: generated code (`code` after `preamble`)."""

    preamble: NotRequired[list[str]]
    code: str


class TestPair(TypedDict):
    test: str  # the test function's name
    implementation: int  # its index in the job's implementations


class DescribeJob(TypedDict):
    kind: Literal["describe"]
    source: str
    filename: str


class CallJob(TypedDict):
    """`inputs` are codec data, one argument list per input, except entries
    `{codec.TASK_INPUT: i}`, which the child builds by running `input_module`
    (the task module with every function but `task_info` and the given
    helpers stubbed out) and taking entry i of its verification inputs."""

    kind: Literal["call"]
    implementation: Implementation
    inputs: list[Any]
    input_module: NotRequired[str]


class TestsJob(TypedDict):
    """Test functions of one source against implementations, pair by pair,
    each pair in fresh processes with `pair_seconds` of wall clock (`pairs`)."""

    kind: Literal["tests"]
    test: TestSource
    implementations: list[Implementation]
    pairs: list[TestPair]
    pair_seconds: float


class SolveJob(TypedDict):
    """`implementation` is an attempt (function `solve`); `calibration` names a
    calibration-solver module the worker preloaded (see `Sandbox(preload=...)`);
    `setup` names a module of ours whose `prepare_job()` runs in the job's
    process before the solver (a track's per-job setup, e.g. its form cache)."""

    kind: Literal["solve"]
    spec: dict[str, Any]  # the agent-visible case_spec, as JSON data
    implementation: NotRequired[Implementation]
    calibration: NotRequired[str]
    setup: NotRequired[str]


class ProbeJob(TypedDict):
    kind: Literal["probe"]


Job = DescribeJob | CallJob | TestsJob | SolveJob | ProbeJob

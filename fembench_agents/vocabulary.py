"""The words outcomes, logs and reports share, defined once. They are written
to the log exactly as spelled here and read back by the report as they are.
A new task kind adds its stages and reasons here."""

from __future__ import annotations

from typing import Literal, get_args

# A track names a registered task kind (`fembench_agents.kinds`): a function
# task is scored on the code track (write the function) or the tests track
# (write its tests), a PDE case on the track of the library the solver must
# use; a kind of your own registers its own.
Track = str

# Stages an attempt goes through (function track: parse -> imports -> execute
# -> correct; test track: parse -> imports -> tests; PDE cases: executes ->
# accurate -> fast), and "model_error" for an episode whose model call failed
# before any attempt was scored.
Stage = Literal["parse", "imports", "execute", "correct", "tests", "executes", "accurate", "fast", "model_error"]
STAGES: tuple[Stage, ...] = get_args(Stage)

# The reasons an attempt did not run to an output in its contract's shape: what a
# debugging step repairs (debug-and-refine), as against the results judged wrong,
# slow or incomplete (JudgedFailure), which a refinement step works on.
ExecutionFailure = Literal[
    # parse
    "empty_reply",
    "syntax_error",
    "missing_function",
    # imports
    "disallowed_import",
    # execute
    "load_error",
    "runtime_error",
    "timeout",
    "crashed",
    # PDE cases' executes stage: an output that breaks the contract
    "not_a_dict",
    "missing_field",
    "wrong_type",
    "wrong_shape",
    "wrong_dtype",
    "non_finite",
]
JudgedFailure = Literal[
    # correct
    "wrong_output",
    # tests
    "missing_test",
    "fails_on_reference",
    "failure_not_detected",
    # PDE cases: accurate, fast
    "too_inaccurate",
    "too_slow",
    "not_timed",
    # an episode without a scored attempt
    "model_error",
]
FailureReason = Literal[ExecutionFailure, JudgedFailure]
FAILURE_REASONS: tuple[FailureReason, ...] = get_args(FailureReason)
EXECUTION_FAILURES: frozenset[FailureReason] = frozenset(get_args(ExecutionFailure))

InputStatus = Literal["match", "mismatch", "error", "timeout", "crashed", "not_run"]
EpisodeStatus = Literal["done", "error"]

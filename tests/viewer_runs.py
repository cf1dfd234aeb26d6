"""A small mixed run for the viewer tests: a feedback loop of three attempts,
single-shot code and test episodes, a failed model call and PDE attempts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from run_builders import (
    TASK_1D,
    TASK_2D,
    TASK_3D,
    attempt,
    case_outcome,
    episode,
    function_outcome,
    make_run,
    suite_outcome,
)

from fembench_agents.runs.log import AttemptRecord, EpisodeRecord

LOOP_CODES = (
    "def f(x):\n    return x\n",
    "def f(x):\n    # scale it\n    return 2 * x\n",
    "def f(x):\n    # scale it\n    return 2.0 * x\n",
)


def viewer_records() -> list[AttemptRecord | EpisodeRecord]:
    out: list[AttemptRecord | EpisodeRecord] = []
    loop = episode("loop", TASK_3D, 0, True, attempts=3)
    wrong = [("mismatch", 0.5)]
    for i, code in enumerate(LOOP_CODES):  # attempt indices count from 0, as a session records them
        passed = i == 2
        out.append(
            attempt(loop, i, function_outcome(TASK_3D, [("match", None)] if passed else wrong, passed), code=code)
        )
    out.append(loop)
    for task, passed in ((TASK_1D, True), (TASK_2D, False), (TASK_3D, False)):
        ep = episode("single", task, 0, passed)
        out += [attempt(ep, 0, function_outcome(task, [("match", None)] if passed else [("error", None)], passed)), ep]
    suite = episode("single", TASK_1D, 0, False, track="tests", score=0.5, stage=("tests", "failure_not_detected"))
    out += [attempt(suite, 0, suite_outcome(TASK_1D, [(True, {"f1": True}), (False, {"f1": False})])), suite]
    failed_call = episode("single", TASK_2D, 0, False, track="tests", stage=("model_error", "model_error"))
    out += [attempt(failed_call, 0, None), failed_call]
    case = episode("single", "poisson_1", 0, False, track="numpy-scipy", stage=("accurate", "too_inaccurate"))
    out += [attempt(case, 0, case_outcome("poisson_1", 2e-3, 0.5)), case]
    return out


def viewer_run(directory: Path) -> Path:
    return make_run(directory, "mixed", viewer_records())


def read_js_call(path: Path, function: str) -> list[Any]:
    """The arguments of the one `function(...)` call a data file holds."""
    text = path.read_text(encoding="utf-8").strip()
    assert text.startswith(function + "(") and text.endswith(");")
    return json.loads("[" + text[len(function) + 1 : -2] + "]")


def index_data(site: Path) -> dict[str, Any]:
    """What a site's data/index.js hands the page."""
    (data,) = read_js_call(site / "data" / "index.js", "fembenchIndex")
    return dict(data)

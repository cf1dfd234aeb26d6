"""A score does not depend on evaluation order, on what was scored before, on
concurrency, or on an unseeded random number."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import (
    CORRECT_SCALE,
    FEM_1D,
    GOOD_SCALE_TESTS,
    scale_source,
    strip_timings,
    write_module,
)

from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_task
from fembench_agents.suite.model import Task
from fembench_agents.suite.validation import ideal_answer

PERMISSIVE_ID = "permissive_scale_CC0_H0_T0"

# (id, task key, track, text)
ATTEMPTS: list[tuple[str, str, str, str]] = [
    ("correct", "scale", "code", CORRECT_SCALE),
    ("wrong_value", "scale", "code", CORRECT_SCALE.replace("return factor *", "return 1.5 + factor *")),
    ("raises", "scale", "code", "def scale_vector(x, factor):\n    raise ZeroDivisionError('no')\n"),
    ("good_suite", "scale", "tests", GOOD_SCALE_TESTS),
    ("partial_suite", "scale", "tests", GOOD_SCALE_TESTS.split("def test_negative")[0]),
    (
        "unseeded_random",
        "scale",
        "code",
        CORRECT_SCALE.replace(
            "return factor *",
            "return (np.random.rand() < 0.5) * 1e-3 + np.random.default_rng().random() * 0 + factor *",
        ),
    ),
    (
        "random_in_suite",
        "scale",
        "tests",
        GOOD_SCALE_TESTS.replace(
            "assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])",
            "v = np.random.rand(4)\n    assert np.allclose(fcn(v, 3.0), 3.0 * v)\n    assert np.random.rand() < 0.9",
        ),
    ),
    (
        "sabotage_builtins",
        "permissive",
        "code",
        """
import builtins
import numpy as np
def scale_vector(x, factor):
    builtins.abs = lambda v: 0
    np.allclose = lambda *a, **k: True
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float)
""",
    ),
    (
        "scratch_state",
        "permissive",
        "code",
        """
import os
import numpy as np
CALLS = []
def scale_vector(x, factor):
    if not CALLS and os.listdir("."):
        return np.zeros(1)  # something an earlier job left in this scratch directory
    CALLS.append(1)
    open(f"flag{len(CALLS)}", "w").close()
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float)
""",
    ),
    (
        "writes_outside",
        "permissive",
        "code",
        """
import os
import numpy as np
def scale_vector(x, factor):
    try:
        open("/tmp/../order_escape.txt", "w").write("x")
        return factor * np.asarray(x, dtype=float)
    except OSError as exc:
        raise PermissionError("refused") from exc
""",
    ),
    ("mesh_ideal", "mesh", "code", "<ideal>"),
    ("mesh_own_tests", "mesh", "tests", "<own tests>"),
    (
        "mesh_wrong",
        "mesh",
        "code",
        "import numpy as np\ndef generate_uniform_mesh_1d(x_min, x_max, num_elements):\n"
        "    n = np.linspace(x_min, x_max, num_elements)\n"
        "    return n, np.array([[e, e + 1] for e in range(num_elements)])\n",
    ),
]


@pytest.fixture(scope="module")
def tasks(sandbox: Sandbox, scale_task: Task, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Task]:
    d = tmp_path_factory.mktemp("order_tasks")
    permissive = write_module(
        d, f"{PERMISSIVE_ID}.py", scale_source(PERMISSIVE_ID, imports=("import os", "import builtins"))
    )
    return {
        "scale": scale_task,
        "permissive": load_task(permissive, sandbox),
        "mesh": load_task(FEM_1D / "FEM_1D_uniform_mesh_CC0_H0_T0.py", sandbox),
    }


def run(evaluator: Evaluator, tasks: dict[str, Task], attempt: tuple[str, str, str, str]) -> dict:
    _, key, track, text = attempt
    task = tasks[key]
    if text == "<ideal>":
        text = ideal_answer(task)
    elif text == "<own tests>":
        text = "\n\n".join(t.source for t in task.tests)
    outcome = evaluator.score(task, "code", text) if track == "code" else evaluator.score(task, "tests", text)
    return strip_timings(outcome.model_dump())


def score_in_order(evaluator: Evaluator, tasks: dict[str, Task], seed: int, concurrent: bool) -> dict[str, dict]:
    order = list(ATTEMPTS)
    random.Random(seed).shuffle(order)
    if concurrent:
        with ThreadPoolExecutor(max_workers=4) as pool:
            dumps = list(pool.map(lambda a: run(evaluator, tasks, a), order))
    else:
        dumps = [run(evaluator, tasks, a) for a in order]
    return {a[0]: d for a, d in zip(order, dumps, strict=True)}


def test_two_shuffled_orders_give_identical_outcomes(
    evaluator: Evaluator, sandbox: Sandbox, tasks: dict[str, Task]
) -> None:
    first = score_in_order(evaluator, tasks, seed=1, concurrent=False)
    fresh = Evaluator(sandbox)  # no cached reference outputs: the reference runs in a different order too
    try:
        second = score_in_order(fresh, tasks, seed=2, concurrent=True)
    finally:
        fresh.close()
    order1 = [a[0] for a in random.Random(1).sample(ATTEMPTS, len(ATTEMPTS))]
    assert order1 != [a[0] for a in random.Random(2).sample(ATTEMPTS, len(ATTEMPTS))]
    assert first.keys() == second.keys() == {a[0] for a in ATTEMPTS}
    for name in first:
        assert first[name] == second[name], name
    # The set is mixed: some pass, some fail, and each failure is the expected one.
    passed = {name for name, d in first.items() if d["passed"]}
    assert {"correct", "good_suite", "sabotage_builtins", "scratch_state", "mesh_ideal", "mesh_own_tests"} <= passed
    assert not passed & {"wrong_value", "raises", "partial_suite", "writes_outside", "mesh_wrong"}
    assert first["writes_outside"]["stages"][-1]["reason"] == "runtime_error"
    assert not Path("/order_escape.txt").exists()


def test_repeating_an_attempt_gives_the_same_outcome(evaluator: Evaluator, tasks: dict[str, Task]) -> None:
    unseeded = next(a for a in ATTEMPTS if a[0] == "unseeded_random")
    assert run(evaluator, tasks, unseeded) == run(evaluator, tasks, unseeded) == run(evaluator, tasks, unseeded)

"""Shared fixtures: one sandbox and one evaluator for the session, and small task
modules written into temporary directories (the real suite is in tasks/)."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_task, load_tasks
from fembench_agents.suite.model import Task

ROOT = Path(__file__).resolve().parents[1]
FEM_1D = ROOT / "tasks" / "fem_1d"

# Attack code shared by the hostile tests: the frames of the running process, found
# without importing anything.
FRAME_STACK = """
def _stack():
    try:
        raise RuntimeError
    except RuntimeError as exc:
        frame = exc.__traceback__.tb_frame
    while frame is not None:
        yield frame
        frame = frame.f_back
"""

# A small task in the published format. `{extra_imports}`, `{required_imports}`,
# `{inputs}` and `{extensions}` are filled in by `scale_source`.
SCALE_TEMPLATE = '''
import numpy as np
import pytest
{extra_imports}


def scale_vector(x, factor):
    """Return factor * x as a float array.

    Raises
    ------
    ValueError
        If factor is negative.
    """
    x = np.asarray(x, dtype=float)
    if factor < 0:
        raise ValueError("factor must be non-negative")
    return factor * x


def test_scales_values(fcn):
    """Check that every entry is multiplied by the factor."""
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])


def test_negative_factor_raises(fcn):
    """Check that a negative factor raises ValueError."""
    with pytest.raises(ValueError):
        fcn(np.array([1.0]), -1.0)


def fail_adds(x, factor):
    """Adds the factor instead of multiplying by it."""
    if factor < 0:
        raise ValueError("negative")
    return np.asarray(x, dtype=float) + factor


def fail_no_check(x, factor):
    """Never checks the sign of the factor."""
    return factor * np.asarray(x, dtype=float)


def task_info():
    return {{
        "task_id": "{task_id}",
        "task_short_description": "scale a vector by a non-negative factor",
        "created_date": "2026-01-01",
        "created_by": "tests",
        "main_fcn": scale_vector,
        "required_imports": {required_imports},
        "fcn_dependencies": [],
        "reference_verification_inputs": {inputs},
        "test_cases": [
            {{"test_code": test_scales_values, "expected_failures": [fail_adds]}},
            {{"test_code": test_negative_factor_raises, "expected_failures": [fail_no_check]}},
        ],{extensions}
    }}
'''

SCALE_INPUTS = """[
            [np.array([1.0, 2.0, 3.0]), 2.0],
            [np.array([[1.0, -1.0], [0.5, 4.0]]), 0.5],
            [np.array([1.0]), -1.0],
        ]"""

CORRECT_SCALE = """
import numpy as np

def scale_vector(x, factor):
    if factor < 0:
        raise ValueError("negative factor")
    return factor * np.asarray(x, dtype=float)
"""

GOOD_SCALE_TESTS = """
import numpy as np
import pytest

def test_scales_values(fcn):
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])

def test_negative_factor_raises(fcn):
    with pytest.raises(ValueError):
        fcn(np.array([1.0]), -1.0)
"""


def scale_source(
    task_id: str = "scale_vector_CC0_H0_T0",
    *,
    imports: tuple[str, ...] = (),
    inputs: str = SCALE_INPUTS,
    extensions: dict[str, str] | None = None,
) -> str:
    """The scale task's module; `imports` are extra import lines the solver may use too."""
    required = ["import numpy as np", "import pytest", *imports]
    ext = "".join(f"\n        {k!r}: {v}," for k, v in (extensions or {}).items())
    return SCALE_TEMPLATE.format(
        extra_imports="\n".join(imports),
        task_id=task_id,
        required_imports=repr(required),
        inputs=inputs,
        extensions=ext,
    )


# Smallest eigenpair of a symmetric matrix: the eigenvector is defined only up
# to sign (normalised) or up to scale (`{vector}` picks which).
EIGEN_TEMPLATE = '''
import numpy as np


def smallest_mode(K):
    """Smallest eigenvalue of the symmetric matrix K and its eigenvector."""
    w, v = np.linalg.eigh(K)
    vec = v[:, 0]
    return float(w[0]), {vector}


def test_eigenvalue(fcn):
    """The eigenvalue of a diagonal matrix is its smallest entry."""
    lam, _ = fcn(np.diag([3.0, 1.0, 2.0]))
    assert np.isclose(lam, 1.0)


def fail_largest(K):
    w, v = np.linalg.eigh(K)
    return float(w[-1]), v[:, -1]


def task_info():
    return {{
        "task_id": "{task_id}",
        "task_short_description": "smallest eigenpair",
        "created_date": "2026-01-01",
        "created_by": "tests",
        "main_fcn": smallest_mode,
        "required_imports": ["import numpy as np"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            [np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]])],
            [np.array([[4.0, 1.0, 0.0, 0.0], [1.0, 3.0, 1.0, 0.0], [0.0, 1.0, 2.0, 1.0], [0.0, 0.0, 1.0, 5.0]])],
        ],
        "test_cases": [{{"test_code": test_eigenvalue, "expected_failures": [fail_largest]}}],{extensions}
    }}
'''


def eigen_source(task_id: str, invariance: str | None, *, unnormalised: bool = False) -> str:
    vector = "vec / vec[np.argmax(np.abs(vec))] * 2.5" if unnormalised else "vec"
    ext = f'\n        "comparison": {{"rules": [{{"path": [1], "invariance": "{invariance}"}}]}},' if invariance else ""
    return EIGEN_TEMPLATE.format(vector=vector, task_id=task_id, extensions=ext)


def write_module(directory: Path, name: str, source: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(source))
    return path


# ----------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True, scope="session")
def no_result_cached_before_the_mutant() -> None:
    """mutmut runs each mutant's tests in a fork of a process that ran the same tests on the
    unmutated code first: a result the package cached then (`functools` caches of its modules,
    e.g. `references.implementation_source`) would stand in for the mutant's own and hide it."""
    if not os.environ.get("MUTANT_UNDER_TEST"):
        return
    for name, module in list(sys.modules.items()):
        if name.startswith("fembench_agents") and module is not None:
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=2) as sb:
        yield sb


@pytest.fixture(scope="session")
def evaluator(sandbox: Sandbox) -> Iterator[Evaluator]:
    ev = Evaluator(sandbox)
    yield ev
    ev.close()


@pytest.fixture(scope="session")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of small task modules, loaded once per session."""
    d = tmp_path_factory.mktemp("tasks")
    write_module(d, "scale_vector_CC0_H0_T0.py", scale_source())
    write_module(
        d,
        "slow_scale_CC0_H0_T0.py",  # one input and 1 s: a timeout costs 1 s + the job overhead
        scale_source("slow_scale_CC0_H0_T0", inputs="[[np.array([1.0, 2.0]), 2.0]]", extensions={"time_limit": "1"}),
    )
    for task_id, invariance, unnormalised in (
        ("mode_sign_CC1_H0_T0", "sign", False),
        ("mode_plain_CC1_H0_T0", None, False),
        ("mode_scale_CC1_H0_T0", "scale", True),
    ):
        write_module(d, f"{task_id}.py", eigen_source(task_id, invariance, unnormalised=unnormalised))
    return d


@pytest.fixture(scope="session")
def load(sandbox: Sandbox, task_dir: Path) -> Callable[[str], Task]:
    """Loads (once) a task of `task_dir` by id."""
    cache: dict[str, Task] = {}

    def get(task_id: str) -> Task:
        if task_id not in cache:
            cache[task_id] = load_task(task_dir / f"{task_id}.py", sandbox)
        return cache[task_id]

    return get


@pytest.fixture(scope="session")
def scale_task(load: Callable[[str], Task]) -> Task:
    return load("scale_vector_CC0_H0_T0")


def strip_timings(value: Any) -> Any:
    """An outcome's model_dump without wall-clock fields."""
    if isinstance(value, dict):
        return {k: strip_timings(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, (list, tuple)):
        return [strip_timings(v) for v in value]
    return value


@pytest.fixture(scope="module")
def fem_tasks(sandbox: Sandbox) -> list[Task]:
    """The FEM 1D and 2D tasks (the optimizer's tests split them)."""
    return load_tasks(ROOT / "tasks" / "fem_1d", sandbox) + load_tasks(ROOT / "tasks" / "fem_2d", sandbox)

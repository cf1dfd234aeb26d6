"""Two small runs for the side-by-side comparison's tests: agent "loop" in run
alpha and agent "single" in run beta, one model, on two function tasks with
two repeats and one, two PDE cases, and a task only "single" ran.

Arm A is loop and arm B single (arms sort by model, then agent). By task:
- FEM_1D, two repeats: loop passes both (repeat 0 on its second attempt),
  single passes repeat 0 only, so loop solved it and single did not (A only);
  single's failed reply holds HTML and a closing script tag.
- FEM_2D: both fail (neither). MSA_3D: single only (not run by every arm).
- poisson_1: only single passes (B only). poisson_2: both pass, with the same code.
"""

from __future__ import annotations

from pathlib import Path

from run_builders import TASK_1D, TASK_2D, TASK_3D, attempt, case_outcome, episode, function_outcome, make_run

from fembench_agents.runs.log import AttemptRecord, EpisodeRecord

IDENTITY = "def f(x):\n    return x\n"
DOUBLE = "def f(x):\n    return 2 * x\n"
SUM = "def f(x):\n    return x + x\n"
SOLVER = "import numpy as np\n\nu = np.linalg.solve(A, b)\n"
ROUGH = "import numpy as np\n\nu = np.zeros(3)\n"
HOSTILE = (
    'Broken.</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><b>bold</b>\n'
    f"```python\n{IDENTITY}```\n"
)
WRONG = [("mismatch", 0.5)]
RIGHT = [("match", None)]


def _function(
    agent: str, task: str, repeat: int, codes: list[str], passed: bool
) -> list[AttemptRecord | EpisodeRecord]:
    """An episode whose last attempt passes when `passed`, every earlier one fails."""
    ep = episode(agent, task, repeat, passed, attempts=len(codes))
    out: list[AttemptRecord | EpisodeRecord] = []
    for i, code in enumerate(codes):
        ok = passed and i == len(codes) - 1
        out.append(attempt(ep, i, function_outcome(task, RIGHT if ok else WRONG, ok), code=code))
    return [*out, ep]


def _case(agent: str, case: str, code: str, error: float) -> list[AttemptRecord | EpisodeRecord]:
    passed = error <= 1e-3
    ep = episode(agent, case, 0, passed, track="numpy-scipy", stage=None if passed else ("accurate", "too_inaccurate"))
    return [attempt(ep, 0, case_outcome(case, error, 0.5), code=code), ep]


def alpha_records() -> list[AttemptRecord | EpisodeRecord]:
    return [
        *_function("loop", TASK_1D, 0, [IDENTITY, DOUBLE], True),
        *_function("loop", TASK_1D, 1, [DOUBLE], True),
        *_function("loop", TASK_2D, 0, [IDENTITY], False),
        *_case("loop", "poisson_1", ROUGH, 0.5),
        *_case("loop", "poisson_2", SOLVER, 2e-4),
    ]


def beta_records() -> list[AttemptRecord | EpisodeRecord]:
    hostile = _function("single", TASK_1D, 1, [IDENTITY], False)
    first = hostile[0]
    assert isinstance(first, AttemptRecord)
    hostile[0] = first.model_copy(update={"reply": HOSTILE})
    return [
        *_function("single", TASK_1D, 0, [SUM], True),
        *hostile,
        *_function("single", TASK_2D, 0, [DOUBLE], False),
        *_function("single", TASK_3D, 0, [IDENTITY], True),
        *_case("single", "poisson_1", SOLVER, 2e-4),
        *_case("single", "poisson_2", SOLVER, 3e-4),
    ]


def compare_runs(root: Path) -> list[Path]:
    return [make_run(root / "alpha", "alpha", alpha_records()), make_run(root / "beta", "beta", beta_records())]

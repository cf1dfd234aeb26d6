"""The mutation check: mutant generation, judging mutants in the sandbox, and
the kill rate of the fem_1d suite's verification inputs."""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

import pytest

from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_task, load_tasks
from fembench_agents.suite.mutants import generate_mutants, mutated_functions
from fembench_agents.suite.mutation import SuiteMutationReport, TaskMutationResult, main, mutation_report
from fembench_agents.suite.scoring import FunctionScorer

ROOT = Path(__file__).resolve().parents[1]

# Sites per function (see the comments): scale 2, twice 1, main_fcn 11.
TINY = '''
import numpy as np


def scale(v):
    return twice(v) * 2.0  # operator *, constant 2.0


def twice(v):
    return v + v  # operator +


def unused(v):
    return v - 1.0  # not used by main_fcn: never mutated


def main_fcn(A, x):
    """A small function with every kind of mutation site."""
    y = np.transpose(A) @ x  # transpose
    total = scale(y[0]) + A.T[0, 1] - 3  # index y[0]; index 0 and 1; .T; operators + and -; constant 3
    total += A[-1, 0]  # operator +=; index -1 and 0
    return total


def test_main(fcn):
    """Runs."""
    assert fcn(np.eye(2), np.ones(2)) is not None


def fail_main(A, x):
    return A[0, 0] * 2.0 + 1


def task_info():
    return {
        "task_id": "tiny_main_fcn",
        "task_short_description": "tiny",
        "created_date": "2026-01-01",
        "created_by": "tests",
        "main_fcn": main_fcn,
        "required_imports": ["import numpy as np"],
        "fcn_dependencies": [scale],
        "reference_verification_inputs": INPUTS,
        "test_cases": [{"test_code": test_main, "expected_failures": [fail_main]}],
    }
'''

WEAK = "[[np.zeros((2, 2)), np.zeros(2)]]"
STRONG = "[[np.array([[1.0, 2.0], [3.0, 5.0]]), np.array([1.0, -2.0])], [np.array([[0.5, -1.5], [4.0, 7.0]]), np.array([3.0, 0.25])]]"
EXCLUDE = ("test_main", "fail_main", "task_info")


def tiny_source(inputs: str) -> str:
    return TINY.replace("INPUTS", inputs)


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=2) as sb:
        yield sb


@pytest.fixture(scope="module")
def evaluator(sandbox):
    ev = FunctionScorer(sandbox)
    yield ev
    ev.close()


def write_task(tmp_path: Path, source: str, name: str = "tiny_task.py") -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


# ----- generation -------------------------------------------------------------------


def test_mutated_functions_follow_calls_and_skip_tests_failures_task_info():
    assert mutated_functions(tiny_source(STRONG), "main_fcn", EXCLUDE) == ["scale", "twice", "main_fcn"]


def test_exact_mutant_count_for_known_functions():
    mutants = generate_mutants(tiny_source(STRONG), "main_fcn", EXCLUDE)
    per_function = {f: sum(m.function == f for m in mutants) for f in ("scale", "twice", "main_fcn")}
    assert per_function == {"scale": 2, "twice": 1, "main_fcn": 11}
    assert len(mutants) == 14
    main_ops = sorted(m.operator for m in mutants if m.function == "main_fcn")
    assert main_ops == sorted(
        [
            "transpose",
            "transpose",
            "index",
            "index",
            "index",
            "index",
            "index",
            "operator",
            "operator",
            "operator",
            "constant",
        ]
    )


def test_each_mutant_is_valid_python_with_one_function_changed():
    source = tiny_source(STRONG)
    original = {n.name: ast.unparse(n) for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}
    mutants = generate_mutants(source, "main_fcn", EXCLUDE)
    assert {m.operator for m in mutants} == {"constant", "operator", "index", "transpose"}
    for m in mutants:
        tree = ast.parse(m.source)  # valid Python
        compile(m.source, "<mutant>", "exec")
        now = {n.name: ast.unparse(n) for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert now.keys() == original.keys()
        changed = [name for name in now if now[name] != original[name]]
        assert changed == [m.function], m.description
        assert m.line > 0 and m.source.splitlines()[0] == source.splitlines()[0]
    assert len({m.source for m in mutants}) == len(mutants)


def test_each_operator_rewrites_as_specified():
    def mutated_bodies(code: str) -> set[str]:
        src = "import numpy as np\n\n" + textwrap.dedent(code)
        name = next(n.name for n in ast.parse(src).body if isinstance(n, ast.FunctionDef))
        return {ast.unparse(ast.parse(m.source).body[-1].body[-1]) for m in generate_mutants(src, name)}

    assert mutated_bodies("def f(a):\n    return a + 0\n") == {"return a - 0", "return a + 1"}
    assert mutated_bodies("def f(a):\n    return a * 0.5 / 2\n") == {
        "return a / 0.5 / 2",
        "return a * 0.5 * 2",
        "return a * 0.75 / 2",
        "return a * 0.5 / 3",
    }
    assert mutated_bodies("def f(a):\n    return 0.0\n") == {"return 1.0"}
    # constant subscripts shift (alone, in tuples, negative); index integers are not also 'constants'
    assert mutated_bodies("def f(K, i):\n    return K[i, 3]\n") == {"return K[i, 4]"}
    assert mutated_bodies("def f(x):\n    return x[-1]\n") == {"return x[0]"}
    assert mutated_bodies("def f(x):\n    return x[2]\n") == {"return x[3]"}
    assert mutated_bodies("def f(x):\n    return x[1:]\n") == {"return x[2:]"}
    assert mutated_bodies("def f(a, b):\n    return a.T @ b\n") == {"return a @ b"}
    assert mutated_bodies("def f(a, b):\n    return np.transpose(a) @ b.transpose()\n") == {
        "return a @ b.transpose()",
        "return np.transpose(a) @ b",
    }
    assert mutated_bodies("def f(a):\n    return np.transpose(a, (1, 0))\n") == {
        "return np.transpose(a, (2, 0))",
        "return np.transpose(a, (1, 1))",
    }
    src = "def f(a, b):\n    a *= b\n    return a\n"
    (m,) = generate_mutants(src, "f")
    assert "a /= b" in m.source and m.operator == "operator" and m.line == 2
    # booleans, strings and MatMult are left alone
    assert generate_mutants("def f(a, b):\n    return (a @ b, True, 'x')\n", "f") == []


def test_rest_of_module_is_unchanged():
    source = tiny_source(STRONG)
    for m in generate_mutants(source, "main_fcn", EXCLUDE):
        assert m.source.endswith(source[source.index("\n\ndef test_main") :])
        assert m.source.count("def unused(v):\n    return v - 1.0  # not used") == 1


# ----- judging in the sandbox ---------------------------------------------------------


def test_weak_inputs_leave_survivors(tmp_path, sandbox, evaluator):
    task = load_task(write_task(tmp_path, tiny_source(WEAK)), sandbox)
    (result,) = mutation_report([task], evaluator).tasks
    assert result.error is None and result.total == 14
    assert 0 < result.killed < result.total
    described = {(s.function, s.description) for s in result.survivors}
    assert ("main_fcn", "transpose dropped: np.transpose(A) -> A") in described
    assert any(f == "scale" for f, _ in described)
    assert result.kill_rate < 0.9


def test_strong_inputs_kill_all(tmp_path, sandbox, evaluator):
    task = load_task(write_task(tmp_path, tiny_source(STRONG)), sandbox)
    (result,) = mutation_report([task], evaluator).tasks
    assert result.error is None
    assert (result.total, result.killed, result.survivors) == (14, 14, ())
    assert result.kill_rate == 1.0
    assert sum(result.killed_by.values()) == 14
    assert result.killed_by == {"error": 1, "mismatch": 13}  # the shifted A.T[0, 2] raises IndexError


LOOP = """
def count_to(n):
    if n < 0:
        raise ValueError("n must be non-negative")
    i = 0
    while i < n:
        i += 1
    return i


def test_count(fcn):
    assert fcn(3) == 3


def fail_count(n):
    return n + 1


def task_info():
    return {
        "task_id": "count_to", "task_short_description": "loop", "created_date": "2026-01-01",
        "created_by": "tests", "main_fcn": count_to, "required_imports": [], "fcn_dependencies": [],
        "reference_verification_inputs": INPUTS,
        "test_cases": [{"test_code": test_count, "expected_failures": [fail_count]}],
    }
"""


def test_timeouts_and_exceptions_count_as_kills(tmp_path, sandbox, evaluator):
    # `i += 1` -> `i -= 1` never ends: killed by the per-call time limit.
    # `n < 0` -> `n < 1` raises on n=0 where the reference returns.
    path = write_task(tmp_path, LOOP.replace("INPUTS", "[[3], [0], [-2]]"))
    task = load_task(path, sandbox)
    (result,) = mutation_report([task], evaluator, per_call_seconds=0.5).tasks
    assert result.total == 4 and result.killed == 4
    assert result.killed_by == {"error": 1, "mismatch": 2, "timeout": 1}
    # with only the raising input, every mutant still raises ValueError: all survive
    weak = load_task(write_task(tmp_path, LOOP.replace("INPUTS", "[[-2]]"), "weak_loop.py"), sandbox)
    (result,) = mutation_report([weak], evaluator, per_call_seconds=0.5).tasks
    assert result.total == 4 and result.killed == 0 and len(result.survivors) == 4


OVER = """
def doubled_second(v, limit):
    total = v[1] + v[1]
    if total > limit:
        raise ValueError("over the limit")
    return total


def test_doubled(fcn):
    assert fcn([1.0, 2.0], 10.0) == 4.0


def fail_doubled(v, limit):
    return v[1] * 3


def task_info():
    return {
        "task_id": "doubled_second", "task_short_description": "raise", "created_date": "2026-01-01",
        "created_by": "tests", "main_fcn": doubled_second, "required_imports": [], "fcn_dependencies": [],
        "reference_verification_inputs": [[[1.0, 2.0], 0.5]],
        "test_cases": [{"test_code": test_doubled, "expected_failures": [fail_doubled]}],
    }
"""


def test_a_mutant_killed_on_an_input_the_reference_raises_on_says_how(tmp_path, sandbox, evaluator):
    # on the only input the reference raises ValueError: each shifted v[1] -> v[2] raises IndexError instead,
    # `+` -> `-` returns 0.0 without raising
    task = load_task(write_task(tmp_path, OVER), sandbox)
    (result,) = mutation_report([task], evaluator).tasks
    assert (result.total, result.killed) == (3, 3)
    assert result.killed_by == {"no_exception": 1, "wrong_exception": 2}


WAIT = """
import time


def waited(seconds):
    time.sleep(seconds)
    return seconds * 2.0


def test_waited(fcn):
    assert fcn(0.0) == 0.0


def fail_waited(seconds):
    return seconds


def task_info():
    return {
        "task_id": "waited", "task_short_description": "sleeps", "created_date": "2026-01-01",
        "created_by": "tests", "main_fcn": waited, "required_imports": ["import time"], "fcn_dependencies": [],
        "reference_verification_inputs": INPUTS,
        "test_cases": [{"test_code": test_waited, "expected_failures": [fail_waited]}],
    }
"""


def test_the_mutants_per_call_limit_is_twenty_times_the_slowest_reference_call_and_at_least_a_second(
    tmp_path, sandbox, evaluator
):
    slow = load_task(write_task(tmp_path, WAIT.replace("INPUTS", "[[0.0], [0.2], [0.01]]"), "slow.py"), sandbox)
    fast = load_task(write_task(tmp_path, WAIT.replace("INPUTS", "[[0.0], [0.01]]"), "fast.py"), sandbox)
    slow_result, fast_result = mutation_report([slow, fast], evaluator).tasks
    assert 20 * 0.2 <= slow_result.per_call_seconds <= evaluator.config.call_seconds
    assert fast_result.per_call_seconds == 1.0  # 20 x 0.01 s is less than the floor
    assert (slow_result.error, slow_result.total, slow_result.killed) == (None, 2, 2)


def test_a_mutants_job_has_the_per_call_limit_for_each_of_its_inputs(tmp_path, sandbox, evaluator):
    """Six calls of 0.8 s under a 1 s per-call limit: the job may take 6 s (and 3 s to start),
    so each mutant is judged by its values, not timed out."""
    inputs = "[" + ", ".join(f"[{0.8 - i / 100}]" for i in range(6)) + "]"
    task = load_task(write_task(tmp_path, WAIT.replace("INPUTS", inputs), "six_waits.py"), sandbox)
    (result,) = mutation_report([task], evaluator, per_call_seconds=1.0).tasks
    assert (result.per_call_seconds, result.total, result.killed) == (1.0, 2, 2)
    assert result.killed_by == {"mismatch": 2}


def test_fem_1d_suite_kills_at_least_90_percent(sandbox, evaluator):
    tasks = load_tasks(ROOT / "tasks" / "fem_1d", sandbox)
    report = mutation_report(tasks, evaluator)
    assert len(report.tasks) == len(tasks) >= 3
    assert all(t.error is None and t.total > 0 for t in report.tasks)
    assert report.kill_rate >= 0.9, [(t.task_id, t.killed, t.total, t.survivors) for t in report.tasks]


# ----- script -------------------------------------------------------------------------


def test_script_reports_json_and_exit_code(tmp_path, capsys):
    folder = tmp_path / "suite"
    folder.mkdir()
    write_task(folder, tiny_source(WEAK), "weak_task.py")
    write_task(folder, "def broken(:\n", "broken_task.py")
    out = tmp_path / "report.json"
    assert main([str(folder), "--json", str(out), "--min-rate", "0.9", "--workers", "2"]) == 1
    data = json.loads(out.read_text())
    assert data["total"] == 14 and 0 < data["killed"] < 14
    assert [s["path"].endswith("broken_task.py") for s in data["skipped"]] == [True]
    assert data["tasks"][0]["task_id"] == "tiny_main_fcn" and data["tasks"][0]["survivors"]
    assert main([str(folder), "--min-rate", "0.0", "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    assert "tiny_main_fcn" in printed and "Overall:" in printed


CRASH = """
import os


def width():
    return 2


PAIR = [1.0, 2.0][width() - 1]


def main_fcn(x):
    if x < 0:
        os._exit(0)
    return x * width() + PAIR


def test_main(fcn):
    assert fcn(1.0) == 4.0


def fail_main(x):
    return x


def task_info():
    return {
        "task_id": "crash_main", "task_short_description": "exits", "created_date": "2026-01-01",
        "created_by": "tests", "main_fcn": main_fcn, "required_imports": ["import os"], "fcn_dependencies": [width],
        "reference_verification_inputs": [[1.0], [0.0]],
        "test_cases": [{"test_code": test_main, "expected_failures": [fail_main]}],
    }
"""

UNSTABLE = """
import os


def drawn(x):
    if x > 1.0:
        os._exit(3)
    return x + 0.5


def test_drawn(fcn):
    assert fcn(0.0) < 1.0


def fail_drawn(x):
    return x + 2.0


def task_info():
    return {
        "task_id": "unstable_draw", "task_short_description": "exits", "created_date": "2026-01-01",
        "created_by": "tests", "main_fcn": drawn, "required_imports": ["import os"], "fcn_dependencies": [],
        "reference_verification_inputs": [[0.0], [2.0]],
        "test_cases": [{"test_code": test_drawn, "expected_failures": [fail_drawn]}],
    }
"""


def test_a_mutant_that_ends_its_process_or_breaks_loading_its_module_says_how(tmp_path, sandbox, evaluator):
    """`x < 0` -> `x < 1` exits on x = 0 before returning; `return 2` -> `return 3` in `width` makes
    the module's own `PAIR` line raise as it loads; `*` and `+` swapped give other values. The
    exit code in `os._exit(0)` is never reached: the only survivor."""
    task = load_task(write_task(tmp_path, CRASH), sandbox)
    (result,) = mutation_report([task], evaluator).tasks
    assert (result.functions, result.total, result.killed) == (("width", "main_fcn"), 5, 4)
    assert list(result.killed_by.items()) == [("crashed", 1), ("load_error", 1), ("mismatch", 2)]
    assert result.by_operator == {"constant": (2, 3), "operator": (2, 2)}
    assert [(s.function, s.line, s.description) for s in result.survivors] == [
        ("main_fcn", 14, "constant 0 -> 1 (column 18)")
    ]


def test_a_tasks_own_time_limit_caps_the_mutants_per_call_limit(tmp_path, sandbox, evaluator):
    source = WAIT.replace("INPUTS", "[[0.0], [0.2]]").replace(
        '"fcn_dependencies": [],', '"fcn_dependencies": [], "time_limit": 2.0,'
    )
    task = load_task(write_task(tmp_path, source, "capped.py"), sandbox)
    assert task.time_limit == 2.0 < evaluator.config.call_seconds
    (result,) = mutation_report([task], evaluator).tasks
    assert (result.per_call_seconds, result.error, result.total, result.killed) == (2.0, None, 2, 2)


def test_an_empty_report_kills_everything_it_has() -> None:
    assert SuiteMutationReport(tasks=()).kill_rate == 1.0
    assert TaskMutationResult(task_id="t", path="t.py").kill_rate == 1.0


EXPECTED_PRINT = """\
                   Mutation check: verification inputs against simple mutants of the reference
┏━━━━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━━━┓
┃ task          ┃ mutants ┃ killed ┃ survived ┃ kill rate ┃ constant ┃ operator ┃ index ┃ transpose ┃ call limit ┃
┡━━━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━━━┩
│ crash_main    │       5 │      4 │        1 │     80.0% │      2/3 │      2/2 │     - │         - │       1.0s │
│ unstable_draw │       - │      - │        - │     error │        - │        - │     - │         - │          - │
└───────────────┴─────────┴────────┴──────────┴───────────┴──────────┴──────────┴───────┴───────────┴────────────┘
crash_main: 1 surviving mutants
{survivors}
unstable_draw: reference failure: unstable_draw: reference gave no result on input 1 (the process exited (code 3) before returning a result)
Overall: 4/5 mutants killed (80.0%) over 1 tasks, 1 task(s) could not be checked in Ns
"""


CUT_SHORT = """\
┏━━━━━━━━━━┳━━━━━━┳━━━━━━━━━━┓
┃ function ┃ line ┃ mutation ┃
┡━━━━━━━━━━╇━━━━━━╇━━━━━━━━━━┩
│ ...      │      │ 1 more   │
└──────────┴──────┴──────────┘"""
LISTED = """\
┏━━━━━━━━━━┳━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ function ┃ line ┃ mutation                    ┃
┡━━━━━━━━━━╇━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ main_fcn │ 14   │ constant 0 -> 1 (column 18) │
└──────────┴──────┴─────────────────────────────┘"""


def test_the_script_prints_each_task_its_survivors_and_what_could_not_be_checked(tmp_path, capsys):
    folder = tmp_path / "suite"
    folder.mkdir()
    write_task(folder, CRASH, "crash_task.py")
    write_task(folder, UNSTABLE, "unstable_task.py")
    # 4 of 5 killed: the overall rate is exactly 0.8, which passes --min-rate 0.8
    assert main([str(folder), "--min-rate", "0.8", "--workers", "2", "--max-survivors", "0"]) == 0
    assert _printed(capsys) == EXPECTED_PRINT.format(survivors=CUT_SHORT)
    assert main([str(folder), "--min-rate", "0.81", "--workers", "2"]) == 1
    assert _printed(capsys) == EXPECTED_PRINT.format(survivors=LISTED)


def _printed(capsys) -> str:
    """What the script printed, its lines without trailing blanks and its time as N."""
    text = "".join(line.rstrip() + "\n" for line in capsys.readouterr().out.splitlines())
    return re.sub(r" in \d+s\n$", " in Ns\n", text)

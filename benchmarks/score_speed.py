"""Isolated `score` of a folder of saved completions against an unsafe
in-process scorer on the same folder, in the same run (#13).

The corpus comes from our own suite: for every task and each of LABELS labels,
one code file and one test file (`{task_id}_code_{label}.py`,
`{task_id}_test_{label}.py`, the naming FEM-Bench publishes), each label a
different mix of correct, wrong (an expected failure as the answer), crashing,
slow, syntax-broken and empty answers, and of test files that are the task's
own tests, tests that accept anything, tests that reject everything and tests
that crash. The baseline does what FEM-Bench does: exec each attempt in the
scoring process, call it on the verification inputs, compare with the
reference computed once per task (our comparison rule), and call each test
function with the reference and each expected failure. Both sides run as
whole commands (interpreter start, task loading, scoring), alternating, best
of `--rounds`.

    .venv/bin/python benchmarks/score_speed.py [--rounds 3] [--labels 10] [--keep DIR] [--same-as OUT]

`--same-as` names the outcomes (`out` in a kept corpus folder) of an earlier
run, e.g. on another branch: every outcome of this run is compared with it,
all fields but timings.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "tasks"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


# ----- the corpus -----------------------------------------------------------
def _header(task: Any, *extra: str) -> str:
    return "\n".join(dict.fromkeys(("import numpy as np", *extra, *task.required_imports))) + "\n\n"


def _renamed(source: str, name: str, main: str) -> str:
    return source.replace(f"def {name}(", f"def {main}(", 1)


def code_variants(task: Any) -> list[tuple[str, str]]:
    main = task.main_name
    failures = [f for t in task.tests for f in t.expected_failures]
    slow = task.main_source.replace(":\n", ":\n    for _ in range(200000):\n        pass\n", 1)  # a few ms per call
    variants = [("correct", task.main_source), ("slow", slow)]
    variants += [(f"wrong{i}", _renamed(f.source, f.name, main)) for i, f in enumerate(failures[:2])]
    variants += [
        ("crashing", f"def {main}(*args, **kwargs):\n    raise RuntimeError('not implemented')\n"),
        ("syntax", f"def {main}(*args:\n    return 1\n"),
        ("none", f"def {main}(*args, **kwargs):\n    return None\n"),
    ]
    return [(kind, _header(task) + body) for kind, body in variants]


def test_variants(task: Any) -> list[tuple[str, str]]:
    own = "\n\n".join(t.source for t in task.tests)
    accepting = "\n\n".join(f"def {t.name}(fcn):\n    assert True\n" for t in task.tests)
    rejecting = "\n\n".join(f"def {t.name}(fcn):\n    assert fcn is None\n" for t in task.tests)
    crashing = "\n\n".join(f"def {t.name}(fcn):\n    fcn()\n" for t in task.tests)
    half = "\n\n".join(t.source for t in task.tests[: max(1, len(task.tests) // 2)])
    variants = [("own", own), ("accepting", accepting), ("rejecting", rejecting), ("crashing", crashing)]
    variants.append(("half", half))
    return [(kind, _header(task, "import pytest") + body) for kind, body in variants]


def write_corpus(folder: Path, tasks: list[Any], labels: int) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for t_index, task in enumerate(tasks):
        codes, tests = code_variants(task), test_variants(task)
        for label in range(labels):
            code_kind, code = codes[(label + t_index) % len(codes)]
            test_kind, test = tests[(label * 3 + t_index) % len(tests)]
            (folder / f"{task.task_id}_code_m{label:02d}.py").write_text(code)
            (folder / f"{task.task_id}_test_m{label:02d}.py").write_text(test)
            kinds[f"code {code_kind}"] = kinds.get(f"code {code_kind}", 0) + 1
            kinds[f"test {test_kind}"] = kinds.get(f"test {test_kind}", 0) + 1
    return kinds


# ----- the unsafe in-process baseline ---------------------------------------
def _load_in_process(path: Path) -> list[Any]:
    from fembench_agents.scoring.sandbox.describe import describe_module
    from fembench_agents.suite.loader import _to_task, task_files

    tasks = []
    for f in task_files(path):
        source = f.read_text()
        tasks.append(_to_task(f, source, describe_module(source, str(f.resolve()))))
    return tasks


def _arguments(task: Any) -> list[list[Any]]:
    from fembench_agents.scoring import codec

    if task.builds_inputs:
        ns: dict[str, Any] = {"__name__": "__task__"}
        exec(compile(task.module_source, task.path, "exec"), ns)
        return [list(a) for a in ns["task_info"]()["reference_verification_inputs"]]
    return [list(codec.from_data(a)) for a in task.inputs]


_MODULES: dict[str, dict[str, Any]] = {}


def _implementation(task: Any, function: str) -> Any:
    """`function` of the task module, executed once per task as FEM-Bench imports it."""
    if task.task_id not in _MODULES:
        ns: dict[str, Any] = {"__name__": "__task__"}
        exec(compile(task.module_source, task.path, "exec"), ns)
        _MODULES[task.task_id] = ns
    return _MODULES[task.task_id][function]


def _call_all(fn: Any, arguments: list[list[Any]]) -> list[tuple[bool, Any]]:
    results = []
    for args in arguments:
        try:
            results.append((True, fn(*args)))
        except BaseException as exc:  # noqa: BLE001 - the attempt's failure is its result
            results.append((False, type(exc).__name__))
    return results


def score_in_process(folder: Path, tasks_path: Path) -> dict[str, dict[str, float]]:
    """FEM-Bench's way: everything in this process. Returns label -> task -> score."""
    from fembench_agents.scoring.extraction import parse_code
    from fembench_agents.suite.comparison import compare_outputs
    from fembench_agents.suite.folder import find_completions
    from fembench_agents.suite.references import attempt_preamble

    tasks = _load_in_process(tasks_path)
    by_id = {t.task_id: t for t in tasks}
    arguments = {t.task_id: _arguments(t) for t in tasks}
    references = {t.task_id: _call_all(_implementation(t, t.main_name), arguments[t.task_id]) for t in tasks}
    scores: dict[str, dict[str, float]] = {}
    completions, _ = find_completions(folder, tasks)
    for c in completions:
        task = by_id[c.task_id]
        prefix = None if c.track == "code" else "test_"
        parsed = parse_code(c.path.read_text(), (task.main_name,) if c.track == "code" else (), prefix=prefix)
        ns: dict[str, Any] = {"__name__": "__candidate__"}
        score = 0.0
        try:
            if parsed.error:
                raise SyntaxError(parsed.error)
            for source in attempt_preamble(task):
                exec(source, ns)
            exec(compile(parsed.code, str(c.path), "exec"), ns)
            if c.track == "code":
                got = _call_all(ns[task.main_name], arguments[c.task_id])
                ok = all(
                    g[0] == r[0] and (compare_outputs(g[1], r[1], task.comparison) is None if r[0] else g[1] == r[1])
                    for g, r in zip(got, references[c.task_id], strict=True)
                )
                score = float(ok)
            else:
                joint = 0
                for test in task.tests:
                    fn = ns.get(test.name)
                    if fn is None:
                        continue
                    passes = _test_passes(fn, _implementation(task, task.main_name))
                    caught = all(not _test_passes(fn, _implementation(task, f.name)) for f in test.expected_failures)
                    joint += passes and caught
                score = joint / len(task.tests)
        except BaseException:  # noqa: BLE001, S110 - a broken attempt scores 0
            pass
        scores.setdefault(f"{c.track} {c.label}", {})[c.task_id] = score
    return scores


def _test_passes(test: Any, implementation: Any) -> bool:
    try:
        test(implementation)
    except BaseException:  # noqa: BLE001 - a failing test (pytest's outcomes are BaseExceptions)
        return False
    return True


# ----- timing ---------------------------------------------------------------
def _timed(command: list[str]) -> tuple[float, float]:
    """Wall clock and CPU time (the command's and every process it waited for) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--labels", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="write the corpus here and keep it")
    parser.add_argument("--same-as", type=Path, help="an earlier run's outcomes, compared with this run's")
    parser.add_argument("--in-process", type=Path, help=argparse.SUPPRESS)  # the baseline's own command
    parser.add_argument("--json", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_process:
        scores = score_in_process(args.in_process, TASKS)
        if args.json:
            args.json.write_text(json.dumps(scores))
        return
    folder = args.keep or Path(tempfile.mkdtemp(prefix="fembench-score-speed-"))
    folder.mkdir(parents=True, exist_ok=True)
    kinds = write_corpus(folder, _load_in_process(TASKS), args.labels)
    files = len(list(folder.glob("*.py")))
    print(f"corpus: {files} files in {folder}: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    cli = [str(Path(sys.executable).parent / "fembench-agents"), "score", str(folder), "--json", str(folder / "out")]
    baseline = [sys.executable, __file__, "--in-process", str(folder), "--json", str(folder / "baseline.out")]
    isolated, unsafe = [], []
    for r in range(args.rounds):
        isolated.append(_timed(cli))
        unsafe.append(_timed(baseline))
        (iw, ic), (uw, uc) = isolated[-1], unsafe[-1]
        print(
            f"round {r + 1}: score {iw:6.2f} s (CPU {ic:6.2f} s)   in-process {uw:6.2f} s (CPU {uc:6.2f} s)   "
            f"ratio {iw / uw:.2f}, load average {os.getloadavg()[0]:.1f}"
        )
    (iw, ic), (uw, uc) = min(isolated), min(unsafe)
    print(f"best: score {iw:.2f} s, in-process baseline {uw:.2f} s")
    print(f"ratio isolated/in-process: {iw / uw:.2f} (target <= 2.5, stretch 2.0)")
    cpu = min(c for _, c in isolated) / min(c for _, c in unsafe)
    print(f"CPU time isolated/in-process: {cpu:.2f} (best of each; the isolated side runs on every core)")
    _agreement(folder)
    if args.same_as:
        _same_as(json.loads((folder / "out").read_text()), json.loads(args.same_as.read_text()))


def _without_timings(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _without_timings(v) for k, v in data.items() if "seconds" not in k}
    if isinstance(data, list):
        return [_without_timings(v) for v in data]
    return data


def _same_as(ours: dict[str, Any], earlier: dict[str, Any]) -> None:
    """Every outcome of both tracks, field by field but for timings, against an earlier run's."""
    for part in ("function_outcomes", "test_outcomes"):
        now, then = _without_timings(ours[part]), _without_timings(earlier[part])
        pairs = [(now[label].get(task), then.get(label, {}).get(task)) for label in now for task in now[label]]
        differ = sum(a != b for a, b in pairs)
        print(f"{part}: {len(pairs) - differ} identical to the earlier run's, {differ} differ")


def _agreement(folder: Path) -> None:
    """The two scorers agree on which code attempts are correct (a check that
    the baseline does the same work, not a test)."""
    ours = json.loads((folder / "out").read_text())
    theirs = json.loads((folder / "baseline.out").read_text())
    same = differ = 0
    for label, outcomes in ours["function_outcomes"].items():
        for task_id, outcome in outcomes.items():
            if outcome["passed"] == bool(theirs.get(f"code {label}", {}).get(task_id, 0.0)):
                same += 1
            else:
                differ += 1
    print(f"code verdicts: {same} agree with the baseline, {differ} differ")


if __name__ == "__main__":
    main()

"""Per-attempt overhead of a PDE attempt beyond the solver's own work: the
whole `Evaluator.score` path (parse, sandbox job, transport of the arrays,
gates and error norms) against the same solver called in-process, on the
same cases, in the same run (alternating, medians).

    .venv/bin/python benchmarks/pde_attempt_overhead.py [--rounds 7] [--library numpy-scipy]

The solver is the hand-written finite-difference one of the tests
(tests/pde_solvers.py); the in-process call gets a fresh copy of the spec,
as the sandboxed one does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import pde_solvers  # noqa: E402

from fembench_agents.cases import timing  # noqa: E402
from fembench_agents.cases.problem import load_cases  # noqa: E402
from fembench_agents.cases.scorer import CaseScorer  # noqa: E402
from fembench_agents.scoring.evaluator import Evaluator  # noqa: E402
from fembench_agents.scoring.sandbox import Sandbox  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--library", default="numpy-scipy")
    args = parser.parse_args()
    case = next(c for c in load_cases(ROOT / "cases") if c.task_id == pde_solvers.CASE)
    source = pde_solvers.CORRECT
    namespace: dict = {}
    exec(compile(source, "<solver>", "exec"), namespace)
    calibration = timing.MachineCalibration(
        machine="bench", fingerprint={}, repeats=1, t_base={case.task_id: {args.library: 10.0}}
    )
    inproc, scored, inside = [], [], []
    with Sandbox(workers=1, preload=("skfem",)) as sandbox:
        evaluator = Evaluator(sandbox, scorers={"pde": CaseScorer(sandbox, calibration)})
        evaluator.score(case, args.library, source)  # start the worker
        namespace["solve"](case.spec_data())  # warm the in-process side alike
        for _ in range(args.rounds):
            spec = json.loads(json.dumps(case.spec_data()))
            t = time.perf_counter()
            namespace["solve"](spec)
            inproc.append(time.perf_counter() - t)
            t = time.perf_counter()
            outcome = evaluator.score(case, args.library, source)
            scored.append(time.perf_counter() - t)
            inside.append(outcome.solve_seconds or 0.0)
            assert outcome.passed, outcome
        evaluator.close()
    a, b, c = statistics.median(inproc), statistics.median(scored), statistics.median(inside)
    print(f"case {case.task_id}, {args.library}, {args.rounds} rounds (medians)")
    print(f"  solver in-process:              {a * 1000:8.1f} ms")
    print(f"  solve time inside the sandbox:  {c * 1000:8.1f} ms")
    print(f"  whole Evaluator.score:          {b * 1000:8.1f} ms")
    print(f"  overhead per attempt:           {(b - a) * 1000:8.1f} ms   (target <= 100 ms)")
    print(f"  ratio scored / in-process:      {b / a:8.2f}")


if __name__ == "__main__":
    main()

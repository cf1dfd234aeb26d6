"""Does noise decide fast-gate verdicts? One accurate solver, scored 10 times
with the time target set so that the solver sits at 0.5x the target and 10
times so that it sits at 2x, through the whole evaluator (sandbox, first-call
timing, up to two re-timings, fastest counts). Prints the verdict counts.

    .venv/bin/python benchmarks/fast_gate_stability.py [--scorings 10]

The solver's own time is measured first (median of 5 sandboxed solves); the
target is then tau_time = alpha_time x max(t_base, t_floor), so t_base is set
to time / (0.5 x 3) or time / (2 x 3), with a t_floor below it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import pde_solvers  # noqa: E402

from fembench_agents.cases import timing  # noqa: E402
from fembench_agents.cases.model import GateConfig  # noqa: E402
from fembench_agents.cases.problem import load_cases  # noqa: E402
from fembench_agents.cases.scorer import CaseScorer, CaseScoringConfig  # noqa: E402
from fembench_agents.scoring.sandbox import Sandbox  # noqa: E402

LIB = "numpy-scipy"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scorings", type=int, default=10)
    parser.add_argument("--refine", type=int, default=4, help="solver resolution (higher: a longer solve)")
    args = parser.parse_args()
    case = next(c for c in load_cases(ROOT / "cases") if c.task_id == pde_solvers.CASE)
    source = pde_solvers.finite_difference(args.refine)
    gates = GateConfig(t_floor=1e-4)
    with Sandbox(workers=1) as sandbox:
        probe = CaseScorer(sandbox, None, CaseScoringConfig(gates=gates))
        times = []
        for _ in range(5):
            frames = probe.run_solve(case, source).events("solve")
            times.append(float(frames[0]["seconds"]))
        own = statistics.median(times)
        print(f"solver time inside the sandbox: median {own * 1000:.1f} ms of {[round(t * 1000, 1) for t in times]}")
        for position in (0.5, 2.0):
            t_base = own / (position * gates.alpha_time)
            cal = timing.MachineCalibration(
                machine="b", fingerprint={}, repeats=1, t_base={case.task_id: {LIB: t_base}}
            )
            scorer = CaseScorer(sandbox, cal, CaseScoringConfig(gates=gates))
            verdicts = Counter()
            for _ in range(args.scorings):
                out = scorer.score(case, LIB, source)
                verdicts["pass" if out.passed else str(out.reason)] += 1
            print(
                f"solver at {position}x the time target ({t_base * gates.alpha_time * 1000:.1f} ms): {dict(verdicts)}"
            )


if __name__ == "__main__":
    main()

"""What a DOLFINx attempt costs beyond its solve, and what compiling its forms
costs, on one case (medians of alternating rounds):

- the DOLFINx calibration solver in-process, with a warm form cache (the solve
  itself) and with an empty one (the solve plus the first compile of its forms,
  which every attempt pays: each sandboxed job compiles into its own scratch);
- a DOLFINx attempt (tests/dolfinx_solvers.py) through the whole
  `Evaluator.score` path against the solve time measured inside its job: the
  difference is the per-attempt overhead (parse, sandbox fork, transport,
  gates) in a sandbox whose warm workers preloaded dolfinx.

    .venv/bin/python benchmarks/pde_dolfinx_overhead.py [--rounds 5]
"""

from __future__ import annotations

# mpi4py first: dolfinx and petsc4py load its MPI library.
from mpi4py import MPI  # noqa: F401  # isort: skip

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import dolfinx.jit  # noqa: E402
import dolfinx_solvers  # noqa: E402

from fembench_agents.cases import timing  # noqa: E402
from fembench_agents.cases.calibration import dolfinx_fem  # noqa: E402
from fembench_agents.cases.problem import load_cases  # noqa: E402
from fembench_agents.cases.scorer import CaseScorer  # noqa: E402
from fembench_agents.cases.tracks import get_track  # noqa: E402
from fembench_agents.scoring.evaluator import Evaluator  # noqa: E402
from fembench_agents.scoring.sandbox import Sandbox  # noqa: E402


def timed_solve(spec: dict, cache: Path) -> float:
    _, doc = dolfinx.jit.DOLFINX_DEFAULT_JIT_OPTIONS["cache_dir"]
    dolfinx.jit.DOLFINX_DEFAULT_JIT_OPTIONS["cache_dir"] = (cache, doc)
    start = time.perf_counter()
    dolfinx_fem.solve(spec)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    case = next(c for c in load_cases(ROOT / "cases") if c.task_id == dolfinx_solvers.CASE)
    source = f"```python\n{dolfinx_solvers.CORRECT}\n```\n"
    calibration = timing.MachineCalibration(
        machine="bench", fingerprint={}, repeats=1, t_base={case.task_id: {"dolfinx": 60.0}}
    )
    warm_cache = Path(tempfile.mkdtemp(prefix="dolfinx-warm-"))
    timed_solve(case.spec_data(), warm_cache)
    warm, cold, scored, inside = [], [], [], []
    with Sandbox(workers=1, preload=get_track("dolfinx").modules) as sandbox:
        evaluator = Evaluator(sandbox, scorers={"pde": CaseScorer(sandbox, calibration)})
        evaluator.score(case, "dolfinx", source)  # start the worker
        for _ in range(args.rounds):
            warm.append(timed_solve(case.spec_data(), warm_cache))
            cold.append(timed_solve(case.spec_data(), Path(tempfile.mkdtemp(prefix="dolfinx-cold-"))))
            t = time.perf_counter()
            outcome = evaluator.score(case, "dolfinx", source)
            scored.append(time.perf_counter() - t)
            inside.append(outcome.solve_seconds or 0.0)
            assert outcome.passed, outcome
        evaluator.close()
    w, c, s, i = (statistics.median(v) for v in (warm, cold, scored, inside))
    print(f"case {case.task_id}, dolfinx, {args.rounds} rounds (medians)")
    print(f"  calibration solve, warm form cache:       {w * 1000:8.1f} ms")
    print(f"  calibration solve, empty form cache:      {c * 1000:8.1f} ms")
    print(f"  first compile of its forms:               {(c - w) * 1000:8.1f} ms   (paid by every attempt)")
    print(f"  attempt: solve time inside the sandbox:   {i * 1000:8.1f} ms   (its forms compiled included)")
    print(f"  attempt: whole Evaluator.score:           {s * 1000:8.1f} ms")
    print(f"  overhead per attempt beyond its solve:    {(s - i) * 1000:8.1f} ms   (target <= 100 ms)")
    print(f"  ratio overhead / warm calibration solve:  {(s - i) / w:8.2f}")


if __name__ == "__main__":
    main()

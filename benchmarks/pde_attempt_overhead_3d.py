"""Per-attempt overhead of a 3D PDE attempt beyond the solve: the whole
`Evaluator.score` path (parse, sandbox job, transport of the (nz, ny, nx)
array, gates and error norms) against the same program called in-process,
alternating, medians. The case is a unit-cube Poisson record in the published
shape (tests/published_cube_records.py) imported into a temporary folder, the
program the published-contract 3D program of docs/pde_import.md.

    .venv/bin/python benchmarks/pde_attempt_overhead_3d.py [--rounds 5] [--n 20]
"""

from __future__ import annotations

# mpi4py first: it loads the MPI library that dolfinx and petsc4py link against.
from mpi4py import MPI  # noqa: F401  # isort: skip

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fembench_agents.cases import published_import, timing  # noqa: E402
from fembench_agents.cases.problem import load_cases  # noqa: E402
from fembench_agents.cases.scorer import CaseScorer  # noqa: E402
from fembench_agents.runs.problems import preload_for  # noqa: E402
from fembench_agents.scoring.evaluator import Evaluator  # noqa: E402
from fembench_agents.scoring.sandbox import Sandbox  # noqa: E402
from tests import published_cube_records as pc  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=20, help="grid points per axis")
    args = parser.parse_args()
    record = pc.poisson3("cube_poisson")
    record["oracle_config"]["output"]["grid"] = {**pc.CUBE_GRID, "nx": args.n, "ny": args.n, "nz": args.n}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "cases"
        built, views, report = published_import.import_records([json.dumps(record)])
        published_import.write(folder, built, views, report)
        case = load_cases(folder)[0]
        source = pc.PUBLISHED_CUBE_PROGRAM
        namespace: dict = {}
        exec(compile(source, "<solver>", "exec"), namespace)
        calibration = timing.MachineCalibration(
            machine="bench", fingerprint={}, repeats=1, t_base={case.task_id: {"dolfinx": 60.0}}
        )
        inproc, scored, inside = [], [], []
        with Sandbox(workers=1, preload=preload_for(("dolfinx",))) as sandbox:
            evaluator = Evaluator(sandbox, scorers={"pde": CaseScorer(sandbox, calibration)})
            evaluator.score(case, "dolfinx", source)  # start the worker, compile the forms
            namespace["solve"](case.spec_data())  # warm the in-process side alike
            for _ in range(args.rounds):
                spec = json.loads(json.dumps(case.spec_data()))
                t = time.perf_counter()
                namespace["solve"](spec)
                inproc.append(time.perf_counter() - t)
                t = time.perf_counter()
                outcome = evaluator.score(case, "dolfinx", source)
                scored.append(time.perf_counter() - t)
                inside.append(outcome.solve_seconds or 0.0)
                assert outcome.passed, outcome
            evaluator.close()
    a, b, c = statistics.median(inproc), statistics.median(scored), statistics.median(inside)
    print(f"unit cube, grid {args.n}^3, dolfinx, {args.rounds} rounds (medians)")
    print(f"  solver in-process:              {a * 1000:8.1f} ms")
    print(f"  solve time inside the sandbox:  {c * 1000:8.1f} ms")
    print(f"  whole Evaluator.score:          {b * 1000:8.1f} ms")
    print(f"  overhead beyond the in-process solve: {(b - a) * 1000:8.1f} ms   (target <= 100 ms)")
    print(f"  overhead beyond the sandboxed solve:  {(b - c) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()

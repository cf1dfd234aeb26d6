"""What a DOLFINx attempt on an unstructured (gmsh) mesh costs beyond its solve: the whole
`Evaluator.score` path (parse, sandbox job, transport of the arrays, the domain's in-domain
points decided from its geometry, gates and error norms) against the solve time measured inside
the job, medians of rounds (issue #41 item 11: within 100 ms).

    .venv/bin/python benchmarks/pde_mesh_overhead.py [--rounds 5]
    .venv/bin/python benchmarks/pde_mesh_overhead.py --cases-path DIR --case ID --program FILE

Without arguments the case is the published-shape Poisson record on a disk
(tests/published_curved_records.py), imported into a temporary folder, and the program the
published-contract one the tests score on it (gmsh meshes the disk, LU, point evaluation). Give
a cases folder, a case and a program to measure another (a 3D case, say).
"""

from __future__ import annotations

# mpi4py first: dolfinx and petsc4py load its MPI library.
from mpi4py import MPI  # noqa: F401  # isort: skip

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fembench_agents.cases import published_import, timing  # noqa: E402
from fembench_agents.cases.problem import load_cases  # noqa: E402
from fembench_agents.cases.scorer import CaseScorer  # noqa: E402
from fembench_agents.cases.tracks import get_track  # noqa: E402
from fembench_agents.scoring.evaluator import Evaluator  # noqa: E402
from fembench_agents.scoring.sandbox import Sandbox  # noqa: E402


def disk_folder() -> tuple[Path, str, str]:
    import published_curved_records as cr  # the tests' records: only for the default case

    folder = Path(tempfile.mkdtemp(prefix="mesh-overhead-"))
    built, views, report = published_import.import_records([json.dumps(cr.poisson_on("circle"))])
    published_import.write(folder, built, views, report)
    return folder, "poisson_circle", cr.PUBLISHED_DISK


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases-path", type=Path)
    parser.add_argument("--case")
    parser.add_argument("--program", type=Path)
    args = parser.parse_args()
    if args.cases_path:
        folder, case_id, program = args.cases_path, args.case, args.program.read_text()
    else:
        folder, case_id, program = disk_folder()
    case = next(c for c in load_cases(folder) if c.task_id == case_id)
    source = f"```python\n{program}\n```\n"
    calibration = timing.MachineCalibration(
        machine="bench", fingerprint={}, repeats=1, t_base={case_id: {"dolfinx": 60.0}}
    )
    scored, inside, passed = [], [], []
    with Sandbox(workers=1, preload=get_track("dolfinx").modules) as sandbox:
        evaluator = Evaluator(sandbox, scorers={"pde": CaseScorer(sandbox, calibration)})
        evaluator.score(case, "dolfinx", source)  # start the worker, compile the forms once
        for _ in range(args.rounds):
            t = time.perf_counter()
            outcome = evaluator.score(case, "dolfinx", source)
            scored.append(time.perf_counter() - t)
            inside.append(outcome.solve_seconds or 0.0)
            passed.append(outcome.passed)
        evaluator.close()
    s, i = statistics.median(scored), statistics.median(inside)
    print(
        f"case {case_id} ({case.spec.domain.type if hasattr(case.spec.domain, 'type') else ''}), dolfinx, {args.rounds} rounds (medians); passed {sum(passed)}/{len(passed)}"
    )
    print(f"  attempt: solve time inside the sandbox:   {i * 1000:8.1f} ms")
    print(f"  attempt: whole Evaluator.score:           {s * 1000:8.1f} ms")
    print(f"  overhead per attempt beyond its solve:    {(s - i) * 1000:8.1f} ms   (target <= 100 ms)")


if __name__ == "__main__":
    main()

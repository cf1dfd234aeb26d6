"""Per-call cost of the test track's proxy: a generated test calls the hidden
implementation (its own process, plain data over a socket) against the same
function defined in the test's own process. Both timed inside one pair of one
sandbox job; prints per-call times and their ratio.

    .venv/bin/python benchmarks/proxy_overhead.py [--calls 200]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_task
from fembench_agents.suite.scoring import FunctionScorer

TASK = Path(__file__).resolve().parents[1] / "tasks" / "fem_1d" / "FEM_1D_uniform_mesh_CC0_H0_T0.py"

# the test measures both and reports through its assertion message, the one text a pair returns
TEST = """
import time

def local_mesh(x_min, x_max, num_elements):
    x = np.linspace(x_min, x_max, num_elements + 1)
    return x, np.column_stack([np.arange(num_elements), np.arange(1, num_elements + 1)])

def per_call(f, calls):
    f(0.0, 1.0, 10)
    start = time.perf_counter()
    for _ in range(calls):
        f(0.0, 1.0, 10)
    return (time.perf_counter() - start) / calls

def test_uniform_mesh_geometry_and_connectivity(fcn):
    raise AssertionError(f"{per_call(fcn, CALLS)} {per_call(local_mesh, CALLS)}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with Sandbox(workers=1) as sandbox:
        task = load_task(TASK, sandbox)
        evaluator = FunctionScorer(sandbox)
        implementation = FunctionScorer.task_implementation(task, task.main_name)
        source = {"preamble": ["import numpy as np"], "code": TEST.replace("CALLS", str(args.calls))}
        (result,) = evaluator.run_pairs(
            task, source, [implementation], [("test_uniform_mesh_geometry_and_connectivity", 0)]
        )
    (frame,) = result.events("test")
    proxied, local = (float(v) for v in frame["message"].split()[-2:])
    print(f"call in the test's process    {local * 1000:9.4f} ms per call")
    print(f"call through the proxy        {proxied * 1000:9.4f} ms per call   x{proxied / local:8.0f} in-process")


if __name__ == "__main__":
    main()

"""Isolation cost per job: in-process call vs a forked child of the warm worker
vs a cold interpreter. Prints ratios against in-process, measured in one run.

    .venv/bin/python benchmarks/sandbox_overhead.py [--jobs 30]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from fembench_agents.scoring import codec
from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy

CODE = "import numpy as np\ndef f(x):\n    return np.linalg.solve(np.eye(3) * x, np.ones(3))\n"


def in_process(n: int) -> list[float]:
    ns: dict = {}
    exec(CODE, ns)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        ns["f"](2.0)
        times.append(time.perf_counter() - t)
    return times


def forked(n: int) -> tuple[list[float], str]:
    job = {
        "kind": "call",
        "implementation": {"code": CODE, "function": "f", "preamble": []},
        "inputs": [codec.to_data([2.0])],
    }
    with Sandbox(workers=1) as sandbox:
        sandbox.run(job, SandboxPolicy())  # start the worker
        times = []
        for _ in range(n):
            t = time.perf_counter()
            result = sandbox.run(job, SandboxPolicy())
            times.append(time.perf_counter() - t)
    return times, result.isolation


def cold(n: int) -> list[float]:
    script = CODE + "print(f(2.0))\n"
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=30)
    args = parser.parse_args()
    base = statistics.median(in_process(args.jobs))
    fork_times, isolation = forked(args.jobs)
    rows = [
        ("in-process call", base),
        (f"sandbox fork ({isolation})", statistics.median(fork_times)),
        ("cold interpreter", statistics.median(cold(max(5, args.jobs // 5)))),
    ]
    for name, value in rows:
        print(f"{name:28s} median {value * 1000:9.3f} ms   x{value / base:10.0f} in-process")
    print(f"cold interpreter / sandbox fork: {rows[2][1] / rows[1][1]:.1f}x")


if __name__ == "__main__":
    main()

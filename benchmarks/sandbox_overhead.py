"""Isolation cost per job: in-process call vs a forked child of the warm worker
vs a cold interpreter, and what a sandboxed job of each kind costs: a call job
(the code track), a solve job (a PDE solver program) and one (test,
implementation) pair of a tests job. Prints ratios against in-process,
measured in one run, and each kind's CPU time per job: the warm worker's, with
everything it ran for the jobs (job processes, the pairs' processes, its
implementation servers), read from /proc before and after.

    .venv/bin/python benchmarks/sandbox_overhead.py [--jobs 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from fembench_agents.scoring import codec
from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy

CODE = "import numpy as np\ndef f(x):\n    return np.linalg.solve(np.eye(3) * x, np.ones(3))\n"
SOLVER = "import numpy as np\ndef solve(case_spec):\n    return {'u': np.linalg.solve(np.eye(3) * 2.0, np.ones(3))}\n"
IMPLEMENTATION = {"function": "f", "module_source": CODE}
TEST = "def test_f(fcn):\n    assert np.allclose(fcn(2.0), 0.5)\n"
PAIRS = 8  # pairs per tests job, all against one implementation

JOBS: dict[str, Any] = {
    "call": {
        "kind": "call",
        "implementation": {"code": CODE, "function": "f", "preamble": []},
        "inputs": [codec.to_data([2.0])],
    },
    "solve": {"kind": "solve", "spec": {"case_id": "bench"}, "implementation": {"code": SOLVER, "function": "solve"}},
    "tests": {
        "kind": "tests",
        "test": {"preamble": ["import numpy as np"], "code": TEST},
        "implementations": [IMPLEMENTATION],
        "pairs": [{"test": "test_f", "implementation": 0}] * PAIRS,
        "pair_seconds": 30.0,
    },
}


def in_process(n: int) -> list[float]:
    ns: dict = {}
    exec(CODE, ns)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        ns["f"](2.0)
        times.append(time.perf_counter() - t)
    return times


def _tree_cpu(root: int) -> float:
    """CPU seconds of `root` and every process below it, living or waited for."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(v) for v in fields[11:15]) / tick  # utime, stime, cutime, cstime

    def below(pid: int) -> bool:
        while pid > 1:
            if pid == root:
                return True
            pid = parents.get(pid, 0)
        return False

    return sum(t for pid, t in times.items() if below(pid))


def sandboxed(kind: str, n: int) -> tuple[list[float], float, str]:
    """Wall seconds of each of `n` jobs, CPU seconds per job, and the isolation."""
    job = JOBS[kind]
    with Sandbox(workers=1) as sandbox:
        result = sandbox.run(job, SandboxPolicy())  # start the worker (and, for tests, its server)
        (worker,) = next(iter(sandbox.executor._kinds.values())).all  # type: ignore[attr-defined]
        before = _tree_cpu(worker.proc.pid)
        times = []
        for _ in range(n):
            t = time.perf_counter()
            result = sandbox.run(job, SandboxPolicy())
            times.append(time.perf_counter() - t)
        cpu = (_tree_cpu(worker.proc.pid) - before) / n
    if kind == "tests":
        assert [result.pair(i).events("test")[0]["status"] for i in range(PAIRS)] == ["passed"] * PAIRS, result
    return times, cpu, result.isolation


def cold(n: int) -> list[float]:
    script = CODE + "print(f(2.0))\n"
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=30)
    args = parser.parse_args()
    base = statistics.median(in_process(args.jobs))
    fork_times, cpu, isolation = sandboxed("call", args.jobs)
    rows = [
        ("in-process call", base),
        (f"sandbox fork ({isolation})", statistics.median(fork_times)),
        ("cold interpreter", statistics.median(cold(max(5, args.jobs // 5)))),
    ]
    for name, value in rows:
        print(f"{name:28s} median {value * 1000:9.3f} ms   x{value / base:10.0f} in-process")
    print(f"cold interpreter / sandbox fork: {rows[2][1] / rows[1][1]:.1f}x")
    print(f"per job, the worker's CPU and the wall clock (load average {os.getloadavg()[0]:.1f}):")
    print(f"  {'call job':28s} CPU {cpu * 1000:7.2f} ms   wall median {statistics.median(fork_times) * 1000:7.2f} ms")
    for kind in ("solve", "tests"):
        times, cpu, _ = sandboxed(kind, args.jobs)
        per = PAIRS if kind == "tests" else 1
        name = f"pair of a tests job ({PAIRS})" if kind == "tests" else f"{kind} job"
        print(
            f"  {name:28s} CPU {cpu / per * 1000:7.2f} ms   wall median {statistics.median(times) / per * 1000:7.2f} ms"
        )


if __name__ == "__main__":
    main()

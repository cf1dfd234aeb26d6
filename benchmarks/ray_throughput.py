"""Scoring throughput on this machine: sandbox jobs per second through the
local pool and through Ray (`--executor ray`: a local Ray instance with as
many worker processes as the pool has workers), and the time Ray adds to one
job. Both executors run the same jobs in the same confined sandbox, measured
in one run; Ray's figures are given as ratios to the local pool's.

    .venv/bin/python benchmarks/ray_throughput.py [--jobs 200] [--workers 2] [--busy-ms 0,50] [--rounds 3]

Each figure is the best of `--rounds` alternating rounds (local, Ray, local,
...): the least disturbed by whatever else the machine runs.

With `--raylets`, how throughput grows with nodes instead: a cluster started
with `ray start` (tests/ray_nodes.py: a head of one CPU, then with a second
raylet of one CPU), rounds alternating between one and two raylets; each
round measures one job alone (t) and the driver's CPU per job (d), and
compares the jobs per second with the model min(nodes x cores / t, 1 / d),
and with the local pool of as many workers (what the machine's cores give
without Ray, whatever else runs on them).

    .venv/bin/python benchmarks/ray_throughput.py --raylets --busy-ms 100 --jobs 60 --rounds 2

A job calls a small NumPy function on one input; with `--busy-ms`, the
function also keeps the CPU busy that long (an attempt doing real work).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fembench_agents.scoring import codec
from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy
from fembench_agents.scoring.sandbox.jobs import CallJob

CODE = """
import time
import numpy as np

def f(x, busy):
    end = time.perf_counter() + busy
    while time.perf_counter() < end:
        pass
    return np.linalg.solve(np.eye(3) * x, np.ones(3))
"""


def job(busy_seconds: float) -> CallJob:
    return {
        "kind": "call",
        "implementation": {"code": CODE, "function": "f", "preamble": []},
        "inputs": [codec.to_data([2.0, busy_seconds])],
    }


def throughput(sandbox: Sandbox, jobs: int, busy_seconds: float) -> tuple[float, float]:
    """Jobs per second with `sandbox.size` jobs in flight, as `score` and `compare`
    keep them, and the driver's own CPU seconds per job (this process: threads,
    Ray's client, decoding; not the workers): one driver's ceiling is about
    one job per that many seconds."""
    policy = SandboxPolicy()
    with ThreadPoolExecutor(sandbox.size) as pool:
        list(pool.map(lambda _: sandbox.run(job(busy_seconds), policy), range(2 * sandbox.size)))  # warm every worker
        start, cpu = time.perf_counter(), time.process_time()
        results = list(pool.map(lambda _: sandbox.run(job(busy_seconds), policy), range(jobs)))
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    bad = [r for r in results if not r.events("input") or r.events("input")[0].get("status") != "ok"]
    if bad:
        raise SystemExit(f"{len(bad)} jobs did not run: {bad[0]}")
    return jobs / elapsed, cpu / jobs


def latency(sandbox: Sandbox, jobs: int) -> float:
    """Median seconds of one job with nothing else in flight."""
    policy = SandboxPolicy()
    times = []
    for _ in range(jobs):
        t = time.perf_counter()
        sandbox.run(job(0.0), policy)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def scaling(busy_seconds: float, jobs: int, rounds: int, token: str) -> None:
    """Throughput of one and of two raylets against the model, alternating.
    `token`: every cluster's, in this process's environment before Ray was
    imported (Ray reads its token settings once)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from ray_nodes import two_nodes

    from fembench_agents.scoring.sandbox.ray_executor import RayExecutor

    best: dict[int, tuple[float, float, float, float]] = {}
    for _ in range(rounds):
        for raylets in (1, 2):
            with two_nodes(cpus=1, second=raylets == 2, token=token) as cluster:
                sandbox = Sandbox(executor=RayExecutor(cluster.address))
                try:
                    # Unmeasured: a node's first job waits for its Ray worker to start (seconds), and
                    # until then the warm node takes every job.
                    throughput(sandbox, jobs, busy_seconds)
                    rate, cpu = throughput(sandbox, jobs, busy_seconds)
                    one = min(latency_busy(sandbox, 5, busy_seconds) for _ in range(2))
                finally:
                    sandbox.close()
            # What this machine's cores give as many workers without Ray: the ceiling its other load leaves.
            with Sandbox(workers=raylets) as local:
                ceiling, _ = throughput(local, jobs, busy_seconds)
            load = os.getloadavg()[0]
            model = min(raylets / one, 1 / cpu)
            print(
                f"{raylets} raylet(s) of 1 CPU: {rate:6.2f} jobs/s; one job alone {one * 1000:6.1f} ms, driver CPU "
                f"per job {cpu * 1000:.2f} ms; model {model:6.2f} jobs/s (measured / model {rate / model:.2f}); "
                f"local pool of {raylets} worker(s) {ceiling:6.2f} jobs/s (Ray / local {rate / ceiling:.2f}); "
                f"load average {load:.1f}"
            )
            previous = best.get(raylets)
            if previous is None or rate > previous[0]:
                best[raylets] = (rate, one, cpu, ceiling)
    (r1, t1, _, l1), (r2, t2, _, l2) = best[1], best[2]
    print(
        f"best rounds: two raylets / one = {r2 / r1:.2f} (the model: {2 * t1 / t2:.2f}, from each one's own job "
        f"time; the local pool, two workers / one: {l2 / l1:.2f})"
    )


def latency_busy(sandbox: Sandbox, jobs: int, busy_seconds: float) -> float:
    """Median seconds of one job of `busy_seconds` with nothing else in flight."""
    policy = SandboxPolicy()
    sandbox.run(job(busy_seconds), policy)  # a warm worker
    times = []
    for _ in range(jobs):
        t = time.perf_counter()
        sandbox.run(job(busy_seconds), policy)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--busy-ms", default="0,50", help="comma-separated CPU time per job, ms")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--raylets", action="store_true", help="one raylet against two, started with ray start")
    args = parser.parse_args()
    busy = [float(b) / 1000 for b in args.busy_ms.split(",")]
    if args.raylets:
        token = uuid.uuid4().hex
        os.environ.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token})
        for b in busy:
            scaling(b, args.jobs, args.rounds, token)
        return
    from fembench_agents.scoring.sandbox.ray_executor import RayExecutor

    local = Sandbox(workers=args.workers)
    start = time.perf_counter()
    on_ray = Sandbox(executor=RayExecutor(workers=args.workers))
    ray_start = time.perf_counter() - start
    try:
        print(
            f"{args.workers} workers each; isolation: local {local.isolation().level}, Ray {on_ray.isolation().level}"
        )
        print(f"starting the local Ray instance: {ray_start:.1f} s (once per command)")
        for b in busy:
            jobs = args.jobs if b == 0 else max(20, int(args.jobs * 0.01 / max(b, 0.01)))
            rounds = [(throughput(local, jobs, b), throughput(on_ray, jobs, b)) for _ in range(args.rounds)]
            local_rate, local_cpu = max(r[0][0] for r in rounds), min(r[0][1] for r in rounds)
            ray_rate, ray_cpu = max(r[1][0] for r in rounds), min(r[1][1] for r in rounds)
            print(
                f"busy {b * 1000:4.0f} ms, {jobs:4d} jobs: local pool {local_rate:7.1f} jobs/s, "
                f"Ray {ray_rate:7.1f} jobs/s  (Ray / local = {ray_rate / local_rate:.2f}); "
                f"driver CPU per job: local {local_cpu * 1000:.2f} ms, Ray {ray_cpu * 1000:.2f} ms"
            )
        pairs = [(latency(local, 50), latency(on_ray, 50)) for _ in range(args.rounds)]
        one_local, one_ray = min(p[0] for p in pairs), min(p[1] for p in pairs)
        print(
            f"one job alone (median of 50, best round): local pool {one_local * 1000:.1f} ms, Ray {one_ray * 1000:.1f} ms; "
            f"Ray adds {(one_ray - one_local) * 1000:.1f} ms per job (x{one_ray / one_local:.2f})"
        )
    finally:
        local.close()
        on_ray.close()


if __name__ == "__main__":
    main()

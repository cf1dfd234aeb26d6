"""What `cases import` of the published file costs: CPU seconds (this process and its worker
processes) and the peak resident memory of all of them together (sampled), against the baseline
peak, and per record against an earlier run's log.

    .venv/bin/python benchmarks/import_speed.py /work/pub/benchmark_v2.jsonl --out /tmp/imp \
        [--workers 2] [--only ID ...] [--log records.jsonl] [--baseline-log earlier.jsonl]

Wall time is printed too but not compared: the machine is shared. The log (one line per
record: id, family, domain, CPU seconds of its build, its worker's resident memory after it,
outcome) shows where the time and memory go.
"""

from __future__ import annotations

# mpi4py first: dolfinx and petsc4py load its MPI library.
from mpi4py import MPI  # noqa: F401  # isort: skip

import argparse
import json
import os
import resource
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from fembench_agents.cases import published_import
from fembench_agents.cases.import_workers import RecordResult

# Before the worker processes, the reference ladder and out-of-core solves: one process peaked at
# 5550 MB (an 8x Taylor-Hood reference on a 100-point grid; docs/pde_import.md, "Speed and
# memory"). CPU is compared record by record against an earlier run's log (--baseline-log).
BASELINE_PEAK_MB = 5550.0


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (the workers, at the end)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def high_water_mb() -> float:
    """The largest resident size any one process of the import reached, by the kernel's count
    (this process, or its largest worker that has ended): the sampler below can miss a solve's
    short peak."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return max(own.ru_maxrss, children.ru_maxrss) / 1024  # Linux counts kilobytes


class TreeMemory(threading.Thread):
    """The largest resident memory of this process and its children together, sampled."""

    def __init__(self, every: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.every, self.peak_mb, self.single_mb = every, 0.0, 0.0
        self._done = threading.Event()

    def run(self) -> None:
        me = psutil.Process()
        while not self._done.wait(self.every):
            sizes = []
            for p in [me, *me.children(recursive=True)]:
                try:
                    sizes.append(p.memory_info().rss / 2**20)
                except psutil.NoSuchProcess:
                    pass
            self.peak_mb, self.single_mb = max(self.peak_mb, sum(sizes)), max(self.single_mb, *sizes)

    def stop(self) -> None:
        self._done.set()
        self.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("path", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--log", type=Path)
    parser.add_argument("--baseline-log", type=Path, help="a --log of an earlier run: CPU compared on shared ids")
    args = parser.parse_args()
    cpu_of: dict[str, float] = {}
    log = args.log.open("w") if args.log else None

    def logged(record: dict[str, Any], result: RecordResult) -> None:
        pde = record.get("pde_classification") or {}
        domain = (record.get("oracle_config") or {}).get("domain") or {}
        line = {
            "id": record.get("id"),
            "family": pde.get("equation_type"),
            "domain": domain.get("type"),
            "cpu": round(result.cpu_seconds, 2),
            "rss_mb": round(result.rss_mb),
            "outcome": "imported" if result.built else result.excluded,
        }
        cpu_of[str(record.get("id"))] = result.cpu_seconds
        if log:
            log.write(json.dumps(line) + "\n")
            log.flush()

    memory = TreeMemory()
    memory.start()
    load = os.getloadavg()
    start_cpu, start_wall = cpu_seconds(), time.perf_counter()
    lines = args.path.read_text().splitlines()
    only = set(args.only) if args.only else None
    built, views, report = published_import.import_records(lines, only, args.workers, logged)
    published_import.write(args.out, built, views, report)
    cpu, wall = cpu_seconds() - start_cpu, time.perf_counter() - start_wall
    memory.stop()
    summary = report.as_dict()
    print(f"read {summary['read']}, imported {summary['imported']}, excluded {summary['excluded']}")
    print(f"workers {args.workers}; load average at start {load[0]:.1f}, at end {os.getloadavg()[0]:.1f}")
    print(
        f"CPU {cpu:.0f} s (wall {wall:.0f} s, not compared); peak resident, all processes together "
        f"{memory.peak_mb:.0f} MB, one process {memory.single_mb:.0f} MB (sampled); one process's high-water "
        f"mark {high_water_mb():.0f} MB"
    )
    print(f"peak resident against the baseline's {BASELINE_PEAK_MB:.0f} MB: {memory.peak_mb / BASELINE_PEAK_MB:.2f}x")
    if args.baseline_log:
        before = {(row := json.loads(line))["id"]: row["cpu"] for line in args.baseline_log.read_text().splitlines()}
        shared = [i for i in cpu_of if i in before]
        old, new = sum(before[i] for i in shared), sum(cpu_of[i] for i in shared)
        if not old:
            print(f"CPU: no record of this run has a CPU time in {args.baseline_log}")
            return
        print(
            f"CPU of the {len(shared)} records both runs built: {old:.0f} s before, {new:.0f} s now ({new / old:.2f}x)"
        )


if __name__ == "__main__":
    main()

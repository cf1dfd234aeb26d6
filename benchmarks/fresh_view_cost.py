"""What keeping a job to a fresh interpreter's view of the preloaded modules
costs (scoring/sandbox/fresh_view.py): the probe, once per process and
preload, and `hide` in each job process, timed in forks of a process that
imported what a warm worker imports (medians).

    .venv/bin/python benchmarks/fresh_view_cost.py [--dolfinx] [--jobs 50]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from fembench_agents.scoring.sandbox.fresh_probe import fresh_view_data
from fembench_agents.scoring.sandbox.fresh_view import FreshView, hide
from fembench_agents.scoring.sandbox.policy import sandbox_env

PACKAGE_PARENT = str(Path(__file__).resolve().parents[1])


def hide_seconds(view: FreshView) -> float:
    """`hide` once, in a fork (it changes the process it runs in)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        start = time.perf_counter()
        hide(view)
        os.write(write, json.dumps(time.perf_counter() - start).encode())
        os._exit(0)
    os.close(write)
    seconds = float(os.read(read, 64))
    os.close(read)
    os.waitpid(pid, 0)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dolfinx", action="store_true", help="the DOLFINx track's preload")
    parser.add_argument("--jobs", type=int, default=50)
    args = parser.parse_args()
    preload: tuple[str, ...] = ()
    if args.dolfinx:
        from fembench_agents.cases import dolfinx_env

        preload = dolfinx_env.PRELOAD
    start = time.perf_counter()
    data = fresh_view_data(preload, PACKAGE_PARENT, tuple(sorted(sandbox_env().items())))
    probe = time.perf_counter() - start
    view = FreshView.from_data(json.loads(data))
    from fembench_agents.scoring.sandbox import zygote

    zygote.prepare(list(preload))
    times = [hide_seconds(view) for _ in range(args.jobs)]
    print(f"preload {list(preload) or 'none (numpy, pytest)'}")
    print(f"  detached submodules: {len(view.detached)}, kept loaded but unbound: {len(view.loaded)}")
    print(f"  probe, once per process and preload: {probe:8.2f} s")
    print(f"  hide, in each job process (median):  {statistics.median(times) * 1e6:8.1f} us")


if __name__ == "__main__":
    main()

"""What keeping a job to a fresh interpreter's view of the preloaded modules
costs (scoring/sandbox/fresh_view.py): the probe, once per process and preload;
`hide`, once per worker start; and, in a job, the first import of a hidden
submodule (handed back by the finder) against the same import with nothing
hidden (found in sys.modules), each timed in forks of a process that imported
what a warm worker imports (medians). A job that imports nothing hidden pays
nothing: it inherits the hidden state with its fork.

    .venv/bin/python benchmarks/fresh_view_cost.py [--dolfinx] [--jobs 50]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from fembench_agents.scoring.sandbox.fresh_probe import fresh_view_data
from fembench_agents.scoring.sandbox.fresh_view import FreshView, hide
from fembench_agents.scoring.sandbox.policy import sandbox_env

PACKAGE_PARENT = str(Path(__file__).resolve().parents[1])


def in_fork(work: Callable[[], None]) -> float:
    """Seconds `work()` takes in a fork of this process (it may change the process it runs in)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        start = time.perf_counter()
        work()
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
    submodule = "dolfinx.fem.petsc" if args.dolfinx else "numpy.fft"
    hide_once = statistics.median(in_fork(lambda: hide(view)) for _ in range(args.jobs))
    visible = statistics.median(in_fork(lambda: importlib.import_module(submodule)) for _ in range(args.jobs))
    hide(view)
    handed_back = statistics.median(in_fork(lambda: importlib.import_module(submodule)) for _ in range(args.jobs))
    print(f"preload {list(preload) or 'none (numpy, pytest)'}")
    print(f"  detached submodules: {len(view.detached)}, kept loaded but unbound: {len(view.loaded)}")
    print(f"  probe, once per process and preload:     {probe:8.2f} s")
    print(f"  hide, once per worker start:             {hide_once * 1e6:8.1f} us")
    print(f"  import {submodule}, nothing hidden:  {visible * 1e6:8.1f} us")
    print(f"  import {submodule}, handed back:     {handed_back * 1e6:8.1f} us")


if __name__ == "__main__":
    main()

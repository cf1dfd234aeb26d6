"""CPU time of `cases generate` for 100 cases over six families (17 each of
poisson, heat, convection_diffusion, reaction_diffusion; 16 of helmholtz and
elasticity), calibration solves on numpy-scipy and scikit-fem included. Prints
per family the CPU seconds, the cases and the refused draws, then the total.

    python benchmarks/fresh_generation.py [--seed 7] [--out DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from fembench_agents.cases.generate.output import Request, generate, redraw_summary

COUNTS = {
    "poisson": 17,
    "heat": 17,
    "convection_diffusion": 17,
    "reaction_diffusion": 17,
    "helmholtz": 16,
    "elasticity": 16,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="fresh-"))
    total_cpu, total = 0.0, 0
    for family, count in COUNTS.items():
        start = time.process_time()
        records = generate(Request(family, args.seed, count), out)
        cpu = time.process_time() - start
        total_cpu += cpu
        total += len(records)
        print(f"{family}: {len(records)} cases, {cpu:.1f} s CPU, {redraw_summary(records)}", flush=True)
    print(f"total: {total} cases, {total_cpu:.1f} s CPU, into {out}")


if __name__ == "__main__":
    main()

"""CPU time of `cases generate` for 100 cases over the six manufactured families (17 each of
poisson, heat, convection_diffusion, reaction_diffusion; 16 of helmholtz and elasticity), then
`--numerical N` cases of each numerical-reference family (poisson_rough, stokes_numerical), every calibration solve
on every track that solves the drawn domain (the default). CPU time is the process's and its
children's (dolfinx compiles its forms in a C compiler it starts). Prints per family the CPU
seconds, the cases, the domains and the refused draws; then the calibration solves' CPU by
library (scikit-fem's includes the numerical references' refined solves), and the totals.

    python benchmarks/fresh_generation.py [--seed 7] [--numerical 10] [--no-manufactured] [--out DIR] [--library L ...]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fembench_agents.cases.generate.draw import DEFAULT_LIBRARIES
from fembench_agents.cases.generate.output import Request, generate, redraw_summary
from fembench_agents.cases.tracks import Track

COUNTS = {
    "poisson": 17,
    "heat": 17,
    "convection_diffusion": 17,
    "reaction_diffusion": 17,
    "helmholtz": 16,
    "elasticity": 16,
}
NUMERICAL = ("poisson_rough", "stokes_numerical")


def cpu() -> float:
    """CPU seconds of this process and its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def time_calibrations(by_library: Counter[str]) -> None:
    """Every calibration solve adds its CPU time to its library's count."""
    plain = Track.calibration_solver

    def timed(self: Track) -> Callable[[dict[str, Any]], dict[str, Any]]:
        solve = plain(self)

        def run(spec: dict[str, Any]) -> dict[str, Any]:
            start = cpu()
            try:
                return solve(spec)
            finally:
                by_library[self.name] += cpu() - start

        return run

    Track.calibration_solver = timed  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--numerical", type=int, default=10, help="cases of each numerical family after the 100")
    parser.add_argument("--no-manufactured", action="store_true", help="the numerical families alone")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--library", action="append", default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="fresh-"))
    libraries = tuple(args.library) if args.library else DEFAULT_LIBRARIES
    by_library: Counter[str] = Counter()
    time_calibrations(by_library)
    counts = {**({} if args.no_manufactured else COUNTS), **{f: args.numerical for f in NUMERICAL if args.numerical}}
    totals: Counter[str] = Counter()
    for family, count in counts.items():
        start = cpu()
        records = generate(Request(family, args.seed, count, libraries=libraries), out)
        seconds = cpu() - start
        part = "manufactured" if family in COUNTS else "numerical"
        totals[part] += seconds
        totals[f"{part} cases"] += len(records)
        domains = Counter(r.domain for r in records)
        print(
            f"{family}: {len(records)} cases, {seconds:.1f} s CPU, {redraw_summary(records)}; "
            + ", ".join(f"{d} {n}" for d, n in sorted(domains.items())),
            flush=True,
        )
    print("calibration solves by library: " + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(by_library.items())))
    for part in ("manufactured", "numerical"):
        if totals[f"{part} cases"]:
            print(f"total {part}: {totals[f'{part} cases']} cases, {totals[part]:.1f} s CPU")
    print(f"into {out}")


if __name__ == "__main__":
    main()

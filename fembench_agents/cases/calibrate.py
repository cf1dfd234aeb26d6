"""Our calibration solvers run through the sandbox exactly as attempts do:
`t_base` for this machine (timed as attempts are timed, see scorer.py), and
the check that each calibration solver passes all three gates of its case."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from pathlib import Path

from fembench_agents.cases import timing
from fembench_agents.cases.outcomes import CaseOutcome
from fembench_agents.cases.problem import SolverCase
from fembench_agents.cases.scorer import CaseScorer
from fembench_agents.cases.tracks import get_track
from fembench_agents.scoring.error_text import shortened
from fembench_agents.scoring.sandbox import JobResult, Sandbox


class CalibrationFailed(RuntimeError):
    pass


def calibration_sandbox(libraries: Iterable[str], workers: int | None = 1) -> Sandbox:
    """A sandbox whose workers preload our calibration solvers. Never score an
    attempt with it: an attempt must not find a correct solver in its process."""
    preload: list[str] = []
    for lib in libraries:
        track = get_track(lib)
        preload += [*track.modules, track.calibration_module]
    return Sandbox(workers=workers, preload=tuple(dict.fromkeys(preload)))


def time_case(scorer: CaseScorer, case: SolverCase, library: str, repeats: int) -> float:
    """The median of `repeats` first-call timings, each in a fresh sandbox job."""
    module = get_track(library).calibration_module
    times = []
    for _ in range(repeats):
        result = scorer.run_solve(case, None, calibration_module=module, library=library)
        frames = [f for f in result.events("solve") if f.get("status") == "ok"]
        if not frames:
            what = (result.events("solve") or [{}])[0].get("message") or shortened(result.stderr, 300) or "no result"
            raise CalibrationFailed(f"calibration solver of {case.task_id} on {library} failed: {what}")
        times.append(float(frames[0]["seconds"]))
    return float(statistics.median(times))


def gate_calibration(scorer: CaseScorer, case: SolverCase, library: str) -> CaseOutcome:
    """Our calibration solver scored as an attempt at its own case (it must pass all three gates)."""
    module = get_track(library).calibration_module

    def solve() -> JobResult:
        return scorer.run_solve(case, None, calibration_module=module, library=library)

    return scorer.judge(case, library, solve(), retime=solve)


def each_case_library(
    cases: Iterable[SolverCase], libraries: Iterable[str] | None, skip: Callable[[str, str], None]
) -> Iterable[tuple[SolverCase, str]]:
    """(case, library) pairs whose track is available; `skip(library, why)` for the others."""
    wanted = set(libraries) if libraries else None
    seen: dict[str, tuple[bool, str]] = {}
    for case in cases:
        for lib in case.spec.libraries:
            if wanted is not None and lib not in wanted:
                continue
            if lib not in seen:
                seen[lib] = get_track(lib).available()
                if not seen[lib][0]:
                    skip(lib, seen[lib][1])
            if seen[lib][0]:
                yield case, lib


def calibrate_pairs(
    cases_dir: Path,
    pairs: list[tuple[SolverCase, str]],
    repeats: int,
    machine: str | None = None,
    on_pair: Callable[[int, int], None] | None = None,
    merge: bool = True,
) -> tuple[timing.MachineCalibration, str]:
    """Time each (case, library) pair's calibration solver on this machine and write the times
    into its calibration file: over the times already there (timing.merged), or (`merge`
    False) in their place; returns the calibration and what happened to the earlier times.
    `on_pair(done, total)` after each."""
    libraries = sorted({lib for _, lib in pairs})
    t_base: dict[str, dict[str, float]] = {}
    with calibration_sandbox(libraries) as sandbox:
        scorer = CaseScorer(sandbox)
        for done, (case, lib) in enumerate(pairs, start=1):
            t_base.setdefault(case.task_id, {})[lib] = float(f"{time_case(scorer, case, lib, repeats):.4g}")
            if on_pair is not None:
                on_pair(done, len(pairs))
    new = timing.MachineCalibration(
        machine=machine or timing.machine_name(), fingerprint=timing.fingerprint(), repeats=repeats, t_base=t_base
    )
    cal, kept = timing.merged(cases_dir, new) if merge else (new, "")
    timing.save(cases_dir, cal)
    return cal, kept

"""Our calibration solvers pass all three gates of their own cases, on every
family, every domain and both kinds of reference, in every track; tracks report
their availability honestly. `cases validate` runs every (case, library) pair
(547 solves, through the sandbox); here each solver meets each family, each
domain (curved ones too), each piece kind, each family on the unit cube and each (family,
reference kind) at least once (138 solves), which keeps the suite under its time budget.

The fast gate is given the calibration time itself: whether a second timing of
the same solver stays under 3 t_base depends on the machine's load, which a test
must not assert (benchmarks/fast_gate_stability.py measures that, and `cases
validate` checks it on this machine)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from fembench_agents.cases import gates, store, timing
from fembench_agents.cases.calibrate import calibration_sandbox, gate_calibration, time_case
from fembench_agents.cases.case_spec import CaseSpec
from fembench_agents.cases.model import TRANSIENT_VARIANTS, GateConfig
from fembench_agents.cases.problem import load_cases
from fembench_agents.cases.published_shapes import domain_mask
from fembench_agents.cases.scorer import CaseScorer, CaseScoringConfig
from fembench_agents.cases.tracks import TRACKS, Track, TrackUnavailable, get_track
from fembench_agents.scoring.sandbox import JobResult, Sandbox

CASES = Path(__file__).resolve().parent.parent / "cases"
SPECS = store.load_specs(CASES)


def _variants(spec: CaseSpec, lib: str) -> set[tuple[str, ...]]:
    """A natural piece's kind, the transient variant and the family on the unit cube (3D), per
    family: each is its own solver path."""
    found = {("piece", p.kind, spec.family, lib) for p in spec.boundary if p.kind != "dirichlet"}
    if spec.grid.dim == 3:
        found.add(("cube", spec.family, lib))
    if spec.time is not None and spec.family in TRANSIENT_VARIANTS:
        found.add(("transient", spec.family, lib))
    return found


def _cover() -> list[tuple[CaseSpec, str]]:
    """The first case (by id) that brings a library a family, a domain, a (family, reference
    kind), a natural piece's kind or a transient variant it has not met yet."""
    met: set[tuple[str, ...]] = set()
    pairs = []
    for spec in SPECS:
        kind = json.loads((CASES / store.HIDDEN / f"{spec.id}.json").read_text())["reference_kind"]
        for lib in spec.libraries:
            keys = {("family", spec.family, lib), ("domain", spec.domain.name, lib), (kind, spec.family, lib)}
            keys |= _variants(spec, lib)
            if not keys <= met:
                pairs.append((spec, lib))
                met |= keys
    return pairs


PAIRS = _cover()


def test_the_solves_here_meet_every_family_domain_and_reference_kind_of_every_track() -> None:
    def met(pairs: list[tuple[CaseSpec, str]]) -> set[tuple[str, str, str]]:
        kinds = {s.id: json.loads((CASES / store.HIDDEN / f"{s.id}.json").read_text())["reference_kind"] for s in SPECS}
        return {
            key
            for spec, lib in pairs
            for key in (
                ("family", spec.family, lib),
                ("domain", spec.domain.name, lib),
                (kinds[spec.id], spec.family, lib),
                *_variants(spec, lib),
            )
        }

    every = [(s, lib) for s in SPECS for lib in s.libraries]
    assert (len(every), len(PAIRS)) == (548, 139)
    assert met(PAIRS) == met(every)


@pytest.mark.parametrize("spec, lib", PAIRS, ids=lambda v: v if isinstance(v, str) else v.id)
def test_calibration_solver_passes_its_own_gates(spec, lib) -> None:  # type: ignore[no-untyped-def]
    hidden, arrays = store.load_hidden(CASES, spec.id)
    solver = get_track(lib).calibration_solver()
    spec_dict = json.loads(spec.model_dump_json())
    # one timed call per pair (hundreds of pairs): it is both the calibration time and the attempt's
    start = time.perf_counter()
    out = solver(spec_dict)
    t_base = time.perf_counter() - start
    mask = domain_mask(spec.domain, spec.grid, spec.boundary)
    outcome = gates.evaluate(
        spec.id,
        out,
        contract=spec.output,
        reference=arrays,
        mask=mask,
        library=lib,
        e_base=hidden.calibration[lib].e_base,
        t_base=t_base,
        seconds=(t_base,),
        config=hidden.gates,
    )
    assert outcome.report.passed, outcome.report.stages
    assert outcome.report.relative_l2_error == pytest.approx(hidden.calibration[lib].e_base, rel=1e-3)


def test_tracks_are_available_here_and_an_absent_library_is_refused() -> None:
    for track in TRACKS.values():
        assert track.available()[0]
        assert "solve(case_spec" in track.contract_text()
        assert (Path(__file__).resolve().parent.parent / "scaffolds" / track.skeleton).exists()
    ghost = Track(
        name="ghost",
        modules=("no_such_library_xyz",),
        allowed_imports=("no_such_library_xyz",),
        skeleton="",
        calibration_module="nowhere",
    )
    ok, why = ghost.available()
    assert not ok and "no_such_library_xyz" in why
    with pytest.raises(TrackUnavailable, match="ghost"):
        ghost.calibration_solver()
    with pytest.raises(KeyError, match="known"):
        get_track("firedrake")
    # a track says which families it has no calibration solver for; its cases never list it
    assert not TRACKS["ngsolve"].supports("wave", "unit_square") and TRACKS["ngsolve"].supports("stokes", "cross")
    assert not TRACKS["numpy-scipy"].supports("navier_stokes", "l_shape")
    assert TRACKS["dolfinx"].unsupported_families == ()  # DOLFINx has a calibration solver for every family
    assert all(get_track(lib).supports(s.family, s.domain.name) for s in SPECS for lib in s.libraries)
    # the library is imported by the warm worker before it forks, for attempts and calibration alike
    assert {"ngsolve", "netgen"} <= set(TRACKS["ngsolve"].modules)


def test_machine_calibration_round_trip_and_missing(tmp_path: Path) -> None:
    with pytest.raises(timing.CalibrationMissing, match="cases calibrate"):
        timing.load(tmp_path, "nowhere")
    cal = timing.MachineCalibration(
        machine="m1", fingerprint={"cpus": "2"}, repeats=3, t_base={"a": {"numpy-scipy": 0.01}}
    )
    timing.save(tmp_path, cal)
    again = timing.load(tmp_path, "m1")
    assert again == cal and again.calibration_id == cal.calibration_id
    assert again.lookup("a", "numpy-scipy") == 0.01
    with pytest.raises(timing.CalibrationMissing):
        again.lookup("b", "numpy-scipy")


def test_a_partial_calibration_updates_the_solves_it_timed_and_keeps_the_others(tmp_path: Path) -> None:
    def cal(repeats: int, t_base: dict[str, dict[str, float]], cpus: str = "2") -> timing.MachineCalibration:
        return timing.MachineCalibration(machine="m1", fingerprint={"cpus": cpus}, repeats=repeats, t_base=t_base)

    timing.save(tmp_path, cal(3, {"a": {"numpy-scipy": 1.0, "scikit-fem": 2.0}, "b": {"numpy-scipy": 3.0}}))
    # one library of one case timed again: its other library and the other case stay
    merged, said = timing.merged(tmp_path, cal(3, {"a": {"numpy-scipy": 5.0}, "c": {"ngsolve": 6.0}}))
    assert merged.t_base == {
        "a": {"numpy-scipy": 5.0, "scikit-fem": 2.0},
        "b": {"numpy-scipy": 3.0},
        "c": {"ngsolve": 6.0},
    }
    assert said == "kept 2 solves timed before"
    # timed with other repeats or on another machine's fingerprint, the old times go, and the count says so
    for other, why, dropped in (
        (cal(5, {"a": {"numpy-scipy": 5.0}}), "repeats 3", 2),
        (cal(3, {}, cpus="4"), "a different fingerprint", 3),
    ):
        replaced, said = timing.merged(tmp_path, other)
        assert replaced == other
        assert said == f"replaced {timing.path_for(tmp_path, 'm1')} ({why}): {dropped} solves timed there dropped"


def test_t_base_is_the_median_of_its_repeats_each_a_fresh_solve_job() -> None:
    case = next(c for c in load_cases(CASES) if c.task_id == "poisson_square_smooth")

    class Watched(CaseScorer):  # the real scorer, its solve jobs kept
        def __init__(self, sandbox: Sandbox) -> None:
            super().__init__(sandbox)
            self.jobs: list[JobResult] = []

        def run_solve(self, *args: Any, **kwargs: Any) -> JobResult:
            result = super().run_solve(*args, **kwargs)
            self.jobs.append(result)
            return result

    with calibration_sandbox(["numpy-scipy"]) as box:
        scorer = Watched(box)
        t_base = time_case(scorer, case, "numpy-scipy", repeats=3)
    times = sorted(float(job.events("solve")[0]["seconds"]) for job in scorer.jobs)
    assert len(times) == 3 and t_base == times[1]


def test_a_calibration_solver_over_its_time_limit_is_timed_again_as_an_attempt_is() -> None:
    case = next(c for c in load_cases(CASES) if c.task_id == "poisson_square_smooth")
    # a time limit of 3 ns and no floor: every timing is too slow, so the first and both re-timings count
    cal = timing.MachineCalibration(
        machine="t", fingerprint={}, repeats=1, t_base={case.task_id: {"numpy-scipy": 1e-9}}
    )
    config = CaseScoringConfig(retimes=2, gates=GateConfig(t_floor=0.0))
    with calibration_sandbox(["numpy-scipy"]) as box:
        out = gate_calibration(CaseScorer(box, cal, config), case, "numpy-scipy")
    assert [(s.stage, s.passed, s.reason) for s in out.stages][-1] == ("fast", False, "too_slow")
    assert len(out.timings) == 3 and out.solve_seconds == min(out.timings)


def test_skeletons_use_only_their_tracks_imports() -> None:
    root = Path(__file__).resolve().parent.parent / "scaffolds"
    for track in TRACKS.values():
        source = (root / track.skeleton).read_text()
        assert gates.disallowed_imports(source, track.allowed_imports) == []
    assert gates.disallowed_imports("import skfem\n", TRACKS["numpy-scipy"].allowed_imports) == ["skfem"]


@pytest.mark.parametrize("library", sorted(TRACKS))
def test_each_skeleton_runs_and_returns_the_contract_shape(library: str) -> None:
    spec = next(s for s in SPECS if s.id == "poisson_lshape_smooth")
    namespace: dict[str, object] = {}
    root = Path(__file__).resolve().parent.parent / "scaffolds"
    exec(compile((root / TRACKS[library].skeleton).read_text(), "<skeleton>", "exec"), namespace)  # noqa: S102
    out = namespace["solve"](json.loads(spec.model_dump_json()))  # type: ignore[operator]
    mask = domain_mask(spec.domain, spec.grid, spec.boundary)
    assert gates.check_output(out, spec.output, mask).passed
    assert out["u"].shape == (65, 65)

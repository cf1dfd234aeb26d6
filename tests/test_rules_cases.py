"""Boundary rules of the PDE gates and of how a solve job's result becomes a
verdict, with hand-computed numbers: both sides of each threshold, the floor
and the alpha, the error norm over in-domain points only, the first failing
output field, the fastest timing, a reported time above the trusted wall
clock, and the per-stage report's rates. Pure and fast (no sandbox): the
mutation check runs these for every mutant of these modules."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fembench_agents.cases import gates, timing
from fembench_agents.cases.case_spec import FieldSpec, OutputContract
from fembench_agents.cases.leak import best_multiple_error
from fembench_agents.cases.model import GateConfig
from fembench_agents.cases.problem import SolverCase, load_cases
from fembench_agents.cases.scorer import CaseScorer, CaseScoringConfig
from fembench_agents.cases.timing import MachineCalibration
from fembench_agents.scoring import codec
from fembench_agents.scoring.job_results import ended_how
from fembench_agents.scoring.sandbox import JobResult

ROOT = Path(__file__).resolve().parents[1]
CASE = "poisson_square_oscillating"  # numpy-scipy e_base 2.3445e-05: tau_acc = 2.3445e-04


# ------------------------------------------------------------------ thresholds


def test_accuracy_target_is_alpha_times_e_base_above_its_floor() -> None:
    assert gates.tau_acc(2e-5, GateConfig()) == pytest.approx(2e-4)
    assert gates.tau_acc(9.9e-8, GateConfig()) == 1e-6  # alpha x e_base below tau_min
    assert gates.tau_acc(1e-7, GateConfig()) == pytest.approx(1e-6)
    assert gates.tau_acc(3e-4, GateConfig(alpha_acc=2.0, tau_min=1e-3)) == 1e-3
    assert gates.tau_acc(3e-4, GateConfig(alpha_acc=5.0, tau_min=1e-3)) == pytest.approx(1.5e-3)


def test_time_target_is_alpha_times_t_base_above_its_floor() -> None:
    assert gates.tau_time(0.2, GateConfig()) == pytest.approx(0.6)
    assert gates.tau_time(0.01, GateConfig()) == pytest.approx(0.15)  # floor 0.05 s
    assert gates.tau_time(0.05, GateConfig()) == pytest.approx(0.15)
    assert gates.tau_time(0.5, GateConfig(alpha_time=2.0, t_floor=1.0)) == 2.0


def test_accurate_passes_at_the_target_and_fails_just_above() -> None:
    assert gates.accurate(2e-4, 2e-4).passed
    above = gates.accurate(2.0000001e-4, 2e-4)
    assert (above.passed, above.reason, above.detail) == (
        False,
        "too_inaccurate",
        "relative L2 error 2.000e-04 is above the accuracy target",
    )
    assert not gates.accurate(math.inf, 1.0).passed and not gates.accurate(math.nan, 1.0).passed


def test_fast_judges_the_fastest_timing_at_the_target() -> None:
    stage, best = gates.fast([0.9, 0.3, 0.31], 0.3)
    assert stage.passed and best == 0.3
    stage, best = gates.fast([0.9, 0.30001], 0.3)
    assert (stage.passed, stage.reason, best) == (False, "too_slow", 0.30001)
    assert stage.detail == "solve took 0.300 s, above the time target"
    with pytest.raises(ValueError, match="at least one timing"):
        gates.fast([], 1.0)


# ------------------------------------------------------------------ error norm


def test_relative_l2_counts_in_domain_points_only_and_never_drops_a_nan() -> None:
    ref = np.array([[3.0, 4.0], [100.0, 0.0]])
    mask = np.array([[True, True], [False, True]])
    u = np.array([[3.0, 5.0], [np.nan, 0.0]])  # off by 1 at one point; NaN outside the domain
    assert gates.relative_l2(u, ref, mask) == pytest.approx(1.0 / 5.0)
    u[1, 1] = np.nan
    assert gates.relative_l2(u, ref, mask) == math.inf
    assert gates.relative_l2(np.ones(2), np.zeros(2), np.ones(2, bool), eps=0.5) == pytest.approx(math.sqrt(2) / 0.5)


def test_vector_outputs_use_all_components_and_the_worst_field_counts() -> None:
    ref = np.stack([np.ones((2, 2)), 2 * np.ones((2, 2))])
    u = ref.copy()
    u[1, 0, 0] += 2.0
    mask = np.ones((2, 2), bool)
    # ||diff|| = 2, ||ref|| = sqrt(4 * 1 + 4 * 4) = sqrt(20)
    assert gates.relative_l2(u, ref, mask) == pytest.approx(2 / math.sqrt(20))
    contract = OutputContract(fields={"u": FieldSpec(shape=(2, 2)), "p": FieldSpec(shape=(2, 2))}, layout="")
    reference = {"u": np.ones((2, 2)), "p": np.full((2, 2), 10.0)}
    output = {"u": np.full((2, 2), 1.1), "p": np.full((2, 2), 10.0)}
    out = gates.evaluate(
        "c", output, contract=contract, reference=reference, mask=mask, library="numpy-scipy",
        e_base=1e-3, t_base=1.0, seconds=[0.1],
    )  # fmt: skip
    assert out.report.relative_l2_error == pytest.approx(0.1)  # u's error, the larger of the two
    assert out.report.failed_stage == "accurate"


def test_a_pressure_is_compared_up_to_its_constant_and_the_velocity_is_not() -> None:
    mask = np.array([[True, True], [True, False]])
    contract = OutputContract(
        fields={"u": FieldSpec(shape=(2, 2)), "p": FieldSpec(shape=(2, 2), up_to_constant=True)}, layout=""
    )
    reference = {"u": np.ones((2, 2)), "p": np.array([[1.0, 2.0], [3.0, np.nan]])}
    shifted = {"u": np.ones((2, 2)), "p": np.array([[101.0, 102.0], [103.0, -7.0]])}  # outside: ignored
    assert gates.contract_error(shifted, reference, contract, mask, 1e-300) == 0.0
    # in-domain means removed: ref (-1, 0, 1), output (-1.5, 0, 1.5): error 0.5 * sqrt(2) / sqrt(2)
    stretched = {"u": np.ones((2, 2)), "p": np.array([[0.5, 2.0], [3.5, 0.0]])}
    assert gates.contract_error(stretched, reference, contract, mask, 1e-300) == pytest.approx(0.5)
    moved = {"u": np.full((2, 2), 3.0), "p": reference["p"]}  # a shifted velocity is an error
    assert gates.contract_error(moved, reference, contract, mask, 1e-300) == pytest.approx(2.0)
    broken = {"u": np.ones((2, 2)), "p": np.array([[np.nan, 2.0], [3.0, 0.0]])}
    assert gates.contract_error(broken, reference, contract, mask, 1e-300) == math.inf


def test_a_leak_probe_of_a_pressure_allows_a_constant_offset() -> None:
    ref = np.array([1.0, 2.0, 3.0])
    assert best_multiple_error(ref + 5.0, ref, centre=True) == pytest.approx(0.0, abs=1e-15)
    assert best_multiple_error(ref + 5.0, ref) == pytest.approx(0.26816, abs=1e-5)


# ------------------------------------------------------------------ executes


def _contract() -> OutputContract:
    return OutputContract(fields={"u": FieldSpec(shape=(2, 3)), "v": FieldSpec(shape=(2, 3))}, layout="")


@pytest.mark.parametrize(
    "output, reason, detail",
    [
        ([1.0], "not_a_dict", "solve returned list, expected a dict"),
        ({"v": np.zeros((2, 3))}, "missing_field", "output has no 'u'"),
        ({"u": [[0.0] * 3] * 2, "v": 1}, "wrong_type", "output['u'] is list, expected a numpy array"),
        (
            {"u": np.zeros((3, 2)), "v": np.zeros((2, 3))},
            "wrong_shape",
            "output['u'] has shape (3, 2), expected (2, 3)",
        ),
        (
            {"u": np.zeros((2, 3), int), "v": np.zeros(1)},
            "wrong_dtype",
            "output['u'] has dtype int64, expected a float dtype",
        ),
        (
            {"u": np.zeros((2, 3)), "v": np.zeros((2, 2))},
            "wrong_shape",
            "output['v'] has shape (2, 2), expected (2, 3)",
        ),
        (
            {"u": np.zeros((2, 3)), "v": np.array([[np.nan, np.inf, 0.0], [np.nan, 0.0, 0.0]])},
            "non_finite",
            "output['v'] is NaN or infinite at 2 in-domain grid points",
        ),
    ],
)
def test_the_first_broken_field_fails_executes_with_what_is_wrong(output: Any, reason: str, detail: str) -> None:
    mask = np.array([[True, True, True], [False, True, True]])  # (1, 0) is outside: its NaN does not count
    stage = gates.check_output(output, _contract(), mask)
    assert (stage.stage, stage.passed, stage.reason, stage.detail) == ("executes", False, reason, detail)


def test_float32_output_and_nan_outside_the_domain_pass_executes() -> None:
    mask = np.array([[True, True, True], [False, True, True]])
    u = np.zeros((2, 3), np.float32)
    u[1, 0] = np.nan
    assert gates.check_output({"u": u, "v": np.zeros((2, 3))}, _contract(), mask).passed


def test_imports_outside_the_track_are_named_in_order() -> None:
    source = (
        "import numpy as np\nimport os, scipy.sparse\nfrom skfem import MeshTri\nfrom . import x\n"
        "from subprocess import run\nimport numpy.linalg\nf = __import__\nimport os\nfrom ..numpy import linalg\n"
    )
    assert gates.disallowed_imports(source, ("numpy", "scipy")) == [
        "os",
        "skfem",
        ".",
        "subprocess",
        "..numpy",  # relative: not the allowed numpy, whatever its name
        "dynamic __import__",  # names are read after the statements
    ]
    assert gates.disallowed_imports("import importlib\nimportlib.import_module('os')", ("importlib",)) == [
        "dynamic importlib"
    ]


def test_diagnostics_hold_what_the_solver_reported_and_never_decide() -> None:
    contract = OutputContract(fields={"u": FieldSpec(shape=(1, 2))}, layout="")
    mask = np.ones((1, 2), bool)
    info = {"dofs": 12, "method": "x" * 100, "iterations": None, "secret": "kept out", "rtol": [1e-8]}
    reported = {"mesh_resolution": 64, "element_degree": 2, "time_steps": 40, "ksp_type": "cg", "pc_type": "gamg"}
    info |= reported | {"Mesh_resolution": 1, "tol": 1e-9}
    out = gates.evaluate(
        "c", {"u": np.array([[-2.0, 2.0]]), "solver_info": info}, contract=contract,
        reference={"u": np.array([[1.0, 1.0]])}, mask=mask, library="l", e_base=1.0, t_base=None, seconds=[0.1],
    )  # fmt: skip
    d = out.report.diagnostics
    assert d.solver_info == {"dofs": 12, "method": "x" * 80, "iterations": None} | reported
    assert d.max_abs_error == 3.0 and d.rmse == pytest.approx(math.sqrt(5.0))  # differences -3 and 1
    assert out.report.relative_l2_error == pytest.approx(math.sqrt(10.0) / math.sqrt(2.0))
    assert [s.reason for s in out.report.stages] == [None, None, "not_timed"]  # accurate: 2.24 <= 10 x 1.0


# ------------------------------------------------------------------ a job's result -> verdict


@pytest.fixture(scope="module")
def case() -> SolverCase:
    return next(c for c in load_cases(ROOT / "cases") if c.task_id == CASE)


@pytest.fixture(scope="module")
def reference(case: SolverCase) -> np.ndarray:
    from fembench_agents.cases import store

    return store.load_hidden(ROOT / "cases", CASE)[1]["u"]


def _scorer(t_base: float | None = 0.1, retimes: int = 2) -> CaseScorer:
    cal = (
        None
        if t_base is None
        else MachineCalibration(machine="m", fingerprint={}, repeats=1, t_base={CASE: {"numpy-scipy": t_base}})
    )
    return CaseScorer(sandbox=None, calibration=cal, config=CaseScoringConfig(retimes=retimes))  # type: ignore[arg-type]


def _solved(u: np.ndarray, seconds: float, wall: float = 5.0, info: Any = None) -> JobResult:
    value = {"u": u, "solver_info": info or {}}
    frame = {"event": "solve", "status": "ok", "seconds": seconds, "value": codec.to_data(value)}
    return JobResult(frames=[frame], wall_seconds=wall, isolation="namespaced")


def test_a_timed_out_crashed_or_failed_job_fails_executes_with_the_reason(case: SolverCase) -> None:
    scorer = _scorer()
    timeout = scorer.judge(case, "numpy-scipy", JobResult(timed_out=True, signal=9))
    assert (timeout.reason, timeout.stages[0].detail) == ("timeout", "solve did not finish within the time limit")
    killed = scorer.judge(case, "numpy-scipy", JobResult(signal=9))
    assert killed.reason == "crashed"
    assert killed.stages[0].detail == "the process was killed by signal 9 (memory or CPU limit, or a crash)"
    exited = scorer.judge(case, "numpy-scipy", JobResult(exit_code=3))
    assert exited.stages[0].detail == "the process exited (code 3) before returning a result"
    big = scorer.judge(case, "numpy-scipy", JobResult(truncated=True, exit_code=0))
    assert big.stages[0].detail == "the output was larger than the sandbox accepts"
    build = JobResult(
        frames=[{"event": "build_error", "error_type": "NameError", "message": "name 'q' is not defined"}]
    )
    built = scorer.judge(case, "numpy-scipy", build)
    assert (built.reason, built.stages[0].detail) == (
        "runtime_error",
        "building the module failed: NameError: name 'q' is not defined",
    )
    assert built.error is not None and built.error.type == "NameError"
    raised = JobResult(
        frames=[
            {"event": "solve", "status": "error", "seconds": 0.2, "error_type": "ZeroDivisionError", "message": "x",
             "traceback": ["<attempt>, line 3, in solve: 1 / 0"]},
        ]
    )  # fmt: skip
    out = scorer.judge(case, "numpy-scipy", raised)
    assert (out.reason, out.stages[0].detail, out.timings) == ("runtime_error", "ZeroDivisionError: x", ())
    assert out.error is not None and out.error.traceback == ("<attempt>, line 3, in solve: 1 / 0",)


def test_a_solve_error_frame_is_read_with_its_defaults_and_its_caps(case: SolverCase) -> None:
    from fembench_agents.scoring.outcomes import ErrorInfo

    # a frame from the child (or forged by the attempt on the result pipe) may leave out every error field
    bare = _scorer().judge(case, "numpy-scipy", JobResult(frames=[{"event": "solve", "status": "error"}]))
    assert bare.reason == "runtime_error"
    assert bare.error == ErrorInfo(type="Error", message="", traceback=())
    assert bare.stages[0].detail == "Error"  # the type alone, as the code track shows an error without a message
    built = _scorer().judge(
        case, "numpy-scipy", JobResult(frames=[{"event": "build_error", "error_type": "ImportError", "message": ""}])
    )
    assert built.stages[0].detail == "building the module failed: ImportError"
    # and may be as long as it likes: the type keeps 100 characters, the message 600 and the
    # traceback its first 8 lines of 300 characters each, a cut text its start and its end
    # (scoring/error_text.py)
    lines = [f"line {i}: " + "a" * 292 + "b" * 100 for i in range(10)]
    frame = {"event": "solve", "status": "error", "error_type": "T" * 100 + "U" * 50,
             "message": "m" * 600 + "n" * 100, "traceback": lines}  # fmt: skip
    long = _scorer().judge(case, "numpy-scipy", JobResult(frames=[frame]))
    message = "m" * 287 + " … [126 characters cut] … " + "m" * 187 + "n" * 100
    cut_lines = tuple(f"line {i}: " + "a" * 129 + " … [126 characters cut] … " + "a" * 37 + "b" * 100 for i in range(8))
    assert long.error == ErrorInfo(type="T" * 100, message=message, traceback=cut_lines)
    assert long.stages[0].detail == "T" * 100 + ": " + message


def test_a_machine_is_named_by_fembench_machine_in_file_name_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEMBENCH_MACHINE", "lab box #3/ci.runner-A_" + "x" * 60)
    assert timing.machine_name() == ("lab_box__3_ci.runner-A_" + "x" * 60)[:64]


def test_ended_how_names_what_ran() -> None:
    assert ended_how(JobResult(timed_out=True)) == ("timeout", "the code did not finish within the time limit")
    assert ended_how(JobResult(timed_out=True), "solve") == ("timeout", "solve did not finish within the time limit")


def test_a_reported_time_above_the_trusted_wall_clock_is_cut_to_it(case: SolverCase, reference: np.ndarray) -> None:
    out = _scorer(t_base=1.0).judge(case, "numpy-scipy", _solved(reference, seconds=50.0, wall=0.25))
    assert out.timings == (0.25,) and out.solve_seconds == 0.25 and out.passed
    # a case's time is its solve's, in timings: no gate is timed apart
    assert [(s.stage, s.seconds) for s in out.stages] == [("executes", None), ("accurate", None), ("fast", None)]


def test_an_accurate_slow_attempt_is_retimed_and_its_fastest_timing_counts(
    case: SolverCase, reference: np.ndarray
) -> None:
    # tau_time = 3 x 0.1 = 0.3 s
    again = iter([_solved(reference, 0.5), _solved(reference, 0.29), _solved(reference, 0.01)])
    asked: list[int] = []

    def retime() -> JobResult:
        asked.append(1)
        return next(again)

    out = _scorer().judge(case, "numpy-scipy", _solved(reference, 0.4), retime=retime)
    assert out.passed and out.timings == (0.4, 0.5, 0.29) and out.solve_seconds == 0.29
    assert len(asked) == 2  # stops at the first passing timing
    slow = iter([_solved(reference, 0.5), _solved(reference, 0.6), _solved(reference, 0.01)])
    out = _scorer(retimes=2).judge(case, "numpy-scipy", _solved(reference, 0.31), retime=lambda: next(slow))
    assert (out.reason, out.timings, out.solve_seconds) == ("too_slow", (0.31, 0.5, 0.6), 0.31)
    none = _scorer(retimes=0).judge(case, "numpy-scipy", _solved(reference, 0.31), retime=lambda: next(slow))
    assert none.timings == (0.31,) and none.reason == "too_slow"
    # a re-timing that does not finish or raises adds no timing (a solver may fail one run in several)
    raised = {"event": "solve", "status": "error", "error_type": "RuntimeError", "message": "flaky"}
    failed = iter([JobResult(timed_out=True), JobResult(frames=[raised], wall_seconds=0.1), _solved(reference, 0.2)])
    out = _scorer(retimes=3).judge(case, "numpy-scipy", _solved(reference, 0.31), retime=lambda: next(failed))
    assert out.passed and out.timings == (0.31, 0.2) and out.error is None


def test_an_inaccurate_or_uncalibrated_attempt_is_never_retimed(case: SolverCase, reference: np.ndarray) -> None:
    def retime() -> JobResult:
        raise AssertionError("retimed")

    wrong = _scorer().judge(case, "numpy-scipy", _solved(reference * 1.01, 5.0), retime=retime)
    assert wrong.reason == "too_inaccurate" and wrong.relative_l2_error == pytest.approx(0.01)
    untimed = _scorer(t_base=None).judge(case, "numpy-scipy", _solved(reference, 5.0), retime=retime)
    assert untimed.reason == "not_timed" and untimed.thresholds is not None and untimed.thresholds.t_base is None


def test_the_scorer_judges_against_the_tau_acc_the_record_states_unless_given_gates_of_its_own(
    case: SolverCase, reference: np.ndarray
) -> None:
    """One number, one source: a record stating tau_acc 0.02 (its e_base gives 2.3445e-04) passes an
    error of 0.01; gates given to the scorer compute tau_acc again, from the record's e_base."""

    def stating(scorer: CaseScorer, tau_acc: float) -> CaseScorer:
        hidden = scorer.hidden(case)
        stated = {**hidden.record.calibration}
        stated["numpy-scipy"] = stated["numpy-scipy"].model_copy(update={"tau_acc": tau_acc})
        record = hidden.record.model_copy(update={"calibration": stated})
        scorer._hidden[case.content_hash] = type(hidden)(record=record, reference=hidden.reference, mask=hidden.mask)
        return scorer

    off = _solved(reference * 1.01, 0.05)  # relative L2 error 0.01
    judged = stating(_scorer(), 0.02).judge(case, "numpy-scipy", off)
    assert judged.thresholds is not None and judged.thresholds.tau_acc == 0.02
    assert judged.passed and judged.relative_l2_error == pytest.approx(0.01)
    cal = MachineCalibration(machine="m", fingerprint={}, repeats=1, t_base={CASE: {"numpy-scipy": 0.1}})
    own = CaseScorer(sandbox=None, calibration=cal, config=CaseScoringConfig(gates=GateConfig()))  # type: ignore[arg-type]
    recomputed = stating(own, 0.02).judge(case, "numpy-scipy", off)
    assert recomputed.thresholds is not None and recomputed.thresholds.tau_acc == pytest.approx(2.3445e-04)
    assert recomputed.reason == "too_inaccurate"


def test_the_outcome_records_the_thresholds_it_was_judged_against(case: SolverCase, reference: np.ndarray) -> None:
    out = _scorer(t_base=0.02).judge(case, "numpy-scipy", _solved(reference, 0.1, info={"dofs": 7}))
    th = out.thresholds
    assert th is not None
    assert (th.e_base, th.alpha_acc, th.tau_min, th.alpha_time, th.t_floor) == (2.3445e-05, 10.0, 1e-6, 3.0, 0.05)
    assert th.tau_acc == pytest.approx(2.3445e-04) and th.t_base == 0.02 and th.tau_time == pytest.approx(0.15)
    assert (
        th.calibration
        == MachineCalibration(
            machine="m", fingerprint={}, repeats=1, t_base={CASE: {"numpy-scipy": 0.02}}
        ).calibration_id
    )
    assert out.passed and out.relative_l2_error == 0.0 and out.solver_info == {"dofs": 7}
    assert (out.library, out.family, out.isolation) == ("numpy-scipy", "poisson", "namespaced")


def test_a_case_is_scored_only_on_its_libraries(case: SolverCase) -> None:
    with pytest.raises(ValueError, match="is not offered on 'firedrake'"):
        _scorer().score(case, "firedrake", "def solve(s): pass")


# ------------------------------------------------------------------ feedback


def _outcome(*stages: tuple[str, bool, str | None, str | None], **kw: Any) -> Any:
    """An outcome judged against hidden thresholds, as the scorer records them: feedback never shows them."""
    from fembench_agents.cases.outcomes import CaseOutcome, CaseThresholds
    from fembench_agents.scoring.outcomes import StageResult

    kw.setdefault(
        "thresholds",
        CaseThresholds(e_base=3.1e-3, tau_acc=4.7e-2, t_base=0.83, tau_time=8.3, alpha_acc=15.0, tau_min=1e-6,
                       alpha_time=10.0, t_floor=0.05, calibration="c0ffee"),
    )  # fmt: skip
    return CaseOutcome(
        task_id=CASE,
        passed=all(s[1] for s in stages),
        stages=tuple(StageResult(stage=s, passed=p, reason=r, detail=d) for s, p, r, d in stages),  # type: ignore[arg-type]
        library="scikit-fem",
        family="poisson",
        **kw,
    )


OK = ("executes", True, None, None)


@pytest.mark.parametrize(
    "outcome, score, text",
    [
        (
            _outcome(("executes", False, "syntax_error", "SyntaxError: invalid syntax (line 3)")),
            0.1,
            "Your previous reply did not give a usable solver: SyntaxError: invalid syntax (line 3).\n"
            "Reply with the complete module defining `solve(case_spec)` in a single ```python code block.",
        ),
        (
            _outcome(("executes", False, "empty_reply", "the reply contains no code")),
            0.1,
            "Your previous reply did not give a usable solver: the reply contains no code.\n"
            "Reply with the complete module defining `solve(case_spec)` in a single ```python code block.",
        ),
        (
            _outcome(("executes", False, "missing_function", "no function named solve")),
            0.1,
            "Your previous reply did not give a usable solver: no function named solve.\n"
            "Reply with the complete module defining `solve(case_spec)` in a single ```python code block.",
        ),
        (
            _outcome(("executes", False, "disallowed_import", "os; subprocess")),
            0.1,
            "Your previous solver imports modules this track does not allow: os; subprocess.\n"
            "Allowed top-level modules: numpy, scipy, skfem, gmsh, math, functools, itertools, collections, typing. "
            "Return the complete corrected code.",
        ),
        (
            _outcome(("executes", False, "timeout", "solve did not finish within the time limit")),
            0.1,
            "Your previous solver did not finish within the time limit of one solve. Use a cheaper method or a "
            "coarser resolution and return the complete corrected code.",
        ),
        (
            _outcome(("executes", False, "crashed", "the process was killed by signal 9 (memory or CPU limit, or a crash)")),
            0.1,
            "Your previous solver's process ended without a result: the process was killed by signal 9 (memory or "
            "CPU limit, or a crash). Reduce memory use and return the complete corrected code.",
        ),
        (
            _outcome(("executes", False, "wrong_shape", "output['u'] has shape (3, 2), expected (2, 3)")),
            0.1,
            "Your previous solver ran but its return value breaks the output contract: output['u'] has shape "
            "(3, 2), expected (2, 3).\nReturn {\"u\": float array of the documented shape on the evaluation grid "
            '(NaN only outside the domain), "solver_info": {...}} and the complete corrected code.',
        ),
        (
            _outcome(OK, ("accurate", False, "too_inaccurate", "x"), relative_l2_error=0.01234, solve_seconds=0.5),
            0.4,
            "Your previous solver ran but is not accurate enough: its relative L2 error over the in-domain grid "
            "points is 1.23e-02.\nCheck the equation and coefficients, the boundary data on every piece, the "
            "sampling onto the grid (rows are y, columns are x), and refine the discretisation. Return the "
            "complete corrected code.",
        ),
        (
            _outcome(OK, ("accurate", True, None, None), ("fast", False, "too_slow", "solve took 9.000 s"),
                     relative_l2_error=2e-7, solve_seconds=9.0),
            0.7,
            "Your previous solver is accurate (relative L2 error 2.00e-07) but too slow: its solve takes longer "
            "than the time target.\nKeep the accuracy and make it faster (a sparse direct solver, fewer unknowns, "
            "vectorised assembly). Return the complete corrected code.",
        ),
        (
            _outcome(OK, ("accurate", True, None, None), ("fast", False, "not_timed", "x"), relative_l2_error=3e-9),
            0.7,
            "Your previous solver is accurate (relative L2 error 3.00e-09); its speed was not judged on this machine.",
        ),
        (
            _outcome(OK, ("accurate", True, None, None), ("fast", True, None, None), relative_l2_error=3e-9),
            1.0,
            "Your previous answer passed every check.",
        ),
    ],
)  # fmt: skip
def test_case_feedback_text_and_score_per_stage(outcome: Any, score: float, text: str) -> None:
    from fembench_agents.scoring.feedback import TemplateFeedback

    fb = TemplateFeedback()(outcome)
    assert (fb.score, fb.text) == (score, text)


def test_case_feedback_shows_the_attempts_own_exception() -> None:
    from fembench_agents.scoring.feedback import TemplateFeedback
    from fembench_agents.scoring.outcomes import ErrorInfo

    out = _outcome(
        ("executes", False, "runtime_error", "KeyError: 'k'"),
        error=ErrorInfo(
            type="KeyError",
            message="'k'",
            traceback=(
                "<attempt>, line 12, in solve: k = coefficient(c)",
                "<attempt>, line 9, in coefficient: return c['k']",
            ),
        ),
    )
    assert TemplateFeedback()(out).text == (  # outermost call first, as Python prints it
        "Your previous solver raised an exception:\n    KeyError: 'k'\nTraceback (your code only):\n"
        "    <attempt>, line 12, in solve: k = coefficient(c)\n"
        "    <attempt>, line 9, in coefficient: return c['k']\nFix the error and return the complete corrected code."
    )


def test_a_case_outcome_failing_at_a_stage_cases_do_not_have_is_refused_by_name() -> None:
    from fembench_agents.scoring.feedback import outcome_score

    with pytest.raises(ValueError) as err:
        outcome_score(_outcome(OK, ("correct", False, "wrong_output", None)))
    assert str(err.value) == "a PDE case outcome failed at 'correct'; expected one of executes, accurate, fast"


# ------------------------------------------------------------------ more boundaries


def test_a_passing_stage_carries_no_reason_or_detail() -> None:
    ok = gates.accurate(1e-3, 1e-3)
    assert (ok.reason, ok.detail) == (None, None)
    fast, _ = gates.fast([0.1], 0.1)
    assert (fast.reason, fast.detail) == (None, None)
    with pytest.raises(ValueError, match=r"^fast gate needs at least one timing$"):
        gates.fast([], 1.0)


def test_executes_defaults_and_messages() -> None:
    contract = OutputContract(fields={"u": FieldSpec(shape=(1, 1))}, layout="")
    mask = np.ones((1, 1), bool)
    assert gates.executes({"u": np.zeros((1, 1))}, contract, mask).passed  # ended defaults to "ok"
    timeout = gates.executes(None, contract, mask, ended="timeout")
    assert (timeout.reason, timeout.detail) == ("timeout", None)  # no message: no detail
    odd = gates.executes(None, contract, mask, ended="killed", message="signal 9")
    assert (odd.reason, odd.detail) == ("crashed", "signal 9")
    bad = gates.executes({"u": np.zeros((1, 1))}, contract, mask, bad_imports=["os", "sys"])
    assert (bad.stage, bad.passed, bad.reason, bad.detail) == ("executes", False, "disallowed_import", "os; sys")


def test_evaluate_end_to_end_on_a_domain_with_points_outside() -> None:
    contract = OutputContract(fields={"u": FieldSpec(shape=(2, 2))}, layout="")
    mask = np.array([[True, False], [True, True]])
    ref = np.array([[1.0, np.nan], [2.0, 2.0]])
    kw: dict[str, Any] = dict(contract=contract, reference={"u": ref}, mask=mask, library="l", e_base=1e-3)
    good = gates.evaluate("c", {"u": ref.copy(), "solver_info": {"dofs": 3}}, t_base=1.0, seconds=[0.2, 0.1], **kw)
    assert good.report.passed and good.report.relative_l2_error == 0.0 and good.report.solve_seconds == 0.1
    # an inaccurate attempt stops at accurate, and still reports its fastest time
    off = ref.copy()
    off[0, 0] = 4.0
    wrong = gates.evaluate("c", {"u": off}, t_base=1.0, seconds=[0.3, 0.2], **kw)
    assert [s.stage for s in wrong.report.stages] == ["executes", "accurate"]
    assert wrong.report.relative_l2_error == pytest.approx(3.0 / 3.0) and wrong.report.solve_seconds == 0.2
    assert wrong.report.diagnostics.max_abs_error == 3.0 and wrong.report.diagnostics.rmse == pytest.approx(
        math.sqrt(3)
    )
    untimed = gates.evaluate("c", {"u": ref.copy()}, t_base=None, seconds=[], **kw)
    assert untimed.report.stages[-1].detail == "no machine calibration or no timing: speed not judged"
    assert untimed.report.solve_seconds is None and not untimed.report.passed
    broken = gates.evaluate(
        "c", {"u": np.ones((1, 1)), "solver_info": {"iterations": 4}}, t_base=1.0, bad_imports=["os"], **kw
    )
    assert not broken.report.passed and broken.report.stages[0].reason == "disallowed_import"
    assert broken.report.diagnostics.solver_info == {"iterations": 4}


def test_the_verdict_uses_the_threshold_the_record_states() -> None:
    """One number, one source: the accuracy gate judges against the record's tau_acc, which
    the outcome reports; without one it is max(alpha_acc e_base, tau_min) under the config."""
    contract = OutputContract(fields={"u": FieldSpec(shape=(1, 2))}, layout="")
    ref = np.array([[3.0, 4.0]])  # norm 5: an error of 0.05 in one entry is a relative error of 0.01
    kw: dict[str, Any] = dict(contract=contract, reference={"u": ref}, mask=np.ones((1, 2), bool), library="l")
    off = {"u": np.array([[3.05, 4.0]])}
    computed = gates.evaluate("c", off, e_base=2e-3, t_base=1.0, seconds=[0.1], **kw)  # tau = 10 x 2e-3 = 0.02
    assert computed.report.passed and computed.hidden.tau_acc == 0.02
    stated = gates.evaluate("c", off, e_base=2e-3, t_base=1.0, seconds=[0.1], threshold=0.005, **kw)
    assert [(s.stage, s.passed) for s in stated.report.stages] == [("executes", True), ("accurate", False)]
    assert stated.hidden.tau_acc == 0.005


def test_the_diagnostics_are_the_primary_unknowns_inside_the_domain() -> None:
    # the fields as a case file reads them back (sorted): the pressure first
    contract = OutputContract(fields={"p": FieldSpec(shape=(2, 2)), "u": FieldSpec(shape=(2, 2))}, layout="")
    mask = np.array([[True, False], [True, True]])
    ref = {"u": np.array([[1.0, np.nan], [2.0, 2.0]]), "p": np.zeros((2, 2))}
    # u off by -2 and 1 inside (and by 50 outside, ignored); p off by 7 everywhere
    out = {"u": np.array([[-1.0, 50.0], [3.0, 2.0]]), "p": np.full((2, 2), 7.0)}
    kw: dict[str, Any] = dict(contract=contract, reference=ref, mask=mask, library="l", e_base=1e-3, t_base=1.0)
    d = gates.evaluate("c", out, seconds=[0.1], **kw).report.diagnostics
    assert (d.max_abs_error, d.rmse) == (2.0, pytest.approx(math.sqrt(5.0 / 3.0)))
    with pytest.raises(ValueError, match=r"an output contract has a field 'u' \(the primary unknown\); got \['p'\]"):
        OutputContract(fields={"p": FieldSpec(shape=(2, 2))}, layout="")


def test_relative_l2_guards_a_zero_reference_only() -> None:
    mask = np.ones(2, bool)
    # a reference of norm 1e-3 is divided by its norm, not by a larger guard
    assert gates.relative_l2(np.array([1e-3, 0.0]), np.array([0.0, 1e-3]), mask) == pytest.approx(math.sqrt(2))


def test_imports_of_submodules_of_allowed_packages_are_allowed() -> None:
    assert gates.disallowed_imports("from scipy.sparse import linalg\nimport scipy.sparse.linalg\n", ("scipy",)) == []


def test_ended_how_says_crashed_for_an_oversized_output() -> None:
    assert ended_how(JobResult(truncated=True)) == ("crashed", "the output was larger than the sandbox accepts")
    # the sandbox kills a job whose output is too large: that, not the signal, is why it ended
    assert ended_how(JobResult(truncated=True, signal=9)) == (
        "crashed",
        "the output was larger than the sandbox accepts",
    )
    assert ended_how(JobResult(timed_out=True, truncated=True, signal=9))[0] == "timeout"


def test_timings_without_a_trusted_wall_clock_are_taken_as_reported(case: SolverCase, reference: np.ndarray) -> None:
    out = _scorer(t_base=1.0).judge(case, "numpy-scipy", _solved(reference, seconds=0.7, wall=0.0))
    assert out.timings == (0.7,)
    again = iter([_solved(reference, 9.0, wall=0.0), _solved(reference, 9.0, wall=0.2)])
    out = _scorer(t_base=0.1).judge(case, "numpy-scipy", _solved(reference, 0.5), retime=lambda: next(again))
    assert out.timings == (0.5, 9.0, 0.2) and out.passed


def test_a_judged_import_failure_names_the_imports_and_ran_nothing(case: SolverCase) -> None:
    out = _scorer().judge(case, "numpy-scipy", None, bad_imports=["os"])
    assert [(s.stage, s.reason, s.detail) for s in out.stages] == [("executes", "disallowed_import", "os")]
    assert out.isolation == "unknown" and out.timings == ()


def test_the_scoring_config_can_override_the_records_gates(case: SolverCase, reference: np.ndarray) -> None:
    loose = CaseScorer(
        sandbox=None,  # type: ignore[arg-type]
        calibration=None,
        config=CaseScoringConfig(gates=GateConfig(alpha_acc=1000.0)),
    )
    out = loose.judge(case, "numpy-scipy", _solved(reference * 1.01, 0.1))
    assert out.stages[1].passed and out.thresholds is not None and out.thresholds.alpha_acc == 1000.0
    assert out.max_abs_error == pytest.approx(0.01 * np.nanmax(np.abs(reference)))
    assert out.rmse == pytest.approx(0.01 * math.sqrt(np.nanmean(reference**2)))


def test_points_outside_a_holed_domain_are_left_out() -> None:
    from fembench_agents.cases import store

    holed = next(c for c in load_cases(ROOT / "cases") if c.task_id == "poisson_hole_smooth")
    ref = store.load_hidden(ROOT / "cases", holed.task_id)[1]["u"]
    assert np.isnan(ref).any()
    scorer = CaseScorer(sandbox=None, calibration=None)  # type: ignore[arg-type]
    out = scorer.judge(holed, "numpy-scipy", _solved(np.nan_to_num(ref, nan=7.0), 0.1))
    assert out.stages[1].passed and out.relative_l2_error == 0.0
    assert scorer.hidden(holed) is scorer.hidden(holed)  # read once


def test_the_records_eps_guards_the_relative_error_of_a_zero_reference() -> None:
    contract = OutputContract(fields={"u": FieldSpec(shape=(2,))}, layout="")
    kw: dict[str, Any] = dict(contract=contract, reference={"u": np.zeros(2)}, mask=np.ones(2, bool), library="l")
    out = gates.evaluate("c", {"u": np.array([3e-3, 4e-3])}, e_base=1.0, t_base=None, config=GateConfig(eps=1e-2), **kw)
    assert out.report.relative_l2_error == pytest.approx(5e-3 / 1e-2)


def test_an_attempt_that_does_not_parse_fails_executes_before_anything_runs(case: SolverCase) -> None:
    called = time.perf_counter()
    out = _scorer().score(case, "numpy-scipy", "```python\ndef solve(case_spec) return 1\n```")  # sandbox None: unused
    called = time.perf_counter() - called
    assert out.passed is False and out.reason == "syntax_error"
    assert [(s.stage, s.passed, s.detail) for s in out.stages] == [
        ("executes", False, "SyntaxError: expected ':' (line 1)")
    ]
    assert (out.library, out.family, out.timings, out.relative_l2_error) == ("numpy-scipy", case.family, (), None)
    assert called > out.seconds > 0.0  # the parse alone was timed


def test_a_forged_value_that_does_not_decode_is_no_answer(case: SolverCase) -> None:
    frame = {"event": "solve", "status": "ok", "seconds": 0.1, "value": {"__ndarray__": "forged"}}
    out = _scorer().judge(case, "numpy-scipy", JobResult(frames=[frame], wall_seconds=1.0))
    assert [(s.stage, s.reason, s.detail) for s in out.stages] == [
        ("executes", "not_a_dict", "solve returned NoneType, expected a dict")
    ]


# ------------------------------------------------------------------ score(): the jobs sent, the outcome returned

HYPRE = "import numpy as np\n\ndef solve(case_spec):\n    opts = {'ksp_type': 'cg', 'pc_type': 'hypre'}\n    return {}"


class _Recorder:
    """A sandbox that records each job it is given and answers with the next canned result."""

    def __init__(self, *results: JobResult) -> None:
        self.results = list(results)
        self.jobs: list[dict[str, Any]] = []

    def run(self, job: dict[str, Any], policy: Any) -> JobResult:
        self.jobs.append(job)
        return self.results.pop(0)


def _dolfinx_scorer(sandbox: _Recorder, t_base: float = 0.1, **config: Any) -> CaseScorer:
    cal = MachineCalibration(machine="m", fingerprint={}, repeats=1, t_base={CASE: {"dolfinx": t_base}})
    return CaseScorer(sandbox, cal, CaseScoringConfig(**config))  # type: ignore[arg-type]


def _failed(error_type: str, message: str) -> JobResult:
    frame = {"event": "solve", "status": "error", "seconds": 0.3, "error_type": error_type, "message": message}
    return JobResult(frames=[frame], wall_seconds=1.0)


def test_a_dolfinx_attempt_and_its_retiming_run_after_the_tracks_job_setup(
    case: SolverCase, reference: np.ndarray
) -> None:
    # tau_time = 3 x 0.1 = 0.3 s: the first timing (0.5 s) is too slow, the re-timing (0.2 s) passes
    sandbox = _Recorder(_solved(reference, 0.5), _solved(reference, 0.2))
    out = _dolfinx_scorer(sandbox).score(case, "dolfinx", f"```python\n{HYPRE}\n```")
    assert out.passed and out.timings == (0.5, 0.2) and out.substitutions == ()
    job = {
        "kind": "solve",
        "spec": case.spec_data(),
        "setup": "fembench_agents.cases.dolfinx_env",
        "implementation": {"code": HYPRE, "function": "solve"},
    }
    assert sandbox.jobs == [job, job]


def test_a_calibration_job_names_the_preloaded_solver_and_gets_the_tracks_setup(case: SolverCase) -> None:
    answer = JobResult(wall_seconds=1.0)
    sandbox = _Recorder(answer, answer)
    scorer = _dolfinx_scorer(sandbox)
    module = "fembench_agents.cases.calibration.dolfinx_fem"
    assert scorer.run_solve(case, None, calibration_module=module, library="dolfinx") is answer
    scorer.run_solve(case, None, calibration_module=module)  # no library: no track setup
    spec = case.spec_data()
    assert sandbox.jobs == [
        {"kind": "solve", "spec": spec, "setup": "fembench_agents.cases.dolfinx_env", "calibration": module},
        {"kind": "solve", "spec": spec, "calibration": module},
    ]


def test_a_track_without_job_setup_sends_the_attempt_alone(case: SolverCase, reference: np.ndarray) -> None:
    sandbox = _Recorder(_solved(reference, 0.01))
    called = time.perf_counter()
    out = CaseScorer(sandbox, None).score(case, "numpy-scipy", HYPRE)  # type: ignore[arg-type]
    assert time.perf_counter() - called > out.seconds > 0.0  # a scoring's time: what the call took, at most
    assert out.reason == "not_timed"
    assert sandbox.jobs == [
        {
            "kind": "solve",
            "spec": case.spec_data(),
            "implementation": {"code": HYPRE, "function": "solve"},
        }
    ]


def test_a_compatibility_rewrite_changes_the_code_run_and_is_recorded_on_the_outcome(
    case: SolverCase, reference: np.ndarray
) -> None:
    sandbox = _Recorder(_solved(reference, 0.1))
    out = _dolfinx_scorer(sandbox, compat=("hypre-as-gamg",)).score(case, "dolfinx", HYPRE)
    assert out.passed and out.substitutions == ("hypre-as-gamg: line 4: 'hypre' -> 'gamg'",)
    assert sandbox.jobs[0]["implementation"]["code"] == HYPRE.replace("'hypre'", "'gamg'")


NO_HYPRE = (
    "this PETSc build has no hypre (pc_type hypre fails with PETSc error 86, unknown type): "
    "use pc_type gamg (algebraic multigrid) or lu (MUMPS, SuperLU_dist)"
)

COMPILE_FAILED = (
    "building a form's C code failed (ffcx generates it, the C compiler builds it into the job's "
    "form cache); the compiler's own message is above"
)


def test_a_failure_the_track_knows_the_cause_of_says_so_after_the_attempts_own_error(case: SolverCase) -> None:
    # the no-hypre note: the code asks for hypre and PETSc answers "unknown type" (error 86)
    petsc = "error code 86\n[0] PCSetType() at pc.c:1\n[0] Unknown type. Check for miss-spelling"
    sandbox = _Recorder(_failed("Error", petsc), _failed("Error", petsc), _failed("CompileError", "gcc failed"))
    scorer = _dolfinx_scorer(sandbox)
    out = scorer.score(case, "dolfinx", HYPRE)
    assert (out.passed, out.reason, out.timings) == (False, "runtime_error", ())
    assert out.error is not None and (out.error.type, out.error.message) == ("Error", petsc)
    assert [(s.stage, s.passed, s.detail) for s in out.stages] == [("executes", False, f"Error: {petsc}; {NO_HYPRE}")]
    # the same error from code that never asked for hypre is left as it is
    plain = scorer.score(case, "dolfinx", HYPRE.replace("hypre", "gamg"))
    assert [s.detail for s in plain.stages] == [f"Error: {petsc}"]
    compiled = scorer.score(case, "dolfinx", HYPRE)
    assert [s.detail for s in compiled.stages] == [f"CompileError: gcc failed; {COMPILE_FAILED}"]


def test_a_track_without_explanations_reports_the_error_alone(case: SolverCase) -> None:
    sandbox = _Recorder(_failed("Error", "error code 86"))
    out = CaseScorer(sandbox, None).score(case, "numpy-scipy", HYPRE)  # type: ignore[arg-type]
    assert [(s.stage, s.passed, s.reason, s.detail) for s in out.stages] == [
        ("executes", False, "runtime_error", "Error: error code 86")
    ]

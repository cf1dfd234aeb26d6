"""PDE attempts scored through the real sandbox by the shared evaluator: each
gate's pass and fail paths with hand-written solvers (tests/pde_solvers.py),
the feedback a repairing agent then sees (the attempt's own facts, never a
threshold, calibration figure or reference value), and a hostile attempt that
searches its process, filesystem and environment for the evaluator-only half."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pde_solvers as ps
import pytest
from conftest import ROOT
from test_error_text import PETSC_ERROR

import fembench_agents as fb
from fembench_agents.cases import store, timing
from fembench_agents.cases.calibrate import calibration_sandbox
from fembench_agents.cases.folder import CaseFolderScore, ScoredWith
from fembench_agents.cases.kind import LibraryKind
from fembench_agents.cases.outcomes import CaseOutcome
from fembench_agents.cases.problem import SolverCase, load_cases
from fembench_agents.cases.scorer import CaseScorer, CaseScoringConfig, NoPublishedThresholds
from fembench_agents.cases.tracks import TRACKS, Track
from fembench_agents.kinds import kind_for
from fembench_agents.kinds.contract import ProblemsUnavailable, ScoringOptions
from fembench_agents.scoring.error_text import shortened
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import TemplateFeedback
from fembench_agents.scoring.sandbox import Sandbox

CASES = ROOT / "cases"
T_BASE = 0.1  # seconds: tau_time = 3 x 0.1 = 0.3 s; CORRECT solves in ~0.05 s, SLOW in > 1 s
FEEDBACK = TemplateFeedback()


@pytest.fixture(scope="module")
def case() -> SolverCase:
    return next(c for c in load_cases(CASES) if c.task_id == ps.CASE)


@pytest.fixture(scope="module")
def case_evaluator() -> Iterator[Evaluator]:
    calibration = timing.MachineCalibration(
        machine="test", fingerprint={}, repeats=1, t_base={ps.CASE: {"numpy-scipy": T_BASE, "scikit-fem": T_BASE}}
    )
    with Sandbox(workers=2, preload=("skfem",)) as sandbox:
        evaluator = Evaluator(sandbox, scorers={"pde": CaseScorer(sandbox, calibration)})
        yield evaluator
        evaluator.close()


def score(evaluator: Evaluator, case: SolverCase, source: str, library: str = "numpy-scipy") -> CaseOutcome:
    outcome = evaluator.score(case, library, f"Here is my solver.\n```python\n{source}\n```\n")  # type: ignore[arg-type]
    assert isinstance(outcome, CaseOutcome)
    assert outcome.isolation == "namespaced" or not outcome.timings
    return outcome


def stages(outcome: CaseOutcome) -> list[tuple[str, bool, str | None]]:
    return [(s.stage, s.passed, s.reason) for s in outcome.stages]


def test_a_correct_solver_passes_all_three_gates(case_evaluator: Evaluator, case: SolverCase) -> None:
    called = time.perf_counter()
    out = score(case_evaluator, case, ps.CORRECT)
    called = time.perf_counter() - called
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    assert out.passed and out.library == "numpy-scipy" and out.family == "poisson"
    # second-order differences at h = 1/96 against the manufactured solution, far below tau = 10 x 2.3445e-05
    assert 1e-6 < out.relative_l2_error < 2e-5  # type: ignore[operator]
    assert len(out.timings) == 1 and out.solve_seconds == out.timings[0]
    assert called > out.seconds > out.timings[0]  # the scoring holds the solve job and the gates after it
    assert out.solver_info == {"mesh_resolution": 96, "element_degree": 1, "dofs": 9025, "method": "fd5"}
    assert out.thresholds is not None
    assert out.thresholds.tau_acc == pytest.approx(2.3445e-04) and out.thresholds.tau_time == pytest.approx(0.3)
    # the threshold the record states, to the bit
    assert out.thresholds.tau_acc == store.load_hidden(CASES, case.task_id)[0].calibration["numpy-scipy"].tau_acc
    assert FEEDBACK(out).text == "Your previous answer passed every check."
    assert FEEDBACK(out).score == 1.0


def test_a_wrong_boundary_condition_fails_the_accuracy_gate(case_evaluator: Evaluator, case: SolverCase) -> None:
    out = score(case_evaluator, case, ps.WRONG_BOUNDARY)
    assert stages(out) == [("executes", True, None), ("accurate", False, "too_inaccurate")]
    assert out.relative_l2_error == pytest.approx(1.8143, abs=1e-3)
    fb = FEEDBACK(out)
    assert fb.score == 0.4
    assert fb.text.startswith(
        "Your previous solver ran but is not accurate enough: "
        "its relative L2 error over the in-domain grid points is 1.81e+00.\n"
    )


def test_nan_inside_the_domain_fails_executes(case_evaluator: Evaluator, case: SolverCase) -> None:
    out = score(case_evaluator, case, ps.NAN_INSIDE)
    assert stages(out) == [("executes", False, "non_finite")]
    assert out.stages[0].detail == "output['u'] is NaN or infinite at 1 in-domain grid points"
    assert out.relative_l2_error is None
    assert FEEDBACK(out).text.startswith(
        "Your previous solver ran but its return value breaks the output contract: "
        "output['u'] is NaN or infinite at 1 in-domain grid points."
    )


def test_a_ten_times_too_slow_solver_fails_fast_after_being_timed_three_times(
    case_evaluator: Evaluator, case: SolverCase
) -> None:
    out = score(case_evaluator, case, ps.SLOW)
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", False, "too_slow")]
    assert len(out.timings) == 3  # the first timing, then two fresh re-timings
    assert out.solve_seconds == min(out.timings) > 0.3
    text = FEEDBACK(out).text
    assert re.fullmatch(
        r"Your previous solver is accurate \(relative L2 error \d\.\d\de-0\d\) but too slow: its solve takes "
        r"longer than the time target\.\n.*",
        text,
        flags=re.S,
    ), text
    assert FEEDBACK(out).score == 0.7


def test_the_clock_starts_once_the_module_is_built(case_evaluator: Evaluator, case: SolverCase) -> None:
    """A module that takes about a second to build (far over tau_time = 0.3 s) but solves fast is fast."""
    slow_to_build = "import math\n\n_BUILT = sum(math.sqrt(i) for i in range(4_000_000))\n" + ps.CORRECT
    out = score(case_evaluator, case, slow_to_build)
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    assert len(out.timings) == 1 and out.timings[0] < 0.3


def test_an_exception_a_wrong_shape_and_a_forbidden_import_fail_executes(
    case_evaluator: Evaluator, case: SolverCase
) -> None:
    raised = score(case_evaluator, case, ps.RAISES)
    assert stages(raised) == [("executes", False, "runtime_error")]
    assert raised.error is not None and raised.error.type == "ValueError"
    assert raised.error.message == "the mesh is too coarse: (49, 49)"
    assert raised.error.traceback[-1].startswith("<attempt>, line ")
    text = FEEDBACK(raised).text
    assert "    ValueError: the mesh is too coarse: (49, 49)\nTraceback (your code only):\n    <attempt>, line" in text
    shaped = score(case_evaluator, case, ps.TRANSPOSED_SHAPE)
    assert stages(shaped) == [("executes", False, "wrong_shape")]
    assert shaped.stages[0].detail == "output['u'] has shape (49, 48), expected (49, 49)"
    forbidden = score(case_evaluator, case, "import os\n" + ps.CORRECT)
    assert stages(forbidden) == [("executes", False, "disallowed_import")]
    assert forbidden.stages[0].detail == "os" and forbidden.timings == ()
    assert FEEDBACK(forbidden).text.startswith(
        "Your previous solver imports modules this track does not allow: os.\nAllowed top-level modules: numpy, scipy,"
    )
    unparsed = score(case_evaluator, case, "def solve(case_spec) return 1")
    assert stages(unparsed) == [("executes", False, "syntax_error")]


def test_a_module_that_fails_to_build_and_an_answer_that_cannot_be_sent_fail_executes(
    case_evaluator: Evaluator, case: SolverCase
) -> None:
    unbuilt = score(case_evaluator, case, "SCALE = 1 / 0\n" + ps.CORRECT)
    assert stages(unbuilt) == [("executes", False, "runtime_error")] and unbuilt.timings == ()
    assert unbuilt.stages[0].detail == "building the module failed: ZeroDivisionError: division by zero"
    assert unbuilt.error is not None
    assert unbuilt.error.traceback == ("<attempt>, line 1, in <module>: SCALE = 1 / 0",)
    assert FEEDBACK(unbuilt).text == (
        "Your previous solver raised an exception:\n    ZeroDivisionError: division by zero\n"
        "Traceback (your code only):\n    <attempt>, line 1, in <module>: SCALE = 1 / 0\n"
        "Fix the error and return the complete corrected code."
    )
    unsendable = ps.CORRECT.replace("def solve(", "def _solve(") + (
        "\n\nclass Sly:\n    @property\n    def __class__(self):\n        raise RuntimeError('no')\n\n\n"
        "def solve(case_spec):\n    _solve(case_spec)\n    return Sly()\n"
    )
    unsent = score(case_evaluator, case, unsendable)
    assert stages(unsent) == [("executes", False, "runtime_error")] and unsent.timings == ()
    assert unsent.stages[0].detail == "UnserializableOutput: RuntimeError"
    assert unsent.error is not None and unsent.error.traceback == ()


def test_a_long_petsc_error_keeps_its_code_and_its_cause_in_the_detail_and_the_feedback(
    case_evaluator: Evaluator, case: SolverCase
) -> None:
    raiser = (
        "class Error(RuntimeError):  # petsc4py's exception class is PETSc.Error\n"
        f"    def __str__(self):\n        return {PETSC_ERROR!r}\n\n\n"
        "def solve(case_spec):\n    raise Error(56)\n"
    )
    out = score(case_evaluator, case, raiser)
    assert stages(out) == [("executes", False, "runtime_error")]
    kept = shortened(PETSC_ERROR, 600)
    assert kept.startswith("error code 56\n… [606 characters cut] …\n[0] MatGetFactor() at ")
    assert kept.endswith(
        "\n[0] No support for this operation for this object type\n"
        "[0] Cannot locate function MatDenseGetLDA_C in object"
    )
    assert out.error is not None and (out.error.type, out.error.message) == ("Error", kept)
    assert out.stages[0].detail == f"Error: {kept}"
    assert FEEDBACK(out).text == (
        f"Your previous solver raised an exception:\n    Error: {kept}\n"
        "Traceback (your code only):\n    <attempt>, line 7, in solve: raise Error(56)\n"
        "Fix the error and return the complete corrected code."
    )


def test_a_solver_slower_than_the_configured_limit_times_out(case: SolverCase) -> None:
    calibration = timing.MachineCalibration(machine="t", fingerprint={}, repeats=1, t_base={})
    # seconds of pure-Python looping, then a valid answer: only the configured 1.5 s limit stops it
    slow = "def solve(case_spec):\n    for _ in range(3 * 10**8):\n        pass\n    return {}\n"
    with Sandbox(workers=1) as sandbox:
        scorer = CaseScorer(sandbox, calibration, CaseScoringConfig(solve_seconds=1.5))
        out = scorer.score(case, "numpy-scipy", f"```python\n{slow}```")
    assert stages(out) == [("executes", False, "timeout")]
    assert out.stages[0].detail == "solve did not finish within the time limit"
    assert FEEDBACK(out).text.startswith("Your previous solver did not finish within the time limit of one solve.")


def test_without_a_calibration_time_the_fast_gate_says_not_timed(case: SolverCase) -> None:
    with Sandbox(workers=1) as sandbox:
        out = CaseScorer(sandbox).score(case, "scikit-fem", f"```python\n{ps.CORRECT}\n```")
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", False, "not_timed")]
    assert FEEDBACK(out).text.startswith("Your previous solver is accurate (relative L2 error ")
    assert "its speed was not judged on this machine." in FEEDBACK(out).text


def _hidden_strings(case: SolverCase, out: CaseOutcome) -> list[str]:
    record, arrays = store.load_hidden(CASES, case.task_id)
    th = out.thresholds
    assert th is not None
    numbers = [th.e_base, th.tau_acc, th.tau_time, th.t_base, th.alpha_acc, th.alpha_time]
    found = [f"{x:.2e}" for x in numbers if x] + [f"{x:.3f}" for x in numbers if x] + [repr(x) for x in numbers]
    found += [f"{v:.4f}" for v in np.ravel(arrays["u"])[::97] if np.isfinite(v)]
    return [*found, str(record.solution), "tau", "e_base", "t_base", "alpha", "calibration"]


def test_feedback_never_shows_a_threshold_a_calibration_figure_or_the_reference(
    case_evaluator: Evaluator, case: SolverCase
) -> None:
    for source in (ps.CORRECT, ps.WRONG_BOUNDARY, ps.NAN_INSIDE, ps.SLOW, ps.RAISES, ps.TRANSPOSED_SHAPE):
        out = score(case_evaluator, case, source)
        text = FEEDBACK(out).text
        for hidden in _hidden_strings(case, out):
            assert hidden not in text, (hidden, text)


HOSTILE = """
import numpy as np

def solve(case_spec):
    os = eval("__import__('os')")
    sys = eval("__import__('sys')")
    found = []
    # where the evaluator-only half is, and where a solver might look for copies of it
    for top in (REPO, os.path.dirname(REPO), "/tmp", "/var/tmp", "/dev/shm", "/root", "/home", os.getcwd()):
        for root, dirs, files in os.walk(top):
            for name in dirs + files:
                if CASE in name or name in ("hidden", "calibration", "case_specs.jsonl"):
                    found.append(os.path.join(root, name))
    for path in (HIDDEN_JSON, HIDDEN_NPZ):
        try:
            found.append(open(path).read()[:40])
        except OSError:
            pass
    found += [k for k, v in os.environ.items() if CASE in v or "hidden" in v or "calibration" in v]
    found += [m for m in sys.modules if "calibration" in m or m.startswith("fembench_agents.cases")]
    found = [f for f in found if f.startswith(REPO) or not f.startswith("/")]
    raise ValueError("found: " + repr(sorted(set(found))[:8]))
"""


def test_a_hostile_solver_finds_no_evaluator_only_data(case_evaluator: Evaluator, case: SolverCase) -> None:
    hidden = CASES.resolve() / store.HIDDEN
    code = HOSTILE.replace("CASE", repr(case.task_id)).replace("REPO", repr(str(ROOT.resolve())))
    code = code.replace("HIDDEN_JSON", repr(str(hidden / f"{case.task_id}.json")))
    code = code.replace("HIDDEN_NPZ", repr(str(hidden / f"{case.task_id}.npz")))
    out = score(case_evaluator, case, code)
    assert out.error is not None, stages(out)
    assert out.error.message == "found: []"


def test_an_unavailable_track_is_refused_never_faked(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Track(
        name="fake-lib",
        modules=("no_such_fem_library_xyz",),
        allowed_imports=("numpy",),
        skeleton="pde/numpy_scipy_skeleton.py",
        calibration_module="no_such_fem_library_xyz.calibration",
    )
    monkeypatch.setitem(TRACKS, "fake-lib", fake)
    kind = LibraryKind(track="fake-lib", label="PDE (fake-lib)", preload=fake.modules)
    with pytest.raises(ProblemsUnavailable) as exc:
        kind.load("cases", None, ScoringOptions(), ["numpy-scipy", "fake-lib"])  # type: ignore[arg-type]
    assert str(exc.value) == (
        "library track 'fake-lib' is unavailable: not installed: no_such_fem_library_xyz "
        "(pip install 'fembench-agents[pde]')"
    )
    with pytest.raises(ValueError, match=r"^unknown track 'no-such-track'; known: code, tests, numpy-scipy, "):
        kind_for("no-such-track")


@pytest.fixture(scope="module")
def cases_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed cases with a calibration of this 'machine' beside them."""
    target = tmp_path_factory.mktemp("cases") / "cases"
    shutil.copytree(CASES, target, ignore=shutil.ignore_patterns("calibration"))
    cal = timing.MachineCalibration(
        machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={ps.CASE: {"numpy-scipy": 1.0}}
    )
    timing.save(target, cal)
    return target


def test_scored_outcomes_round_trip_through_json(case_evaluator: Evaluator, case: SolverCase) -> None:
    out = score(case_evaluator, case, ps.WRONG_BOUNDARY)
    again = CaseOutcome.model_validate(json.loads(out.model_dump_json()))
    assert again == out


def test_the_case_spec_a_solver_receives_is_the_agent_visible_one(case: SolverCase) -> None:
    data = case.spec_data()
    assert data == json.loads(case.spec.model_dump_json())
    text = json.dumps(data)
    record, _ = store.load_hidden(CASES, case.task_id)
    assert record.solution not in text and "e_base" not in text and "tau" not in text
    assert os.path.basename(case.path) == f"{case.task_id}.json"


def test_the_configured_memory_limit_holds_a_solve(case: SolverCase) -> None:
    greedy = "import numpy as np\n\ndef solve(case_spec):\n    return {'u': np.ones(10**8)}\n"  # 800 MB
    with Sandbox(workers=1) as sandbox:
        out = CaseScorer(sandbox, None, CaseScoringConfig(memory_mb=256)).score(case, "numpy-scipy", greedy)
    assert stages(out) == [("executes", False, "runtime_error")]
    assert out.error is not None and out.error.type == "MemoryError"


def test_cases_kept_outside_the_checkout_are_hidden_from_the_solver(case: SolverCase) -> None:
    """`--cases-path` may point anywhere: the evaluator-only half is hidden wherever it is
    (a copy beside the checkout, outside every directory the sandbox hides by default)."""
    outside = Path(tempfile.mkdtemp(prefix=".fembench-cases-test-", dir=ROOT.resolve().parent))
    outside.chmod(0o755)  # readable by the sandbox's user: only the hiding may stop the read
    try:
        shutil.copytree(CASES, outside / "cases", ignore=shutil.ignore_patterns("calibration"))
        moved = next(c for c in load_cases(outside / "cases") if c.task_id == case.task_id)
        target = outside / "cases" / store.HIDDEN / f"{case.task_id}.json"
        peek = f"def solve(case_spec):\n    raise ValueError(open({str(target)!r}).read()[:20])\n"
        with Sandbox(workers=1) as sandbox:
            out = CaseScorer(sandbox).score(moved, "numpy-scipy", f"```python\n{peek}```")
    finally:
        shutil.rmtree(outside)
    assert out.error is not None and out.error.type == "FileNotFoundError", out.error  # not the ValueError of a read


def test_the_calibration_solver_runs_in_the_sandbox_by_its_module_name(case: SolverCase) -> None:
    with calibration_sandbox(["numpy-scipy"]) as sandbox:
        scorer = CaseScorer(sandbox)
        result = scorer.run_solve(case, None, calibration_module=TRACKS["numpy-scipy"].calibration_module)
        out = scorer.judge(case, "numpy-scipy", result)
    assert stages(out)[:2] == [("executes", True, None), ("accurate", True, None)]
    e_base = store.load_hidden(CASES, case.task_id)[0].calibration["numpy-scipy"].e_base
    assert out.relative_l2_error == pytest.approx(e_base, rel=1e-6)


def test_published_v1_reads_the_first_contracts_layout_and_the_outcome_says_so(
    case_evaluator: Evaluator, case: SolverCase
) -> None:
    first = ps.finite_difference(2, after="out = out.T.copy()")  # u[ix, iy], (nx, ny): the first published contract
    plain = score(case_evaluator, case, first)
    assert stages(plain) == [("executes", True, None), ("accurate", False, "too_inaccurate")]  # judged transposed
    assert plain.substitutions == ()
    scorer = case_evaluator.scorer_for("numpy-scipy")
    assert isinstance(scorer, CaseScorer)
    reading = CaseScorer(case_evaluator.sandbox, scorer.calibration, CaseScoringConfig(compat=("published-v1",)))
    read = reading.score(case, "numpy-scipy", f"```python\n{first}\n```")
    assert stages(read) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    assert read.substitutions == (
        "published-v1: output['u'] read as u[ix, iy], shape (nx, ny) = (49, 49), transposed to (ny, nx)",
    )
    assert read.relative_l2_error == score(case_evaluator, case, ps.CORRECT).relative_l2_error
    ours = reading.score(case, "numpy-scipy", f"```python\n{ps.CORRECT}\n```")  # square: every array is read so
    assert stages(ours)[1] == ("accurate", False, "too_inaccurate") and len(ours.substitutions) == 1


def test_our_own_cases_refuse_the_published_gates_saying_why(cases_copy: Path, case: SolverCase) -> None:
    kind = kind_for("numpy-scipy")
    with pytest.raises(ProblemsUnavailable) as exc:
        kind.load(str(cases_copy), None, ScoringOptions(gates="published"), ["numpy-scipy"])  # type: ignore[arg-type]
    ids = [c.task_id for c in load_cases(cases_copy)]
    assert str(exc.value) == (
        f"--gates published judges each case by its published record's thresholds; {len(ids)} case(s) at "
        f"{cases_copy} have none (our own cases have none; cases imported before they were kept need `cases "
        f"import` again): {', '.join(ids[:5])}, ..."
    )
    with pytest.raises(ProblemsUnavailable, match=r"^unknown gates 'strict'; known: ours, published$"):
        kind.load(str(cases_copy), None, ScoringOptions(gates="strict"), ["numpy-scipy"])  # type: ignore[arg-type]
    with pytest.raises(ProblemsUnavailable, match=r"^unknown compatibility rewrite\(s\) \['v1'\]; known: "):
        kind.scorer(None, ScoringOptions(compat=("v1",)))  # type: ignore[arg-type]
    with Sandbox(workers=1) as sandbox:  # a scorer built without the load's check refuses each such case
        published = kind.scorer(sandbox, ScoringOptions(gates="published"))
        with pytest.raises(NoPublishedThresholds, match=f"^case {case.task_id} has no published thresholds: "):
            published.score(case, "numpy-scipy", f"```python\n{ps.CORRECT}\n```")


def test_the_score_output_records_its_options_and_scoring_with_them_again_reproduces_it(
    cases_copy: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "programs"
    folder.mkdir()
    first = ps.finite_difference(2, after="out = out.T.copy()")  # the first published contract's layout
    (folder / f"{ps.CASE}_numpy-scipy_first.py").write_text(f"```python\n{first}\n```\n")
    scored = fb.score_folder(folder, cases_path=cases_copy, compat=("published-v1",))
    assert isinstance(scored, CaseFolderScore)
    written = CaseFolderScore.model_validate_json(scored.model_dump_json())  # what `score --json` wrote
    assert written.options == ScoredWith(compat=("published-v1",), gates="ours")
    again = fb.score_folder(folder, cases_path=cases_copy, compat=written.options.compat, gates=written.options.gates)
    assert isinstance(again, CaseFolderScore)
    (before,), (after,) = (s.outcomes["first/numpy-scipy"].values() for s in (scored, again))
    assert before.passed and before.verdict_data() == after.verdict_data()
    assert after.substitutions == (
        "published-v1: output['u'] read as u[ix, iy], shape (nx, ny) = (49, 49), transposed to (ny, nx)",
    )

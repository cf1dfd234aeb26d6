"""GEPA on every kind, through the kind: the function tasks' code and tests
tracks and a PDE library track, with both engines, on scripted models. Every
hidden place of the problems holds a marker (a function task's reference
source, reference outputs and inputs, expected-failure names; a PDE case's
manufactured solution, reference values, thresholds, calibration figures and
reference check), and no reflection request may hold one. The leak guard
looks for the same material in the optimized prompt, as the kind says."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pde_solvers as ps
import pytest
from conftest import ROOT, write_module
from test_optimize import KEYWORD, proposals
from test_optimize_dspy import new_instructions

from fembench_agents.cases import timing
from fembench_agents.kinds import kind_for, register_kind, unregister_kind
from fembench_agents.kinds.contract import HiddenMaterial, HiddenNumbers
from fembench_agents.messages import Message, ModelParams
from fembench_agents.models import make_client, register_script, unregister_script
from fembench_agents.optimize import Models, OptimizeSettings, load_settings, optimize_prompt, scan_prompt
from fembench_agents.optimize.adapter import PromptAdapter
from fembench_agents.optimize.candidates import EpisodeResult
from fembench_agents.optimize.heldout import guarded
from fembench_agents.runs.log import ModelCallRecord, read_log, read_manifest
from fembench_agents.runs.problems import ProblemSets, load_problems
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_tasks

# ----------------------------------------------------------------- function tasks with markers

TASK = '''
import numpy as np
import pytest


def marked_scale_{i}(x, factor):
    """Return the array x times factor; a negative factor raises ValueError."""
    hidden_reference_marker_zq = 0.0
    if factor < 0:
        raise ValueError("factor must not be negative")
    return np.asarray(x, dtype=float) * factor + hidden_reference_marker_zq


def test_scales(fcn):
    """Scaling multiplies every entry."""
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])


def test_negative_factor_raises(fcn):
    """A negative factor raises ValueError."""
    with pytest.raises(ValueError):
        fcn(np.array([1.0]), -1.0)


def fail_hidden_marker_zq(x, factor):
    return np.asarray(x, dtype=float) * factor + 1.0


def fail_unchecked_marker_zq(x, factor):
    return np.asarray(x, dtype=float) * factor


def task_info():
    return {{
        "task_id": "marked_scale_{i}_CC0_H0_T0",
        "task_short_description": "scale a vector",
        "created_date": "2026-01-01",
        "created_by": "tests",
        "main_fcn": marked_scale_{i},
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [[np.array([1.23456789, 2.0]), 2.0], [np.array([1.0]), -1.0]],
        "test_cases": [
            {{"test_code": test_scales, "expected_failures": [fail_hidden_marker_zq]}},
            {{"test_code": test_negative_factor_raises, "expected_failures": [fail_unchecked_marker_zq]}},
        ],
    }}
'''
# the reference source, the reference outputs (2.46913578 = 2 x 1.23456789), the verification
# input, the expected failures' names
FUNCTION_MARKERS = ("hidden_reference_marker_zq", "2.469", "1.2345", "fail_hidden_marker_zq", "fail_unchecked_marker")
GOOD_CODE = (
    "import numpy as np\n\ndef marked_scale_{i}(x, factor):\n    if factor < 0:\n        raise ValueError('no')\n"
    "    return np.asarray(x, dtype=float) * factor\n"
)
GOOD_TESTS = (
    "import numpy as np\nimport pytest\n\ndef test_scales(fcn):\n"
    "    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])\n\n"
    "def test_negative_factor_raises(fcn):\n    with pytest.raises(ValueError):\n        fcn(np.array([1.0]), -1.0)\n"
)
WEAK_TESTS = (
    "import numpy as np\n\ndef test_scales(fcn):\n    fcn(np.array([1.0]), 2.0)\n\n"
    "def test_negative_factor_raises(fcn):\n    fcn(np.array([1.0]), 2.0)\n"
)


@pytest.fixture(scope="module")
def marked_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("marked")
    for i in range(3):
        write_module(folder, f"marked_scale_{i}_CC0_H0_T0.py", TASK.format(i=i))
    return folder


@pytest.fixture(scope="module")
def marked_tasks(marked_folder: Path, sandbox: Sandbox) -> list[Any]:
    return load_tasks(marked_folder, sandbox)


def function_replies(track: str) -> Callable[[list[Message]], str]:
    """Right only when the system prompt holds KEYWORD."""

    def reply(messages: list[Message]) -> str:
        right = messages[0].role == "system" and KEYWORD in messages[0].content
        i = next(i for i in range(3) if f"marked_scale_{i}" in messages[-1].content)
        if track == "tests":
            return f"```python\n{GOOD_TESTS if right else WEAK_TESTS}```"
        body = GOOD_CODE.format(i=i) if right else f"def marked_scale_{i}(x, factor):\n    return None\n"
        return f"```python\n{body}```"

    return reply


# ----------------------------------------------------------------- PDE cases with markers

CASES = "poisson_square_*"  # three Poisson cases on the unit square: the finite-difference solver's
HELD = "poisson_square_jump"  # the numerical reference: its record holds a reference check
SOLUTION_MARKER = "hidden_solution_marker_zq"
SOLVER_MARKER = "hidden_solver_marker_zq"
TAU_ACC, E_BASE, T_BASE = 0.0637281945, 0.00418273645, 7.3829164  # e_base keeps the FD solver accurate
ERROR_ESTIMATE, CHECK_THRESHOLD = 1.92837465e-07, 0.000918273645
PDE_MARKERS = (SOLUTION_MARKER, SOLVER_MARKER, "6.3728", "0.06372", "4.1827", "0.004182", "7.3829", "1.9283", "9.1827")


@pytest.fixture(scope="module")
def cases_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed cases with a marker in every hidden place of the Poisson square cases,
    and a calibration of this machine beside them."""
    target = tmp_path_factory.mktemp("cases") / "cases"
    shutil.copytree(ROOT / "cases", target, ignore=shutil.ignore_patterns("calibration"))
    ids = sorted(p.stem for p in (target / "hidden").glob("poisson_square_*.json"))
    for case_id in ids:
        path = target / "hidden" / f"{case_id}.json"
        record = json.loads(path.read_text())
        if record["solution"] is not None:
            record["solution"] = f"{record['solution']} + 0*{SOLUTION_MARKER}*x*y"
        for figures in record["calibration"].values():
            figures.update(solver=SOLVER_MARKER, e_base=E_BASE, tau_acc=TAU_ACC)
        if record.get("reference_check"):
            record["reference_check"].update(error_estimate=ERROR_ESTIMATE, threshold=CHECK_THRESHOLD)
        path.write_text(json.dumps(record))
    t_base = {case_id: {"numpy-scipy": T_BASE} for case_id in ids}
    timing.save(
        target, timing.MachineCalibration(machine=timing.machine_name(), fingerprint={}, repeats=1, t_base=t_base)
    )
    return target


@pytest.fixture(scope="module")
def pde(cases_dir: Path, sandbox: Sandbox) -> Iterator[ProblemSets]:
    sets = load_problems(["numpy-scipy"], sandbox, {"cases": str(cases_dir)})
    yield sets
    sets.evaluator.close()


def reference_value(cases_dir: Path) -> str:
    """A value of the held-out reference field, written to 6 significant digits."""
    with np.load(cases_dir / "hidden" / f"{HELD}.npz") as npz:
        u = npz["u"]
    for v in np.abs(u[np.isfinite(u)]):
        written = f"{v:.6g}"
        if v > 1e-3 and len(written.replace(".", "").lstrip("0").rstrip("0")) == 6:
            return written
    raise AssertionError("no reference value with 6 significant digits")


def pde_replies(messages: list[Message]) -> str:
    right = messages[0].role == "system" and KEYWORD in messages[0].content
    return f"```python\n{ps.CORRECT if right else ps.WRONG_BOUNDARY}\n```"


# ----------------------------------------------------------------- optimize on each kind


def settings(track: str, engine: str, **kw: object) -> OptimizeSettings:
    name = uuid.uuid4().hex[:8]
    base: dict[str, object] = dict(
        name="k",
        model=f"scripted/task{name}",
        reflection_model=f"scripted/reflect{name}",
        track=track,
        engine=engine,
        budget="6",
        val_fraction=0.5,
        reflection_minibatch_size=1,
        include_reference=False,  # nothing hidden, then: a training reference is shown only when asked for
        concurrency=2,
        params=ModelParams(max_tokens=900),
        reflection_params=ModelParams(max_tokens=512),
    )
    return OptimizeSettings.model_validate({**base, **kw})


def optimize(s: OptimizeSettings, problems: list[Any], evaluator: Any, out: Path, replies: Any) -> Any:
    task, reflect = s.model.split("/")[1], s.reflection_model.split("/")[1]
    register_script(task, replies)
    better = f"Write clean code and {KEYWORD}."
    register_script(reflect, new_instructions(better) if s.engine == "dspy" else proposals(better))
    try:
        models = Models(make_client(s.model, s.params), make_client(s.reflection_model, s.reflection_params))
        return optimize_prompt(s, problems, evaluator, out, models)
    finally:
        unregister_script(task)
        unregister_script(reflect)


def reflection_text(out: Path) -> str:
    calls = [r for r in read_log(out / "reflection") if isinstance(r, ModelCallRecord)]
    assert calls, "no reflection request was made"
    return "\n".join(m.content for r in calls for m in r.request.messages)


@pytest.mark.parametrize(
    ("track", "engine", "include_reference"),
    [("code", "direct", False), ("code", "dspy", False), ("tests", "direct", False), ("code", "direct", True)],
)
def test_function_tasks_optimize_and_nothing_hidden_reaches_the_reflection_model(
    marked_tasks: list[Any], evaluator: Any, tmp_path: Path, track: str, engine: str, include_reference: bool
) -> None:
    """With `include_reference` the training task's reference is shown, as documented: the search finds it."""
    s = settings(track, engine, heldout="marked_scale_0_CC0_H0_T0", include_reference=include_reference)
    result = optimize(s, marked_tasks, evaluator, tmp_path / "out", function_replies(track))
    assert result.complete and KEYWORD in result.system_prompt and result.scores.val == 1.0
    assert (result.split.heldout, result.split.train, result.split.val) == (
        ("marked_scale_0_CC0_H0_T0",),
        ("marked_scale_2_CC0_H0_T0",),
        ("marked_scale_1_CC0_H0_T0",),
    )
    assert not result.leak.leaked, result.leak
    text = reflection_text(tmp_path / "out")
    assert "marked_scale_2" in text  # the training task's prompt and attempt were reflected on
    assert [m for m in FUNCTION_MARKERS if m in text] == (["hidden_reference_marker_zq"] if include_reference else [])
    hidden = kind_for(track).hidden.material(marked_tasks[0], evaluator.scorer_for(track))
    assert "hidden_reference_marker_zq" in hidden.source and "fail_hidden_marker_zq" in hidden.names
    # the candidates' runs are runs of the track optimized on
    manifests = [read_manifest(p) for p in (tmp_path / "out" / "evals").iterdir()]
    assert {m.config["track"] for m in manifests} == {track}


@pytest.mark.parametrize("engine", ["direct", "dspy"])
def test_pde_cases_optimize_and_nothing_hidden_reaches_the_reflection_model(
    pde: ProblemSets, cases_dir: Path, tmp_path: Path, engine: str
) -> None:
    s = settings("numpy-scipy", engine, tasks=CASES, heldout=HELD, cases_path=str(cases_dir))
    result = optimize(s, pde.by_track["numpy-scipy"], pde.evaluator, tmp_path / "out", pde_replies)
    assert result.complete and KEYWORD in result.system_prompt
    assert (result.split.heldout, result.split.train, result.split.val) == (
        (HELD,),
        ("poisson_square_smooth",),
        ("poisson_square_oscillating",),
    )
    assert (result.scores.seed_val, result.scores.val) == (pytest.approx(0.4), 1.0)  # the seed's: not accurate
    assert not result.leak.leaked and result.leak.numbers_checked > 1000, result.leak
    text = reflection_text(tmp_path / "out")
    assert "poisson_square_smooth" in text and "not accurate enough" in text  # the case, its feedback
    assert [m for m in (*PDE_MARKERS, reference_value(cases_dir)) if m in text] == []
    manifests = [read_manifest(p) for p in (tmp_path / "out" / "evals").iterdir()]
    assert {m.config["track"] for m in manifests} == {"numpy-scipy"}
    assert {c for m in manifests for c in m.calibrations} == {pde.evaluator.calibration_id("numpy-scipy")}


# ----------------------------------------------------------------- the leak guard, as each kind says


def test_the_guard_finds_a_pde_cases_hidden_figures_and_solution_in_a_prompt(pde: ProblemSets, cases_dir: Path) -> None:
    hidden = kind_for("numpy-scipy").hidden
    by_id = {c.task_id: c for c in pde.by_track["numpy-scipy"]}
    [held], notes = guarded([by_id[HELD]], hidden, pde.evaluator.scorer_for("numpy-scipy"))
    assert notes == [] and held.source == "" and held.source_label == "manufactured solution"  # numerical
    seen = {t: hidden.visible(by_id[t]) for t in ("poisson_square_smooth", "poisson_square_oscillating")}
    prompt = f"Aim for {TAU_ACC}, beat {E_BASE} in {T_BASE} s; check {CHECK_THRESHOLD}."
    report = scan_prompt(prompt, [held], seen)
    assert [(h.kind, h.text, h.detail) for h in report.hits] == [
        ("number", "0.0637281945", "matches the held-out accuracy threshold (tau_acc) value 0.0637281945"),
        ("number", "0.00418273645", "matches the held-out calibration error (e_base) value 0.00418273645"),
        ("number", "7.3829164", "matches the held-out calibration time (t_base) value 7.3829164"),
        ("number", "0.000918273645", "matches the held-out reference check value 0.000918273645"),
    ]
    # a reference field value counts when written to 6 digits, not by a 4-digit chance
    value = float(reference_value(cases_dir))
    assert [h.detail for h in scan_prompt(f"u = {value:.6g}", [held], seen).hits] == [
        f"matches the held-out reference field value {min(held.values, key=lambda v: abs(v.value - value)).value!r}"
    ]
    assert scan_prompt(f"u = {value:.4g}", [held], seen).hits == []
    smooth = by_id["poisson_square_smooth"]
    [manufactured], _ = guarded([smooth], hidden, pde.evaluator.scorer_for("numpy-scipy"))
    report = scan_prompt(f"The answer is {manufactured.source}.", [manufactured], {})
    assert [(h.kind, h.detail) for h in report.hits] == [
        ("source_line", "a line of the held-out manufactured solution")
    ]
    assert hidden.reference_answer(smooth, "numpy-scipy") is None  # a case shows a reflection step no answer


def test_the_guard_finds_a_function_tasks_expected_failure_name_unless_seen(
    marked_tasks: list[Any], evaluator: Any
) -> None:
    hidden = kind_for("code").hidden
    [held], notes = guarded(marked_tasks[:1], hidden, evaluator.scorer_for("code"))
    assert notes == [] and held.names == ("fail_hidden_marker_zq", "fail_unchecked_marker_zq")
    report = scan_prompt("Never write fail_hidden_marker_zq; fail_hidden_marker_zqx is another name.", [held], {})
    assert [(h.kind, h.task_id, h.text, h.detail) for h in report.hits] == [
        ("name", held.task_id, "fail_hidden_marker_zq", "a name the held-out problem hides from attempts")
    ]
    seen = {marked_tasks[1].task_id: hidden.visible(marked_tasks[1])}  # the training tasks use the same names
    shared = scan_prompt("Never write fail_hidden_marker_zq.", [held], seen)
    assert shared.hits == [] and [h.also_in for h in shared.overlaps] == [(marked_tasks[1].task_id,)]
    assert report.summary() == "LEAK: 1 hits (name)"


# ----------------------------------------------------------------- a third kind's part is what is asked


class ThirdHidden:
    def __init__(self) -> None:
        self.asked: list[tuple[str, object]] = []

    def material(self, problem: Any, scorer: Any) -> HiddenMaterial:
        self.asked.append(("material", problem.task_id))
        return HiddenMaterial(
            source="secret = compute_the_answer(alpha, beta, gamma)",
            source_label="third kind's secret",
            numbers=(HiddenNumbers("magic constant", [12.3456789]),),
            names=("third_secret",),
        )

    def visible(self, problem: Any) -> str:
        self.asked.append(("visible", problem.task_id))
        return f"visible text of {problem.task_id}"

    def reference_answer(self, problem: Any, track: str) -> str | None:
        self.asked.append(("reference_answer", (problem.task_id, track)))
        return f"answer to {problem.task_id} on {track}" if problem.task_id == "p1" else None


class ThirdKind:
    track = "third-kind-track"
    label = "third"
    default_path = "third"
    preload = ()
    outcome_type = dict
    scorer_key = "third"
    feedback = None

    def __init__(self) -> None:
        self.hidden = ThirdHidden()

    def scorer(self, sandbox: Any, options: Any) -> Any:
        return ThirdScorer()


class ThirdScorer:
    calibration_id = None

    def close(self) -> None:
        pass


@pytest.fixture
def third() -> Iterator[ThirdKind]:
    kind = ThirdKind()
    register_kind(kind)  # type: ignore[arg-type]
    yield kind
    unregister_kind(kind.track)


class Problem:
    def __init__(self, task_id: str) -> None:
        self.task_id = task_id


def test_the_leak_check_and_the_reflected_reference_ask_the_problems_kind(
    third: ThirdKind, sandbox: Sandbox, tmp_path: Path
) -> None:
    from fembench_agents.optimize.search import check_leaks
    from fembench_agents.optimize.split import Split
    from fembench_agents.scoring.evaluator import Evaluator

    evaluator = Evaluator(sandbox)
    problems = {t: Problem(t) for t in ("p0", "p1", "p2")}
    split = Split(heldout_selector="p0", val_fraction=0.5, seed=0, heldout=("p0",), train=("p1",), val=("p2",))
    prompt = "Write secret = compute_the_answer(alpha, beta, gamma) with 12.3457 and third_secret."
    report = check_leaks(tmp_path, prompt, split, problems, evaluator, third.track)
    assert [(h.kind, h.detail) for h in report.hits] == [
        ("source_line", "a line of the held-out third kind's secret"),
        ("number", "matches the held-out magic constant value 12.3456789"),
        ("name", "a name the held-out problem hides from attempts"),
    ]
    assert third.hidden.asked == [("material", "p0"), ("visible", "p1"), ("visible", "p2")]
    assert isinstance(evaluator.scorer_for(third.track), ThirdScorer)

    evaluations = type("Evaluations", (), {"track": third.track})()
    adapter = PromptAdapter(evaluations, None, problems, frozenset({"p1"}), True)  # type: ignore[arg-type]
    rows = [
        adapter.record(EpisodeResult(task_id=t, score=0.5, passed=False, prompt="P", reply="R", code="C", feedback="F"))
        for t in ("p1", "p2")
    ]
    assert [r.get("Reference implementation") for r in rows] == ["answer to p1 on third-kind-track", None]
    assert third.hidden.asked[3:] == [("reference_answer", ("p1", third.track))]  # a validation problem: never


# ----------------------------------------------------------------- settings and the experiment file


def test_cases_and_library_are_the_problems_and_the_track_as_run_spells_them() -> None:
    base = {"model": "m", "reflection_model": "r", "heldout": "x"}
    pde_settings = load_settings(None, {**base, "cases": "poisson_*", "library": "scikit-fem"})
    assert (pde_settings.track, pde_settings.tasks) == ("scikit-fem", "poisson_*")
    assert load_settings(None, {**base, "cases": "poisson_*"}).track == "numpy-scipy"  # as `run --cases`
    assert load_settings(None, {**base, "track": "tests"}).track == "tests"
    with pytest.raises(ValueError, match="track 'tests' and library 'scikit-fem': give one of them"):
        load_settings(None, {**base, "track": "tests", "library": "scikit-fem"})
    with pytest.raises(ValueError, match=r"track \(--track, --library\): Value error, unknown track 'nope'"):
        load_settings(None, {**base, "track": "nope"})
    # an optimization begun before tracks were settings resumes: its identity has no new key
    code = load_settings(None, base).identity()
    assert "track" not in code and "tasks" not in code and "cases_path" not in code
    assert load_settings(None, base).later() == {}  # nor has the provenance of its prompt
    assert (pde_settings.identity()["track"], pde_settings.identity()["tasks"]) == ("scikit-fem", "poisson_*")


def test_the_pde_experiment_file_runs_on_the_scripted_models_from_the_command_line(
    cases_dir: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from fembench_agents.cli import app

    experiment = ROOT / "experiments" / "gepa_pde_embedded.toml"
    s = load_settings(experiment, {"model": "m", "reflection_model": "r"})
    assert (s.track, s.tasks, s.heldout, s.engine) == ("numpy-scipy", CASES, HELD, "direct")
    name = uuid.uuid4().hex[:8]
    register_script(f"task{name}", pde_replies)
    register_script(f"reflect{name}", proposals(f"Write clean code and {KEYWORD}."))
    out, prompt_out = tmp_path / "out", tmp_path / "pde.json"
    try:
        result = CliRunner().invoke(
            app,
            [
                "optimize",
                "--experiment",
                str(experiment),
                "--model",
                f"scripted/task{name}",
                "--reflection-model",
                f"scripted/reflect{name}",
                "--budget",
                "4",
                "--cases-path",
                str(cases_dir),
                "--out",
                str(out),
                "--prompt-out",
                str(prompt_out),
                "--cache",
                str(tmp_path / "cache"),
            ],
        )
    finally:
        unregister_script(f"task{name}")
        unregister_script(f"reflect{name}")
    assert result.exit_code == 0, result.output
    judgement = json.loads((out / "heldout.json").read_text())
    assert [r["task_id"] for r in judgement["rows"]] == [HELD]
    saved = json.loads(prompt_out.read_text())
    assert KEYWORD in saved["system_prompt"]
    assert (saved["provenance"]["track"], saved["provenance"]["tasks"]) == ("numpy-scipy", CASES)
    runs = [read_manifest(out / "heldout" / label).config for label in ("baseline", "optimized")]
    assert [(c["track"], c["tasks"]) for c in runs] == [("numpy-scipy", HELD)] * 2


def test_cli_optimize_on_the_tests_track_names_the_runs_that_judge_it(marked_folder: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fembench_agents.cli import app

    experiment = tmp_path / "tests_track.toml"
    experiment.write_text(
        'kind = "optimize"\nname = "tt"\ntrack = "tests"\nheldout = "marked_scale_0_CC0_H0_T0"\n'
        "val_fraction = 0.5\nreflection_minibatch_size = 1\nheldout_repeats = 2\n"
        "[params]\ntemperature = 0.0\nmax_tokens = 512\n"
    )
    name = uuid.uuid4().hex[:8]
    register_script(f"task{name}", function_replies("tests"))
    register_script(f"reflect{name}", proposals(f"Write clean code and {KEYWORD}."))
    out, prompt_out = tmp_path / "out", tmp_path / "tt.json"
    try:
        result = CliRunner().invoke(
            app,
            [
                "optimize",
                "--experiment",
                str(experiment),
                "--model",
                f"scripted/task{name}",
                "--reflection-model",
                f"scripted/reflect{name}",
                "--budget",
                "4",
                "--tasks-path",
                str(marked_folder),
                "--out",
                str(out),
                "--prompt-out",
                str(prompt_out),
                "--cache",
                str(tmp_path / "cache"),
                "--no-evaluate",
            ],
        )
    finally:
        unregister_script(f"task{name}")
        unregister_script(f"reflect{name}")
    assert result.exit_code == 0, result.output
    tail = "next, on the held-out problems (one run per agent):\n" + "".join(
        f"  fembench-agents run --model scripted/task{name} --agent {agent} --track tests "
        f"--tasks marked_scale_0_CC0_H0_T0 --repeats 2 --tasks-path {marked_folder} --cases-path cases "
        "--temperature 0.0 --max-tokens 512\n"
        for agent in ("single-shot", f"prompt:{prompt_out}")
    )
    assert result.stdout.endswith(tail), result.stdout
    assert {read_manifest(p).config["track"] for p in (out / "evals").iterdir()} == {"tests"}


# ----------------------------------------------------------------- one run path, batch by batch


def test_a_run_evaluated_batch_by_batch_grows_its_selection_and_runs_only_the_batch(
    load: Callable[[str], Any], evaluator: Any, tmp_path: Path
) -> None:
    import asyncio

    from fembench_agents.runs.run import RunConfig, execute_run

    scale, mode = load("scale_vector_CC0_H0_T0"), load("mode_sign_CC1_H0_T0")
    name = uuid.uuid4().hex[:8]
    register_script(name, lambda messages: "no code")
    model = make_client(f"scripted/{name}", ModelParams())
    out = tmp_path / "run"
    config = RunConfig(model=model.model, agent="single-shot", tasks=scale.task_id)
    wider = RunConfig(model=model.model, agent="single-shot", tasks=f"{mode.task_id},{scale.task_id}")
    try:
        first = asyncio.run(execute_run(config, [scale, mode], out, model, evaluator, batch=[scale.task_id]))
        with pytest.raises(ValueError, match="holds a different run"):  # an ordinary run's selection stays
            asyncio.run(execute_run(wider, [scale, mode], out, model, evaluator))
        both = asyncio.run(execute_run(wider, [scale, mode], out, model, evaluator, batch=[mode.task_id]))
    finally:
        unregister_script(name)
    assert [r.task_id for r in first] == [scale.task_id]
    assert [r.task_id for r in both] == [mode.task_id, scale.task_id]  # the finished one read back
    manifest = read_manifest(out)
    assert manifest.config["tasks"] == f"{mode.task_id},{scale.task_id}"
    assert manifest.task_hashes == {scale.task_id: scale.content_hash, mode.task_id: mode.content_hash}
    assert len([r for r in read_log(out) if isinstance(r, ModelCallRecord)]) == 2  # one call per episode


def test_a_fresh_held_out_set_is_made_kept_out_and_judged_beside_the_published_one(
    cases_dir: Path, tmp_path: Path
) -> None:
    """`heldout = "poisson_square_jump,fresh:poisson/unit_square:seed=7:count=1"` with `cases =
    "poisson_square_*"`: the fresh case is made, takes part held out (never trained or validated
    on), and the judgement gives the published and the fresh held-out totals side by side."""
    from typer.testing import CliRunner

    from fembench_agents.cli import app

    experiment = ROOT / "experiments" / "gepa_pde_fresh_embedded.toml"
    fresh = "fresh_v2_poisson_unit_square_s7_00"
    machine = timing.load(cases_dir)  # its time on this machine given, as the others' are (a run times it itself:
    t_base = {**machine.t_base, fresh: {"numpy-scipy": T_BASE}}  # tests/test_fresh_selection.py)
    timing.save(cases_dir, machine.model_copy(update={"t_base": t_base}))
    name = uuid.uuid4().hex[:8]
    register_script(f"task{name}", pde_replies)
    register_script(f"reflect{name}", proposals(f"Write clean code and {KEYWORD}."))
    out = tmp_path / "out"
    args = ["optimize", "--experiment", str(experiment), "--model", f"scripted/task{name}"]
    args += ["--reflection-model", f"scripted/reflect{name}", "--cases-path", str(cases_dir), "--out", str(out)]
    args += ["--prompt-out", str(tmp_path / "p.json"), "--cache", str(tmp_path / "cache")]
    try:
        result = CliRunner().invoke(app, args)
    finally:
        unregister_script(f"task{name}")
        unregister_script(f"reflect{name}")
    assert result.exit_code == 0, result.output
    judgement = json.loads((out / "heldout.json").read_text())
    assert [(r["task_id"], r["origin"]) for r in judgement["rows"]] == [(fresh, "fresh"), (HELD, "published")]
    split = json.loads((out / "optimize.json").read_text())["split"]
    assert split["heldout"] == [fresh, HELD] and fresh not in split["train"] + split["val"]
    md = (out / "heldout.md").read_text()
    rows = {r["task_id"]: r for r in judgement["rows"]}
    for origin, task in (("published", HELD), ("fresh", fresh)):
        r = rows[task]
        assert f"| **{origin} held-out** | **{r['baseline_passed']}/1** | **{r['optimized_passed']}/1** |" in md

"""PDE cases through the same run, log, report and replay as function tasks:
a feedback loop on a case with a scripted model (a wrong solver, then a
correct one), the run directory it leaves, the per-stage report, a replay
and a rescore from the CLI, and the refusals a user meets first."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pde_solvers as ps
import pytest
from conftest import ROOT

from fembench_agents.cases import timing
from fembench_agents.cases.outcomes import CaseOutcome
from fembench_agents.cases.problem import SolverCase, load_cases
from fembench_agents.cases.scorer import CaseScorer
from fembench_agents.cases.sensitivity import curves, passes
from fembench_agents.messages import Message, ModelParams
from fembench_agents.models import make_client, register_script, unregister_script
from fembench_agents.report import build_report, render_markdown
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, read_log, read_manifest
from fembench_agents.runs.replay import compare_runs
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.outcomes import StageResult
from fembench_agents.scoring.sandbox import Sandbox

CLI = str(Path(os.sys.executable).parent / "fembench-agents")  # type: ignore[attr-defined]
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "400", "NO_COLOR": "1"}


@pytest.fixture(scope="module")
def cases_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed cases, with a calibration of this machine beside them."""
    target = tmp_path_factory.mktemp("cases") / "cases"
    shutil.copytree(ROOT / "cases", target, ignore=shutil.ignore_patterns("calibration"))
    timing.save(
        target,
        timing.MachineCalibration(
            machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={ps.CASE: {"numpy-scipy": 1.0}}
        ),
    )
    return target


def replies(messages: list[Message]) -> str:
    """A solver that gets the boundary sign wrong, until the feedback says it is inaccurate."""
    prompt = messages[-1].content
    source = ps.CORRECT if "is not accurate enough" in prompt else ps.WRONG_BOUNDARY
    return f"```python\n{source}\n```"


@pytest.fixture(scope="module")
def recorded(cases_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    name = f"cases{uuid.uuid4().hex[:8]}"
    register_script(name, replies)
    out = tmp_path_factory.mktemp("run") / "run"
    cases = load_cases(cases_dir)
    config = RunConfig(
        model=f"scripted/{name}",
        agent="feedback-loop:3",
        tasks=ps.CASE,
        track="numpy-scipy",
        params=ModelParams(max_tokens=900),
    )
    try:
        with Sandbox(workers=2) as sandbox:
            evaluator = Evaluator(sandbox, scorers={"pde": CaseScorer(sandbox, timing.load(cases_dir))})
            client = make_client(config.model, config.params)
            asyncio.run(execute_run(config, cases, out, client, evaluator))
            evaluator.close()
    finally:
        unregister_script(name)
    return out


def test_a_feedback_loop_repairs_a_case_and_the_log_says_how(recorded: Path, cases_dir: Path) -> None:
    records = read_log(recorded)
    attempts = [r for r in records if isinstance(r, AttemptRecord)]
    episodes = [r for r in records if isinstance(r, EpisodeRecord)]
    assert [(a.track, a.task_id, a.attempt_index) for a in attempts] == [
        ("numpy-scipy", ps.CASE, 0),
        ("numpy-scipy", ps.CASE, 1),
    ]
    first, second = (a.outcome for a in attempts)
    assert isinstance(first, CaseOutcome) and isinstance(second, CaseOutcome)
    assert first.reason == "too_inaccurate" and second.passed
    assert attempts[0].feedback is not None and attempts[0].feedback.score == 0.4
    # the repair prompt carries the feedback, the previous code and the original prompt with the case_spec
    repair = attempts[1].messages[-1].content
    assert repair.startswith("Your previous solver ran but is not accurate enough: its relative L2 error over")
    assert '"id": "poisson_square_oscillating"' in repair and "Write `solve(case_spec: dict) -> dict`" in repair
    (episode,) = episodes
    assert episode.passed and episode.first_pass_attempt == 1 and episode.score == 1.0 and episode.attempts == 2
    manifest = read_manifest(recorded)
    assert manifest.config["track"] == "numpy-scipy"
    assert manifest.calibrations == [timing.load(cases_dir).calibration_id]
    case: SolverCase = next(c for c in load_cases(cases_dir) if c.task_id == ps.CASE)
    assert manifest.task_hashes == {ps.CASE: case.content_hash}
    # the same spec over a rebuilt evaluator-only record (a changed reference): another case to a resumed run
    assert dataclasses.replace(case, record_hash="0" * 64).content_hash != case.content_hash


def test_the_report_gives_per_stage_rates_for_cases(recorded: Path) -> None:
    report = build_report([recorded])
    (row,) = report.case_stages
    assert (row.library, row.family, row.attempts, row.executes, row.accurate, row.fast) == (
        "numpy-scipy",
        "poisson",
        2,
        2,
        1,
        1,
    )
    assert (row.executes_rate, row.accurate_rate, row.fast_rate, row.pass_rate) == (1.0, 0.5, 1.0, 0.5)
    md = render_markdown(report)
    assert "## PDE cases: per stage" in md
    assert "| feedback-loop:3 | numpy-scipy | poisson | 2 | 2 (1.00) | 1 (0.50) | 1 (1.00) | 0.50 |" in md


def test_sensitivity_recomputes_pass_rates_from_stored_errors_and_times(recorded: Path, tmp_path: Path) -> None:
    """No solver runs: each verdict is recomputed from the outcome's error, time and thresholds."""
    first, second = (r.outcome for r in read_log(recorded) if isinstance(r, AttemptRecord))
    assert isinstance(first, CaseOutcome) and isinstance(second, CaseOutcome) and first.thresholds is not None
    loose = 2 * first.relative_l2_error / first.thresholds.e_base  # type: ignore[operator]
    acc, time_ = curves([recorded], alpha_acc=(1e-9, 10.0, loose), alpha_time=(1e-9, 3.0))
    assert (acc.varied, acc.alphas, acc.pass_rates, acc.attempts) == (
        "alpha_acc",
        (1e-9, 10.0, loose),
        (0.0, 0.5, 1.0),
        2,
    )
    assert (time_.varied, time_.pass_rates) == ("alpha_time", (0.0, 0.5))
    assert passes(second) == second.passed and passes(first) == first.passed
    res = _cli("report", str(recorded), "--sensitivity", "--out", str(tmp_path / "s"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "scripted" in res.stdout and "(n=2) pass rate by alpha_acc: 1:" in res.stdout
    assert (tmp_path / "s" / "sensitivity.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "s" / "sensitivity.svg").read_text().startswith("<?xml")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)


def test_replay_and_rescore_of_a_case_run_are_identical(recorded: Path, cases_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(recorded, copy)
    replay = _cli("replay", str(copy), "--cases-path", str(cases_dir), cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    assert "replayed: every attempt's outcome is identical" in replay.stdout
    assert len([r for r in read_log(copy / "replay") if isinstance(r, AttemptRecord)]) == 2
    rescore = _cli("replay", str(copy), "--rescore", "--cases-path", str(cases_dir), cwd=tmp_path)
    assert rescore.returncode == 0, rescore.stderr
    assert "re-scored: every attempt's outcome is identical" in rescore.stdout
    show = _cli("replay", str(copy), "--show", ps.CASE, cwd=tmp_path)
    assert show.returncode == 0 and "failed at accurate (too_inaccurate)" in show.stdout


def test_a_run_calibrates_once_the_pairs_it_needs(cases_dir: Path, tmp_path: Path) -> None:
    """No machine calibration: the run times its one (case, library) pair before its first
    episode and keeps it; the next run needs nothing; a score without it still refuses."""
    bare = tmp_path / "cases"
    shutil.copytree(cases_dir, bare, ignore=shutil.ignore_patterns("calibration"))
    run = ["run", "--model", "scripted/echo", "--cases", ps.CASE, "--library", "numpy-scipy"]
    run += ["--cases-path", str(bare), "--cache", str(tmp_path / "cache")]
    first = _cli_scripted(*run, "--out", str(tmp_path / "r1"), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "calibrating numpy-scipy on this machine (once): 1 case(s): done" in first.stderr
    machine = json.loads((bare / "calibration" / f"{timing.machine_name()}.json").read_text())
    assert list(machine["t_base"]) == [ps.CASE] and list(machine["t_base"][ps.CASE]) == ["numpy-scipy"]
    assert machine["repeats"] == 5
    second = _cli_scripted(*run, "--out", str(tmp_path / "r2"), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "calibrating" not in second.stderr
    (bare / "calibration" / f"{timing.machine_name()}.json").unlink()
    folder = tmp_path / "programs"
    folder.mkdir()
    (folder / f"{ps.CASE}_numpy-scipy_right.py").write_text(ps.CORRECT)
    score = _cli("score", str(folder), "--cases", "--cases-path", str(bare), cwd=tmp_path)
    assert score.returncode == 2
    assert f"error: no machine calibration at {bare}/calibration/" in score.stderr
    assert "run `fembench-agents cases calibrate` on this machine" in score.stderr


def _cli_scripted(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI with the scripted test provider (`scripted/echo` answers with its prompt)."""
    code = "from fembench_agents.models.scripted import ensure_registered; ensure_registered(); "
    code += "from fembench_agents.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600
    )


def test_a_selection_matching_no_case_is_refused(cases_dir: Path, tmp_path: Path) -> None:
    unknown = _cli(
        "run", "--cases", "no_such_case_*", "--library", "numpy-scipy", "--cases-path", str(cases_dir), cwd=tmp_path
    )
    assert unknown.returncode == 2 and "task selector 'no_such_case_*' matches no task" in unknown.stderr


def test_score_dir_gives_per_stage_counts_for_case_programs(cases_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "programs"
    folder.mkdir()
    for label, source in (("right", ps.CORRECT), ("sign", ps.WRONG_BOUNDARY), ("nan", ps.NAN_INSIDE)):
        (folder / f"{ps.CASE}_numpy-scipy_{label}.py").write_text(source)
    (folder / "not_a_case_numpy-scipy_x.py").write_text("")
    r = _cli("score", str(folder), "--cases", "--cases-path", str(cases_dir), "--json", "out.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import json

    data: dict[str, Any] = json.loads((tmp_path / "out.json").read_text())
    counts = {s["label"]: (s["attempts"], s["executes"], s["accurate"], s["fast"]) for s in data["summaries"]}
    assert counts == {"nan": (1, 0, 0, 0), "right": (1, 1, 1, 1), "sign": (1, 1, 0, 0)}
    assert data["unmatched_files"] == ["not_a_case_numpy-scipy_x.py"]


def test_a_replayed_pde_attempt_differs_by_its_verdict_not_by_its_timings() -> None:
    def attempt(accurate: str, fast: str, seconds: float) -> AttemptRecord:
        stages = (
            StageResult(stage="executes", passed=True),
            StageResult(stage="accurate", passed=True, detail=accurate),
            StageResult(stage="fast", passed=False, reason="too_slow", detail=fast, seconds=seconds),
        )
        outcome = CaseOutcome(
            task_id="c", passed=False, stages=stages, library="numpy-scipy", family="poisson",
            relative_l2_error=1.2e-4, solve_seconds=seconds, timings=(seconds,),
        )  # fmt: skip
        return AttemptRecord(
            episode="e", task_id="c", track="numpy-scipy", agent="a", model="m", repeat=0, attempt_index=0,
            messages=(), reply="", outcome=outcome,
        )  # fmt: skip

    original = [attempt("error 1.2e-04", "fastest 0.41 s of 3", 0.41)]
    # a slower machine: other times, the same verdict
    assert compare_runs(original, [attempt("error 1.2e-04", "fastest 0.93 s of 3", 0.93)]) == []
    (change,) = compare_runs(original, [attempt("error 1.3e-04", "fastest 0.41 s of 3", 0.41)])
    assert (change.episode, change.attempt_index) == ("e", 0)
    assert "error 1.2e-04" in change.before and "error 1.3e-04" in change.after

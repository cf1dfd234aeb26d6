"""`--max-cost`: a spend cap that stops a run (or a whole grid) and lets a resume
with a higher cap go on without repeating a call; `max_cost` in experiment files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from priced_grid import (
    CORRECT_MODE,
    MODE,
    PRICED,
    SCALE,
    completion_tokens,
    fenced,
    runner,
)

from fembench_agents.cli import app
from fembench_agents.messages import Message, ModelRequest, ModelResponse, Usage
from fembench_agents.runs.budget import BudgetReached, SpendCap
from fembench_agents.runs.experiments import load_experiment
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, ModelCallRecord, RunLog, read_log
from fembench_agents.runs.recording import ModelUnavailable

pytest_plugins = ["priced_grid"]  # its fixtures: two_tasks, priced

# ----------------------------------------------------------------- the spend cap


def test_the_spend_counts_each_sample_once_and_refuses_calls_once_reached() -> None:
    seen: list[str] = []
    cap = SpendCap(0.05, on_change=lambda b: seen.append(b.line()))

    def response(request_hash: str, cost: float | None) -> ModelResponse:
        return ModelResponse(text="", usage=Usage(), cost_usd=cost, request_hash=request_hash)

    cap.check()
    cap.charge(response("a", 0.0123))
    cap.charge(response("a", 0.0123))  # the same sample served again (the cache): counted once
    cap.charge(response("b", None))  # no usage returned: $0
    assert seen == ["$0.0123 of $0.0500", "$0.0123 of $0.0500"]
    cap.charge(response("c", 0.04))
    assert cap.reached and cap.line() == "$0.0523 of $0.0500"
    with pytest.raises(ModelUnavailable) as info:
        cap.check()
    assert (info.value.error, info.value.permanent) == (
        "stopped: budget: spent $0.0523 of $0.0500 (--max-cost)",
        "budget",
    )
    assert SpendCap(12.0, spent=3.456).line() == "$3.46 of $12.00"
    with pytest.raises(ValueError, match="max cost must be >= 0 USD, got -1"):
        SpendCap(-1.0)
    assert SpendCap(0.0).reached  # a cap of $0 is allowed: no call starts
    stop = BudgetReached(SpendCap(0.05, spent=0.06), 2, 1)
    assert (stop.kind, stop.message, stop.failed, stop.not_run) == (
        "budget",
        "budget reached: spent $0.0600 of $0.0500; 2 episodes stopped, 1 not started",
        2,
        1,
    )


def test_the_spend_logged_before_counts_each_sample_once(tmp_path: Path) -> None:
    request = ModelRequest(model="m", messages=(Message(role="user", content="hi"),))

    def call(request_hash: str, cost: float) -> ModelCallRecord:
        response = ModelResponse(text="", usage=Usage(), cost_usd=cost, request_hash=request_hash)
        return ModelCallRecord(
            episode="e", task_id="t", attempt_index=0, request=request, request_hash=request_hash, response=response
        )

    with RunLog(tmp_path / "a") as log:
        log.append(call("x", 0.01))
        log.append(call("y", 0.02))
    with RunLog(tmp_path / "b") as log:  # another run of the grid served sample x from the shared cache
        log.append(call("x", 0.01))
    cap = SpendCap(1.0)
    cap.count_logged([tmp_path / "a", tmp_path / "b", tmp_path / "missing"])
    assert cap.spent == pytest.approx(0.03)


def test_max_cost_stops_the_run_and_a_resume_with_a_higher_cap_finishes_it_without_repeating_a_call(
    priced: str, two_tasks: Path, tmp_path: Path
) -> None:
    from fembench_agents.models.scripted import get_script

    # A call costs its prompt tokens x $100/M plus its completion tokens x $200/M. The mode task
    # runs first (its id sorts first): 108 prompt tokens (the dry run's count) and its reply's. A cap
    # $0.001 above that lets the scale task's first attempt start (spent < cap: it costs more than
    # 125 x $100/M = $0.0125) and stops its second (spent >= cap), in flight.
    mode_cost = 108 * 1e-4 + completion_tokens(fenced(CORRECT_MODE)) * 2e-4
    cap = round(mode_cost + 0.001, 6)
    args = [
        "run",
        "--model",
        priced,
        "--agent",
        "feedback-loop:2",
        "--tasks-path",
        str(two_tasks),
        "--repeats",
        "2",
        "--concurrency",
        "1",
        "--sandbox-workers",
        "1",
        "--cache",
        str(tmp_path / "cache"),
        "--out",
        str(tmp_path / "run"),
    ]
    stopped = runner.invoke(app, [*args, "--max-cost", str(cap)])
    assert stopped.exit_code == 1, stopped.output
    assert get_script(PRICED).calls == 2  # mode (right at once), scale's first attempt (wrong)
    records = read_log(tmp_path / "run")
    calls = [r for r in records if isinstance(r, ModelCallRecord)]
    episodes = [r for r in records if isinstance(r, EpisodeRecord)]
    attempts = [r for r in records if isinstance(r, AttemptRecord)]
    spent = sum(c.response.cost_usd or 0.0 for c in calls if c.response)
    assert calls[0].response and calls[0].response.cost_usd == pytest.approx(mode_cost)
    assert mode_cost < cap <= spent
    assert [(e.task_id, e.repeat, e.status, e.error_kind) for e in episodes] == [
        (MODE, 0, "done", None),
        (SCALE, 0, "error", "budget"),
    ]
    assert episodes[1].error == f"stopped: budget: spent ${spent:.4f} of ${cap:.4f} (--max-cost)"
    assert [(a.task_id, a.attempt_index, a.model_error is None) for a in attempts] == [
        (MODE, 0, True),
        (SCALE, 0, True),
        (SCALE, 1, False),  # refused before the call: no model-call record for it
    ]
    assert stopped.stderr.splitlines()[-3:] == [
        f"budget reached: spent ${spent:.4f} of ${cap:.4f}; 1 episode stopped, 2 not started",
        "run the same command again to resume: failed and unstarted episodes are retried",
        "(with a higher --max-cost: what was spent counts against it)",
    ]

    same_cap = runner.invoke(app, [*args, "--max-cost", str(cap)])
    assert same_cap.exit_code == 1 and get_script(PRICED).calls == 2  # the cap is still reached: nothing starts
    assert "1 episode stopped" not in same_cap.stderr and "0 episodes stopped, 3 not started" in same_cap.stderr

    resumed = runner.invoke(app, [*args, "--max-cost", "1"])
    assert resumed.exit_code == 0, resumed.output
    # scale r0 again: its first attempt from the cache, its second asked; mode r1: 1 call; scale r1: 2.
    # 2 + 4 = 6 calls, what an uninterrupted run makes: none repeated.
    assert get_script(PRICED).calls == 6
    final = {(e.task_id, e.repeat): e for e in read_log(tmp_path / "run") if isinstance(e, EpisodeRecord)}
    assert {k: (e.status, e.passed, e.attempts) for k, e in final.items()} == {
        (MODE, 0): ("done", True, 1),
        (SCALE, 0): ("done", True, 2),
        (MODE, 1): ("done", True, 1),
        (SCALE, 1): ("done", True, 2),
    }
    assert final[(SCALE, 0)].reused_calls == 1  # its first attempt, served from the cache


def test_the_cap_of_a_compare_is_the_whole_grid_s_and_its_stop_is_one_line(
    priced: str, two_tasks: Path, tmp_path: Path
) -> None:
    from fembench_agents.models.scripted import get_script

    # Both runs start their first episode together (the cap is not reached yet: the two calls are
    # in flight at once and both count); then the grid's spend is past the cap and neither run
    # starts its second episode.
    result = runner.invoke(
        app,
        ["compare", "--models", priced, "--agents", "single-shot,feedback-loop:2", "--tasks", MODE]
        + ["--tasks-path", str(two_tasks), "--repeats", "2", "--concurrency", "1", "--sandbox-workers", "1"]
        + ["--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "grid"), "--max-cost", "0.000001"],
    )
    assert result.exit_code == 1, result.output
    assert get_script(PRICED).calls == 2
    spent = sum(
        r.response.cost_usd or 0.0
        for run in ("single-shot", "feedback-loop-2")
        for r in read_log(tmp_path / "grid" / f"scripted-{PRICED}__{run}")
        if isinstance(r, ModelCallRecord) and r.response
    )
    assert [line for line in result.stderr.splitlines() if line.startswith("budget reached")] == [
        f"budget reached: spent ${spent:.4f} of $0.0000; 0 episodes stopped, 2 not started"
    ]


def test_the_progress_line_shows_the_spend_against_the_cap() -> None:
    from fembench_agents.cli.grid_run import _progress_text

    assert _progress_text(None) == "episodes"
    assert _progress_text(SpendCap(0.05, spent=0.0123)) == "episodes $0.0123 of $0.0500"


def test_max_cost_refuses_a_model_without_a_price_before_anything_starts(two_tasks: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["run", "--model", "scripted/echo", "--tasks-path", str(two_tasks), "--out", str(tmp_path / "r")]
        + ["--max-cost", "1"],
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: --max-cost cannot cap model 'scripted/echo': litellm has no price for it, so its calls would "
        "count $0; run it without --max-cost"
    ]
    assert not (tmp_path / "r").exists()


def test_max_cost_refuses_a_model_litellm_prices_at_zero_but_not_the_free_embedded_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fembench_agents.models import factory
    from fembench_agents.runs.grid import PlannedRun, grid_budget
    from fembench_agents.runs.run import RunConfig

    # litellm's map lists some models with no prices and get_model_info answers 0 for them
    monkeypatch.setattr(factory, "prices_per_million", lambda model, options=None: (0.0, 0.0))
    runs = [PlannedRun(RunConfig(model=m, agent="single-shot"), tmp_path / m) for m in ("openai/gpt-4o-mini", "local")]
    with pytest.raises(ValueError) as info:
        grid_budget(runs, 1.0)
    assert str(info.value) == (
        "--max-cost cannot cap model 'openai/gpt-4o-mini': litellm prices it at $0 per token, so its calls would "
        "count $0; run it without --max-cost"
    )
    assert grid_budget(runs[1:], 1.0).line() == "$0.00 of $1.00"


def test_max_cost_in_an_experiment_file_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "grid.toml"
    base = 'name = "grid"\nmodels = ["scripted/a"]\nagents = ["single-shot"]\n'
    path.write_text(base + "max_cost = 2.5\n")
    assert load_experiment(path).max_cost == 2.5
    path.write_text(base)
    assert load_experiment(path).max_cost is None
    path.write_text(base + "max_cost = -1\n")
    with pytest.raises(ValueError) as info:
        load_experiment(path)
    assert str(info.value) == f"{path}: max_cost: Input should be greater than or equal to 0"

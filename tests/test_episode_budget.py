"""Matched budgets (`--episode-budget`): the same caps on every agent's episode,
whatever its loop, checked before each model call; the episode records the
cap that ended it, the run's identity holds the budget, and the report says
when the runs' budgets differ."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import CORRECT_SCALE
from run_builders import make_run
from test_agents import WRONG_SCALE, fenced
from test_report_paper import mixed_records

from fembench_agents.models import make_client, register_script, unregister_script
from fembench_agents.report import build_report
from fembench_agents.report.render import budget_lines, render_markdown
from fembench_agents.runs.episode_budget import EpisodeBudget
from fembench_agents.runs.log import EpisodeRecord, read_log, read_manifest
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite.model import Task


def test_a_budget_is_read_from_its_text_and_names_what_is_wrong() -> None:
    budget = EpisodeBudget.parse("usd=0.5, calls=3,seconds=60")
    assert budget == EpisodeBudget(calls=3, usd=0.5, seconds=60.0)
    assert budget.describe() == "calls=3,usd=0.5,seconds=60"
    assert EpisodeBudget.of({"tokens": 1000}) == EpisodeBudget(tokens=1000) and EpisodeBudget.of(None) is None
    for text, words in [
        ("calls=3,steps=2", "expected KEY=VALUE with KEY one of calls, tokens, usd, seconds"),
        ("calls=3,calls=4", "calls given twice"),
        ("calls=2.5", "calls must be an integer, got '2.5'"),
        ("tokens=1.5", "tokens must be an integer, got '1.5'"),
        ("tokens=many", "tokens must be an integer, got 'many'"),
        ("calls=4=5", "calls must be an integer, got '4=5'"),  # the first '=' splits key from value
        ("usd=cheap", "usd must be a number, got 'cheap'"),
        ("calls=0", "calls must be positive, got 0"),
        ("", "give at least one of calls, tokens, usd, seconds"),
    ]:
        with pytest.raises(ValueError, match=words):
            EpisodeBudget.parse(text)


def test_the_first_cap_reached_ends_the_episode() -> None:
    budget = EpisodeBudget(calls=3, tokens=100, usd=0.01, seconds=5)
    assert budget.reached(2, 99, 0.009, 4.9) is None
    assert budget.reached(3, 99, 0.0, 0.0) == "calls"  # reached at the cap, not past it
    assert budget.reached(0, 100, 0.0, 0.0) == "tokens"
    assert budget.reached(0, 0, 0.01, 0.0) == "usd"
    assert budget.reached(0, 0, 0.0, 5.0) == "seconds"
    assert budget.reached(3, 100, 0.01, 5.0) == "calls"  # in the order calls, tokens, usd, seconds


def _run(
    evaluator: Evaluator, task: Task, agent: str, replies: list[str], out: Path, budget: str | None
) -> list[EpisodeRecord]:
    name = f"budget{abs(hash((agent, str(out)))) % 10**8}"
    register_script(name, replies)
    try:
        client = make_client(f"scripted/{name}")
        config = RunConfig(model=client.model, agent=agent, tasks=task.task_id, episode_budget=EpisodeBudget.of(budget))
        return asyncio.run(execute_run(config, [task], out, client, evaluator))
    finally:
        unregister_script(name)


def test_every_agent_stops_at_the_same_cap_and_says_which(
    evaluator: Evaluator, scale_task: Task, tmp_path: Path
) -> None:
    wrong = [fenced(WRONG_SCALE)] * 5
    (loop,) = _run(evaluator, scale_task, "feedback-loop:5", wrong, tmp_path / "loop", "calls=2")
    assert (loop.status, loop.passed, loop.attempts, loop.model_calls, loop.budget_stop) == (
        "done",
        False,
        2,
        2,
        "calls",
    )
    assert loop.failed_stage == "correct"  # the verdict of its last scored attempt stands
    (best,) = _run(evaluator, scale_task, "best-of:3", [fenced(CORRECT_SCALE)] * 3, tmp_path / "best", "calls=2")
    assert (best.attempts, best.model_calls, best.budget_stop, best.passed) == (0, 2, "calls", False)
    (free,) = _run(evaluator, scale_task, "feedback-loop:5", [fenced(CORRECT_SCALE)], tmp_path / "free", "calls=2")
    assert (free.passed, free.budget_stop) == (True, None)
    assert '"budget_stop"' not in (tmp_path / "free" / "log.jsonl").read_text()  # written only when a cap ended it
    recorded = [r for r in read_log(tmp_path / "loop") if isinstance(r, EpisodeRecord)]
    assert [r.budget_stop for r in recorded] == ["calls"]
    assert read_manifest(tmp_path / "loop").config["episode_budget"] == {
        "calls": 2,
        "tokens": None,
        "usd": None,
        "seconds": None,
    }
    with pytest.raises(ValueError, match="holds a different run"):  # a budget is part of what a run is
        _run(evaluator, scale_task, "feedback-loop:5", wrong, tmp_path / "loop", "calls=3")


def test_the_report_says_the_budget_and_when_runs_differ(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", "a", mixed_records())
    report = build_report([a])
    assert budget_lines(report) == []  # no budget: nothing to say
    capped = report.model_copy(
        update={"runs": [r.model_copy(update={"episode_budget": "calls=3"}) for r in report.runs]}
    )
    assert budget_lines(capped) == ["Episode budget: calls=3 (every run)."]
    loop = next(g for g in report.groups if g.agent == "loop")
    mixed = capped.model_copy(
        update={
            "runs": [*capped.runs, capped.runs[0].model_copy(update={"run_id": "b", "episode_budget": None})],
            "groups": [loop.model_copy(update={"budget_stops": {"calls": 2, "usd": 1}})],
        }
    )
    assert budget_lines(mixed) == [
        "**Warning**: the runs' episode budgets differ (a: calls=3; b: none): their agents did not work under "
        "the same caps.",
        "mock/model / loop / code: 2 episode(s) ended by calls, 1 episode(s) ended by usd.",
    ]
    assert "their agents did not work under the same caps" in render_markdown(mixed)

"""`--dry-run` (the grid's most model calls, tokens and dollars, with no model
call and no sandbox job) and `--max-cost` (a spend cap that stops a run and
lets a resume with a higher cap go on without repeating a call)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CORRECT_SCALE, write_module
from typer.testing import CliRunner

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fembench_agents.cli import app
from fembench_agents.messages import Message, ModelResponse, Usage
from fembench_agents.models import register_script, unregister_script
from fembench_agents.models._litellm import litellm
from fembench_agents.runs.budget import SpendCap
from fembench_agents.runs.experiments import load_experiment
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, ModelCallRecord, RunLog, episode_key, read_log
from fembench_agents.runs.recording import ModelUnavailable
from fembench_agents.scoring.sandbox import Sandbox

SCALE = "scale_vector_CC0_H0_T0"
MODE = "mode_plain_CC1_H0_T0"
PRICED = "budget_priced"  # scripted/budget_priced: a fixed name, so the table's rows can be pinned
runner = CliRunner()

WRONG_SCALE = """
import numpy as np

def scale_vector(x, factor):
    if factor < 0:
        raise ValueError("negative factor")
    return factor * np.asarray(x, dtype=float) + 1.0
"""
CORRECT_MODE = """
import numpy as np

def smallest_mode(K):
    w, v = np.linalg.eigh(K)
    return float(w[0]), v[:, 0]
"""


def fenced(code: str) -> str:
    return f"```python\n{code.strip()}\n```\n"


def repairing(messages: list[Message]) -> str:
    """The mode task right at once; the scale task wrong until shown feedback."""
    prompt = messages[-1].content
    if "smallest_mode" in prompt:
        return fenced(CORRECT_MODE)
    return fenced(CORRECT_SCALE if "returned wrong results" in prompt else WRONG_SCALE)


def completion_tokens(text: str) -> int:
    """As the scripted provider counts a reply."""
    return int(litellm.token_counter(model="gpt-4o-mini", text=text, count_response_tokens=True))


@pytest.fixture
def two_tasks(tmp_path: Path, task_dir: Path) -> Path:
    """The scale and the plain eigenpair tasks, alone in a folder."""
    folder = tmp_path / "tasks"
    for name in (SCALE, MODE):
        write_module(folder, f"{name}.py", (task_dir / f"{name}.py").read_text())
    return folder


@pytest.fixture
def priced() -> Iterator[str]:
    """A scripted model billed at $100 per million prompt tokens and $200 per million completion tokens."""
    register_script(PRICED, repairing, prices=(1e-4, 2e-4))
    yield f"scripted/{PRICED}"
    unregister_script(PRICED)


# ----------------------------------------------------------------- --dry-run


def test_a_dry_run_prints_the_grid_s_calls_tokens_and_dollars_without_a_call_or_a_sandbox_job(
    priced: str, two_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_sandbox(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dry run started the sandbox")

    monkeypatch.setattr(Sandbox, "__init__", no_sandbox)
    monkeypatch.setattr(Sandbox, "run", no_sandbox)
    result = runner.invoke(
        app,
        [
            "compare",
            "--models",
            priced,
            "--agents",
            "single-shot,feedback-loop:3",
            "--tasks-path",
            str(two_tasks),
            "--repeats",
            "2",
            "--max-tokens",
            "100",
            "--out",
            str(tmp_path / "grid"),
            "--dry-run",
        ],
    )
    assert result.exit_code == 0, result.output
    from fembench_agents.models.scripted import get_script

    assert get_script(PRICED).calls == 0
    assert not (tmp_path / "grid").exists()
    rows = [" ".join(line.strip("│┃ ").split()) for line in result.stdout.splitlines() if "│" in line]
    # single-shot: 2 tasks x 2 repeats = 4 episodes, 1 call each; the two first prompts count 108 (mode)
    # and 125 (scale) tokens, x 2 repeats = 466; completion 100 x 4 = 400; 466 x $100/M + 400 x $200/M = $0.1266.
    # feedback-loop:3: 3 calls each: 12 calls, 466 x 3 = 1,398 prompt tokens, 1,200 completion, $0.3798.
    assert rows == [
        f"{priced} │ single-shot │ code │ 4 │ 4 │ 466 │ 400 │ $0.1266",
        f"{priced} │ feedback-loop:3 │ code │ 4 │ 12 │ 1,398 │ 1,200 │ $0.3798",
        "total │ │ │ 8 │ 16 │ 1,864 │ 1,600 │ $0.5064",
    ]
    assert "completion tokens: max_tokens x max calls, an upper bound" in result.stdout


def test_a_dry_run_of_a_resumed_run_counts_only_its_unstarted_episodes_and_notes_a_missing_key(
    two_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = "openai/gpt-4o-mini"
    with RunLog(tmp_path / "run") as log:  # the mode task's episode finished in an earlier session
        log.append(
            EpisodeRecord(
                episode=episode_key(model, "single-shot", "code", MODE, 0),
                task_id=MODE,
                track="code",
                agent="single-shot",
                model=model,
                repeat=0,
                status="done",
                passed=False,
                score=0.0,
                attempts=1,
            )
        )
    args = ["run", "--model", model, "--tasks-path", str(two_tasks), "--max-tokens", "1000"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "run"), "--dry-run"])
    assert result.exit_code == 0, result.output
    rows = [" ".join(line.strip("│┃ ").split()) for line in result.stdout.splitlines() if "│" in line]
    # only the scale task's episode: its prompt's 125 tokens, 1,000 completion tokens at most;
    # gpt-4o-mini at $0.15 per million prompt tokens and $0.60 per million completion tokens: $0.000619
    assert rows[0] == f"{model} │ single-shot │ code │ 1 │ 1 │ 125 │ 1,000 │ $0.0006"
    assert result.stdout.splitlines()[-1] == (
        "note: model 'openai/gpt-4o-mini' needs OPENAI_API_KEY, which is not set: put it in the environment or in "
        "a .env file"
    )


def test_optimize_dry_run_bounds_each_phase_from_the_budget_and_the_split(
    priced: str, task_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_sandbox(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dry run started the sandbox")

    monkeypatch.setattr(Sandbox, "__init__", no_sandbox)
    result = runner.invoke(
        app,
        ["optimize", "--model", priced, "--reflection-model", priced, "--heldout", "slow_*", "--budget", "20"]
        + ["--tasks-path", str(task_dir), "--max-tokens", "100", "--reflection-max-tokens", "500"]
        + ["--out", str(tmp_path / "opt"), "--dry-run"],
    )
    assert result.exit_code == 0, result.output
    from fembench_agents.models.scripted import get_script

    assert get_script(PRICED).calls == 0 and not (tmp_path / "opt").exists()
    lines = result.stdout.splitlines()
    assert lines[0] == "held out 1, train 3, validation 1; budget 20 = 20 metric calls (given)"
    rows = [" ".join(line.strip("│┃ ").split()) for line in lines if "│" in line]
    # max calls: GEPA 20 + V 1 + 2 x minibatch 3 = 27; the final training evaluation 2 x 3 train tasks;
    # the held-out judgement 1 task x 5 repeats x 2 agents; reflections ceil((20 - 1) / 3) = 7.
    # Prompts with the seed system prompt: 139 tokens (mode tasks), 156 (scale tasks), 31 of them the
    # seed's; the mean over train and validation 143 (x 27 = 3,861), over train 145 (x 6 = 870), held out
    # 156 (x 10 = 1,560); a reflection 31 + 3 x (143 + 100) = 760 (x 7 = 5,320). Completions: max_tokens x calls.
    assert rows == [
        f"GEPA metric calls │ {priced} │ 27 │ 3,861 │ 2,700 │ $0.9261",
        f"final training evaluation │ {priced} │ 6 │ 870 │ 600 │ $0.2070",
        f"held-out judgement │ {priced} │ 10 │ 1,560 │ 1,000 │ $0.3560",
        f"reflection │ {priced} │ 7 │ 5,320 │ 3,500 │ $1.2320",
    ]


def test_an_unknown_model_is_refused_by_a_dry_run_too(two_tasks: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--model", "foo/bar", "--tasks-path", str(two_tasks), "--dry-run"])
    assert result.exit_code == 2
    assert "litellm does not know which provider serves 'foo/bar'" in result.stderr


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
    from fembench_agents.cli.runs import _progress_text

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


# ----------------------------------------------------------------- problems read without running them


def test_every_published_task_reads_unrun_as_the_sandbox_loads_it(sandbox: Sandbox) -> None:
    from conftest import ROOT

    from fembench_agents.agents.prompts import PromptRenderer
    from fembench_agents.suite.loader import load_tasks
    from fembench_agents.suite.preview import preview_suite

    previewed, skipped = preview_suite(ROOT / "tasks")
    loaded = {t.task_id: t for t in load_tasks(ROOT / "tasks", sandbox)}
    assert skipped == [] and len(previewed) == len(loaded) == 33
    prompts = PromptRenderer()
    for task in previewed:
        for track in ("code", "tests"):
            for scaffold in ("single_shot", "template_guided", "fembench_paper"):
                assert prompts.task_prompt(task, track, scaffold) == prompts.task_prompt(
                    loaded[task.task_id], track, scaffold
                ), (task.task_id, track, scaffold)


def test_a_task_whose_prompt_facing_keys_are_computed_is_skipped_with_the_key(tmp_path: Path) -> None:
    from conftest import scale_source

    from fembench_agents.suite.preview import preview_suite

    source = scale_source().replace('"required_imports": [', '"required_imports": list(IMPORTS) or [')
    write_module(tmp_path, "computed_CC0_H0_T0.py", source)
    write_module(tmp_path, f"{SCALE}.py", scale_source())
    tasks, skipped = preview_suite(tmp_path)
    assert [t.task_id for t in tasks] == [SCALE]
    assert [(s.name, s.reason) for s in skipped] == [
        (
            "computed_CC0_H0_T0",
            f"{tmp_path / 'computed_CC0_H0_T0.py'}: task_info key 'required_imports': not a literal: cannot be read "
            "without running the module",
        )
    ]


def test_each_agent_states_its_most_model_calls_and_what_it_opens_with(task_dir: Path) -> None:
    from fembench_agents.agents import make_agent
    from fembench_agents.runs.estimate import PlannedAgent
    from fembench_agents.suite.preview import preview_task

    task = preview_task(task_dir / f"{SCALE}.py")
    limits = {
        "single-shot": 1,
        "feedback-loop": 3,
        "feedback-loop:5": 5,
        "template-guided": 1,
        "fembench-paper:2": 2,
        "best-of:3": 3,
        "plan-then-code:2": 3,
        "debug-and-refine:2:1": 5,
        "openhands:attempts=2,iterations=5": 10,
        "mini-swe-agent:steps=7": 7,
    }
    opening: dict[str, list[str]] = {}
    for spec, calls in limits.items():
        agent = make_agent(spec)
        assert isinstance(agent, PlannedAgent) and agent.max_model_calls == calls, spec
        opening[spec] = [m.role for m in agent.first_messages(task, "code")]
        assert "def scale_vector(x, factor):" in agent.first_messages(task, "code")[-1].content, spec
    assert opening["openhands:attempts=2,iterations=5"] == opening["mini-swe-agent:steps=7"] == ["system", "user"]
    assert opening["single-shot"] == opening["plan-then-code:2"] == ["user"]
    system = make_agent("mini-swe-agent").first_messages(task, "code")[0].content  # type: ignore[attr-defined]
    assert "/tmp/workspace: TASK.md (the task), solution.py (your answer: edit it) and check.py" in system

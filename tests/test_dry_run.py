"""`--dry-run`: the grid's most model calls, tokens and dollars with no model call
and no sandbox job, from problems read without running them, and each agent's
stated call limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import ROOT, scale_source, write_module

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from priced_grid import (
    MODE,
    PRICED,
    SCALE,
    runner,
)

from fembench_agents.cli import app
from fembench_agents.runs.log import EpisodeRecord, RunLog, episode_key
from fembench_agents.scoring.sandbox import Sandbox

pytest_plugins = ["priced_grid"]  # its fixtures: two_tasks, priced

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


# ----------------------------------------------------------------- problems read without running them


def test_every_published_task_reads_unrun_as_the_sandbox_loads_it(sandbox: Sandbox) -> None:

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

"""`optimize --engine dspy`: dspy.GEPA on the single-shot program, offline, with the
scripted task model of test_optimize.py and a scripted reflection model answering
in the JSON DSPy's instruction proposer asks for. Same out directory, artifacts,
recording, resume and leak check as the direct engine."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import dspy
import pytest
from test_optimize import HELDOUT, KEYWORD, ROOT, answer_by_keyword, asyncio_run, run_opt, settings

from fembench_agents.agents import make_agent
from fembench_agents.agents.prompted import PromptAgent
from fembench_agents.messages import Message, ModelParams
from fembench_agents.models import ReplayModel, register_script
from fembench_agents.optimize import StopFlag, dspy_auto_budget
from fembench_agents.optimize.dspy_engine import metric_with_feedback
from fembench_agents.optimize.heldout import logged_heldout
from fembench_agents.runs.log import EpisodeRecord, ModelCallRecord, read_log, read_manifest
from fembench_agents.runs.replay import compare_runs
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite.model import Task
from fembench_agents.suite.validation import ideal_answer


def new_instructions(*prompts: str) -> Callable[[list[Message]], str]:
    """DSPy's instruction proposer (JSON adapter) reads `new_instruction`; proposes `prompts` in turn."""
    calls: list[int] = []

    def reply(messages: list[Message]) -> str:
        assert "`new_instruction`" in messages[0].content  # DSPy's proposal signature, not gepa's template
        text = prompts[min(len(calls), len(prompts) - 1)]
        calls.append(1)
        return json.dumps({"new_instruction": text})

    return reply


@pytest.fixture
def dspy_scripts(fem_tasks: list[Task]) -> Iterator[None]:
    register_script("opt-task", answer_by_keyword(fem_tasks))
    register_script("opt-reflect", new_instructions("Write clean code.", f"Write clean code and {KEYWORD}."))
    yield


def test_dspy_engine_finds_the_better_prompt_and_writes_the_same_artifacts(
    fem_tasks: list[Task], evaluator: Evaluator, dspy_scripts: None, tmp_path: Path
) -> None:
    prompt_out = tmp_path / "optimizers" / "kw.json"
    out = tmp_path / "out"
    result = run_opt(settings(engine="dspy"), fem_tasks, evaluator, out, prompt_out=prompt_out)
    assert result.complete and result.system_prompt == f"Write clean code and {KEYWORD}."
    assert (result.scores.val, result.scores.train) == (1.0, 1.0)
    assert result.scores.seed_val == pytest.approx(0.2) and result.scores.seed_train == pytest.approx(0.2)
    assert result.metric_calls >= 18 and result.reflection_calls == 2 and result.candidates == 2
    assert not result.leak.leaked, result.leak

    # every DSPy solver call was an episode of ours: recorded per candidate, held-out tasks never
    seen = {r.task_id for p in (out / "evals").glob("*/log.jsonl") for r in read_log(p.parent)}
    assert seen and seen <= result.split.seen and not seen & set(result.split.heldout)
    assert logged_heldout(out, result.split.heldout) == []
    calls = [r for p in (out / "evals").glob("*/log.jsonl") for r in read_log(p.parent)]
    calls = [r for r in calls if isinstance(r, ModelCallRecord)]
    # the single-shot agent's messages, not DSPy's field markers
    assert calls and all("[[ ##" not in m.content for r in calls for m in r.request.messages)
    systems = {r.request.messages[0].content for r in calls}
    assert systems == {settings().seed_prompt, "Write clean code.", result.system_prompt}  # the rejected one too
    # reflection: DSPy's proposer, recorded; training references shown, validation ones never
    reflection = [r for r in read_log(out / "reflection") if isinstance(r, ModelCallRecord)]
    assert len(reflection) == result.reflection_calls
    text = "\n".join(m.content for r in reflection for m in r.request.messages)
    assert not any(t in text for t in result.split.heldout)
    shown = lambda t: json.dumps(ideal_answer(t))[1:-1] in text  # noqa: E731  # DSPy sends the examples as JSON
    assert any(shown(t) for t in fem_tasks if t.task_id in result.split.train)
    assert not any(shown(t) for t in fem_tasks if t.task_id in result.split.val)

    # the direct engine's artifacts, and a prompt file `prompt:FILE` runs
    history = json.loads((out / "history.json").read_text())
    assert [h["system_prompt"] for h in history] == [settings().seed_prompt, result.system_prompt]
    assert [h["index"] for h in history if h["best"]] == [1]
    saved = json.loads(prompt_out.read_text())
    prov = saved["provenance"]
    assert saved["system_prompt"] == result.system_prompt
    assert (prov["optimizer"], prov["engine"]) == ("dspy.GEPA", "dspy")
    assert prov["budget"]["max_metric_calls"] == 18 and prov["leak_check"]["leaked"] is False
    agent = make_agent(f"prompt:{prompt_out}")
    assert isinstance(agent, PromptAgent) and agent.system_prompt == result.system_prompt
    # a candidate's run directory replays with no model call and no difference
    run_dir = out / "evals" / result.best_candidate_id
    manifest = read_manifest(run_dir)
    config = RunConfig(**{**manifest.config, "params": ModelParams(**manifest.config["params"])})
    records = read_log(run_dir)
    asyncio_run(execute_run(config, fem_tasks, tmp_path / "replay", ReplayModel.from_records(records), evaluator))
    assert compare_runs(records, read_log(tmp_path / "replay")) == []


def test_dspy_engine_resumes_from_its_checkpoint(
    fem_tasks: list[Task], evaluator: Evaluator, dspy_scripts: None, tmp_path: Path
) -> None:
    first = run_opt(settings(engine="dspy", budget="9"), fem_tasks, evaluator, tmp_path / "out")
    assert first.complete and first.metric_calls == 9 and first.new_metric_calls == 9
    second = run_opt(settings(engine="dspy", budget="18"), fem_tasks, evaluator, tmp_path / "out")
    assert second.metric_calls == 18 and second.new_metric_calls == 9
    assert second.system_prompt == f"Write clean code and {KEYWORD}." and second.scores.val == 1.0
    # the other engine may not take over this out directory
    with pytest.raises(ValueError, match="differs in engine"):
        run_opt(settings(budget="18"), fem_tasks, evaluator, tmp_path / "out")


def test_a_named_budget_goes_to_dspy_as_auto_and_means_the_same_number(
    fem_tasks: list[Task], evaluator: Evaluator, dspy_scripts: None, tmp_path: Path
) -> None:
    stop = StopFlag()
    stop.requested = True  # GEPA stops after the seed's validation pass: the budget is what is checked
    result = run_opt(settings(engine="dspy", budget="light"), fem_tasks, evaluator, tmp_path / "out", stop=stop)
    assert not result.complete and result.metric_calls == 3  # the seed on the 3 validation tasks
    # dspy.GEPA(auto="light") computed its own budget; the run refuses to go on when it differs from ours
    assert result.budget.max_metric_calls == dspy_auto_budget(6, 3) == 392


def test_the_dspy_engine_refuses_an_empty_seed_prompt(
    fem_tasks: list[Task], evaluator: Evaluator, dspy_scripts: None, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="the dspy engine needs a seed prompt"):
        run_opt(settings(engine="dspy", seed_prompt=""), fem_tasks, evaluator, tmp_path / "out")


def test_cli_dspy_engine_runs_the_protocol_then_the_heldout_judgement_and_compare(
    fem_tasks: list[Task], dspy_scripts: None, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from fembench_agents.cli import app

    tasks_dir = tmp_path / "tasks"
    tasks_dir.mkdir()
    for t in fem_tasks:
        shutil.copy(t.path, tasks_dir)
    prompt = tmp_path / "optimizers" / "kw.json"
    common = ["--tasks-path", str(tasks_dir), "--cache", str(tmp_path / "cache")]
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "optimize",
            "--experiment",
            str(ROOT / "experiments" / "gepa_fembench_protocol.toml"),
            "--engine",
            "dspy",
            "--model",
            "scripted/opt-task",
            "--reflection-model",
            "scripted/opt-reflect",
            "--heldout",
            HELDOUT,
            "--budget",
            "18",
            "--out",
            str(tmp_path / "opt"),
            "--prompt-out",
            str(prompt),
            *common,
        ],
    )
    assert res.exit_code == 0, res.output
    assert "engine dspy" in res.output and "leak check: no leak" in res.output
    judged = json.loads((tmp_path / "opt" / "heldout.json").read_text())
    assert (judged["baseline_passed"], judged["optimized_passed"], judged["runs"]) == (0, 15, 15)
    assert "| **total** | **0/15** | **15/15** |" in (tmp_path / "opt" / "heldout.md").read_text()
    saved = json.loads(prompt.read_text())
    assert saved["system_prompt"] == f"Write clean code and {KEYWORD}." and saved["scaffold"] == "fembench_paper"
    assert saved["provenance"]["engine"] == "dspy"
    res = runner.invoke(
        app,
        [
            "compare",
            "--models",
            "scripted/opt-task",
            "--agents",
            f"single-shot,prompt:{prompt}",
            "--tasks",
            ",".join(saved["provenance"]["split"]["heldout"]),
            "--out",
            str(tmp_path / "cmp"),
            *common,
        ],
    )
    assert res.exit_code == 0, res.output
    passed = {
        d.name: sum(r.passed for r in read_log(d) if isinstance(r, EpisodeRecord))
        for d in (tmp_path / "cmp").iterdir()
        if (d / "log.jsonl").exists()
    }
    assert sorted(passed.values()) == [0, 3], passed


@pytest.mark.parametrize("include_reference", [True, False])
def test_the_metric_adds_the_reference_to_a_training_tasks_feedback_only(
    fem_tasks: list[Task], include_reference: bool
) -> None:
    train, val = fem_tasks[0], fem_tasks[1]
    metric = metric_with_feedback({t.task_id: t for t in (train, val)}, frozenset({train.task_id}), include_reference)
    pred = dspy.Prediction(score=0.25, passed=False, feedback="It failed.")
    got = {t.task_id: metric(dspy.Example(task_id=t.task_id), pred) for t in (train, val)}
    assert [g.score for g in got.values()] == [0.25, 0.25]
    assert got[val.task_id].feedback == "Score 0.25 (not correct). It failed."
    reference = f"\n\nReference implementation:\n{ideal_answer(train)}"
    assert got[train.task_id].feedback == "Score 0.25 (not correct). It failed." + reference * include_reference

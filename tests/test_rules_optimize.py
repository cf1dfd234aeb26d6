"""The optimizer's evaluation of a candidate prompt, as GEPA sees it: the score
and feedback of each task, what a failed model call becomes, held-out tasks
refused by name, a finished episode read back instead of run again, and the
latest attempt winning when an episode is retried; the candidate file and the
run directory's manifest it leaves behind, and different candidates evaluated
at once while one candidate waits its turn. Then the held-out judgement: the
seed agent and the optimized prompt run on the held-out tasks into
heldout/baseline and heldout/optimized, and heldout.json and heldout.md report
their passes, the budget and the validation curve."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import CORRECT_SCALE
from rich.progress import Progress
from run_builders import episode

from fembench_agents.agents.prompts import PromptRenderer, excerpt
from fembench_agents.messages import CallContext, Message, ModelParams, ModelResponse, Usage
from fembench_agents.models import ClientOptions, ResponseCache, make_client, register_script, unregister_script
from fembench_agents.optimize.adapter import COMPONENT, PromptAdapter
from fembench_agents.optimize.budget import Budget
from fembench_agents.optimize.candidates import EpisodeResult, PromptEvaluations, candidate_id
from fembench_agents.optimize.heldout import LeakReport
from fembench_agents.optimize.judgement import (
    HeldoutJudgement,
    HeldoutRow,
    baseline_agent,
    judge_heldout,
    origin_totals,
    render_judgement,
    validation_curve,
)
from fembench_agents.optimize.loop import LoopThread
from fembench_agents.optimize.progress import RichProgress
from fembench_agents.optimize.reflection import ReflectionModel
from fembench_agents.optimize.search import OptimizeResult, Scores
from fembench_agents.optimize.settings import OptimizeSettings
from fembench_agents.optimize.split import HeldOutViolation, Split
from fembench_agents.runs import run
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, ModelCallRecord, RunLog, read_log, read_manifest
from fembench_agents.runs.recording import ModelUnavailable
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import TemplateFeedback
from fembench_agents.suite.model import Task
from fembench_agents.suite.validation import ideal_answer

PROMPT = "You write finite-element code. Reply with one python block."
WRONG = (
    "import numpy as np\n\ndef scale_vector(x, factor):\n    if factor < 0:\n        raise ValueError\n"
    "    return factor * np.asarray(x) + 1.0\n"
)


class Replies:
    """A model answering from a list; an exception in the list is raised, a response returned as it is."""

    model = "mock/model"

    def __init__(self, *replies: str | Exception | ModelResponse) -> None:
        self.replies = list(replies)
        self.calls = 0
        self.params: list[ModelParams | None] = []
        self.contexts: list[CallContext] = []

    async def complete(
        self, messages: list[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse:
        self.calls += 1
        self.params.append(params)
        self.contexts.append(context)
        item = self.replies.pop(0)
        if isinstance(item, Exception):
            raise item
        return item if isinstance(item, ModelResponse) else ModelResponse(text=item, cost_usd=0.0)


def evaluations(
    tmp_path: Path,
    task: Task,
    evaluator: Evaluator,
    model: Replies,
    allowed: frozenset[str] | None = None,
    scaffold: str = "single_shot",
    *,
    more: tuple[Task, ...] = (),
    params: ModelParams | None = None,
) -> PromptEvaluations:
    """Evaluations of `task` and the `more` tasks, all allowed unless `allowed` says otherwise."""
    tasks = {t.task_id: t for t in (task, *more)}
    return PromptEvaluations(
        tmp_path,
        tasks,
        allowed or frozenset(tasks),
        model,  # type: ignore[arg-type]
        evaluator,
        TemplateFeedback(),
        params or ModelParams(),
        concurrency=1,
        scaffold=scaffold,
    )


def test_a_candidate_is_scored_with_the_feedback_builders_score_and_text(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator
) -> None:
    model = Replies(f"Here:\n```python\n{WRONG}```\nDone.")
    evals = evaluations(tmp_path, scale_task, evaluator, model)
    [result] = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    feedback = TemplateFeedback()(evaluator.score(scale_task, "code", WRONG))
    assert (result.task_id, result.passed, result.score, result.feedback) == (
        scale_task.task_id,
        False,
        feedback.score,
        feedback.text,
    )
    assert result.score == pytest.approx(0.2 + 0.6 * 1 / 3)  # only the ValueError input is right
    assert result.code == WRONG.strip()
    assert result.reply.startswith("Here:") and (result.error, result.reused) == (None, False)
    assert result.prompt and PROMPT not in result.prompt  # the task prompt; the system prompt is the candidate
    assert evals.new_episodes == 1


def test_the_candidate_file_holds_the_prompt_under_its_hash(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator
) -> None:
    evals = evaluations(tmp_path, scale_task, evaluator, Replies())
    path = evals.candidate_file(PROMPT)
    assert candidate_id(PROMPT) == "c" + hashlib.sha256(PROMPT.encode()).hexdigest()[:12]
    assert path == tmp_path / "candidates" / f"{candidate_id(PROMPT)}.json"
    assert path.read_text() == '{\n "system_prompt": "' + PROMPT + '"\n}'  # no scaffold key for the default one
    other = evals.candidate_file("Think about the element stiffness first.")
    assert json.loads(other.read_text()) == {"system_prompt": "Think about the element stiffness first."}
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, other.name])  # no temporary file left
    assert evals.candidate_file(PROMPT) == path and evals.run_dir(PROMPT) == tmp_path / "evals" / candidate_id(PROMPT)


def test_a_candidate_run_names_its_prompt_file_by_its_absolute_path_under_a_relative_out(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The evaluation's manifest must still lead to the prompt from another working directory."""
    monkeypatch.chdir(tmp_path)
    evals = evaluations(Path("opt"), scale_task, evaluator, Replies(RuntimeError("down")))
    asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    manifest = read_manifest(tmp_path / "opt" / "evals" / candidate_id(PROMPT))
    assert manifest.config["agent"] == f"prompt:{tmp_path / 'opt' / 'candidates' / candidate_id(PROMPT)}.json"


def test_a_candidate_for_another_scaffold_names_it_and_is_asked_in_it(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator
) -> None:
    evals = evaluations(tmp_path, scale_task, evaluator, Replies(RuntimeError("down")), scaffold="fembench_paper")
    path = evals.candidate_file(PROMPT)
    assert path.read_text() == '{\n "system_prompt": "' + PROMPT + '",\n "scaffold": "fembench_paper"\n}'
    [result] = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    paper = PromptRenderer().task_prompt(scale_task, "code", "fembench_paper")
    assert result.prompt == paper and paper != PromptRenderer().task_prompt(scale_task, "code", "single_shot")


def test_a_finished_episode_is_read_back_not_run_again(tmp_path: Path, scale_task: Task, evaluator: Evaluator) -> None:
    model = Replies(f"```python\n{CORRECT_SCALE}```")
    evals = evaluations(tmp_path, scale_task, evaluator, model)
    first = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    again = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id, scale_task.task_id]))
    assert model.calls == 1 and evals.new_episodes == 1
    assert [(r.passed, r.score, r.reused) for r in first] == [(True, 1.0, False)]
    assert [(r.passed, r.score, r.reused) for r in again] == [(True, 1.0, True), (True, 1.0, True)]
    assert again[0].feedback == "Your previous answer passed every check."


def test_the_code_reflected_on_is_the_last_block_defining_the_tasks_function(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator
) -> None:
    """As the evaluator parses it: a sketch before and a check after are not the answer."""
    sketch = "def scale_vector(x, factor):\n    return x\n"
    check = "def check():\n    assert scale_vector([1.0], 2.0)[0] == 2.0\n"
    reply = f"Sketch:\n```python\n{sketch}```\nFinal:\n```python\n{WRONG}```\nCheck:\n```python\n{check}```\n"
    evals = evaluations(tmp_path, scale_task, evaluator, Replies(reply))
    [result] = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    assert result.code == WRONG.strip() and result.reply == reply


def test_a_task_twice_in_one_batch_is_one_episode_scored_for_both(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator
) -> None:
    model = Replies(f"```python\n{WRONG}```")  # a second call would find no reply
    evals = evaluations(tmp_path, scale_task, evaluator, model)
    first, second = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id, scale_task.task_id]))
    assert first == second and (first.reused, first.score) == (False, pytest.approx(0.4))
    assert (model.calls, evals.new_episodes) == (1, 1)
    episodes = [r for r in read_log(evals.run_dir(PROMPT)) if isinstance(r, EpisodeRecord)]
    assert len(episodes) == 1


def test_a_failed_model_call_scores_zero_and_says_why(tmp_path: Path, scale_task: Task, evaluator: Evaluator) -> None:
    evals = evaluations(tmp_path, scale_task, evaluator, Replies(RuntimeError("quota exceeded")))
    [result] = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    assert (result.score, result.passed, result.reply, result.code, result.error) == (
        0.0,
        False,
        "",
        "",
        "RuntimeError: quota exceeded",
    )
    assert result.feedback == ("The model call failed, so there is no answer to score (RuntimeError: quota exceeded).")
    answered = evaluations(tmp_path / "answered", scale_task, evaluator, Replies(f"```python\n{CORRECT_SCALE}```"))
    [ok] = asyncio.run(answered.evaluate(PROMPT, [scale_task.task_id]))
    assert result.prompt == ok.prompt and scale_task.main_name in result.prompt  # the task's prompt, as asked
    assert PROMPT not in result.prompt and result.reused is False


def test_a_retried_episode_is_judged_by_its_latest_attempt(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator
) -> None:
    model = Replies(RuntimeError("down"), f"```python\n{CORRECT_SCALE}```")
    evals = evaluations(tmp_path, scale_task, evaluator, model)
    [failed] = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    [retried] = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))  # an errored episode is not finished
    assert (failed.passed, failed.error) == (False, "RuntimeError: down")
    assert (retried.passed, retried.score, retried.error, retried.reused) == (True, 1.0, None, False)
    assert model.calls == 2 and evals.new_episodes == 2
    attempts = [r for r in read_log(evals.run_dir(PROMPT)) if isinstance(r, AttemptRecord)]
    assert [a.model_error for a in attempts] == ["RuntimeError: down", None]


def test_held_out_tasks_are_refused_by_name(tmp_path: Path, scale_task: Task, evaluator: Evaluator) -> None:
    model = Replies()
    evals = evaluations(tmp_path, scale_task, evaluator, model, allowed=frozenset({"other"}))
    with pytest.raises(HeldOutViolation) as err:
        asyncio.run(evals.evaluate(PROMPT, ["zeta", scale_task.task_id, "other"]))
    assert str(err.value) == (
        f"refusing to evaluate tasks outside the training and validation sets: {scale_task.task_id}, zeta"
    )
    assert model.calls == 0


def test_an_empty_candidate_asks_the_task_prompt_alone(tmp_path: Path, scale_task: Task, evaluator: Evaluator) -> None:
    """No system message at all: the task prompt is the only message, failed call or not."""
    model = Replies(RuntimeError("down"), f"```python\n{CORRECT_SCALE}```")
    evals = evaluations(tmp_path, scale_task, evaluator, model)
    [failed] = asyncio.run(evals.evaluate("", [scale_task.task_id]))
    [passed] = asyncio.run(evals.evaluate("", [scale_task.task_id]))
    task_prompt = PromptRenderer().task_prompt(scale_task, "code")
    assert (failed.prompt, failed.error) == (task_prompt, "RuntimeError: down")
    assert (passed.prompt, passed.passed, passed.score) == (task_prompt, True, 1.0)


def test_a_reply_without_code_to_keep_is_shown_as_the_reply(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator
) -> None:
    reply = "```python\nprint(scale_vector([1.0], 2.0))\n```"  # a call, no definition: nothing parsed
    evals = evaluations(tmp_path, scale_task, evaluator, Replies(reply))
    [result] = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    assert (result.passed, result.reply, result.code) == (False, reply, reply)


def test_an_episode_finished_without_an_attempt_scores_zero_and_says_so(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator
) -> None:
    """A log whose finished episode has no attempt record (edited, or written by another tool)."""
    model = Replies()
    evals = evaluations(tmp_path, scale_task, evaluator, model)
    with RunLog(evals.run_dir(PROMPT)) as log:
        log.append(episode(f"prompt:{candidate_id(PROMPT)}", scale_task.task_id, 0, passed=False))
    [result] = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    assert result == EpisodeResult(
        task_id=scale_task.task_id,
        score=0.0,
        passed=False,
        prompt="",
        reply="",
        code="",
        feedback="The model call failed, so there is no answer to score (no attempt).",
        error="no attempt",
        reused=True,
    )
    assert model.calls == 0 and evals.new_episodes == 0


@pytest.mark.parametrize("include_reference", [True, False])
def test_gepa_scores_each_task_and_reflects_on_its_prompt_code_and_feedback(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator, include_reference: bool
) -> None:
    """What GEPA's adapter hands on: per task its outcome and score, the trajectories only when
    GEPA asks for them, and for the reflection LM one record per task under each component to
    update; the reference only for training tasks, and only when the settings include it."""
    other = scale_task.model_copy(update={"task_id": "other_task"})
    model = Replies(f"```python\n{WRONG}```", f"```python\n{CORRECT_SCALE}```")
    evals = evaluations(tmp_path, scale_task, evaluator, model, more=(other,))
    tasks = {t.task_id: t for t in (scale_task, other)}
    with LoopThread() as loop:
        adapter = PromptAdapter(evals, loop, tasks, frozenset({scale_task.task_id}), include_reference)
        batch = adapter.evaluate([scale_task.task_id, other.task_id], {COMPONENT: PROMPT}, capture_traces=True)
        again = adapter.evaluate([other.task_id], {COMPONENT: PROMPT})  # read back, not run again
    wrong, right = batch.trajectories or []
    assert "def scale_vector" in right.code and right.prompt == wrong.prompt.replace(scale_task.task_id, other.task_id)
    assert batch.outputs == [
        {"task_id": scale_task.task_id, "passed": False, "score": wrong.score},
        {"task_id": other.task_id, "passed": True, "score": 1.0},
    ]
    assert batch.scores == [pytest.approx(0.4), 1.0] and wrong.score == pytest.approx(0.4)
    assert (again.outputs, again.scores, again.trajectories) == (
        [{"task_id": other.task_id, "passed": True, "score": 1.0}],
        [1.0],
        None,
    )
    dataset = adapter.make_reflective_dataset({COMPONENT: PROMPT}, batch, [COMPONENT, "other_component"])
    assert list(dataset) == [COMPONENT, "other_component"]
    first = {
        "Task": scale_task.task_id,
        "Inputs": wrong.prompt,
        "Generated Outputs": WRONG.strip(),
        "Feedback": f"Score 0.40 (not correct). {wrong.feedback}",
    }
    if include_reference:
        first["Reference implementation"] = ideal_answer(scale_task)
    second = {
        "Task": other.task_id,
        "Inputs": right.prompt,
        "Generated Outputs": right.code,  # the code as parsed from the reply
        "Feedback": f"Score 1.00 (correct). {right.feedback}",
    }  # not a training task: never its reference
    assert dataset[COMPONENT] == dataset["other_component"]
    assert [dict(r) for r in dataset[COMPONENT]] == [first, second]
    assert adapter.make_reflective_dataset({COMPONENT: PROMPT}, again, [COMPONENT]) == {COMPONENT: []}


def test_the_reflection_sees_an_empty_reply_as_such_and_a_long_answer_cut_at_a_line() -> None:
    adapter = PromptAdapter(None, None, {}, frozenset(), False)  # type: ignore[arg-type]
    long_code = "\n".join(f"x{i} = {i}  # {'.' * 60}" for i in range(100))
    empty, long = (
        EpisodeResult(task_id="t", score=s, passed=False, prompt="P", reply="", code=code, feedback="F.")
        for s, code in ((0.0, ""), (0.125, long_code))
    )
    assert adapter.record(empty) == {
        "Task": "t",
        "Inputs": "P",
        "Generated Outputs": "(empty reply)",
        "Feedback": "Score 0.00 (not correct). F.",
    }
    shown = adapter.record(long)["Generated Outputs"]
    kept = long_code[:4000].rsplit("\n", 1)[0]
    assert shown == kept + "\n# ... (truncated)" and kept.endswith("\nx54 = 54  # " + "." * 60)
    assert adapter.record(long)["Feedback"] == "Score 0.12 (not correct). F."
    exact = "x = 1\n" * 665 + "y = 2\n" + "#" * 4  # 4000 characters: shown whole; one more is cut at a line
    assert len(exact) == 4000 and excerpt(exact) == (exact, False)
    assert excerpt(exact + "#") == ("x = 1\n" * 665 + "y = 2" + "\n# ... (truncated)", True)


def test_the_manifest_names_every_task_attempted_with_the_candidates_config(
    tmp_path: Path,
    scale_task: Task,
    load: Callable[[str], Task],
    evaluator: Evaluator,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(run, "_versions", lambda: {"numpy": "9.9"})  # candidates run through runs.run
    monkeypatch.setattr(run, "_git_commit", lambda: "abc1234")
    other = load("slow_scale_CC0_H0_T0")
    model = Replies(RuntimeError("down"), RuntimeError("down"))
    evals = evaluations(
        tmp_path, scale_task, evaluator, model, more=(other,), params=ModelParams(temperature=0.7, max_tokens=99)
    )
    asyncio.run(evals.evaluate(PROMPT, [other.task_id]))
    asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))  # the errored slow_scale stays in the manifest
    manifest = read_manifest(evals.run_dir(PROMPT))
    assert manifest.run_id == candidate_id(PROMPT)
    assert manifest.config == {
        "model": "mock/model",
        "agent": f"prompt:{evals.candidate_file(PROMPT).resolve()}",
        "tasks": "scale_vector_CC0_H0_T0,slow_scale_CC0_H0_T0",
        "track": "code",
        "repeats": 1,
        "params": {"temperature": 0.7, "max_tokens": 99, "reasoning_effort": None, "seed": None},
    }
    assert manifest.task_hashes == {scale_task.task_id: scale_task.content_hash, other.task_id: other.content_hash}
    assert (manifest.versions, manifest.git_commit) == ({"numpy": "9.9"}, "abc1234")
    assert model.params == [ModelParams(temperature=0.7, max_tokens=99, seed=0)] * 2  # the candidate's params, seed 0


class Slow:
    """A model that takes 50 ms to fail, counting the calls in flight."""

    model = "mock/model"

    def __init__(self) -> None:
        self.calls = self.in_flight = self.most = 0

    async def complete(
        self, messages: list[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse:
        self.calls += 1
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.05)
        self.in_flight -= 1
        raise RuntimeError("down")


@pytest.mark.parametrize(("prompts", "at_once"), [((PROMPT, "Another prompt."), 2), ((PROMPT, PROMPT), 1)])
def test_different_candidates_run_at_once_and_one_candidate_waits_its_turn(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator, prompts: tuple[str, str], at_once: int
) -> None:
    model = Slow()
    evals = evaluations(tmp_path, scale_task, evaluator, model)  # type: ignore[arg-type]

    async def both() -> None:
        await asyncio.gather(*(evals.evaluate(p, [scale_task.task_id]) for p in prompts))

    asyncio.run(both())
    assert (model.calls, model.most) == (2, at_once)


# ----------------------------------------------------------------- the held-out judgement

SCALE, MODE, OTHER = "scale_vector_CC0_H0_T0", "mode_sign_CC1_H0_T0", "mode_plain_CC1_H0_T0"
OPTIMIZED = "Check every index.\n\n"  # the trailing blank lines are the optimizer's; heldout.md strips them
# (has the optimized prompt, task) -> the repeats answered right
PASSES = {(False, SCALE): {1}, (False, MODE): set(), (True, SCALE): {0, 2}, (True, MODE): {0, 1, 2}}
# history.json out of order; two candidates found at metric call 9, the better one the later index
HISTORY = [
    {"index": 3, "discovered_at_metric_call": 14, "val_score": 0.5},  # worse than the best so far
    {"index": 0, "discovered_at_metric_call": 0, "val_score": 0.25},
    {"index": 2, "discovered_at_metric_call": 9, "val_score": 0.75},
    {"index": 1, "discovered_at_metric_call": 9, "val_score": 0.375},
    {"index": 4, "discovered_at_metric_call": 20, "val_score": 0.875},
]
CURVE = [(0, 0.25), (9, 0.375), (9, 0.75), (14, 0.75), (20, 0.875)]


class ByEpisode:
    """A task model answering right or wrong by the system prompt, the task and the repeat (PASSES)."""

    model = "mock/model"

    def __init__(self, tasks: list[Task]) -> None:
        self.tasks = {t.task_id: t for t in tasks}
        self.calls = 0

    async def complete(
        self, messages: list[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse:
        self.calls += 1
        optimized = messages[0].role == "system" and messages[0].content == OPTIMIZED
        task = self.tasks[context.task_id]
        right = int(context.episode.rsplit("|", 1)[1]) in PASSES[optimized, task.task_id]
        body = ideal_answer(task) if right else f"{task.main_signature}\n    return None\n"
        return ModelResponse(text=f"```python\n{body}\n```", cost_usd=0.0)


def judge_settings(**kw: object) -> OptimizeSettings:
    base = dict(name="j", model="mock/judge", reflection_model="mock/reflect", heldout=f"{SCALE},{MODE}")
    return OptimizeSettings.model_validate(
        {**base, "heldout_repeats": 3, "concurrency": 3, "params": ModelParams(temperature=0.3, max_tokens=77), **kw}
    )


def finished_optimization(out: Path, prompt_path: Path | None) -> OptimizeResult:
    """What `optimize_prompt` returns once it has written the prompt: held out SCALE then MODE (not sorted)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "history.json").write_text(json.dumps(HISTORY))
    if prompt_path is not None:
        prompt_path.write_text(json.dumps({"system_prompt": OPTIMIZED}))
    return OptimizeResult(
        name="j",
        out_dir=str(out),
        complete=prompt_path is not None,
        system_prompt=OPTIMIZED,
        best_index=4,
        best_candidate_id=candidate_id(OPTIMIZED),
        candidates=5,
        iterations=6,
        scores=Scores(val=0.875, seed_val=0.25, train=0.9, seed_train=0.1),
        budget=Budget(name="custom", max_metric_calls=20, valset_size=1, formula="20"),
        metric_calls=23,
        new_metric_calls=7,
        new_episodes=11,
        reflection_calls=6,
        reflection_cost_usd=None,
        split=Split(
            heldout_selector=f"{SCALE},{MODE}",
            val_fraction=0.3,
            seed=0,
            heldout=(SCALE, MODE),
            train=(OTHER,),
            val=("mode_scale_CC1_H0_T0",),
        ),
        leak=LeakReport(leaked=False, hits=[], overlaps=[]),
        prompt_path=None if prompt_path is None else str(prompt_path),
    )


def test_the_seed_agent_is_the_scaffold_the_prompt_was_tuned_in() -> None:
    assert baseline_agent(judge_settings()) == "single-shot"
    assert baseline_agent(judge_settings(scaffold="fembench_paper")) == "fembench-paper"


def test_the_validation_curve_is_the_running_best_in_discovery_order(tmp_path: Path) -> None:
    (tmp_path / "history.json").write_text(json.dumps(HISTORY))
    assert validation_curve(tmp_path) == CURVE
    # a seed scoring 0 starts the curve at 0; a later worse candidate keeps the best
    (tmp_path / "history.json").write_text(
        json.dumps(
            [
                {"index": 1, "discovered_at_metric_call": 3, "val_score": 0.0},
                {"index": 0, "discovered_at_metric_call": 0, "val_score": 0.0},
                {"index": 2, "discovered_at_metric_call": 7, "val_score": 1.0},
                {"index": 3, "discovered_at_metric_call": 12, "val_score": 0.5},
                {"index": 5, "discovered_at_metric_call": 15, "val_score": 0.5},  # discovered before index 4
                {"index": 4, "discovered_at_metric_call": 20, "val_score": 0.5},
            ]
        )
    )
    assert validation_curve(tmp_path) == [(0, 0.0), (3, 0.0), (7, 1.0), (12, 1.0), (15, 1.0), (20, 1.0)]


def test_an_unfinished_optimization_is_not_judged(
    tmp_path: Path, scale_task: Task, load: Callable[[str], Task], evaluator: Evaluator
) -> None:
    tasks = [scale_task, load(MODE)]
    model = ByEpisode(tasks)
    result = finished_optimization(tmp_path / "opt", None)
    with pytest.raises(ValueError) as err:
        asyncio.run(judge_heldout(result, judge_settings(), tasks, evaluator, model))  # type: ignore[arg-type]
    assert str(err.value) == "the optimization is not finished: there is no prompt to judge yet"
    assert model.calls == 0 and sorted(p.name for p in (tmp_path / "opt").iterdir()) == ["history.json"]


def test_the_judgement_runs_both_agents_on_the_heldout_tasks_and_reports_their_passes(
    tmp_path: Path, scale_task: Task, load: Callable[[str], Task], evaluator: Evaluator
) -> None:
    out, prompt = tmp_path / "opt", tmp_path / "kw.json"
    tasks = [load(OTHER), scale_task, load(MODE)]  # OTHER is a training task: never run here
    model = ByEpisode(tasks)
    result = finished_optimization(out, prompt)
    s = judge_settings()
    judgement = asyncio.run(judge_heldout(result, s, tasks, evaluator, model))  # type: ignore[arg-type]

    # the two runs: each agent on each held-out task, 3 repeats, with the optimization's model and params
    for label, agent, name in (
        ("baseline", "single-shot", "single-shot"),
        ("optimized", f"prompt:{prompt}", "prompt:kw"),
    ):
        manifest = read_manifest(out / "heldout" / label)
        # run at the optimization's concurrency (3, not the default 2)
        assert manifest.limits == {"episodes": 3, "model_calls": 3, "sandbox_workers": evaluator.sandbox.size}
        assert manifest.config == {
            "model": "mock/judge",
            "agent": agent,
            "tasks": f"{SCALE},{MODE}",
            "track": "code",
            "repeats": 3,
            "params": {"temperature": 0.3, "max_tokens": 77, "reasoning_effort": None, "seed": None},
        }
        episodes = [r for r in read_log(out / "heldout" / label) if isinstance(r, EpisodeRecord)]
        assert sorted((r.agent, r.task_id, r.repeat, r.passed) for r in episodes) == [
            (name, t, k, k in PASSES[label == "optimized", t]) for t in (MODE, SCALE) for k in range(3)
        ]
    assert model.calls == 12

    expected = {
        "model": "mock/judge",
        "baseline_agent": "single-shot",
        "optimized_agent": f"prompt:{prompt}",
        "repeats": 3,
        "rows": [  # in the split's held-out order
            {"task_id": SCALE, "baseline_passed": 1, "optimized_passed": 2, "runs": 3, "origin": "published"},
            {"task_id": MODE, "baseline_passed": 0, "optimized_passed": 3, "runs": 3, "origin": "published"},
        ],
        "baseline_passed": 1,
        "optimized_passed": 5,
        "runs": 6,
        "used_metric_calls": 23,
        "max_metric_calls": 20,
        "best_val_score": 0.875,
        "curve": [list(point) for point in CURVE],
        "system_prompt": OPTIMIZED,
    }
    assert json.loads((out / "heldout.json").read_text()) == expected
    assert judgement.model_dump(mode="json") == expected
    assert (out / "heldout.md").read_text() == (
        "# Held-out judgement: mock/judge\n"
        "\n"
        "| held-out task | single-shot | optimized prompt |\n"
        "| --- | --- | --- |\n"
        f"| {SCALE} | 1/3 | 2/3 |\n"
        f"| {MODE} | 0/3 | 3/3 |\n"
        "| **total** | **1/6** | **5/6** |\n"
        "\n"
        "Budget: 23 of 20 metric calls; best validation score 0.875 (val_curve.png).\n"
        "\n"
        "## The optimized prompt\n"
        "\n"
        "```text\n"
        "Check every index.\n"
        "```\n"
    )

    # a rerun reads the episodes back: no model call, the same judgement
    again = asyncio.run(judge_heldout(result, s, tasks, evaluator, model))  # type: ignore[arg-type]
    assert model.calls == 12 and again == judgement
    assert json.loads((out / "heldout.json").read_text()) == expected


def judged_once(
    tmp_path: Path, tasks: list[Task], evaluator: Evaluator
) -> tuple[Path, Path, list[Task], ByEpisode, OptimizeResult, HeldoutJudgement]:
    """A finished optimization judged on its held-out tasks with heldout_repeats 1: its directory, prompt
    file, tasks, model, result and judgement."""
    out, prompt = tmp_path / "opt", tmp_path / "kw.json"
    model = ByEpisode(tasks)
    result = finished_optimization(out, prompt)
    judgement = asyncio.run(judge_heldout(result, judge_settings(heldout_repeats=1), tasks, evaluator, model))  # type: ignore[arg-type]
    return out, prompt, tasks, model, result, judgement


def test_a_prompt_found_since_is_not_reported_with_the_old_prompts_episodes(
    tmp_path: Path, scale_task: Task, load: Callable[[str], Task], evaluator: Evaluator
) -> None:
    """A resumed optimization (a larger budget) rewrites the prompt file the optimized run was asked with."""
    out, prompt, tasks, model, result, first = judged_once(tmp_path, [scale_task, load(MODE)], evaluator)
    assert (first.baseline_passed, first.optimized_passed, first.runs, model.calls) == (0, 2, 2, 4)
    judged = (out / "heldout.json").read_text()
    prompt.write_text(json.dumps({"system_prompt": "Check the signs."}))
    resumed = result.model_copy(update={"system_prompt": "Check the signs."})
    with pytest.raises(ValueError) as err:
        asyncio.run(judge_heldout(resumed, judge_settings(heldout_repeats=1), tasks, evaluator, model))  # type: ignore[arg-type]
    assert str(err.value) == (
        f"{out / 'heldout' / 'optimized'} holds episodes of another prompt than the one judged now ({prompt}): "
        "remove that directory to judge this prompt"
    )
    assert model.calls == 4 and (out / "heldout.json").read_text() == judged


def test_held_out_episodes_of_other_repeats_are_not_judged_with_new_ones(
    tmp_path: Path, scale_task: Task, load: Callable[[str], Task], evaluator: Evaluator
) -> None:
    """A resume may change heldout_repeats: the judgement already begun says how to go on."""
    out, _, tasks, model, result, _ = judged_once(tmp_path, [scale_task, load(MODE)], evaluator)
    judged = (out / "heldout.json").read_text()
    with pytest.raises(ValueError) as err:
        asyncio.run(judge_heldout(result, judge_settings(heldout_repeats=2), tasks, evaluator, model))  # type: ignore[arg-type]
    assert str(err.value) == (
        f"{out / 'heldout' / 'baseline'} holds the held-out episodes of heldout_repeats 1, not 2: resume with that "
        f"number, or remove {out / 'heldout'} to judge with 2"
    )
    assert model.calls == 4 and (out / "heldout.json").read_text() == judged
    shutil.rmtree(out / "heldout" / "baseline")  # the optimized run alone, begun with 1
    with pytest.raises(ValueError) as err:
        asyncio.run(judge_heldout(result, judge_settings(heldout_repeats=2), tasks, evaluator, model))  # type: ignore[arg-type]
    assert str(err.value).startswith(
        f"{out / 'heldout' / 'optimized'} holds the held-out episodes of heldout_repeats 1"
    )
    assert model.calls == 4
    shutil.rmtree(out / "heldout")
    again = asyncio.run(judge_heldout(result, judge_settings(heldout_repeats=2), tasks, evaluator, model))  # type: ignore[arg-type]
    assert (again.repeats, again.runs, model.calls) == (2, 4, 12)
    # fewer repeats than begun with are other repeats too
    with pytest.raises(ValueError) as err:
        asyncio.run(judge_heldout(result, judge_settings(heldout_repeats=1), tasks, evaluator, model))  # type: ignore[arg-type]
    assert str(err.value).startswith(
        f"{out / 'heldout' / 'baseline'} holds the held-out episodes of heldout_repeats 2, not 1: resume with that "
    )
    assert model.calls == 12


def test_the_judgement_text_without_a_validation_score_and_rounded_to_three_places() -> None:
    j = HeldoutJudgement(
        model="m/x",
        baseline_agent="fembench-paper",
        optimized_agent="prompt:p.json",
        repeats=2,
        rows=[HeldoutRow(task_id="T1", baseline_passed=2, optimized_passed=1, runs=2)],
        baseline_passed=2,
        optimized_passed=1,
        runs=2,
        used_metric_calls=5,
        max_metric_calls=9,
        best_val_score=None,
        curve=[],
        system_prompt="  Be careful.\n  Check signs.  \n",
    )
    prompt = "## The optimized prompt\n\n```text\n  Be careful.\n  Check signs.\n```\n"
    assert render_judgement(j) == (
        "# Held-out judgement: m/x\n\n"
        "| held-out task | fembench-paper | optimized prompt |\n"
        "| --- | --- | --- |\n"
        "| T1 | 2/2 | 1/2 |\n"
        "| **total** | **2/2** | **1/2** |\n\n"
        "Budget: 5 of 9 metric calls; best validation score - (val_curve.png).\n\n" + prompt
    )
    assert (
        render_judgement(j.model_copy(update={"best_val_score": 0.87654})).count(
            "best validation score 0.877 (val_curve.png)."
        )
        == 1
    )


def test_the_reflection_cost_counts_each_answer_once_and_a_cached_one_not_again(tmp_path: Path) -> None:
    name = f"reflect{uuid.uuid4().hex[:10]}"
    script = register_script(name, ["one", "two"])
    try:
        prices = ClientOptions(token_prices=(1e-6, 2e-6))
        client = make_client(f"scripted/{name}", options=prices, cache=ResponseCache(tmp_path / "cache"))
        with LoopThread() as loop, RunLog(tmp_path / "reflection") as log:
            model = ReflectionModel(client, ModelParams(), log, loop)
            texts = [model("same question"), model("same question"), model("another question")]
    finally:
        unregister_script(name)
    assert texts == ["one", "one", "two"] and script.calls == 2 and model.calls == 3
    calls = [r for r in read_log(tmp_path / "reflection") if isinstance(r, ModelCallRecord)]
    assert [(c.attempt_index, c.response.cached) for c in calls if c.response] == [(0, False), (1, True), (2, False)]
    # 9 prompt tokens at 1e-6 and 1 completion token at 2e-6 per answer: two answers paid for, three used
    assert model.total_cost == pytest.approx(2 * (9e-6 + 2e-6)) and not model.unpriced
    assert (model.total_tokens_in, model.total_tokens_out) == (27, 3)


def test_reflection_calls_are_one_logged_episode_and_a_chat_is_reduced_to_its_text(tmp_path: Path) -> None:
    """GEPA sends a prompt, or a chat when a dataset holds images; either is one call of the
    "reflection" episode, numbered from the calls already in its log. Cost adds up what was paid
    now (not a cached answer); one answer without a price marks the total as incomplete."""
    chat = [
        {"role": "system", "content": "Improve the prompt."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a"},
                {"type": "image_url", "image_url": {"url": "data:"}},
                "raw",
                {"type": "text"},
                {"type": "text", "text": "b"},
            ],
        },
        {"role": "assistant", "content": "An earlier answer."},
        {"role": "tool", "content": "T"},
        {"content": 5},
        {"role": "user"},
    ]
    model = Replies(
        ModelResponse(text="one", usage=Usage(prompt_tokens=10, completion_tokens=2), cost_usd=0.5),
        ModelResponse(text="two", usage=Usage(prompt_tokens=None, completion_tokens=None), cost_usd=0.25, cached=True),
        ModelResponse(text="three", usage=Usage(prompt_tokens=7, completion_tokens=None)),
        RuntimeError("down"),
    )
    with LoopThread() as loop, RunLog(tmp_path / "reflection") as log:
        reflection = ReflectionModel(model, ModelParams(temperature=0.5), log, loop)  # type: ignore[arg-type]
        assert (reflection.total_cost, reflection.unpriced, reflection.calls) == (0.0, False, 0)
        assert [reflection("first"), reflection(chat)] == ["one", "two"]
        assert (reflection.total_cost, reflection.unpriced) == (0.5, False)  # the cached answer costs nothing now
        assert reflection("third") == "three"
        with pytest.raises(ModelUnavailable):
            reflection("fourth")
    assert (reflection.total_cost, reflection.unpriced) == (0.5, True)
    assert (reflection.total_tokens_in, reflection.total_tokens_out) == (17, 2)
    assert model.contexts == [
        CallContext(task_id="", episode="reflection", attempt_index=i, attempt=f"reflection call {i}") for i in range(4)
    ]
    assert model.params == [ModelParams(temperature=0.5)] * 4
    calls = [r for r in read_log(tmp_path / "reflection") if isinstance(r, ModelCallRecord)]
    assert [(c.episode, c.task_id, c.attempt_index, c.error) for c in calls] == [
        ("reflection", "", 0, None),
        ("reflection", "", 1, None),
        ("reflection", "", 2, None),
        ("reflection", "", 3, "RuntimeError: down"),
    ]
    assert calls[0].request.messages == (Message(role="user", content="first"),)
    assert calls[1].request.messages == (
        Message(role="system", content="Improve the prompt."),
        Message(role="user", content="a\n\nb"),
        Message(role="assistant", content="An earlier answer."),
        Message(role="user", content="T"),
        Message(role="user", content="5"),
        Message(role="user", content=""),
    )
    with LoopThread() as loop, RunLog(tmp_path / "reflection") as log:  # resumed: numbered on from the log
        again = ReflectionModel(Replies("five"), ModelParams(), log, loop)  # type: ignore[arg-type]
        assert (again.calls, again("fifth"), again.calls) == (4, "five", 5)


def test_the_progress_line_shows_the_iteration_candidates_best_score_and_calls_used() -> None:
    progress = Progress()
    shown = RichProgress(progress, total=30)
    (bar,) = progress.tasks
    assert (bar.description, bar.completed, bar.total) == ("GEPA", 0, 30)
    shown.on_budget_updated({"metric_calls_used": 4})
    assert (bar.description, bar.completed) == ("GEPA it 0, 0 candidates, best val 0.000", 4)

    def iteration(n: int, scores: list[float], evals: int) -> None:
        state = SimpleNamespace(
            program_candidates=list(scores), program_full_scores_val_set=scores, total_num_evals=evals
        )
        shown.on_iteration_start({"iteration": n, "state": state})

    iteration(3, [0.2, 0.6, 0.4], 17)
    assert (bar.description, bar.completed) == ("GEPA it 3, 3 candidates, best val 0.600", 17)
    iteration(4, [], 18)  # no validation scores yet: the best seen stays
    assert (bar.description, bar.completed) == ("GEPA it 4, 0 candidates, best val 0.600", 18)
    iteration(5, [0.25, 0.9375], 21)
    assert (bar.description, bar.completed) == ("GEPA it 5, 2 candidates, best val 0.938", 21)


def test_the_progress_line_keeps_the_best_validation_score_seen() -> None:
    progress = Progress()
    shown = RichProgress(progress, total=20)
    for idx, score in ((0, 0.5), (1, 0.75), (2, 0.25)):  # a later, worse candidate does not lower it
        shown.on_valset_evaluated({"candidate_idx": idx, "average_score": score})
    shown.on_budget_updated({"metric_calls_used": 12})
    (bar,) = progress.tasks
    assert (bar.description, bar.completed, bar.total) == ("GEPA it 0, 3 candidates, best val 0.750", 12, 20)


def test_the_judgement_gives_published_and_fresh_held_out_totals_side_by_side() -> None:
    rows = [
        HeldoutRow(task_id="a", baseline_passed=1, optimized_passed=2, runs=3),
        HeldoutRow(task_id="b", baseline_passed=0, optimized_passed=3, runs=3),
        HeldoutRow(task_id="fresh_v1_poisson_s7_00", baseline_passed=2, optimized_passed=0, runs=3, origin="fresh"),
    ]
    j = HeldoutJudgement(
        model="m",
        baseline_agent="single-shot",
        optimized_agent="prompt:p.json",
        repeats=3,
        rows=rows,
        baseline_passed=3,
        optimized_passed=5,
        runs=9,
        used_metric_calls=4,
        max_metric_calls=4,
        best_val_score=None,
        curve=[],
        system_prompt="S",
    )
    assert origin_totals(j) == {"published held-out": (1, 5, 6), "fresh held-out": (2, 0, 3)}
    md = render_judgement(j)
    assert "| **published held-out** | **1/6** | **5/6** |\n| **fresh held-out** | **2/3** | **0/3** |\n" in md
    assert "| **total** | **3/9** | **5/9** |" in md
    published_only = j.model_copy(update={"rows": rows[:2]})
    assert origin_totals(published_only) == {} and "held-out** |" not in render_judgement(published_only)

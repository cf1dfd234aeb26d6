"""The optimizer's evaluation of a candidate prompt, as GEPA sees it: the score
and feedback of each task, what a failed model call becomes, held-out tasks
refused by name, a finished episode read back instead of run again, and the
latest attempt winning when an episode is retried; the candidate file and the
run directory's manifest it leaves behind, and different candidates evaluated
at once while one candidate waits its turn."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CORRECT_SCALE
from run_builders import episode

from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.messages import CallContext, Message, ModelParams, ModelResponse
from fembench_agents.optimize import candidates
from fembench_agents.optimize.candidates import EpisodeResult, PromptEvaluations, candidate_id
from fembench_agents.optimize.split import HeldOutViolation
from fembench_agents.runs.log import AttemptRecord, RunLog, read_log, read_manifest
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import TemplateFeedback
from fembench_agents.suite.model import Task

PROMPT = "You write finite-element code. Reply with one python block."
WRONG = (
    "import numpy as np\n\ndef scale_vector(x, factor):\n    if factor < 0:\n        raise ValueError\n"
    "    return factor * np.asarray(x) + 1.0\n"
)


class Replies:
    """A model answering from a list; an exception in the list is raised."""

    model = "mock/model"

    def __init__(self, *replies: str | Exception) -> None:
        self.replies = list(replies)
        self.calls = 0
        self.params: list[ModelParams | None] = []

    async def complete(
        self, messages: list[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse:
        self.calls += 1
        self.params.append(params)
        item = self.replies.pop(0)
        if isinstance(item, Exception):
            raise item
        return ModelResponse(text=item, cost_usd=0.0)


def evaluations(
    tmp_path: Path,
    task: Task,
    evaluator: Evaluator,
    model: Replies,
    allowed: frozenset[str] | None = None,
    scaffold: str = "single_shot",
) -> PromptEvaluations:
    return PromptEvaluations(
        tmp_path,
        {task.task_id: task},
        allowed or frozenset({task.task_id}),
        model,  # type: ignore[arg-type]
        evaluator,
        TemplateFeedback(),
        ModelParams(),
        concurrency=1,
        scaffold=scaffold,
    )


def test_a_candidate_is_scored_with_the_feedback_builders_score_and_text(
    tmp_path: Path, scale_task: Task, evaluator: Evaluator
) -> None:
    model = Replies(f"Here:\n```python\n{WRONG}```\nDone.")
    evals = evaluations(tmp_path, scale_task, evaluator, model)
    [result] = asyncio.run(evals.evaluate(PROMPT, [scale_task.task_id]))
    feedback = TemplateFeedback()(evaluator.score_function(scale_task, WRONG))
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


def test_the_manifest_names_every_task_attempted_with_the_candidates_config(
    tmp_path: Path,
    scale_task: Task,
    load: Callable[[str], Task],
    evaluator: Evaluator,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(candidates, "environment", lambda: {"versions": {"numpy": "9.9"}, "git_commit": "abc1234"})
    other = load("slow_scale_CC0_H0_T0")
    model = Replies(RuntimeError("down"), RuntimeError("down"))
    evals = PromptEvaluations(
        tmp_path,
        {t.task_id: t for t in (scale_task, other)},
        frozenset({scale_task.task_id, other.task_id}),
        model,  # type: ignore[arg-type]
        evaluator,
        TemplateFeedback(),
        ModelParams(temperature=0.7, max_tokens=99),
        concurrency=1,
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

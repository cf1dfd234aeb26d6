"""The optimizer's evaluation of a candidate prompt, as GEPA sees it: the score
and feedback of each task, what a failed model call becomes, held-out tasks
refused by name, a finished episode read back instead of run again, and the
latest attempt winning when an episode is retried."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest
from conftest import CORRECT_SCALE

from fembench_agents.messages import CallContext, Message, ModelParams, ModelResponse
from fembench_agents.optimize.candidates import PromptEvaluations, candidate_id
from fembench_agents.optimize.split import HeldOutViolation
from fembench_agents.runs.log import AttemptRecord, read_log
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

    async def complete(
        self, messages: list[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse:
        self.calls += 1
        item = self.replies.pop(0)
        if isinstance(item, Exception):
            raise item
        return ModelResponse(text=item, cost_usd=0.0)


def evaluations(
    tmp_path: Path, task: Task, evaluator: Evaluator, model: Replies, allowed: frozenset[str] | None = None
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
    assert json.loads(path.read_text()) == {"system_prompt": PROMPT}
    assert evals.run_dir(PROMPT) == tmp_path / "evals" / candidate_id(PROMPT)


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

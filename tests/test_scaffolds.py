"""The scaffolds that think before they code (plan-then-code, debug-and-refine)
and best-of:N, against scripted models through the real session, evaluator,
run log and (best-of) the coding agents' confined terminal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import CORRECT_SCALE
from test_agents import WRONG_OUTPUT_MARK, WRONG_SCALE, fenced, run_agent

from fembench_agents.messages import Message
from fembench_agents.models import unregister_script
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite.model import Task

PLAN = "PLAN: multiply the array by the factor; refuse a negative factor."
REASONING = "REASONING: the result is factor * x; a negative factor raises ValueError."
BROKEN = "import numpy as np\n\ndef scale_vector(x, factor)\n    return x\n"  # a syntax error


@pytest.fixture
def script_name() -> Iterator[str]:
    name = "scaffolds"
    yield name
    unregister_script(name)


def answering(rules: list[tuple[str, str]], seen: list[list[Message]]) -> Callable[[list[Message]], str]:
    """The reply of the first rule whose marker is in the last message."""

    def reply(messages: list[Message]) -> str:
        seen.append(messages)
        last = messages[-1].content
        return next(answer for marker, answer in rules if marker in last)

    return reply


def test_plan_then_code_plans_then_codes_to_the_plan(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    seen: list[list[Message]] = []
    rules = [("Do not write the program yet", PLAN), ("following your plan", fenced(CORRECT_SCALE))]
    ran = run_agent(evaluator, [scale_task], "plan-then-code", script_name, answering(rules, seen), tmp_path / "r")
    (episode,) = ran.episodes
    assert (episode.passed, episode.attempts, episode.model_calls) == (True, 1, 2)
    (attempt,) = ran.attempts
    plan_prompt, plan, code_prompt = attempt.messages
    assert plan_prompt.content.startswith("You are an expert in computational mechanics")  # the task's own prompt
    assert "Do not write the program yet" in plan_prompt.content and "Checks:" in plan_prompt.content
    assert (plan.role, plan.content) == ("assistant", PLAN)  # the plan recorded in the attempt it led to
    assert code_prompt.content.startswith("Now write the program, following your plan above step by step")
    episode_id = episode.episode
    assert [c.request.sample for c in ran.calls] == [f"{episode_id} plan", f"{episode_id} attempt 0"]


def test_plan_then_code_repairs_with_the_plan_in_view(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    seen: list[list[Message]] = []
    rules = [
        ("Do not write the program yet", PLAN),
        (WRONG_OUTPUT_MARK, fenced(CORRECT_SCALE)),
        ("following your plan", fenced(WRONG_SCALE)),
    ]
    ran = run_agent(evaluator, [scale_task], "plan-then-code:2", script_name, answering(rules, seen), tmp_path / "r")
    (episode,) = ran.episodes
    assert (episode.passed, episode.first_pass_attempt, episode.model_calls) == (True, 1, 3)
    first, second = ran.attempts
    assert second.messages[:2] == first.messages[:2]  # the same plan
    repair = second.messages[2].content
    assert first.feedback is not None and first.feedback.text in repair
    assert "factor * np.asarray(x, dtype=float) + 1.0" in repair and "following your plan" in repair


def test_debug_and_refine_debugs_what_does_not_run_and_refines_what_does(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    seen: list[list[Message]] = []
    rules = [
        ("reason about the problem", REASONING),
        ("did not run to an output", fenced(WRONG_SCALE)),
        ("runs, but the evaluation says", fenced(CORRECT_SCALE)),
        ("Now write the program from your reasoning", fenced(BROKEN)),
    ]
    ran = run_agent(evaluator, [scale_task], "debug-and-refine", script_name, answering(rules, seen), tmp_path / "r")
    (episode,) = ran.episodes
    assert (episode.passed, episode.attempts, episode.first_pass_attempt, episode.model_calls) == (True, 3, 2, 4)
    code, debug, refine = ran.attempts
    assert [a.outcome.reason for a in (code, debug)] == ["syntax_error", "wrong_output"]
    assert all(a.messages[:2] == code.messages[:2] for a in (debug, refine))  # the reasoning stays in view
    assert code.messages[1].content == REASONING
    assert debug.messages[2].content.startswith("Your program did not run to an output of the required form:")
    assert "def scale_vector(x, factor)\n    return x" in debug.messages[2].content  # the program it debugs
    assert refine.messages[2].content.startswith("Your program runs, but the evaluation says:")
    assert WRONG_OUTPUT_MARK in refine.messages[2].content


def test_best_of_hands_in_one_sample_chosen_by_the_public_check(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    replies = iter([fenced(BROKEN), fenced(CORRECT_SCALE), fenced(WRONG_SCALE)])
    ran = run_agent(evaluator, [scale_task], "best-of:3", script_name, lambda _: next(replies), tmp_path / "r")
    (episode,) = ran.episodes
    # the broken sample does not run; of the two that pass the public check, the first is handed in
    assert (episode.passed, episode.attempts, episode.model_calls) == (True, 1, 3)
    (attempt,) = ran.attempts
    assert "factor * np.asarray(x, dtype=float)\n" in attempt.reply
    assert [c.request.sample for c in ran.calls] == [f"{episode.episode} sample {k}" for k in range(3)]
    assert attempt.response is not None and attempt.response.usage.prompt_tokens == sum(
        c.response.usage.prompt_tokens or 0 for c in ran.calls
    )  # the attempt stands for all three calls
    assert episode.oracle_passed is True


def test_best_of_records_the_oracle_choice_it_did_not_make(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    """Both samples pass the public check; the first is handed in and is wrong, the second
    would pass: the episode fails, its oracle choice passes (an upper bound, in the log only)."""
    replies = iter([fenced(WRONG_SCALE), fenced(CORRECT_SCALE)])
    ran = run_agent(evaluator, [scale_task], "best-of:2", script_name, lambda _: next(replies), tmp_path / "r")
    (episode,) = ran.episodes
    assert (episode.passed, episode.oracle_passed, episode.attempts) == (False, True, 1)
    (attempt,) = ran.attempts
    assert "+ 1.0" in attempt.reply
    assert '"oracle_passed":true' in (tmp_path / "r" / "log.jsonl").read_text()


@pytest.mark.parametrize("spec", ["best-of:2", "debug-and-refine:1:1", "plan-then-code:2"])
def test_the_scaffolds_replay_from_their_log_without_a_model(
    spec: str, evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    from fembench_agents.runs.replay import replay_run

    replies = iter([PLAN, fenced(BROKEN), fenced(WRONG_SCALE), fenced(CORRECT_SCALE)] * 2)
    ran = run_agent(evaluator, [scale_task], spec, script_name, lambda _: next(replies), tmp_path / "r")
    assert ran.calls and ran.attempts
    unregister_script(script_name)  # nothing left to answer but the log
    assert replay_run(tmp_path / "r", [scale_task], evaluator) == []

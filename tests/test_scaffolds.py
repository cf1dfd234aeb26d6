"""The scaffolds that think before they code (plan-then-code, debug-and-refine)
and best-of:N, against scripted models through the real session, evaluator,
run log and (best-of) the coding agents' confined terminal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import CORRECT_SCALE
from test_agents import WRONG_OUTPUT_MARK, WRONG_SCALE, fenced, run_agent

from fembench_agents.agents import make_agent
from fembench_agents.agents.best_of import choose, distance, rank
from fembench_agents.agents.coding.public_check import PublicCheck
from fembench_agents.agents.phased import DebugAndRefineAgent, PlanThenCodeAgent
from fembench_agents.messages import Message
from fembench_agents.models import unregister_script
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.outcomes import StageResult
from fembench_agents.suite.model import Task
from fembench_agents.suite.outcomes import FunctionOutcome

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


def outcome(reason: str | None) -> FunctionOutcome:
    stage = "correct" if reason == "wrong_output" else "parse"
    failed = () if reason is None else (StageResult(stage=stage, passed=False, reason=reason),)  # type: ignore[arg-type]
    return FunctionOutcome(task_id="t", passed=reason is None, stages=failed)


def test_debug_and_refine_phases_have_their_own_budgets() -> None:
    agent = DebugAndRefineAgent(name="debug-and-refine:1:2")
    agent.debug_attempts, agent.refine_attempts = 1, 2
    assert agent.next_phase(outcome(None), 0, 0) is None  # passed
    assert agent.next_phase(outcome("syntax_error"), 0, 0) == "debug"
    assert agent.next_phase(outcome("syntax_error"), 1, 0) is None  # no debugging attempt left
    assert agent.next_phase(outcome("wrong_output"), 1, 0) == "refine"
    assert agent.next_phase(outcome("wrong_output"), 1, 1) == "refine"
    assert agent.next_phase(outcome("wrong_output"), 0, 2) is None
    made = make_agent("debug-and-refine:3:0")
    assert isinstance(made, DebugAndRefineAgent) and (made.debug_attempts, made.refine_attempts) == (3, 0)
    assert isinstance(make_agent("plan-then-code:4"), PlanThenCodeAgent)
    for spec, words in [("best-of", "give the number of samples"), ("best-of:1", "at least 2 samples")]:
        with pytest.raises(ValueError, match=words):
            make_agent(spec)
    with pytest.raises(ValueError, match="must be >= 0"):
        DebugAndRefineAgent(name="d", debug_attempts=-1)


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


def check(passed: bool, ran: bool, u: list[float] | None = None) -> PublicCheck:
    return PublicCheck(passed, ran, "", None if u is None else {"u": np.array(u)})


def test_the_choice_ranks_by_the_public_check_then_takes_the_consensus() -> None:
    assert [rank(c) for c in (check(True, True), check(False, True), check(False, False))] == [2, 1, 0]
    assert choose([check(False, False), check(False, True), check(False, True)]) == 1
    assert choose([check(False, True), check(True, True), check(True, True)]) == 1  # no outputs: the first
    # outputs: the one nearest the others (summed relative L2 distance 0.95, 0.59, 0.54)
    assert choose([check(True, True, [2, 0]), check(True, True, [1, 0]), check(True, True, [1.1, 0])]) == 2
    assert choose([check(True, True, [1, 0]), check(False, True), check(True, True, [1, 0])]) == 0  # a tie: first
    assert distance({"u": np.array([1.0, np.nan])}, {"u": np.array([2.0, 5.0])}) == pytest.approx(0.5)
    assert distance({"u": np.zeros(2)}, {"u": np.zeros(3)}) == float("inf")


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

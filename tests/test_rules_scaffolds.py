"""The rules of the scaffolds, pinned at their boundary: which phase debug-and-refine
takes next under its budgets, and how best-of:N ranks its samples by the public
check and takes their consensus. (Mutation testing runs these; see
scripts/mutation_tools.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from fembench_agents.agents import make_agent
from fembench_agents.agents.best_of import choose, distance, rank
from fembench_agents.agents.coding.public_check import PublicCheck
from fembench_agents.agents.phased import DebugAndRefineAgent, PlanThenCodeAgent
from fembench_agents.scoring.outcomes import StageResult
from fembench_agents.suite.outcomes import FunctionOutcome


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


def test_the_distance_of_two_samples_sums_their_common_fields_relative_to_the_larger() -> None:
    a = {"u": np.array([2.0, 0.0]), "p": np.array([0.0, 1.0]), "only_a": np.array([9.0])}
    b = {"u": np.array([1.0, 0.0]), "p": np.array([0.0, 1.0])}
    assert distance(a, b) == distance(b, a) == pytest.approx(0.5)  # |2 - 1| / max(2, 1) + 0
    assert distance({"u": np.array([np.nan])}, {"u": np.array([1.0])}) == float("inf")  # nothing to compare
    nan_p = {"u": np.array([1.0, 0.0]), "p": np.array([np.nan, np.nan])}
    assert distance(nan_p, b) == pytest.approx(0.0)  # a field with no finite pair is skipped
    assert distance({"u": np.zeros(2)}, {"u": np.zeros(2)}) == 0.0  # two zero fields: no division by zero
    assert choose([check(True, True, [1, 0]), check(True, True)]) == 0  # one with outputs: the first of the best


def test_small_outputs_are_compared_relative_to_their_own_size_and_fields_add_up() -> None:
    assert distance({"u": np.array([0.002])}, {"u": np.array([0.001])}) == pytest.approx(0.5)  # not against 1
    two = {"u": np.array([2.0]), "p": np.array([4.0])}
    one = {"u": np.array([1.0]), "p": np.array([1.0])}
    assert distance(two, one) == pytest.approx(0.5 + 0.75)  # every common field counts
    # the first of the best has no outputs, the two after it have: their consensus (a tie: the first of them)
    assert choose([check(True, True), check(True, True, [1, 0]), check(True, True, [2, 0])]) == 1

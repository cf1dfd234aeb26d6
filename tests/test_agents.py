"""Solver agents against scripted models: single-shot, feedback loop, template
guided and prompt:PATH, through the real session, evaluator and run log."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import CORRECT_SCALE, GOOD_SCALE_TESTS, ROOT

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fembench_agents.agents import make_agent
from fembench_agents.agents.prompted import PromptAgent
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.messages import Message
from fembench_agents.models import (
    ClientOptions,
    RetryPolicy,
    make_client,
    register_script,
    unregister_script,
)
from fembench_agents.models._litellm import litellm
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, ModelCallRecord, read_log
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.extraction import parse_code
from fembench_agents.suite.model import Task

FAST = ClientOptions(retry=RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.01))

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

ONE_SCALE_TEST = """
import numpy as np

def test_scales_values(fcn):
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])
"""

WRONG_OUTPUT_MARK = "returned wrong results"


def fenced(code: str) -> str:
    return f"Here is the code.\n\n```python\n{code.strip()}\n```\n"


@pytest.fixture
def script_name() -> Iterator[str]:
    name = f"agents{uuid.uuid4().hex[:10]}"
    yield name
    unregister_script(name)


@pytest.fixture(scope="module")
def mode_task(load: Callable[[str], Task]) -> Task:
    return load("mode_plain_CC1_H0_T0")


class Ran:
    def __init__(self, episodes: list[EpisodeRecord], out: Path, script: Any) -> None:
        self.episodes, self.out, self.script = episodes, out, script
        self.records = read_log(out)

    @property
    def attempts(self) -> list[AttemptRecord]:
        return [r for r in self.records if isinstance(r, AttemptRecord)]

    @property
    def calls(self) -> list[ModelCallRecord]:
        return [r for r in self.records if isinstance(r, ModelCallRecord)]

    def episode(self, task_id: str) -> EpisodeRecord:
        (found,) = [e for e in self.episodes if e.task_id == task_id]
        return found


def run_agent(
    evaluator: Evaluator,
    tasks: Sequence[Task],
    agent: str,
    script_name: str,
    replies: Any,
    out: Path,
    *,
    track: str = "code",
    agent_obj: Any = None,
    fail_first: int = 0,
) -> Ran:
    script = register_script(script_name, replies, fail_first=fail_first)
    client = make_client(f"scripted/{script_name}", options=FAST)
    config = RunConfig(
        model=client.model, agent=agent, tasks=",".join(t.task_id for t in tasks), track=track, concurrency=2
    )  # type: ignore[arg-type]
    episodes = asyncio.run(execute_run(config, list(tasks), out, client, evaluator, agent=agent_obj))
    return Ran(episodes, out, script)


# ----------------------------------------------------------------- single attempt agents


@pytest.mark.parametrize("spec", ["single-shot", "template-guided"])
def test_single_attempt_agents_make_exactly_one_attempt(
    spec: str, evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    ran = run_agent(evaluator, [scale_task], spec, script_name, [fenced(WRONG_SCALE)] * 5, tmp_path / "r")
    assert ran.script.calls == 1
    (episode,) = ran.episodes
    assert episode.status == "done" and episode.attempts == 1 and not episode.passed
    assert episode.failed_stage == "correct" and episode.reason == "wrong_output"
    assert episode.score == 0.0 and episode.first_pass_attempt is None
    assert [a.attempt_index for a in ran.attempts] == [0]
    assert len(ran.calls) == 1 and ran.calls[0].response is not None


@pytest.mark.parametrize("spec", ["single-shot", "template-guided"])
def test_single_attempt_agents_pass_with_a_correct_reply(
    spec: str, evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    ran = run_agent(evaluator, [scale_task], spec, script_name, [fenced(CORRECT_SCALE)], tmp_path / "r")
    (episode,) = ran.episodes
    assert episode.passed and episode.score == 1.0 and episode.first_pass_attempt == 0
    assert episode.prompt_tokens > 0 and episode.completion_tokens > 0
    assert ran.attempts[0].feedback is not None and ran.attempts[0].feedback.score == 1.0


# ----------------------------------------------------------------- feedback loop


def repairing(correct: str, wrong: str, marker: str, seen: list[str]) -> Callable[[list[Message]], str]:
    """Answers wrong until the prompt carries the feedback (`marker`), then right."""

    def reply(messages: list[Message]) -> str:
        prompt = messages[-1].content
        seen.append(prompt)
        return fenced(correct if marker in prompt else wrong)

    return reply


def test_feedback_loop_repairs_on_the_second_attempt(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    seen: list[str] = []
    ran = run_agent(
        evaluator,
        [scale_task],
        "feedback-loop",
        script_name,
        repairing(CORRECT_SCALE, WRONG_SCALE, WRONG_OUTPUT_MARK, seen),
        tmp_path / "r",
    )
    (episode,) = ran.episodes
    assert episode.passed and episode.first_pass_attempt == 1 and episode.attempts == 2
    assert ran.script.calls == 2
    first, second = ran.attempts
    assert not first.outcome.passed and second.outcome.passed
    assert first.feedback is not None and WRONG_OUTPUT_MARK in first.feedback.text
    repair = second.messages[-1].content
    assert first.feedback.text in repair  # the feedback is what the model is shown
    assert "factor * np.asarray(x, dtype=float) + 1.0" in repair  # and its previous code
    assert first.messages[-1].content.strip() in repair  # followed by the original task
    assert repair == seen[1]


def test_each_repair_prompt_wraps_the_original_task_not_the_last_repair(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    raising = WRONG_SCALE.replace("factor * np.asarray(x, dtype=float) + 1.0", "len(factor) * np.asarray(x)")
    replies = [fenced(WRONG_SCALE), fenced(raising), fenced(WRONG_SCALE)]
    ran = run_agent(evaluator, [scale_task], "feedback-loop:3", script_name, replies, tmp_path / "r")
    first, second, third = ran.attempts
    assert first.feedback is not None and second.feedback is not None
    assert (first.outcome.reason, second.outcome.reason) == ("wrong_output", "runtime_error")
    original = first.messages[-1].content
    expected = PromptRenderer().repair_prompt(
        original, second.feedback.text, parse_code(replies[1], ("scale_vector",)).code
    )
    assert third.messages[-1].content == expected
    assert first.feedback.text not in expected and expected.count(original.strip()) == 1


def test_feedback_loop_stops_at_the_first_pass(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    ran = run_agent(
        evaluator,
        [scale_task],
        "feedback-loop:5",
        script_name,
        [fenced(CORRECT_SCALE), fenced(WRONG_SCALE)],
        tmp_path / "r",
    )
    assert ran.script.calls == 1
    (episode,) = ran.episodes
    assert episode.passed and episode.attempts == 1 and episode.first_pass_attempt == 0


@pytest.mark.parametrize("spec, n", [("feedback-loop", 3), ("feedback-loop:4", 4), ("feedback-loop:1", 1)])
def test_feedback_loop_uses_at_most_n_attempts(
    spec: str, n: int, evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    ran = run_agent(evaluator, [scale_task], spec, script_name, lambda m: fenced(WRONG_SCALE), tmp_path / "r")
    assert ran.script.calls == n
    (episode,) = ran.episodes
    assert episode.status == "done" and not episode.passed and episode.attempts == n
    assert [a.attempt_index for a in ran.attempts] == list(range(n))
    assert episode.failed_stage == "correct"


def test_feedback_loop_repairs_a_test_suite(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    seen: list[str] = []
    ran = run_agent(
        evaluator,
        [scale_task],
        "feedback-loop:3",
        script_name,
        repairing(GOOD_SCALE_TESTS, ONE_SCALE_TEST, "test_negative_factor_raises.", seen),
        tmp_path / "r",
        track="tests",
    )
    (episode,) = ran.episodes
    assert episode.track == "tests" and episode.passed and episode.first_pass_attempt == 1
    first = ran.attempts[0]
    assert first.outcome.failed_stage == "tests" and first.outcome.reason == "missing_test"
    assert "Missing tests" in first.feedback.text and "test_negative_factor_raises" in first.feedback.text
    assert first.feedback.text in ran.attempts[1].messages[-1].content
    assert 0 < first.feedback.score < 1  # joint score: one of two tests does its job


# ----------------------------------------------------------------- bad replies

BAD_REPLIES = {
    "empty": ("", "empty_reply"),
    "whitespace": ("   \n\t\n", "empty_reply"),
    "syntax_error": ("```python\ndef scale_vector(x, factor:\n    return x\n```", "syntax_error"),
    "prose_only": ("I am sorry, I cannot write this function today.", "syntax_error"),
    "null_bytes": ("```python\ndef scale_vector(x, factor):\n    return x\x00\n```", None),
    "wrong_name": ("```python\ndef scale(x, factor):\n    return factor * x\n```", "missing_function"),
    "unclosed_fence": ("```python\ndef scale_vector(x, factor:\n", "syntax_error"),
}


@pytest.mark.parametrize("spec", ["single-shot", "feedback-loop:2", "template-guided"])
@pytest.mark.parametrize("kind", sorted(BAD_REPLIES))
def test_empty_and_malformed_replies_fail_at_parse_without_crashing(
    spec: str, kind: str, evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    reply, reason = BAD_REPLIES[kind]
    ran = run_agent(evaluator, [scale_task], spec, script_name, lambda m: reply, tmp_path / "r")
    n = 2 if spec.startswith("feedback-loop") else 1
    (episode,) = ran.episodes
    assert episode.status == "done" and not episode.passed and episode.attempts == n
    assert episode.failed_stage == "parse" and episode.error is None
    for attempt in ran.attempts:
        assert attempt.outcome is not None and attempt.outcome.failed_stage == "parse"
        assert reason is None or attempt.outcome.reason == reason
        assert attempt.feedback is not None and attempt.feedback.score == 0.0
        assert "could not be used" in attempt.feedback.text
    assert ran.script.calls == n


# ----------------------------------------------------------------- template guided


def test_template_guided_prompt_contains_a_runnable_skeleton(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    renderer = PromptRenderer()
    skeleton = renderer.skeleton(scale_task, "code")
    ran = run_agent(evaluator, [scale_task], "template-guided", script_name, [fenced(CORRECT_SCALE)], tmp_path / "r")
    prompt = ran.script.seen[0][-1].content
    assert skeleton.strip() in prompt
    assert prompt == ran.attempts[0].messages[-1].content
    plain = renderer.task_prompt(scale_task, "code", "single_shot")
    assert plain.strip() in prompt and len(prompt) > len(plain)
    # the skeleton is a runnable module: it defines the function, which says it is unfinished
    namespace: dict[str, Any] = {}
    exec(compile(skeleton, "<skeleton>", "exec"), namespace)
    with pytest.raises(NotImplementedError):
        namespace["scale_vector"]([1.0], 2.0)
    # and the evaluator sees it as code that runs and fails with that error
    outcome = evaluator.score(scale_task, "code", skeleton)
    assert outcome.failed_stage == "execute" and outcome.reason == "runtime_error"


def hidden_parts_replaced(task: Task) -> Task:
    """The task with everything a solver must not see replaced by something else."""
    secret = "def SECRET():\n    return 123456.789\n"
    tests = tuple(
        t.model_copy(
            update={
                "source": secret,
                "expected_failures": tuple(
                    f.model_copy(update={"name": "fail_SECRET", "source": secret}) for f in t.expected_failures
                ),
            }
        )
        for t in task.tests
    )
    return task.model_copy(
        update={
            "main_source": secret,
            "module_source": secret,
            "inputs": (),
            "module_functions": {"SECRET": secret},
            "tests": tests,
            "time_limit": 123.0,
            "path": "/nowhere/SECRET.py",
        }
    )


def test_prompts_and_skeleton_come_only_from_prompt_visible_parts(scale_task: Task) -> None:
    renderer = PromptRenderer()
    other = hidden_parts_replaced(scale_task)
    assert renderer.skeleton(other, "code") == renderer.skeleton(scale_task, "code")
    for scaffold in ("single_shot", "template_guided", "fembench_paper"):
        for track in ("code", "tests"):
            assert renderer.task_prompt(other, track, scaffold) == renderer.task_prompt(scale_task, track, scaffold)
    # ... and the visible parts do reach it
    changed = scale_task.model_copy(update={"main_docstring": "A VISIBLE CHANGE."})
    assert "A VISIBLE CHANGE." in renderer.skeleton(changed, "code")
    assert "A VISIBLE CHANGE." in renderer.task_prompt(changed, "code", "template_guided")


# ----------------------------------------------------------------- prompt:PATH


def write_prompt_file(directory: Path, form: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    if form == "txt":
        path = directory / "careful.txt"
        path.write_text(f"\n{text}\n\n")
    else:
        path = directory / "careful.json"
        path.write_text(json.dumps({"system_prompt": text, "budget": "heavy", "score": 0.9}))
    return path


@pytest.mark.parametrize("form", ["txt", "json"])
def test_prompt_agent_sends_its_system_prompt(
    form: str, evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    text = "You are a meticulous finite-element engineer.\nCheck every sign convention."
    path = write_prompt_file(tmp_path / "prompts", form, text)
    ran = run_agent(evaluator, [scale_task], f"prompt:{path}", script_name, [fenced(CORRECT_SCALE)], tmp_path / "r")
    sent = ran.script.seen[0]
    assert [m.role for m in sent] == ["system", "user"]
    assert sent[0].content == text
    assert sent[1].content == PromptRenderer().task_prompt(scale_task, "code")
    assert ran.attempts[0].messages[0] == Message(role="system", content=text)
    assert ran.calls[0].request.messages[0].content == text  # the recorded request holds it too
    (episode,) = ran.episodes
    assert episode.agent == "prompt:careful" and episode.passed
    # resumed with the same spec: the episode is found under the agent's name, not its spec, and not redone
    again = run_agent(evaluator, [scale_task], f"prompt:{path}", script_name, [fenced(CORRECT_SCALE)], tmp_path / "r")
    assert again.script.calls == 0 and [e.episode for e in again.episodes] == [episode.episode]


@pytest.mark.parametrize("form", ["txt", "json"])
def test_prompt_agent_with_attempts_is_a_feedback_loop_keeping_the_system_prompt(
    form: str, evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    text = "System prompt under test."
    path = write_prompt_file(tmp_path / "prompts", form, text)
    ran = run_agent(
        evaluator, [scale_task], f"prompt:{path}:3", script_name, lambda m: fenced(WRONG_SCALE), tmp_path / "r"
    )
    assert ran.script.calls == 3
    assert all(m[0] == Message(role="system", content=text) for m in ran.script.seen)
    assert all(len(m) == 2 for m in ran.script.seen)
    assert WRONG_OUTPUT_MARK in ran.script.seen[2][1].content
    assert ran.episodes[0].agent == "prompt:careful:3"


def test_prompt_path_containing_a_colon(tmp_path: Path) -> None:
    path = write_prompt_file(tmp_path / "a:b", "txt", "colon prompt")
    agent = make_agent(f"prompt:{path}")
    assert isinstance(agent, PromptAgent) and agent.system_prompt == "colon prompt" and agent.max_attempts == 1
    agent = make_agent(f"prompt:{path}:2")
    assert isinstance(agent, PromptAgent) and agent.system_prompt == "colon prompt" and agent.max_attempts == 2


@pytest.mark.parametrize(
    "spec, words",
    [
        ("prompt:{missing}", ["does not exist", "missing.txt"]),
        ("prompt:{bad_json}", ["bad.json", "JSON"]),
        ("prompt:{no_key}", ["nokey.json", "system_prompt"]),
        ("feedback-loop:0", ["feedback-loop:0", ">= 1"]),
        ("feedback-loop:three", ["feedback-loop:three", "three"]),
        ("prompt:{txt}:many", ["many"]),
        ("single-shot:2", ["single-shot:2", "takes no options"]),
        ("best-agent", ["unknown agent", "best-agent"]),
    ],
)
def test_bad_agent_specs_are_clear_errors(spec: str, words: list[str], tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "nokey.json").write_text(json.dumps({"prompt": "x"}))
    (tmp_path / "p.txt").write_text("x")
    spec = spec.format(
        missing=tmp_path / "missing.txt",
        bad_json=tmp_path / "bad.json",
        no_key=tmp_path / "nokey.json",
        txt=tmp_path / "p.txt",
    )
    with pytest.raises(ValueError) as info:
        make_agent(spec)
    for word in words:
        assert word in str(info.value)


# ----------------------------------------------------------------- provider failures


def test_provider_failure_after_retries_is_an_error_episode_and_the_run_continues(
    evaluator: Evaluator, scale_task: Task, mode_task: Task, script_name: str, tmp_path: Path
) -> None:
    asked: dict[str, int] = {"scale": 0, "mode": 0}

    def reply(messages: list[Message]) -> str:
        if "smallest_mode" in messages[-1].content:
            asked["mode"] += 1
            raise litellm.RateLimitError(message="scripted outage", llm_provider="scripted", model=script_name)
        asked["scale"] += 1
        return fenced(CORRECT_SCALE)

    ran = run_agent(evaluator, [scale_task, mode_task], "feedback-loop:3", script_name, reply, tmp_path / "r")
    assert asked == {"scale": 1, "mode": FAST.retry.max_retries + 1}
    broken, fine = ran.episode(mode_task.task_id), ran.episode(scale_task.task_id)
    assert fine.status == "done" and fine.passed
    assert broken.status == "error" and not broken.passed and broken.attempts == 1
    assert broken.failed_stage == "model_error" and broken.reason == "model_error"
    assert "RateLimitError" in broken.error and mode_task.task_id in broken.error
    (attempt,) = [a for a in ran.attempts if a.task_id == mode_task.task_id]
    assert attempt.outcome is None and attempt.model_error == broken.error
    (call,) = [c for c in ran.calls if c.task_id == mode_task.task_id]
    assert call.response is None and call.error == broken.error

    # resuming retries the error episode only
    ran2 = run_agent(
        evaluator,
        [scale_task, mode_task],
        "feedback-loop:3",
        script_name,
        lambda m: fenced(CORRECT_MODE if "smallest_mode" in m[-1].content else CORRECT_SCALE),
        tmp_path / "r",
    )
    assert ran2.script.calls == 1
    assert all(e.status == "done" and e.passed for e in ran2.episodes)


def test_a_failure_later_in_a_feedback_loop_keeps_the_scored_attempts(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    def reply(messages: list[Message]) -> str:
        if WRONG_OUTPUT_MARK in messages[-1].content:
            raise ValueError("the script breaks on the repair prompt")  # -> BadRequestError, not retried
        return fenced(WRONG_SCALE)

    ran = run_agent(evaluator, [scale_task], "feedback-loop:3", script_name, reply, tmp_path / "r")
    (episode,) = ran.episodes
    assert ran.script.calls == 2
    assert episode.status == "error" and episode.attempts == 2 and not episode.passed
    assert episode.failed_stage == "correct"  # what the last scored attempt reached
    assert ran.attempts[0].outcome is not None and ran.attempts[1].model_error is not None
    assert "BadRequestError" in episode.error


# ----------------------------------------------------------------- recorded prompts


def test_rendered_prompt_is_saved_with_every_attempt(
    evaluator: Evaluator, scale_task: Task, script_name: str, tmp_path: Path
) -> None:
    ran = run_agent(
        evaluator, [scale_task], "feedback-loop:3", script_name, lambda m: fenced(WRONG_SCALE), tmp_path / "r"
    )
    assert len(ran.attempts) == 3
    for attempt, sent, call in zip(ran.attempts, ran.script.seen, ran.calls, strict=True):
        assert list(attempt.messages) == sent
        assert call.request.messages == attempt.messages
        assert call.request_hash == attempt.request_hash == call.request.request_hash()
    fresh = PromptAgent(name="x", max_attempts=3, prompts=PromptRenderer())
    assert list(ran.attempts[0].messages) == fresh.first_messages(scale_task, "code")
    # the repair prompt is rebuilt exactly from what the log holds
    a0 = ran.attempts[0]
    previous = parse_code(a0.reply, ("scale_vector",)).code
    assert "+ 1.0" in previous
    rebuilt = PromptRenderer().repair_prompt(a0.messages[-1].content, a0.feedback.text, previous)
    assert ran.attempts[1].messages[-1].content == rebuilt


def test_the_repair_prompt_is_the_feedback_the_previous_code_and_the_original_task() -> None:
    r = PromptRenderer()
    tail = "```\n\nThe original task follows.\n\nORIGINAL\n"
    assert r.repair_prompt("ORIGINAL", "FEEDBACK", "x = 1\n") == (
        "FEEDBACK\n\nYour previous code:\n\n```python\nx = 1\n\n" + tail
    )
    # past 4000 characters: the whole lines that fit, marked cut, and called an excerpt
    assert r.repair_prompt("ORIGINAL", "FEEDBACK", "x = 1\n" * 2000) == (
        "FEEDBACK\n\nYour previous code (excerpt):\n\n```python\n" + "x = 1\n" * 666 + "# ... (truncated)\n" + tail
    )


RENDER_SCRIPT = """
import json, sys
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.suite.model import Task
task = Task.model_validate_json(sys.stdin.read())
r = PromptRenderer()
out = {f"{s}/{t}": r.task_prompt(task, t, s) for s in ("single_shot", "template_guided") for t in ("code", "tests")}
out["skeleton"] = r.skeleton(task, "code")
out["repair"] = r.repair_prompt("ORIGINAL", "FEEDBACK", "x = 1\\n" * 2000)
print(json.dumps(out))
"""


def test_prompt_rendering_is_deterministic_across_processes(scale_task: Task) -> None:
    r = PromptRenderer()
    here = {
        f"{s}/{t}": r.task_prompt(scale_task, t, s)
        for s in ("single_shot", "template_guided")
        for t in ("code", "tests")
    }
    here["skeleton"] = r.skeleton(scale_task, "code")
    here["repair"] = r.repair_prompt("ORIGINAL", "FEEDBACK", "x = 1\n" * 2000)
    again = PromptRenderer()
    assert all(
        again.task_prompt(scale_task, k.split("/")[1], k.split("/")[0]) == v for k, v in here.items() if "/" in k
    )
    assert "(truncated)" in here["repair"]
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", RENDER_SCRIPT],
            input=scale_task.model_dump_json(),
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == here


def test_skeleton_of_a_stub_is_valid_python(scale_task: Task) -> None:
    tree = ast.parse(PromptRenderer().skeleton(scale_task, "code"))
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["scale_vector"]

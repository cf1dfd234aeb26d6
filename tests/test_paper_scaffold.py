"""The `fembench-paper` scaffold: task prompts with the structure of FEM-Bench's
published ones (the task, the signature and docstring, the helpers or none,
the environment, the output rules; the tests to write with their docstrings),
bare code accepted as the answer, and the two experiment files that use it."""

from __future__ import annotations

import importlib.metadata
import json
import re
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from fembench_agents.agents import make_agent
from fembench_agents.agents.prompted import PromptAgent
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.optimize import load_settings
from fembench_agents.optimize.candidates import prompt_file_data
from fembench_agents.runs.experiments import load_experiment
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.environment import environment
from fembench_agents.suite.loader import load_tasks
from fembench_agents.suite.model import Task
from fembench_agents.suite.validation import ideal_answer

RENDERER = PromptRenderer()
CODE_SECTIONS = [
    "# Task: implement one Python function",
    "## Rules",
    "## Environment",
    "## Helper functions available",
    "## The function to write",
    "## Output",
]
TESTS_SECTIONS = [
    "# Task: write pytest tests for one Python function",
    "## The function under test",
    "## Rules",
    "## Environment",
    "## Test functions to write",
    "## Output",
]
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="module")
def suite(sandbox: Sandbox) -> list[Task]:
    return load_tasks(ROOT / "tasks", sandbox)


def headings(prompt: str) -> list[str]:
    return [line for line in prompt.splitlines() if line.startswith("#")]


def test_the_code_prompt_of_every_task_has_the_papers_sections(suite: list[Task]) -> None:
    assert len(suite) == 33
    for task in suite:
        prompt = RENDERER.task_prompt(task, "code", "fembench_paper")
        assert headings(prompt) == CODE_SECTIONS, task.task_id
        assert "```" not in prompt
        assert task.main_signature in prompt and task.main_docstring.splitlines()[0] in prompt
        helpers = prompt.split("## Helper functions available\n")[1].split("\n## The function to write")[0]
        if task.helpers:
            assert [h.name for h in task.helpers] == re.findall(r"^def (\w+)\(", helpers, re.M), task.task_id
        else:
            assert helpers.strip() == "None.", task.task_id
        for line in task.required_imports:
            assert f"\n  {line}\n" in prompt
        assert f"\n- Python {PYTHON}\n- numpy {importlib.metadata.version('numpy')}\n" in prompt
        assert prompt.rstrip().endswith(
            "Reply with the complete Python function and nothing else: no explanation, no markdown code fences, "
            "no print statements, no example usage."
        )


def test_the_tests_prompt_of_every_task_lists_the_tests_with_their_docstrings(suite: list[Task]) -> None:
    for task in suite:
        prompt = RENDERER.task_prompt(task, "tests", "fembench_paper")
        assert headings(prompt) == TESTS_SECTIONS, task.task_id
        listed = prompt.split("## Test functions to write\n")[1].split("\n## Output")[0].strip().splitlines()
        assert listed == [f"- {t.name}: {t.docstring.replace(chr(10), ' ')}" for t in task.tests], task.task_id
        assert "No print statements, no logging, no example usage." in prompt


def test_the_environment_is_the_tasks_own_when_it_declares_one(suite: list[Task]) -> None:
    task = next(t for t in suite if t.task_id == "MSA_3D_solve_eigenvalue_CC1_H1_T1")
    declared = task.model_copy(update={"python_version": "3.11", "package_versions": {"numpy": "1.26.4"}})
    assert environment(declared) == ("3.11", {"numpy": "1.26.4"})
    prompt = RENDERER.task_prompt(declared, "code", "fembench_paper")
    assert "## Environment\n- Python 3.11\n- numpy 1.26.4\n\n## Helper" in prompt
    # undeclared: the versions the sandbox runs, for the packages the imports name (not the standard library)
    imports = ("import numpy as np", "import scipy.linalg", "from typing import List", "import math")
    found = environment(task.model_copy(update={"required_imports": imports}))
    assert found == (
        PYTHON,
        {"numpy": importlib.metadata.version("numpy"), "scipy": importlib.metadata.version("scipy")},
    )


def test_bare_code_as_the_paper_asks_for_is_scored(evaluator: Evaluator, suite: list[Task]) -> None:
    task = next(t for t in suite if t.task_id == "FEM_1D_uniform_mesh_CC0_H0_T0")
    assert evaluator.score(task, "code", ideal_answer(task)).passed
    assert evaluator.score(task, "tests", "\n\n".join(t.source for t in task.tests)).passed


def test_the_agent_and_a_prompt_file_carry_the_scaffold(tmp_path: Path) -> None:
    agent = make_agent("fembench-paper")
    assert isinstance(agent, PromptAgent)
    assert (agent.name, agent.scaffold, agent.max_attempts) == ("fembench-paper", "fembench_paper", 1)
    loop = make_agent("fembench-paper:3")
    assert isinstance(loop, PromptAgent) and (loop.scaffold, loop.max_attempts) == ("fembench_paper", 3)
    file = tmp_path / "tuned.json"
    file.write_text(json.dumps(prompt_file_data("Be careful.", "fembench_paper")))
    tuned = make_agent(f"prompt:{file}")
    assert isinstance(tuned, PromptAgent)
    assert (tuned.system_prompt, tuned.scaffold) == ("Be careful.", "fembench_paper")
    assert prompt_file_data("Be careful.", "single_shot") == {"system_prompt": "Be careful."}
    file.write_text(json.dumps({"system_prompt": "x", "scaffold": "nope"}))
    with pytest.raises(ValueError, match="unknown scaffold 'nope'"):
        make_agent(f"prompt:{file}")


def test_the_papers_experiment_runs_every_task_on_both_tracks_five_times_for_any_models() -> None:
    exp = load_experiment(ROOT / "experiments" / "fembench_paper.toml", ["openai/gpt-4o", "gemini/gemini-2.5-pro"])
    assert (exp.models, exp.agents, exp.tasks, exp.tracks, exp.repeats) == (
        ["openai/gpt-4o", "gemini/gemini-2.5-pro"],
        ["fembench-paper"],
        "all",
        ["code", "tests"],
        5,
    )
    assert exp.params.temperature == 0.1


def test_the_gepa_protocol_tunes_with_the_papers_prompts_at_its_temperature() -> None:
    s = load_settings(ROOT / "experiments" / "gepa_fembench_protocol.toml", {"model": "m", "reflection_model": "r"})
    assert (s.scaffold, s.params.temperature) == ("fembench_paper", 0.1)

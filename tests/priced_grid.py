"""What the dry-run and spend-cap tests share: two small tasks, a scripted model
with prices, its replies, and the CLI runner."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CORRECT_SCALE, write_module
from typer.testing import CliRunner

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fembench_agents.messages import Message
from fembench_agents.models import register_script, unregister_script
from fembench_agents.models._litellm import litellm

SCALE = "scale_vector_CC0_H0_T0"
MODE = "mode_plain_CC1_H0_T0"
PRICED = "budget_priced"  # scripted/budget_priced: a fixed name, so the table's rows can be pinned
runner = CliRunner()

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


def fenced(code: str) -> str:
    return f"```python\n{code.strip()}\n```\n"


def repairing(messages: list[Message]) -> str:
    """The mode task right at once; the scale task wrong until shown feedback."""
    prompt = messages[-1].content
    if "smallest_mode" in prompt:
        return fenced(CORRECT_MODE)
    return fenced(CORRECT_SCALE if "returned wrong results" in prompt else WRONG_SCALE)


def completion_tokens(text: str) -> int:
    """As the scripted provider counts a reply."""
    return int(litellm.token_counter(model="gpt-4o-mini", text=text, count_response_tokens=True))


@pytest.fixture
def two_tasks(tmp_path: Path, task_dir: Path) -> Path:
    """The scale and the plain eigenpair tasks, alone in a folder."""
    folder = tmp_path / "tasks"
    for name in (SCALE, MODE):
        write_module(folder, f"{name}.py", (task_dir / f"{name}.py").read_text())
    return folder


@pytest.fixture
def priced() -> Iterator[str]:
    """A scripted model billed at $100 per million prompt tokens and $200 per million completion tokens."""
    register_script(PRICED, repairing, prices=(1e-4, 2e-4))
    yield f"scripted/{PRICED}"
    unregister_script(PRICED)

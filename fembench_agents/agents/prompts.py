"""Renders prompts from the jinja2 templates in `scaffolds/`.

A task prompt is the kind's (`TaskKind.solver`): it picks the templates and
the prompt-facing parts of a problem they render; this module holds the one
jinja environment and the repair prompt every kind shares.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from fembench_agents.contracts import Problem, Track
from fembench_agents.kinds import kind_for

SCAFFOLD_DIR = Path(__file__).resolve().parents[2] / "scaffolds"
EXCERPT_CHARS = 4000


def excerpt(code: str, limit: int = EXCERPT_CHARS) -> tuple[str, bool]:
    if len(code) <= limit:
        return code, False
    return code[:limit].rsplit("\n", 1)[0] + "\n# ... (truncated)", True


class PromptRenderer:
    """The scaffolds' templates (`Templates`), and each track's prompts as its kind builds them."""

    def __init__(self, scaffold_dir: str | Path = SCAFFOLD_DIR) -> None:
        self.scaffold_dir = Path(scaffold_dir)
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(scaffold_dir)),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
        )

    def render(self, name: str, **context: Any) -> str:
        return self.env.get_template(name).render(**context)

    def read(self, name: str) -> str:
        return (self.scaffold_dir / name).read_text()

    def task_prompt(self, problem: Problem, track: Track, scaffold: str = "single_shot") -> str:
        return kind_for(track).solver.task_prompt(problem, scaffold, self).strip() + "\n"

    def skeleton(self, problem: Problem, track: Track) -> str:
        return kind_for(track).solver.skeleton(problem, self)

    def repair_prompt(self, original: str, feedback: str, previous_code: str) -> str:
        code, truncated = excerpt(previous_code)
        return (
            self.env.get_template("feedback_loop/repair.j2")
            .render(feedback=feedback, previous_code=code, truncated=truncated, original=original)
            .strip()
            + "\n"
        )

"""Renders prompts from the jinja2 templates in `scaffolds/`.

Only prompt-facing parts of a task reach a template: signature, docstring,
given helpers, allowed imports, test names and docstrings.
"""

from __future__ import annotations

import ast
import functools
import json
import textwrap
from pathlib import Path
from typing import Any

import jinja2

from fembench_agents.cases.problem import SolverCase
from fembench_agents.cases.tracks import get_track
from fembench_agents.contracts import Track
from fembench_agents.suite.model import Task

SCAFFOLD_DIR = Path(__file__).resolve().parents[2] / "scaffolds"
EXCERPT_CHARS = 4000


def function_stub(task: Task) -> str:
    doc = textwrap.indent(task.main_docstring, "    ")
    return f'{task.main_signature}\n    """\n{doc}\n    """'


def returns_hint(task: Task) -> str | None:
    try:
        node = ast.parse(task.main_signature + "\n    ...").body[0]
    except SyntaxError:
        return None
    returns = getattr(node, "returns", None)
    return ast.unparse(returns) if returns is not None else None


def imported_modules(imports: tuple[str, ...]) -> list[str]:
    """Top-level module names of `import x` / `from x import y` lines, in order."""
    found: list[str] = []
    for line in imports:
        try:
            tree = ast.parse(line)
        except SyntaxError:
            continue
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            found += [n.split(".")[0] for n in names]
    return list(dict.fromkeys(found))


def environment(task: Task) -> tuple[str, dict[str, str]]:
    """The Python and package versions a prompt states: the task's own when it
    declares them (`python_version`, `package_versions`), otherwise those the
    sandbox runs, for the packages the task's imports name (standard-library
    modules have no version of their own)."""
    import sys

    python = task.python_version or f"{sys.version_info.major}.{sys.version_info.minor}"
    if task.package_versions:
        return python, dict(task.package_versions)
    versions: dict[str, str] = {}
    for module in imported_modules(task.required_imports):
        found = _installed_version(module)
        if found is not None:
            versions[found[0]] = found[1]
    return python, versions


@functools.lru_cache(maxsize=64)
def _installed_version(module: str) -> tuple[str, str] | None:
    """The distribution that provides `module` and its version (scanning the
    installed distributions takes a second: once per module and process)."""
    import importlib.metadata

    dists = _distributions().get(module, [])
    return (dists[0], importlib.metadata.version(dists[0])) if dists else None


@functools.lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    import importlib.metadata

    return dict(importlib.metadata.packages_distributions())


def excerpt(code: str, limit: int = EXCERPT_CHARS) -> tuple[str, bool]:
    if len(code) <= limit:
        return code, False
    return code[:limit].rsplit("\n", 1)[0] + "\n# ... (truncated)", True


class PromptRenderer:
    def __init__(self, scaffold_dir: str | Path = SCAFFOLD_DIR) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(scaffold_dir)),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
        )

    def _context(self, task: Task) -> dict[str, Any]:
        python, packages = environment(task)
        return {
            "python_version": python,
            "package_versions": packages,
            "task_id": task.task_id,
            "stub": function_stub(task),
            "imports": list(task.required_imports),
            "helpers": "\n\n".join(h.source.rstrip() for h in task.helpers),
            "tests": [{"name": t.name, "docstring": t.docstring} for t in task.tests],
            "returns": returns_hint(task),
        }

    def skeleton(self, task: Task) -> str:
        return self.env.get_template("template_guided/skeleton.py.j2").render(**self._context(task))

    def case_context(self, case: SolverCase, track: Track) -> dict[str, Any]:
        """A case's prompt shows its case_spec (agent-visible by construction) and the track's contract."""
        library = get_track(track)
        return {
            "case_id": case.task_id,
            "family": case.family,
            "library": library.name,
            "contract": library.contract_text(),
            "allowed": ", ".join(library.allowed_imports),
            "spec_json": json.dumps(case.spec_data(), indent=1, sort_keys=True),
            "skeleton": (SCAFFOLD_DIR / library.skeleton).read_text().rstrip(),
        }

    def task_prompt(self, task: Task | SolverCase, track: Track, scaffold: str = "single_shot") -> str:
        if isinstance(task, SolverCase):
            template = "template_guided" if scaffold == "template_guided" else "single_shot"
            return self.env.get_template(f"{template}/case.j2").render(**self.case_context(task, track)).strip() + "\n"
        ctx = self._context(task)
        if scaffold == "template_guided":
            ctx["skeleton"] = self.skeleton(task)
        name = f"{scaffold}/{'code' if track == 'code' else 'tests'}.j2"
        return self.env.get_template(name).render(**ctx).strip() + "\n"

    def repair_prompt(self, original: str, feedback: str, previous_code: str) -> str:
        code, truncated = excerpt(previous_code)
        return (
            self.env.get_template("feedback_loop/repair.j2")
            .render(feedback=feedback, previous_code=code, truncated=truncated, original=original)
            .strip()
            + "\n"
        )

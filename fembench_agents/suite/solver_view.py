"""What a solver sees of a function task (`SolverView` of the code and tests
tracks): the scaffolds' prompts, the template-guided skeleton, the code of a
reply a repair prompt quotes, and a coding agent's workspace.

Only prompt-facing parts of a task reach any of them: signature, docstring,
given helpers, allowed imports, test names and docstrings; never verification
inputs, reference source or outputs, or expected failures."""

from __future__ import annotations

import ast
import json
import textwrap
from dataclasses import dataclass
from typing import Any

from fembench_agents.kinds.contract import Templates, WorkspaceFiles, check_script
from fembench_agents.scoring.extraction import allowed_modules, parse_code
from fembench_agents.suite.environment import environment
from fembench_agents.suite.model import Task

SOLUTION_FILE = {"code": "solution.py", "tests": "test_solution.py"}
CHECK_SCRIPT = "workspace/check.py"  # under scaffolds/: the checks every workspace runs
CHECKS = "workspace/check_function.py"  # what a function or a test suite must define


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


def prompt_context(task: Task) -> dict[str, Any]:
    """What the scaffolds' templates of a function task render."""
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


@dataclass(frozen=True)
class FunctionSolverView:
    """A function task on the code track (write the function) or the tests track (write its tests)."""

    track: str

    def task_prompt(self, problem: Task, scaffold: str, templates: Templates) -> str:
        ctx = prompt_context(problem)
        if scaffold == "template_guided":
            ctx["skeleton"] = self.skeleton(problem, templates)
        return templates.render(f"{scaffold}/{self.track}.j2", **ctx)

    def skeleton(self, problem: Task, templates: Templates) -> str:
        return templates.render("template_guided/skeleton.py.j2", **prompt_context(problem))

    def reply_code(self, problem: Task, reply: str) -> str:
        if self.track == "tests":
            return parse_code(reply, (), prefix="test_").code
        return parse_code(reply, (problem.main_name,), prefix=None).code

    def workspace(self, problem: Task, templates: Templates) -> WorkspaceFiles:
        spec = json.dumps(self.check_spec(problem), indent=1)
        return WorkspaceFiles(
            solution=SOLUTION_FILE[self.track],
            stub=self.solution_stub(problem),
            check=check_script(templates.read(CHECK_SCRIPT), templates.read(CHECKS), spec),
        )

    def solution_stub(self, task: Task) -> str:
        """The allowed imports, the given helpers, and the function's stub (the tests' stubs on the tests track)."""
        header = "\n".join(task.required_imports)
        given = ""
        if task.helpers:
            sources = "\n\n\n".join(h.source.rstrip() for h in task.helpers)
            given = (
                "\n\n\n# --- given helper functions: already available, do not change them ---\n\n\n"
                f"{sources}\n\n\n# --- end of given helper functions ---"
            )
        if self.track == "code":
            body = f"{function_stub(task)}\n    raise NotImplementedError\n"
        else:
            body = (
                "\n\n\n".join(
                    f'def {t.name}(fcn):\n    """{textwrap.indent(t.docstring, "    ").strip()}"""\n'
                    "    raise NotImplementedError"
                    for t in task.tests
                )
                + "\n"
            )
        return f"{header}{given}\n\n\n{body}"

    def check_spec(self, task: Task) -> dict[str, object]:
        """What the workspace's check script checks, all of it visible in the task prompt."""
        return {
            "track": self.track,
            "solution": SOLUTION_FILE[self.track],
            "function": task.main_name,
            "parameters": _parameters(task.main_signature),
            "allowed_modules": sorted(allowed_modules(task.required_imports)),
            "tests": list(task.test_names) if self.track == "tests" else [],  # prompt-facing only on that track
            "has_examples": ">>>" in task.main_docstring,
        }


def _parameters(signature: str) -> list[list[str]]:
    """[name, kind] of each parameter of `def ...:` (kind as in inspect.Parameter)."""
    node = ast.parse(signature + "\n    ...").body[0]
    assert isinstance(node, ast.FunctionDef)
    a = node.args
    params = [[p.arg, "POSITIONAL_ONLY"] for p in a.posonlyargs]
    params += [[p.arg, "POSITIONAL_OR_KEYWORD"] for p in a.args]
    if a.vararg:
        params.append([a.vararg.arg, "VAR_POSITIONAL"])
    params += [[p.arg, "KEYWORD_ONLY"] for p in a.kwonlyargs]
    if a.kwarg:
        params.append([a.kwarg.arg, "VAR_KEYWORD"])
    return params

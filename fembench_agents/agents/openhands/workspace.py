"""The agent's scratch workspace: the task prompt as a file, a stub of the
target module, and a check script that runs the task's public checks only.

Everything written here comes from the prompt-facing parts of a task
(signature, docstring, given helpers, allowed imports, test names and
docstrings): never verification inputs, reference source or outputs, or
expected failures. The workspace is a fresh temporary directory outside the
repository and the run directory; the agent sees it at `VIRTUAL_ROOT`.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from fembench_agents.agents.prompts import SCAFFOLD_DIR, function_stub
from fembench_agents.cases.problem import SolverCase
from fembench_agents.cases.tracks import get_track
from fembench_agents.contracts import Track
from fembench_agents.suite.model import Task

VIRTUAL_ROOT = "/tmp/workspace"  # where the agent sees its workspace (see confine.py)
TASK_FILE = "TASK.md"
CHECK_FILE = "check.py"
SOLUTION_FILE = {"code": "solution.py", "tests": "test_solution.py"}
CASE_SOLUTION = "solver.py"  # a PDE case, on any library track
CASE_SPEC_FILE = "case_spec.json"


def solution_file(track: Track) -> str:
    return SOLUTION_FILE.get(track, CASE_SOLUTION)


NOBODY = 65534


@dataclass
class Workspace:
    """`root` holds `workspace/` (what the agent sees) and `control/` (our
    launcher and its config, never visible to the agent)."""

    root: Path
    track: Track

    @property
    def dir(self) -> Path:
        return self.root / "workspace"

    @property
    def control(self) -> Path:
        return self.root / "control"

    @property
    def solution(self) -> Path:
        return self.dir / solution_file(self.track)

    def virtual(self, name: str) -> str:
        return f"{VIRTUAL_ROOT}/{name}"

    def final_text(self) -> str:
        """The attempt: the solution file as it is now ("" when the agent deleted it)."""
        try:
            return self.solution.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def share_with_shell(self) -> None:
        """Let the confined shell (user `nobody` when we are root) edit every file."""
        if os.geteuid() != 0:
            return
        for path in [self.dir, *self.dir.rglob("*")]:
            try:
                os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
            except OSError:
                pass

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def create_workspace(
    task: Task | SolverCase, track: Track, task_prompt: str, prefix: str = "fembench-openhands-"
) -> Workspace:
    root = Path(tempfile.mkdtemp(prefix=prefix))
    ws = Workspace(root=root, track=track)
    ws.dir.mkdir()
    ws.control.mkdir(mode=0o700)
    (ws.dir / TASK_FILE).write_text(task_prompt)
    if isinstance(task, SolverCase):
        (ws.dir / CASE_SPEC_FILE).write_text(json.dumps(task.spec_data(), indent=1, sort_keys=True))
    ws.solution.write_text(solution_stub(task, track))
    (ws.dir / CHECK_FILE).write_text(check_script(task, track))
    ws.share_with_shell()
    return ws


def solution_stub(task: Task | SolverCase, track: Track) -> str:
    if isinstance(task, SolverCase):
        return (SCAFFOLD_DIR / get_track(track).skeleton).read_text()
    header = "\n".join(task.required_imports)
    given = ""
    if task.helpers:
        sources = "\n\n\n".join(h.source.rstrip() for h in task.helpers)
        given = (
            "\n\n\n# --- given helper functions: already available, do not change them ---\n\n\n"
            f"{sources}\n\n\n# --- end of given helper functions ---"
        )
    if track == "code":
        body = f"{function_stub(task)}\n    raise NotImplementedError\n"
    else:
        body = (
            "\n\n\n".join(
                f'def {t.name}(fcn):\n    """{textwrap.indent(t.docstring, "    ").strip()}"""\n    raise NotImplementedError'
                for t in task.tests
            )
            + "\n"
        )
    return f"{header}{given}\n\n\n{body}"


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


def check_spec(task: Task | SolverCase, track: Track) -> dict[str, object]:
    """What check.py checks, all of it visible in the task prompt."""
    from fembench_agents.scoring.extraction import allowed_modules

    if isinstance(task, SolverCase):
        return {
            "track": "case",
            "solution": CASE_SOLUTION,
            "function": "solve",
            "allowed_modules": sorted(get_track(track).allowed_imports),
            "case_spec": CASE_SPEC_FILE,
            "fields": {k: list(f.shape) for k, f in task.spec.output.fields.items()},
        }
    return {
        "track": track,
        "solution": SOLUTION_FILE[track],
        "function": task.main_name,
        "parameters": _parameters(task.main_signature),
        "allowed_modules": sorted(allowed_modules(task.required_imports)),
        "tests": list(task.test_names) if track == "tests" else [],  # prompt-facing only on that track
        "has_examples": ">>>" in task.main_docstring,
    }


def check_script(task: Task | SolverCase, track: Track) -> str:
    spec = json.dumps(check_spec(task, track), indent=1)
    return CHECK_TEMPLATE.replace("__SPEC__", spec)


CHECK_TEMPLATE = '''"""Public checks of your solution: it parses, uses only allowed imports,
imports, and defines what the task asks with the right signature (and, when
the docstring shows examples, runs them). Passing these checks does NOT mean
the solution is correct: the hidden evaluation runs it on other inputs."""

import ast
import doctest
import inspect
import json
import sys
import traceback

SPEC = json.loads("""__SPEC__""")


def fail(message):
    print("CHECK FAILED: " + message)
    sys.exit(1)


def main():
    path = SPEC["solution"]
    try:
        source = open(path, encoding="utf-8").read()
    except OSError as exc:
        fail(f"cannot read {path}: {exc}")
    try:
        tree = ast.parse(source, path)
    except SyntaxError as exc:
        fail(f"{path} does not parse: {exc.msg} (line {exc.lineno})")
    allowed = set(SPEC["allowed_modules"])
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["." if node.level else (node.module or "")]
        for name in names:
            if name.split(".")[0] not in allowed:
                fail(f"import of {name!r} is not allowed; allowed modules: {sorted(allowed)}")
    namespace = {"__name__": "solution"}
    try:
        exec(compile(source, path, "exec"), namespace)
    except Exception:
        fail(f"{path} raised while being imported:\\n" + traceback.format_exc(limit=3))
    if SPEC["track"] == "code":
        fn = namespace.get(SPEC["function"])
        if not callable(fn):
            fail(f"{path} defines no function named {SPEC['function']!r}")
        got = [[p.name, p.kind.name] for p in inspect.signature(fn).parameters.values()]
        if got != SPEC["parameters"]:
            fail(f"signature of {SPEC['function']} is {got}, expected {SPEC['parameters']}")
        if SPEC["has_examples"]:
            finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
            for test in finder.find(fn, SPEC["function"], globs=dict(namespace)):
                runner.run(test)
            if runner.failures:
                fail(f"{runner.failures} docstring example(s) failed (see above)")
        try:
            body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == SPEC["function"]][0].body
            stub = all(isinstance(n, (ast.Expr, ast.Raise, ast.Pass)) for n in body)
        except IndexError:
            stub = False
        if stub:
            fail(f"{SPEC['function']} is still a stub: implement it")
    elif SPEC["track"] == "case":
        fn = namespace.get("solve")
        if not callable(fn):
            fail(f"{path} defines no function named 'solve'")
        import numpy as np

        with open(SPEC["case_spec"], encoding="utf-8") as fh:
            out = fn(json.load(fh))
        if not isinstance(out, dict):
            fail(f"solve returned {type(out).__name__}, expected a dict")
        for name, shape in SPEC["fields"].items():
            arr = out.get(name)
            if not isinstance(arr, np.ndarray) or list(arr.shape) != shape:
                fail(f"output[{name!r}] must be a numpy array of shape {tuple(shape)}")
    else:
        for name in SPEC["tests"]:
            fn = namespace.get(name)
            if not callable(fn):
                fail(f"{path} defines no test function named {name!r}")
            if len(inspect.signature(fn).parameters) != 1:
                fail(f"{name} must take exactly one argument, fcn")
    print("CHECK PASSED (public checks only: import, signature" +
          (", docstring examples" if SPEC.get("has_examples") else "") + ")")


main()
'''

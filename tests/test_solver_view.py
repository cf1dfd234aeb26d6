"""What a solver sees comes from the kind (`TaskKind.solver`): a kind defined
here, outside the package, supplies its own prompts, repair excerpt and
coding-agent workspace with no change to agents/; agents/ never imports a
kind's package nor asks which kind it holds."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from conftest import ROOT
from pydantic import BaseModel

from fembench_agents.agents.coding.episode import episode_hidden
from fembench_agents.agents.coding.workspace import VIRTUAL_ROOT, create_workspace, write_workspace
from fembench_agents.agents.prompted import PromptAgent
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.cases.problem import load_cases
from fembench_agents.contracts import Feedback
from fembench_agents.kinds import kind_for, register_kind, unregister_kind
from fembench_agents.kinds.contract import Templates, WorkspaceFiles
from fembench_agents.messages import Message
from fembench_agents.suite.model import Task

TRACK = "notes-third-kind"
AGENTS = ROOT / "fembench_agents" / "agents"


@dataclass(frozen=True)
class Note:
    task_id: str
    hidden_dir: Path
    main_name: str = "write_note"
    content_hash: str = "0"
    leak: str | None = None


class NoteOutcome(BaseModel):
    kind: Literal["note"] = "note"
    passed: bool = False


@dataclass
class NoteView:
    """A third kind's `SolverView`: records each call and the templates it was given."""

    code: str = "def write_note():\n    return 'a note'"
    calls: list[tuple[str, ...]] = field(default_factory=list)
    templates: list[Templates] = field(default_factory=list)

    def task_prompt(self, problem: Note, scaffold: str, templates: Templates) -> str:
        self.calls.append(("task_prompt", problem.task_id, scaffold))
        self.templates.append(templates)
        return f"\n  Write the note {problem.task_id} ({scaffold}).  \n\n"

    def skeleton(self, problem: Note, templates: Templates) -> str:
        self.calls.append(("skeleton", problem.task_id))
        return "def write_note():\n    ...\n"

    def reply_code(self, problem: Note, reply: str) -> str:
        self.calls.append(("reply_code", problem.task_id, reply))
        return self.code

    def workspace(self, problem: Note, templates: Templates) -> WorkspaceFiles:
        self.calls.append(("workspace", problem.task_id))
        return WorkspaceFiles(
            solution="note.py", stub="def write_note():\n    ...\n", check="print('ok')\n", extra={"facts.txt": "n=1"}
        )


@dataclass(frozen=True)
class NoteKind:
    solver: NoteView
    track: str = TRACK
    label: str = "notes"
    default_path: str = "notes"
    preload: tuple[str, ...] = ()
    outcome_type: type[NoteOutcome] = NoteOutcome
    scorer_key: str = "notes"
    feedback: Any = None

    def load(self, *args: Any) -> Any:
        raise NotImplementedError

    def scorer(self, *args: Any) -> Any:
        raise NotImplementedError


@pytest.fixture
def view() -> Any:
    kind = NoteKind(solver=NoteView())
    register_kind(kind)
    yield kind.solver
    unregister_kind(TRACK)


@pytest.fixture
def note(tmp_path: Path) -> Note:
    return Note(task_id="n1", hidden_dir=tmp_path / "notes")


@dataclass
class NoteSession:
    """What PromptAgent asks of a session: every attempt fails with the same feedback."""

    reply: str
    track: str = TRACK
    sent: list[list[Message]] = field(default_factory=list)

    async def attempt(self, messages: list[Message]) -> tuple[NoteOutcome, Feedback]:
        self.sent.append(list(messages))
        return NoteOutcome(), Feedback(score=0.0, text="not yet")

    def last_reply(self) -> str:
        return self.reply


def test_a_third_kind_supplies_the_task_prompt_and_skeleton(view: NoteView, note: Note) -> None:
    renderer = PromptRenderer()
    assert renderer.task_prompt(note, TRACK, "template_guided") == "Write the note n1 (template_guided).\n"
    assert renderer.task_prompt(note, TRACK) == "Write the note n1 (single_shot).\n"
    assert renderer.skeleton(note, TRACK) == "def write_note():\n    ...\n"
    assert view.calls == [
        ("task_prompt", "n1", "template_guided"),
        ("task_prompt", "n1", "single_shot"),
        ("skeleton", "n1"),
    ]
    assert view.templates == [renderer, renderer]  # rendered with the renderer's own templates


def test_the_feedback_loop_quotes_the_code_the_kind_finds_in_a_reply(view: NoteView, note: Note) -> None:
    session = NoteSession(reply="Here it is: REPLY")
    asyncio.run(PromptAgent(name="loop", max_attempts=2).solve(note, session))  # type: ignore[arg-type]
    first = "Write the note n1 (single_shot).\n"
    assert session.sent[0] == [Message(role="user", content=first)]
    repaired = PromptRenderer().repair_prompt(first, "not yet", "def write_note():\n    return 'a note'")
    assert session.sent[1] == [Message(role="user", content=repaired)]
    assert view.calls[-1] == ("reply_code", "n1", "Here it is: REPLY")
    # no code found: the whole reply is quoted
    view.code, session = "  \n", NoteSession(reply="no code at all")
    asyncio.run(PromptAgent(name="loop", max_attempts=2).solve(note, session))  # type: ignore[arg-type]
    assert session.sent[1][-1].content == PromptRenderer().repair_prompt(first, "not yet", "no code at all")


def test_a_third_kind_supplies_the_coding_agents_workspace(view: NoteView, note: Note) -> None:
    ws = create_workspace(note, TRACK, "the prompt\n")
    try:
        files = {p.name: p.read_text() for p in ws.dir.iterdir()}
        assert files == {
            "TASK.md": "the prompt\n",
            "facts.txt": "n=1",
            "note.py": "def write_note():\n    ...\n",
            "check.py": "print('ok')\n",
        }
        assert ws.solution == ws.dir / "note.py" and ws.final_text() == "def write_note():\n    ...\n"
        assert ws.names() == {"root": VIRTUAL_ROOT, "task": "TASK.md", "solution": "note.py", "check": "check.py"}
        assert ws.root.name.startswith("fembench-workspace-")
    finally:
        ws.remove()
    assert view.calls == [("workspace", "n1")]


@pytest.mark.parametrize(
    "files, message",
    [
        (WorkspaceFiles("../note.py", "", ""), "workspace file '../note.py': expected a plain file name"),
        (WorkspaceFiles("note.py", "", "", {"..": ""}), "workspace file '..': expected a plain file name"),
        (
            WorkspaceFiles("check.py", "", ""),
            "workspace files ['TASK.md', 'check.py', 'check.py']: expected distinct names "
            "(TASK.md and check.py are taken)",
        ),
    ],
)
def test_a_workspace_refuses_a_file_it_cannot_write_as_named(
    files: WorkspaceFiles, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    with pytest.raises(ValueError) as exc:
        write_workspace("the prompt", files, "fembench-test-")
    assert str(exc.value) == message
    assert list(tmp_path.iterdir()) == []  # refused before anything is written


def test_the_terminal_hides_the_problems_own_hidden_dir(note: Note) -> None:
    class NoLog:
        pass

    assert episode_hidden(note, NoLog(), ("/srv/extra",)) == [str(note.hidden_dir.resolve()), "/srv/extra"]  # type: ignore[arg-type]


# ----------------------------------------------------------------- the built-in kinds


REPLY = """First the function:

```python
import numpy as np

def scale_vector(x, factor):
    return factor * np.asarray(x)
```

and its test:

```python
def test_scales(fcn):
    assert fcn([1.0], 2.0)[0] == 2.0
```
"""


def test_each_track_finds_the_code_it_scores_in_a_reply(scale_task: Task) -> None:
    assert kind_for("code").solver.reply_code(scale_task, REPLY) == (
        "import numpy as np\n\ndef scale_vector(x, factor):\n    return factor * np.asarray(x)"
    )
    assert kind_for("tests").solver.reply_code(scale_task, REPLY) == (  # every block: tests may need helpers
        "import numpy as np\n\ndef scale_vector(x, factor):\n    return factor * np.asarray(x)\n\n"
        "def test_scales(fcn):\n    assert fcn([1.0], 2.0)[0] == 2.0"
    )
    assert kind_for("code").solver.reply_code(scale_task, "no code") == "no code"
    assert kind_for("tests").solver.reply_code(scale_task, "") == ""
    case = load_cases(ROOT / "cases")[0]
    solver = "```python\nimport numpy as np\n\ndef solve(case_spec):\n    return {}\n```\nprint('done')"
    assert kind_for("numpy-scipy").solver.reply_code(case, solver) == (
        "import numpy as np\n\ndef solve(case_spec):\n    return {}"
    )


# ----------------------------------------------------------------- agents/ asks only the registry


def test_agents_never_import_a_kinds_package() -> None:
    found = []
    for path in sorted(AGENTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            found += [
                f"{path.relative_to(ROOT)}: {n}"
                for n in names
                if n.startswith(("fembench_agents.suite", "fembench_agents.cases"))
            ]
    assert found == []


def test_agents_never_branch_on_kind_or_track() -> None:
    spec = importlib.util.spec_from_file_location("kind_branches", ROOT / "scripts" / "kind_branches.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("kind_branches", script)
    spec.loader.exec_module(script)
    classes, words = script.kind_classes(), script.kind_words()
    assert {"SolverCase", "Task", "CaseOutcome"} <= classes and {"code", "tests", "numpy-scipy"} <= words
    found = {str(p.relative_to(ROOT)): script.sites(p, classes, words) for p in sorted(AGENTS.rglob("*.py"))}
    assert {p: s for p, s in found.items() if s} == {}


def test_each_kind_puts_its_own_checks_into_the_workspaces_check_script(scale_task: Task) -> None:
    """scaffolds/workspace/check.py is every workspace's (parse, imports, import); what
    the task asks comes from the kind's own checks, and no other kind's are in it."""
    common = (ROOT / "scaffolds" / "workspace" / "check.py").read_text()
    assert "__CHECKS__" in common and 'SPEC["track"]' not in common and "case_spec" not in common
    case = next(c for c in load_cases(ROOT / "cases") if "numpy-scipy" in c.spec.libraries)
    scripts = {
        track: kind_for(track).solver.workspace(problem, PromptRenderer()).check
        for track, problem in (("code", scale_task), ("tests", scale_task), ("numpy-scipy", case))
    }
    for script in scripts.values():
        assert "__CHECKS__" not in script and "__SPEC__" not in script
        compile(script, "check.py", "exec")
    function_only, case_only = "defines no test function named", "must be a numpy array of shape"
    assert [(function_only in s, case_only in s) for s in scripts.values()] == [
        (True, False),
        (True, False),
        (False, True),
    ]

"""A coding agent's scratch workspace: the task prompt as a file, and the
files the problem's kind supplies (`SolverView.workspace`): the solution
stub, the public check script, and any other file the problem needs.

Everything written here comes from the prompt-facing parts of a problem,
never hidden data. The workspace is a fresh temporary directory outside the
repository and the run directory; the agent sees it at `VIRTUAL_ROOT`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.contracts import Problem, Track
from fembench_agents.kinds import kind_for
from fembench_agents.kinds.contract import Templates, WorkspaceFiles

VIRTUAL_ROOT = "/tmp/workspace"  # where the agent sees its workspace (see confine.py)
TASK_FILE = "TASK.md"
CHECK_FILE = "check.py"
NOBODY = 65534


def planned_names(task: Problem, track: Track, templates: Templates) -> dict[str, str]:
    """`Workspace.names()` of the workspace `task` would get, without creating it (a dry run's prompts)."""
    solution = kind_for(track).solver.workspace(task, templates).solution
    return {"root": VIRTUAL_ROOT, "task": TASK_FILE, "solution": solution, "check": CHECK_FILE}


@dataclass
class Workspace:
    """`root` holds `workspace/` (what the agent sees) and `control/` (our
    launcher and its config, never visible to the agent)."""

    root: Path
    solution_file: str  # its final content is the attempt

    @property
    def dir(self) -> Path:
        return self.root / "workspace"

    @property
    def control(self) -> Path:
        return self.root / "control"

    @property
    def solution(self) -> Path:
        return self.dir / self.solution_file

    def virtual(self, name: str) -> str:
        return f"{VIRTUAL_ROOT}/{name}"

    def names(self) -> dict[str, str]:
        """What an agent's instructions name: the workspace as the agent sees it and its three files."""
        return {"root": VIRTUAL_ROOT, "task": TASK_FILE, "solution": self.solution_file, "check": CHECK_FILE}

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
    problem: Problem,
    track: Track,
    task_prompt: str,
    prefix: str = "fembench-workspace-",
    templates: Templates | None = None,
) -> Workspace:
    """A fresh workspace for `problem` on `track`, holding `task_prompt` and the files its kind supplies."""
    return write_workspace(
        task_prompt, kind_for(track).solver.workspace(problem, templates or PromptRenderer()), prefix
    )


def write_workspace(task_prompt: str, files: WorkspaceFiles, prefix: str) -> Workspace:
    names = [TASK_FILE, *files.extra, files.solution, CHECK_FILE]
    for name in names:
        if not name or name != Path(name).name or name in (".", ".."):
            raise ValueError(f"workspace file {name!r}: expected a plain file name")
    if len(set(names)) != len(names):
        raise ValueError(f"workspace files {names}: expected distinct names ({TASK_FILE} and {CHECK_FILE} are taken)")
    root = Path(tempfile.mkdtemp(prefix=prefix))
    ws = Workspace(root=root, solution_file=files.solution)
    ws.dir.mkdir()
    ws.control.mkdir(mode=0o700)
    (ws.dir / TASK_FILE).write_text(task_prompt)
    for name, text in files.extra.items():
        (ws.dir / name).write_text(text)
    ws.solution.write_text(files.stub)
    (ws.dir / CHECK_FILE).write_text(files.check)
    ws.share_with_shell()
    return ws

"""The agent's two tools, confined to its workspace: a terminal whose shell
runs in `confine.py`'s namespaces, and a file editor that refuses every path
outside the workspace. Both speak in the workspace's fixed path
(`VIRTUAL_ROOT`), so nothing episode-specific (a temp-dir name) reaches the
model and recorded requests hash the same in a replay. Imports OpenHands."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from openhands.sdk.llm import TextContent
from openhands.sdk.tool import Tool, ToolExecutor, register_tool
from openhands.tools.file_editor import FileEditorTool
from openhands.tools.file_editor.definition import FileEditorAction, FileEditorObservation
from openhands.tools.file_editor.impl import FileEditorExecutor
from openhands.tools.terminal import TerminalTool
from openhands.tools.terminal.impl import TerminalExecutor

from fembench_agents.agents.coding.workspace import NOBODY, VIRTUAL_ROOT

TERMINAL_KEY = "fembench_confined_terminal"
EDITOR_KEY = "fembench_confined_file_editor"

TERMINAL_DESCRIPTION = f"""Run a bash command in a persistent shell whose working directory is {VIRTUAL_ROOT}.
* One command per call; chain with && or ;. State (cwd, variables) persists between calls.
* `python` is the project's Python with numpy and scipy. There is no network.
* A command that prints nothing for a while returns control to you; send `C-c` with is_input=true to interrupt it.
* Only {VIRTUAL_ROOT} (and a private /tmp) is writable."""

EDITOR_DESCRIPTION = f"""View, create and edit files under {VIRTUAL_ROOT}.
* `view` shows a file with line numbers (or lists a directory).
* `create` writes a whole file, replacing it if it exists (`file_text` is the content).
* `str_replace` replaces `old_str`, which must occur exactly once, with `new_str`.
* `insert` inserts `new_str` after line `insert_line`; `undo_edit` reverts the last edit.
* `path` is absolute (e.g. {VIRTUAL_ROOT}/solution.py) or relative to {VIRTUAL_ROOT}."""


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class PathOutsideWorkspace(ValueError):
    pass


class WorkspacePaths:
    """Maps the agent's paths (under VIRTUAL_ROOT, or relative to it) to real
    ones and back. A path outside the workspace, or one that passes through a
    symlink, is refused: the editor runs in our process, unconfined, so a link
    the shell planted must not lead it out."""

    def __init__(self, real_root: str | os.PathLike[str]) -> None:
        self.real = os.path.realpath(real_root)

    def to_real(self, path: str) -> str:
        virtual = os.path.normpath(path if os.path.isabs(path) else os.path.join(VIRTUAL_ROOT, path))
        if not _within(virtual, VIRTUAL_ROOT):
            raise PathOutsideWorkspace(f"{path} is outside the workspace {VIRTUAL_ROOT}")
        real = self.real + virtual[len(VIRTUAL_ROOT) :]
        current = self.real
        for part in Path(real[len(self.real) :]).parts[1:] if real != self.real else ():
            current = os.path.join(current, part)
            if os.path.islink(current):
                raise PathOutsideWorkspace(f"{path} passes through a symbolic link; edit the file itself")
        if not _within(os.path.realpath(real), self.real):
            raise PathOutsideWorkspace(f"{path} is outside the workspace {VIRTUAL_ROOT}")
        return real

    def to_virtual(self, text: str) -> str:
        return text.replace(self.real, VIRTUAL_ROOT)


class ConfinedEditorExecutor(ToolExecutor):  # type: ignore[type-arg]
    def __init__(self, real_root: str) -> None:
        self.paths = WorkspacePaths(real_root)
        self.inner = FileEditorExecutor(workspace_root=self.paths.real)

    def __call__(self, action: FileEditorAction, conversation: Any = None) -> FileEditorObservation:
        try:
            real = self.paths.to_real(action.path)
        except PathOutsideWorkspace as exc:
            return FileEditorObservation.from_text(text=f"ERROR: {exc}", command=action.command, is_error=True)
        if action.command == "create" and os.path.isfile(real):
            os.unlink(real)  # our `create` overwrites
        observation = self.inner(action.model_copy(update={"path": real}), conversation)
        if action.command != "view" and os.path.exists(real) and os.geteuid() == 0:
            os.chown(real, NOBODY, NOBODY)  # the confined shell runs as nobody
        content = [
            TextContent(text=self.paths.to_virtual(c.text)) if isinstance(c, TextContent) else c
            for c in observation.content
        ]
        return observation.model_copy(update={"content": content, "path": action.path})


class ConfinedFileEditorTool(FileEditorTool):
    name: ClassVar[str] = "file_editor"

    @classmethod
    def create(cls, conv_state: Any, real_root: str) -> Sequence[ConfinedFileEditorTool]:  # type: ignore[override]
        (base,) = FileEditorTool.create(conv_state)
        return [
            cls(
                action_type=base.action_type,
                observation_type=base.observation_type,
                description=EDITOR_DESCRIPTION,
                annotations=base.annotations,
                executor=ConfinedEditorExecutor(real_root),
            )
        ]


class ConfinedTerminalTool(TerminalTool):
    name: ClassVar[str] = "terminal"

    @classmethod
    def create(  # type: ignore[override]
        cls,
        conv_state: Any,
        launcher: str,
        command_seconds: int = 30,
    ) -> Sequence[ConfinedTerminalTool]:
        executor = TerminalExecutor(
            working_dir=conv_state.workspace.working_dir,
            terminal_type="subprocess",
            shell_path=launcher,
            no_change_timeout_seconds=command_seconds,
            env={"OH_TERMINAL_PROCESS_PRIORITY": "none"},
        )
        (base,) = TerminalTool.create(conv_state, executor=executor)
        return [
            cls(
                action_type=base.action_type,
                observation_type=base.observation_type,
                description=TERMINAL_DESCRIPTION,
                annotations=base.annotations,
                executor=executor,
            )
        ]


register_tool(TERMINAL_KEY, ConfinedTerminalTool)
register_tool(EDITOR_KEY, ConfinedFileEditorTool)


def tool_specs(real_root: str, launcher: str, command_seconds: int) -> list[Tool]:
    return [
        Tool(name=TERMINAL_KEY, params={"launcher": launcher, "command_seconds": command_seconds}),
        Tool(name=EDITOR_KEY, params={"real_root": real_root}),
    ]

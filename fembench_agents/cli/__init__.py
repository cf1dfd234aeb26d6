"""The `fembench-agents` command line: `app` and one module per command group.
Importing this package registers every command, so `fembench-agents` and
`python -m fembench_agents.cli` list the same ones."""

from __future__ import annotations

import sys

from rich.markup import escape

# isort: off
# Imported in the order `--help` lists the commands (typer lists them as they register).
from fembench_agents.cli import optimize, runs, report, replay, score, view  # noqa: F401 - register commands
from fembench_agents.cli import cases, cases_import, models, parity, sandbox, tasks  # noqa: F401 - register commands

# isort: on
from fembench_agents.cli.app import app, err
from fembench_agents.scoring.sandbox import WeakIsolationRefused

__all__ = ["app", "main"]


def main() -> None:
    try:
        app()
    except WeakIsolationRefused as exc:  # a job's confinement failed after the first check passed
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        sys.exit(2)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)

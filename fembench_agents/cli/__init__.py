"""The `fembench-agents` command line: `app` and one module per command group.
Importing this package registers every command, so `fembench-agents` and
`python -m fembench_agents.cli` list the same ones."""

from __future__ import annotations

import sys

from rich.markup import escape

# isort: off
# Imported in the order `--help` lists the commands (typer lists them as they register).
from fembench_agents.cli import optimize, runs, report, replay, score, view  # noqa: F401 - register commands
from fembench_agents.cli import cases, cases_generate, cases_import, models, parity, sandbox, tasks  # noqa: F401 - register commands

# isort: on
from fembench_agents.cli.app import app, err, say_bad_input
from fembench_agents.errors import BadInput
from fembench_agents.scoring.sandbox import WeakIsolationRefused

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> None:
    """The command line (`argv`: the arguments, default the process's). Input
    the command cannot use is answered in one line with exit 2 wherever it is
    found; any other exception is a bug and keeps its traceback."""
    try:
        app(args=argv)
    except WeakIsolationRefused as exc:  # a job's confinement failed after the first check passed
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        sys.exit(2)
    except BadInput as exc:  # a run log, manifest or input file found damaged deep inside a command
        say_bad_input(exc)
        sys.exit(2)
    except OSError as exc:
        if exc.filename is None:  # not about a file: nothing the user named
            raise
        # A path the user gave (an --out under a file, a folder without permission): not a bug.
        where = f"{exc.filename}" + (f" -> {exc.filename2}" if exc.filename2 else "")
        err.print(f"error: {where}: {exc.strerror}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)

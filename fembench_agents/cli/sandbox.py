"""`sandbox check`: the isolation this machine gives generated code."""

from __future__ import annotations

from dataclasses import replace

import typer
from rich.markup import escape

from fembench_agents.cli.app import app, console
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.scoring.sandbox.isolation import remedies

sandbox_app = typer.Typer(no_args_is_help=True, help="The sandbox that runs generated code.")
app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command("check")
def sandbox_check() -> None:
    """Print the isolation this machine gives generated code, and why; exit 1 below namespaced."""
    with Sandbox(allow_weak_isolation=True) as sandbox:
        report = replace(sandbox.isolation(), accepted_weak=False)  # probing accepts nothing
    console.print(escape(report.summary()), highlight=False)
    if report.confined:
        console.print(
            "each job: private mount, network, PID and IPC namespaces; every inherited mount "
            "read-only; home, project, task and run directories, /run and /tmp hidden; a private "
            "/tmp; no network interfaces; no capabilities; limits on memory, CPU time, processes "
            "and file size",
            highlight=False,
        )
        return
    console.print(
        "generated code is refused here unless a command is given --allow-weak-isolation. To fix:", highlight=False
    )
    for line in remedies():
        console.print(f"  - {escape(line)}", highlight=False)
    raise typer.Exit(1)

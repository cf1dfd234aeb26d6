"""`view`: a static site for browsing runs in a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fembench_agents.cli.app import SkipBadLinesOpt, app, bad_input, err, fail, open_runs
from fembench_agents.errors import BadInput


@app.command("view")
def view(
    runs: Annotated[list[Path], typer.Argument(help="run directories, or a directory `compare` wrote them into")],
    out: Annotated[Path, typer.Option(help="write the site here")] = Path("view"),
    serve: Annotated[bool, typer.Option("--serve", help="then serve it on 127.0.0.1 until Ctrl-C")] = False,
    port: Annotated[int, typer.Option(help="the port for --serve (0: any free port)")] = 8000,
    skip_bad_lines: SkipBadLinesOpt = False,
) -> None:
    """A static site of runs: tables linked to every episode and attempt.

    It opens from disk (OUT/index.html) with no server and no network."""
    from fembench_agents.runs.reader import expand_run_dirs
    from fembench_agents.viewer import site_server, write_site

    runs = expand_run_dirs(runs)
    for r in runs:
        if not (r / "manifest.json").exists():
            bad_input(BadInput(f"{r} is not a run directory (no manifest.json)"))
    opened = open_runs(runs, skip_bad_lines)
    try:
        index = write_site(opened, out)
    except ValueError as exc:  # the same episode in two runs
        bad_input(BadInput(str(exc)))
    err.print(f"site written to {index} (open it in a browser)")
    if serve:
        try:
            server = site_server(out, port)
        except (OSError, OverflowError) as exc:  # the port is taken, or no port at all
            fail(f"cannot serve on 127.0.0.1:{port}: {exc}")
        err.print(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()

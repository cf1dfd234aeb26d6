"""`models check`: is a model reachable with the keys at hand, how fast, at what price."""

from __future__ import annotations

from typing import Annotated

import typer

from fembench_agents.cli.app import app, console

models_app = typer.Typer(no_args_is_help=True, help="Check models before a long run.")
app.add_typer(models_app, name="models")


@models_app.command("check")
def models_check(
    models: Annotated[list[str], typer.Argument(help="litellm model names, `local` for the embedded model")],
    api_base: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL")] = None,
    timeout: Annotated[float, typer.Option(min=1, help="seconds to wait for each answer")] = 60.0,
) -> None:
    """One tiny call per model: whether it answered, latency, tokens, price per
    million tokens. Exit status 1 when any model did not answer."""
    from fembench_agents.models.check import check_model  # lazy: imports litellm
    from fembench_agents.models.keys import redact

    results = [check_model(model, api_base, timeout) for model in models]
    for result in results:
        console.print(redact(result.line()), markup=False, highlight=False, soft_wrap=True)
    if not all(r.answered for r in results):
        raise typer.Exit(1)

"""`cases list/show/build/calibrate/validate`: the PDE cases (see docs/pde_cases.md)."""

from __future__ import annotations

from fembench_agents.cases.cli import cases_app
from fembench_agents.cli.app import app

app.add_typer(cases_app, name="cases")

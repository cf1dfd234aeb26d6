"""The command line run in the test's own process, through the same `main`
as the `fembench-agents` script (its one-line answers to bad input included),
so that a scripted model registered here answers it, at no interpreter start."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

from fembench_agents.cli import main


@dataclass(frozen=True)
class Called:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def cli(*args: str | Path) -> Called:
    """`fembench-agents ARGS...`: its exit status, stdout and stderr. An exception
    that escapes `main` (a bug, which keeps its traceback) escapes this too."""
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code
    assert isinstance(code, int), code
    return Called(code, out.getvalue(), err.getvalue())

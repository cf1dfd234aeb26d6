"""The defaults of a run, written once: the command line's options, experiment
files, the Python API and `RunConfig` all read them here."""

from __future__ import annotations

from typing import Final

from fembench_agents.messages import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_LIBRARY",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_REPEATS",
    "DEFAULT_SELECTION",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_TRACK",
    "RUNS_DIR",
    "CASES_PATH",
    "TASKS_PATH",
]

DEFAULT_SELECTION: Final = "all"  # every problem (but those marked as leaking)
DEFAULT_TRACK: Final = "code"  # function tasks: write the function
DEFAULT_LIBRARY: Final = "numpy-scipy"  # PDE cases asked for without a library
DEFAULT_REPEATS: Final = 1
DEFAULT_CONCURRENCY: Final = 2  # episodes at once, per run
RUNS_DIR: Final = "runs"  # where a run directory goes when none is named
# The built-in kinds' problem sources: their folders by default, and the names
# (a kind's `default_path`) `--tasks-path` and `--cases-path` set.
TASKS_PATH: Final = "tasks"
CASES_PATH: Final = "cases"

"""Experiment files (TOML in `experiments/`): a `compare` grid, reproducibly."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fembench_agents.errors import read_text_file
from fembench_agents.kinds import kind_for
from fembench_agents.messages import ModelParams
from fembench_agents.runs.defaults import (
    CASES_PATH,
    DEFAULT_CONCURRENCY,
    DEFAULT_REPEATS,
    DEFAULT_SELECTION,
    DEFAULT_TRACK,
    TASKS_PATH,
)
from fembench_agents.runs.episode_budget import EpisodeBudget
from fembench_agents.vocabulary import Track


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    models: list[str] = Field(min_length=1)
    agents: list[str] = Field(min_length=1)
    tasks: str = DEFAULT_SELECTION
    tasks_path: str = TASKS_PATH
    track: Track = DEFAULT_TRACK
    tracks: list[Track] = []  # several tracks over `tasks`, each its own run (overrides `track`)
    # PDE cases: each agent runs on each library track named here, over `cases`
    libraries: list[Track] = []
    cases: str = DEFAULT_SELECTION
    cases_path: str = CASES_PATH
    repeats: int = Field(default=DEFAULT_REPEATS, ge=1)
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1)  # episodes at once
    model_concurrency: int | None = Field(default=None, ge=1)  # model calls at once per provider
    sandbox_workers: int | None = Field(default=None, ge=1)  # default: one per CPU
    params: ModelParams = ModelParams()
    # the same caps on every agent's episode: "calls=N,tokens=N,usd=X,seconds=S" or a table of them
    episode_budget: EpisodeBudget | None = None

    @field_validator("episode_budget", mode="before")
    @classmethod
    def _budget(cls, value: Any) -> EpisodeBudget | None:
        return EpisodeBudget.of(value)

    # USD the whole grid may spend on model calls (`--max-cost`; runs/budget.py); None: no cap
    max_cost: float | None = Field(default=None, ge=0)
    # beside each problem, its fresh instance drawn with this seed (`--fresh-inputs`); None: published only
    fresh_inputs: int | None = Field(default=None, ge=0)

    @field_validator("track", "tracks", "libraries")
    @classmethod
    def _registered(cls, value: str | list[str]) -> str | list[str]:
        for track in [value] if isinstance(value, str) else value:
            kind_for(track)  # a ValueError naming the registered tracks
        return value

    @field_validator("params", mode="before")
    @classmethod
    def _known_params(cls, value: Any) -> Any:
        return known_model_params(value)


def known_model_params(value: Any) -> Any:
    """`value` unchanged; ModelParams ignores unknown keys, but in a file an unknown key is a typo."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(ModelParams.model_fields))
        if unknown:
            raise ValueError(f"unknown model parameter {unknown[0]!r} (known: {', '.join(ModelParams.model_fields)})")
    return value


def read_experiment_file(path: str | Path, kind: str) -> dict[str, Any]:
    """The TOML table of an experiment file of `kind` (compare or optimize); a
    file without `kind` is of the kind asked for. ValueError names the file."""
    path = Path(path)
    try:
        data = tomllib.loads(read_text_file(str(path), "experiment file"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    found = data.pop("kind", kind)
    if found != kind:
        raise ValueError(f"{path}: a {found!r} experiment, not a {kind!r} one (use `fembench-agents {found}` with it)")
    return data


def load_experiment(path: str | Path, models: list[str] | None = None) -> Experiment:
    """The experiment in `path`; `models`, when given, replace the file's
    (an experiment may fix a setting and leave the models to the command line)."""
    path = Path(path)
    data = read_experiment_file(path, "compare")
    if models:
        data["models"] = models
    try:
        return Experiment.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{path}: {where}: {first['msg']}") from None

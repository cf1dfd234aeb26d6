"""What an optimization is: models, split, budget and GEPA settings, from the
command line or an experiment file (TOML in `experiments/`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fembench_agents.kinds import tracks
from fembench_agents.messages import ModelParams
from fembench_agents.runs.defaults import CASES_PATH, DEFAULT_SELECTION, DEFAULT_TRACK, TASKS_PATH
from fembench_agents.runs.experiments import known_model_params, read_experiment_file

DEFAULT_SEED_PROMPT = (
    "You are an expert in computational mechanics and scientific Python. "
    "Write correct, self-contained code that follows the requested signature and docstring exactly."
)
DEFAULT_LIBRARY = "numpy-scipy"  # the library track of `--cases` without `--library`, as in `run`
# Settings that may change when a run is resumed; everything else must match.
RESUMABLE = frozenset(
    {"name", "budget", "concurrency", "tasks_path", "cases_path", "heldout_repeats", "final_train_eval"}
)
# Settings added since the first optimizations: in their identity only when not at their default,
# so that an optimization begun before them resumes.
LATER = ("track", "tasks")


class OptimizeSettings(BaseModel):
    """GEPA settings not named here are GEPA's defaults (Pareto candidate
    selection, per-instance frontier, strict-improvement acceptance, skipping
    perfect minibatches)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    model: str = Field(min_length=1)
    reflection_model: str = Field(min_length=1)
    budget: str = "light"
    heldout: str = Field(min_length=1)
    val_fraction: float = 0.3
    seed: int = 0
    # the track optimized on: code, tests, or a PDE library (`library`, with `cases`)
    track: str = DEFAULT_TRACK
    tasks: str = DEFAULT_SELECTION  # the problems taking part (ids or patterns; `cases` for PDE cases)
    tasks_path: str = TASKS_PATH
    cases_path: str = CASES_PATH
    include_reference: bool = True
    use_merge: bool = True
    max_merge_invocations: int = Field(default=5, ge=0)
    reflection_minibatch_size: int = Field(default=3, ge=1)
    seed_prompt: str = DEFAULT_SEED_PROMPT
    # the task prompts the system prompt is tuned with (and travels with: `prompt:FILE` uses them too)
    scaffold: Literal["single_shot", "fembench_paper"] = "single_shot"
    # direct: the gepa package with our adapter; dspy: dspy.GEPA on a DSPy program (docs/optimize.md)
    engine: Literal["direct", "dspy"] = "direct"
    params: ModelParams = ModelParams()  # the run defaults (messages.py)
    reflection_params: ModelParams = ModelParams(temperature=1.0, max_tokens=8192)
    concurrency: int = Field(default=4, ge=1)
    final_train_eval: bool = True
    heldout_repeats: int = Field(default=5, ge=1)

    @field_validator("params", "reflection_params", mode="before")
    @classmethod
    def _known_params(cls, value: Any) -> Any:
        return known_model_params(value)

    @field_validator("track")
    @classmethod
    def _known_track(cls, value: str) -> str:
        if value not in tracks():
            raise ValueError(f"unknown track {value!r}; known: {', '.join(tracks())}")
        return value

    @field_validator("budget", mode="before")
    @classmethod
    def _budget_text(cls, v: Any) -> str:
        return str(v)

    def later(self) -> dict[str, Any]:
        """The settings added since the first optimizations, where they are not at their default."""
        return {k: getattr(self, k) for k in LATER if getattr(self, k) != type(self).model_fields[k].default}

    def identity(self) -> dict[str, Any]:
        """What must match for an out directory to be resumed with these settings."""
        data = self.model_dump(mode="json", exclude={*RESUMABLE, *LATER})
        data.update(self.later())
        for key in ("params", "reflection_params"):
            data[key] = {k: v for k, v in data[key].items() if k not in ("timeout", "api_base")}
        return data


def default_name(model: str, budget: str) -> str:
    return "gepa_" + re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{model}_{budget}").strip("-")


def load_settings(path: str | Path | None, overrides: dict[str, Any]) -> OptimizeSettings:
    """Settings from an experiment file (if any) with `overrides` (the options
    given on the command line, None meaning not given) on top; a clear
    ValueError names a bad or missing key."""
    data: dict[str, Any] = {}
    if path is not None:
        data = read_experiment_file(path, "optimize")
    for key in ("params", "reflection_params"):  # a partial table keeps this field's other defaults
        given = data.get(key, {})
        if isinstance(given, dict):
            data[key] = {**OptimizeSettings.model_fields[key].default.model_dump(), **given}
    for key, value in overrides.items():
        if value is None:
            continue
        if key in ("params", "reflection_params") and isinstance(data[key], dict):
            data[key] = {**data[key], **{k: v for k, v in value.items() if v is not None}}
        else:
            data[key] = value
    source = f"{path}: " if path is not None else ""
    try:
        _cases_on_a_library(data)
    except ValueError as exc:
        raise ValueError(f"{source}{exc}") from None
    if "name" not in data and data.get("model"):
        data["name"] = default_name(str(data["model"]), str(data.get("budget", "light")))
    try:
        return OptimizeSettings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "settings"
        option = {
            "model": " (--model)",
            "reflection_model": " (--reflection-model)",
            "heldout": " (--heldout)",
            "name": " (--name)",
            "track": " (--track, --library)",
            "tasks": " (--cases)",
        }.get(where, "")
        raise ValueError(f"{source}{where}{option}: {first['msg']}") from None


def _cases_on_a_library(data: dict[str, Any]) -> None:
    """`cases` and `library` (file keys and options, as `run` spells them) are the
    problems taking part and the track: PDE cases on a library track."""
    cases, library = data.pop("cases", None), data.pop("library", None)
    if cases is None and library is None:
        return
    library = library or DEFAULT_LIBRARY
    if data.get("track", library) != library:
        raise ValueError(f"track {data['track']!r} and library {library!r}: give one of them")
    data["track"] = library
    if cases is not None:
        data["tasks"] = cases

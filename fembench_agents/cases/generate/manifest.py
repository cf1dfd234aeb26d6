"""`fresh.json`, the record of a folder of fresh cases: per case how to draw it
again (family, domain, seed, index, the draw kept) and which draws were refused
and why. Light on purpose: `cases validate` asks `is_fresh` without sympy."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

GENERATOR_VERSION = 2  # bump when a change makes any seed draw other cases
MANIFEST = "fresh.json"


class Redraw(BaseModel):
    """A refused draw: which check refused it and its words."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    draw: int
    check: str  # leak, eigenfunction, calibration, build, or the name of a check that refused it
    reason: str


class FreshRecord(BaseModel):
    """What `fresh.json` keeps of one generated case: how to draw it again and what was refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    generator_version: int
    family: str
    domain: str
    domain_fixed: bool
    seed: int
    index: int
    draw: int
    terms: tuple[str, ...]
    libraries: tuple[str, ...]  # the tracks it was calibrated on: those asked for that solve it
    redraws: tuple[Redraw, ...] = ()


class FreshManifest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    generator_version: int = GENERATOR_VERSION
    cases: dict[str, FreshRecord] = {}


def is_fresh(folder: Path) -> bool:
    """Whether a cases folder holds generated cases (the committed set's coverage rules are not theirs)."""
    return (folder / MANIFEST).exists()

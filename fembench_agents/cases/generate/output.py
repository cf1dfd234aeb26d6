"""A folder of fresh cases, laid out as the committed cases are (definitions/,
case_specs.jsonl, hidden/), plus `fresh.json` (manifest.py). Several `cases generate` calls may fill one folder; a case
already there is drawn again and written over with the same bytes."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fembench_agents.cases import store
from fembench_agents.cases.builder import write
from fembench_agents.cases.generate.draw import (
    CHECKS,
    DEFAULT_LIBRARIES,
    Check,
    Fresh,
    GenerationError,
    generate_case,
    parse_id,
)
from fembench_agents.cases.generate.manifest import GENERATOR_VERSION, MANIFEST, FreshManifest, FreshRecord


@dataclass(frozen=True)
class Request:
    """`cases generate --family F [--domain D] --seed S --count N`: cases 0 .. N-1 of the family."""

    family: str
    seed: int
    count: int
    domain: str | None = None
    libraries: tuple[str, ...] = DEFAULT_LIBRARIES


def load_manifest(folder: Path) -> FreshManifest:
    path = folder / MANIFEST
    if not path.exists():
        return FreshManifest()
    manifest = FreshManifest.model_validate_json(path.read_text())
    if manifest.generator_version != GENERATOR_VERSION:
        raise GenerationError(
            f"{path}: written by generator version {manifest.generator_version}, this is version "
            f"{GENERATOR_VERSION}: generate into another folder"
        )
    return manifest


def save(folder: Path, fresh: Sequence[Fresh]) -> None:
    """Write the cases, merged with what the folder holds."""
    manifest = load_manifest(folder)
    for f in fresh:
        store.write_if_changed(folder / store.DEFINITIONS / f"{f.record.id}.toml", f.definition.encode())
    write(folder, [f.built for f in fresh], partial=True)
    cases = {**manifest.cases, **{f.record.id: f.record for f in fresh}}
    merged = FreshManifest(cases={k: cases[k] for k in sorted(cases)})
    store.write_if_changed(folder / MANIFEST, store.dumps(json.loads(merged.model_dump_json())).encode())


def generate(
    request: Request,
    out: Path,
    checks: Sequence[Check] = CHECKS,
    progress: Callable[[FreshRecord], None] | None = None,
) -> list[FreshRecord]:
    if request.count < 1 or request.seed < 0:
        raise GenerationError(f"count must be at least 1 and seed at least 0; got {request.count} and {request.seed}")
    fresh = []
    for index in range(request.count):
        one = generate_case(request.family, request.domain, request.seed, index, request.libraries, checks)
        fresh.append(one)
        if progress is not None:
            progress(one.record)
    save(out, fresh)
    return [f.record for f in fresh]


def regenerate(case_id: str, out: Path, libraries: Sequence[str] = DEFAULT_LIBRARIES) -> FreshRecord:
    """The one case an id names, drawn again (its refused draws too) and written to `out`."""
    version, family, domain, seed, index = parse_id(case_id)
    if version != GENERATOR_VERSION:
        raise GenerationError(f"{case_id}: made by generator version {version}; this is version {GENERATOR_VERSION}")
    one = generate_case(family, domain, seed, index, libraries)
    save(out, [one])
    return one.record


def redraw_summary(records: Sequence[FreshRecord]) -> str:
    """`3 redrawn (leak 2, calibration_cap 1)`, or `none redrawn`."""
    counts = Counter(r.check for rec in records for r in rec.redraws)
    if not counts:
        return "none redrawn"
    return f"{sum(counts.values())} redrawn (" + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())) + ")"

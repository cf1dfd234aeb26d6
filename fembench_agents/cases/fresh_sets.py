"""Fresh instances named in a run's selection (docs/fresh_instances.md): an item
`fresh:FAMILY[/DOMAIN][,FAMILY[/DOMAIN]...]:seed=S[:count=N][:domain=D]` of `--cases`
or an experiment's `cases` is generated once, through the generator's public
entry point, into a folder under the cases folder keyed by the item's meaning
(`fresh_sets/<key>/`), and read from there by every later run, resume and report.

    cases = "poisson_square_smooth,fresh:poisson/unit_square,heat:seed=7:count=3"

Cases 0 .. N-1 of each family are drawn with seed S, on the family's own domain when
it names one, else on `domain=D`, else on a drawn domain (per case)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fembench_agents.cases import store
from fembench_agents.cases.domains import DOMAINS
from fembench_agents.cases.generate.families import SPACES
from fembench_agents.cases.generate.manifest import GENERATOR_VERSION, MANIFEST, FreshManifest
from fembench_agents.cases.problem import SolverCase, load_cases

PREFIX = "fresh:"
SETS_DIR = "fresh_sets"  # under the cases folder (gitignored in ours)
SPEC_FILE = "spec.json"  # the item a set was made for, canonical, beside the cases
FORM = "fresh:FAMILY[/DOMAIN][,FAMILY[/DOMAIN]...]:seed=S[:count=N][:domain=D]"
OPTIONS = ("seed", "count", "domain")


class FreshSpecError(ValueError):
    """A `fresh:` item that says no set of fresh cases; the message names the bad part."""


@dataclass(frozen=True)
class FreshSpec:
    """What one `fresh:` item asks for: cases 0 .. count-1 of each (family, domain or None: drawn)."""

    strata: tuple[tuple[str, str | None], ...]  # sorted, each once
    seed: int
    count: int = 1

    def canonical(self) -> str:
        """The item as this parser would print it: equal meanings, equal text."""
        fams = ",".join(f if d is None else f"{f}/{d}" for f, d in self.strata)
        return f"{PREFIX}{fams}:seed={self.seed}:count={self.count}"

    def ids(self) -> list[str]:
        """The case ids the set holds, sorted (the generator's id form: docs/fresh_instances.md)."""
        from fembench_agents.cases.generate.draw import case_id

        return sorted(case_id(f, d, self.seed, i) for f, d in self.strata for i in range(self.count))


def is_fresh_item(item: str) -> bool:
    return item.strip().startswith(PREFIX)


def parse_spec(item: str) -> FreshSpec:
    """The spec of one `fresh:` item; FreshSpecError names the bad part and the form expected."""
    text = item.strip()
    if not text.startswith(PREFIX):
        raise FreshSpecError(f"{item!r} is no fresh item: expected {FORM}")
    families, *parts = text[len(PREFIX) :].split(":")
    options: dict[str, str] = {}
    for part in parts:
        key, eq, value = part.partition("=")
        if not eq or key not in OPTIONS:
            raise FreshSpecError(f"{item!r}: {part!r} is no option; expected one of seed=S, count=N, domain=D ({FORM})")
        if key in options:
            raise FreshSpecError(f"{item!r}: {key} is given twice")
        options[key] = value
    if "seed" not in options:
        raise FreshSpecError(f"{item!r} has no seed: expected {FORM} (the seed says which cases are drawn)")
    seed, count = _whole(item, "seed", options["seed"], 0), _whole(item, "count", options.get("count", "1"), 1)
    default_domain = options.get("domain")
    if default_domain is not None:
        _known_domain(item, default_domain)
    strata: set[tuple[str, str | None]] = set()
    for name in families.split(","):
        family, slash, domain = name.strip().partition("/")
        if family not in SPACES:
            raise FreshSpecError(f"{item!r}: no fresh family {family!r}; known: {', '.join(SPACES)}")
        if slash:
            _known_domain(item, domain)
        strata.add((family, domain if slash else default_domain))
    return FreshSpec(tuple(sorted(strata, key=lambda s: (s[0], s[1] or ""))), seed, count)


def _whole(item: str, key: str, value: str, least: int) -> int:
    if not value.isdigit() or int(value) < least:
        raise FreshSpecError(f"{item!r}: {key}={value!r}; expected a whole number >= {least}")
    return int(value)


def _known_domain(item: str, domain: str) -> None:
    if domain not in DOMAINS:
        raise FreshSpecError(f"{item!r}: no domain {domain!r}; known: {', '.join(DOMAINS)}")


def set_dir(cases_dir: Path, spec: FreshSpec, libraries: Sequence[str]) -> Path:
    """Where the set of `spec` calibrated on `libraries` is kept: a key of the item's meaning, the
    libraries and the generator's version, so that another of any of them is another folder."""
    key = json.dumps([GENERATOR_VERSION, spec.canonical(), sorted(libraries)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return cases_dir / SETS_DIR / f"v{GENERATOR_VERSION}_s{spec.seed}_n{spec.count}_{digest}"


def complete(folder: Path, spec: FreshSpec) -> bool:
    """Whether `folder` holds every case of `spec` (a folder is only ever renamed into place whole)."""
    path = folder / MANIFEST
    if not path.exists():
        return False
    held = FreshManifest.model_validate_json(path.read_text()).cases
    return all(i in held for i in spec.ids())


def make_set(cases_dir: Path, spec: FreshSpec, libraries: Sequence[str]) -> Path:
    """The folder of `spec`'s cases: the cached one when it is there, else generated (the
    generator builds, checks and calibrates each case, e_base included; t_base is timed by
    `prepare`) into a scratch folder and renamed into place, so a run killed midway leaves none."""
    from fembench_agents.cases.generate.output import Request, generate

    folder = set_dir(cases_dir, spec, libraries)
    if complete(folder, spec):
        return folder
    scratch = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    for family, domain in spec.strata:
        generate(Request(family, spec.seed, spec.count, domain, tuple(libraries)), scratch)
    store.write_if_changed(
        scratch / SPEC_FILE, store.dumps({"item": spec.canonical(), "libraries": sorted(libraries)}).encode()
    )
    if complete(folder, spec):  # another process made it meanwhile: its bytes are these
        shutil.rmtree(scratch, ignore_errors=True)
        return folder
    shutil.rmtree(folder, ignore_errors=True)  # an incomplete one (an older layout): made again
    os.replace(scratch, folder)
    return folder


def fresh_items(selections: Iterable[str]) -> list[str]:
    """The made items (`NAME:...`) of `selections`, each once; another than `fresh:` is refused."""
    from fembench_agents.runs.selection import selector_items

    items = list(dict.fromkeys(i for s in selections for i in selector_items(s) if ":" in i))
    strange = [i for i in items if not is_fresh_item(i)]
    if strange:
        raise FreshSpecError(
            f"{strange[0]!r} names nothing the PDE cases make: expected a case id, a pattern or {FORM}"
        )
    return items


def made_cases(
    cases_dir: Path, selections: Iterable[str], libraries: Sequence[str]
) -> tuple[list[SolverCase], dict[str, str]]:
    """The cases of every `fresh:` item of `selections`, made (or read from their cache) on
    `libraries`, and each item -> the ids it names. Another made item (`NAME:...`) is refused."""
    cases: dict[str, SolverCase] = {}
    made: dict[str, str] = {}
    for item in fresh_items(selections):
        spec = parse_spec(item)
        folder = make_set(cases_dir, spec, libraries)
        for case in load_cases(folder):
            cases.setdefault(case.task_id, case)
        made[item] = ",".join(spec.ids())
    return list(cases.values()), made


@dataclass(frozen=True)
class PreviewedSets:
    """What a dry run shows of the `fresh:` items: their cases (read from the cache, or previewed
    from their first draw), each item -> the ids it names, and a line per item saying which."""

    cases: list[SolverCase]
    made: dict[str, str]
    notes: list[str]


def preview_made(cases_dir: Path, selections: Iterable[str], libraries: Sequence[str]) -> PreviewedSets:
    """The cases every `fresh:` item of `selections` names, without making any: a set in the cache
    is read; another is drawn (each case's draw 0, its case_spec derived, nothing solved), which a
    run then builds, checks and calibrates, and may redraw (another draw's domain and data, the
    same ids)."""
    cases: dict[str, SolverCase] = {}
    made: dict[str, str] = {}
    notes: list[str] = []
    for item in fresh_items(selections):
        spec = parse_spec(item)
        folder = set_dir(cases_dir, spec, libraries)
        ids = spec.ids()
        made[item] = ",".join(ids)
        if complete(folder, spec):
            drawn = [c for c in load_cases(folder) if c.task_id in ids]
            notes.append(f"{item}: {len(ids)} fresh case(s) read from {folder}")
        else:
            drawn = [
                _first_draw(folder, family, domain, spec.seed, i, libraries)
                for family, domain in spec.strata
                for i in range(spec.count)
            ]
            notes.append(
                f"{item}: {len(ids)} fresh case(s) not made yet (a dry run makes none); the run generates, "
                f"checks and calibrates them into {folder} before its first episode: {', '.join(ids)}; their "
                "prompts are counted from each case's first draw, which a refused draw replaces"
            )
        for case in drawn:
            cases.setdefault(case.task_id, case)
    return PreviewedSets(list(cases.values()), made, notes)


def _first_draw(
    folder: Path, family: str, domain: str | None, seed: int, index: int, libraries: Sequence[str]
) -> SolverCase:
    """Draw 0 of one case as a solver sees it (its case_spec), unbuilt: no reference, no record."""
    from fembench_agents.cases.builder import make_spec
    from fembench_agents.cases.generate.draw import definition

    case, _ = definition(family, domain, seed, index, 0, libraries)
    spec, _ = make_spec(case)
    return SolverCase(spec=spec, cases_dir=folder, record_hash="")

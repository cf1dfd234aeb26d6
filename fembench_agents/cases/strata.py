"""What a report asks of a case id (`CaseReport.task_info`): whether a generator drew it
for a run (`fresh_v<N>_...`, docs/fresh_instances.md) or it was published (our own
cases and imported ones alike), and the stratum a fresh instance is compared with
published ones on, "family/domain". Read from the cases folder's records: its
case_specs.jsonl and that of each folder of published cases in it (cases/imported/), and the
`fresh.json` of every folder of fresh cases under it."""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path

from fembench_agents.cases import store
from fembench_agents.cases.fresh_sets import SETS_DIR
from fembench_agents.cases.generate.manifest import MANIFEST, FreshManifest
from fembench_agents.runs.defaults import CASES_PATH

FRESH_ID = re.compile(r"^fresh_v\d+_")
FRESH_OUT = "fresh"  # `cases generate`'s default folder under the cases folder
CASES_ENV = "FEMBENCH_CASES"  # the cases folder the command line reads when it names none


def cases_folder() -> Path:
    return Path(os.environ.get(CASES_ENV, CASES_PATH))


def origin_of(case_id: str) -> str:
    return "fresh" if FRESH_ID.match(case_id) else "published"


def _sources(cases_dir: Path) -> tuple[tuple[str, int], ...]:
    """The record files an index reads, with their modification times (a changed one is read again)."""
    files = [cases_dir / store.SPECS_FILE, cases_dir / FRESH_OUT / MANIFEST]
    # folders of published cases beside ours (cases/imported/), not those of fresh ones
    files += [p for p in sorted(cases_dir.glob(f"*/{store.SPECS_FILE}")) if not (p.parent / MANIFEST).exists()]
    files += sorted((cases_dir / SETS_DIR).glob(f"*/{MANIFEST}"))
    return tuple((str(f), f.stat().st_mtime_ns) for f in files if f.is_file())


@lru_cache(maxsize=8)
def _index(sources: tuple[tuple[str, int], ...]) -> dict[str, str]:
    strata: dict[str, str] = {}
    for name, _ in sources:
        path = Path(name)
        if path.name == MANIFEST:
            held = FreshManifest.model_validate_json(path.read_text()).cases.values()
            strata.update((r.id, f"{r.family}/{r.domain}") for r in held)
        else:
            for line in path.read_text().splitlines():
                spec = json.loads(line)
                strata[spec["id"]] = f"{spec['family']}/{spec['domain']['name']}"
    return strata


def case_strata(cases_dir: Path | None = None) -> dict[str, str]:
    """Case id -> "family/domain", over the cases folder's published and fresh records."""
    return _index(_sources(cases_dir or cases_folder()))

"""A PDE case as runs, agents and the evaluator see it: the second task kind
beside the function task. It carries the agent-visible `CaseSpec` and where
the evaluator-only half lives; nothing here reads that half."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fembench_agents.cases import store
from fembench_agents.cases.case_spec import CaseSpec

SOLVE = "solve"  # the function every solver attempt defines
PUBLISHED_FILE = "published_views.jsonl"  # imported cases: the published shape of each case_spec


@dataclass(frozen=True)
class SolverCase:
    spec: CaseSpec
    cases_dir: Path
    record_hash: str  # sha256 of the evaluator-only record: a run notices when a reference changed
    # An imported case's agent-visible data in the published benchmark's shape (cases/published.py).
    published: dict[str, Any] | None = None
    leak: str | None = None  # how the case gives its answer away (`HiddenRecord.leak`): selected by id only

    @property
    def task_id(self) -> str:
        return self.spec.id

    @property
    def family(self) -> str:
        return self.spec.family

    @property
    def main_name(self) -> str:
        return SOLVE

    @property
    def hidden_dir(self) -> Path:
        """The cases folder: its evaluator-only records are hidden from every sandboxed job."""
        return self.cases_dir

    @property
    def path(self) -> str:
        """Where the case's evaluator-only files are: hidden from every sandboxed job."""
        return str(self.cases_dir.resolve() / store.HIDDEN / f"{self.spec.id}.json")

    @property
    def content_hash(self) -> str:
        text = self.spec.model_dump_json() + self.record_hash + json.dumps(self.published, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def spec_data(self) -> dict[str, Any]:
        """The case_spec as the solver receives it: plain JSON data. An imported case
        carries both shapes in one dict, so that a program written for the published
        contract (pde, bc, domain.type, output.grid) and one written for ours both run."""
        data: dict[str, Any] = json.loads(self.spec.model_dump_json())
        if self.published is None:
            return data
        merged = {**self.published, **data}
        for key in ("domain", "output"):  # both shapes use these names: their fields do not collide
            merged[key] = {**self.published.get(key, {}), **data[key]}
        return merged


def load_cases(cases_dir: Path) -> list[SolverCase]:
    """Every built case of `cases_dir`, sorted by id."""
    out = []
    views: dict[str, dict[str, Any]] = {}
    if (cases_dir / PUBLISHED_FILE).exists():
        for line in (cases_dir / PUBLISHED_FILE).read_text().splitlines():
            view = json.loads(line)
            views[view["id"]] = view
    for spec in store.load_specs(cases_dir):
        record = cases_dir / store.HIDDEN / f"{spec.id}.json"
        if not record.exists():
            raise store.CaseStoreError(f"{record} missing: run `fembench-agents cases build`")
        raw = record.read_bytes()
        leak = json.loads(raw).get("leak")
        out.append(
            SolverCase(
                spec=spec,
                cases_dir=cases_dir,
                record_hash=store.sha256(raw),
                published=views.get(spec.id),
                leak=str(leak) if leak else None,
            )
        )
    return sorted(out, key=lambda c: c.task_id)

"""What an optimization leaves behind, as JSON: the candidate history, the
Pareto front, the result, and the optimized prompt with its provenance
(`optimizers/<name>.json`, readable by `--agent prompt:FILE`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from gepa.core.result import GEPAResult

from fembench_agents.optimize.candidates import candidate_id
from fembench_agents.optimize.split import Split

RESULT_SCHEMA_VERSION = 1


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str) + "\n")
    os.replace(tmp, path)


def candidate_history(result: GEPAResult[Any, Any], split: Split) -> list[dict[str, Any]]:
    """Every candidate GEPA kept, in discovery order, with its lineage and validation scores per task."""
    rows = []
    for i, cand in enumerate(result.candidates):
        prompt = cand["system_prompt"]
        rows.append(
            {
                "index": i,
                "candidate_id": candidate_id(prompt),
                "system_prompt": prompt,
                "parents": [p for p in result.parents[i] if p is not None],
                "val_score": result.val_aggregate_scores[i],
                "val_scores": {split.val[k]: v for k, v in sorted(result.val_subscores[i].items())},
                "discovered_at_metric_call": result.discovery_eval_counts[i],
                "best": i == result.best_idx,
            }
        )
    return rows


def pareto_front(result: GEPAResult[Any, Any], split: Split) -> dict[str, Any]:
    """Per validation task, the best score any candidate reached and which candidates reach it."""
    per_task: dict[str, dict[str, Any]] = {}
    scores: list[float] = []
    for k, indices in sorted(result.per_val_instance_best_candidates.items()):
        best = max((float(result.val_subscores[i].get(k, 0.0)) for i in indices), default=0.0)
        per_task[split.val[k]] = {"score": best, "candidates": sorted(indices)}
        scores.append(best)
    front = sorted({i for v in result.per_val_instance_best_candidates.values() for i in v})
    return {"tasks": per_task, "candidates": front, "aggregate": sum(scores) / max(len(scores), 1)}

"""What a solver sees of a PDE case on a library track (`SolverView`): its
case_spec (agent-visible by construction) and the track's contract, allowed
imports and runnable skeleton; never the hidden record."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fembench_agents.cases.problem import SolverCase
from fembench_agents.cases.tracks import Track
from fembench_agents.kinds.contract import Templates, WorkspaceFiles, check_script
from fembench_agents.scoring.extraction import parse_code

SOLUTION_FILE = "solver.py"  # on every library track
CASE_SPEC_FILE = "case_spec.json"
CHECK_SCRIPT = "workspace/check.py"  # under scaffolds/: the checks every workspace runs
CHECKS = "workspace/check_case.py"  # what a solver must return


@dataclass(frozen=True)
class CaseSolverView:
    library: Track

    def case_context(self, case: SolverCase, templates: Templates) -> dict[str, Any]:
        """What the scaffolds' case templates render."""
        return {
            "case_id": case.task_id,
            "family": case.family,
            "library": self.library.name,
            "contract": self.library.contract_text(),
            "allowed": ", ".join(self.library.allowed_imports),
            "spec_json": json.dumps(case.spec_data(), indent=1, sort_keys=True),
            "skeleton": self.skeleton(case, templates).rstrip(),
        }

    def task_prompt(self, problem: SolverCase, scaffold: str, templates: Templates) -> str:
        """The template-guided prompt, or the single-shot one for every other scaffold."""
        template = "template_guided" if scaffold == "template_guided" else "single_shot"
        return templates.render(f"{template}/case.j2", **self.case_context(problem, templates))

    def skeleton(self, problem: SolverCase, templates: Templates) -> str:
        return templates.read(self.library.skeleton)

    def reply_code(self, problem: SolverCase, reply: str) -> str:
        return parse_code(reply, (problem.main_name,), prefix=None).code

    def workspace(self, problem: SolverCase, templates: Templates) -> WorkspaceFiles:
        spec = json.dumps(self.check_spec(problem), indent=1)
        return WorkspaceFiles(
            solution=SOLUTION_FILE,
            stub=self.skeleton(problem, templates),
            check=check_script(templates.read(CHECK_SCRIPT), templates.read(CHECKS), spec),
            extra={CASE_SPEC_FILE: json.dumps(problem.spec_data(), indent=1, sort_keys=True)},
        )

    def check_spec(self, case: SolverCase) -> dict[str, object]:
        """What the workspace's check script checks: the case's visible output fields."""
        return {
            "track": "case",
            "solution": SOLUTION_FILE,
            "function": "solve",
            "allowed_modules": sorted(self.library.allowed_imports),
            "case_spec": CASE_SPEC_FILE,
            "fields": {k: list(f.shape) for k, f in case.spec.output.fields.items()},
        }

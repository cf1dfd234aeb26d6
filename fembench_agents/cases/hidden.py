"""What of a PDE case stays hidden from attempts (`KindHidden`): the hidden
record's manufactured solution and reference values, its accuracy thresholds,
its calibration figures (the calibration solver's error, this machine's time)
and, for a numerical reference, how that reference was checked. A case shows a
reflection step no worked answer: the calibration solvers serve every case of
their family, held-out ones too."""

from __future__ import annotations

import json

import numpy as np

from fembench_agents.cases import store
from fembench_agents.cases.problem import SolverCase
from fembench_agents.cases.scorer import CaseScorer
from fembench_agents.cases.store import CaseStoreError
from fembench_agents.kinds.contract import AttemptScorer, HiddenMaterial, HiddenNumbers

SOURCE_LABEL = "manufactured solution"
# A reference field holds thousands of values: a number matching one of them to
# 4 digits is chance, to 6 it is copied.
FIELD_DIGITS = 6


class CaseHidden:
    """The PDE library tracks' hidden material (`KindHidden`)."""

    def material(self, problem: SolverCase, scorer: AttemptScorer) -> HiddenMaterial:
        if not isinstance(scorer, CaseScorer):
            raise TypeError(f"a PDE case's hidden record needs a CaseScorer, got {type(scorer).__name__}")
        try:
            hidden = scorer.hidden(problem)
        except CaseStoreError as exc:
            return HiddenMaterial(source_label=SOURCE_LABEL, notes=(f"no hidden record for {problem.task_id}: {exc}",))
        record = hidden.record
        solution = record.solution if isinstance(record.solution, list) else [record.solution or ""]
        calibration = record.calibration.values()
        numbers = [
            HiddenNumbers("reference field", hidden.reference, min_digits=FIELD_DIGITS),
            HiddenNumbers("accuracy threshold (tau_acc)", [c.tau_acc for c in calibration]),
            HiddenNumbers("calibration error (e_base)", [c.e_base for c in calibration]),
        ]
        if scorer.calibration is not None:
            times = scorer.calibration.t_base.get(problem.task_id, {})
            numbers.append(HiddenNumbers("calibration time (t_base)", list(times.values())))
        if record.reference_check is not None:
            check = record.reference_check
            figures = [*check.distances_to_finest, check.error_estimate, check.threshold]
            numbers.append(HiddenNumbers("reference check", figures))
        return HiddenMaterial(source="\n".join(solution), source_label=SOURCE_LABEL, numbers=tuple(numbers))

    def visible(self, problem: SolverCase) -> str:
        return json.dumps(problem.spec_data(), sort_keys=True)

    def reference_answer(self, problem: SolverCase, track: str) -> None:
        return None

    def oracle_program(self, problem: SolverCase, track: str) -> str:
        """solve(case_spec) returning the case's reference fields as stored (NaN outside the
        domain), written out in the program: no library's solve, so it tests the harness
        alone and is faster than any calibration."""
        _, fields = store.load_hidden(problem.cases_dir, problem.task_id)
        lines = ["import numpy as np", "", "nan = float('nan')", ""]
        for name, values in sorted(fields.items()):
            flat = ", ".join("nan" if np.isnan(v) else repr(float(v)) for v in np.asarray(values, dtype=float).ravel())
            lines.append(f"{name.upper()} = np.array([{flat}]).reshape({tuple(values.shape)!r})")
        info = '{"mesh_resolution": 0, "element_degree": 0, "ksp_type": "none", "pc_type": "none", "rtol": 0.0}'
        returned = ", ".join(f'"{name}": {name.upper()}.copy()' for name in sorted(fields))
        lines += ["", "", "def solve(case_spec):", f'    return {{{returned}, "solver_info": {info}}}', ""]
        return "\n".join(lines)

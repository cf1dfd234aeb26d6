"""Budgets: how many metric calls a GEPA run may spend.

One metric call is one task attempt scored: the task model answers one task
under a candidate system prompt and the shared evaluator scores the answer.
GEPA counts every such call (the parent and the child on each reflection
minibatch, and every full validation pass of an accepted candidate) against
`max_metric_calls`, and stops at the first iteration boundary at or past it.

`light`, `medium` and `heavy` are DSPy's auto budgets. `dspy.GEPA(auto=...)`
(dspy 3.4.1, dspy/teleprompt/gepa/gepa.py, `GEPA.auto_budget`) turns a preset
into `max_metric_calls` from the number of candidates it aims to propose
(`AUTO_RUN_SETTINGS`: light 6, medium 12, heavy 18), the number of optimized
components (predictors; one here: the system prompt) and the validation-set
size V:

    N     = int(max(2 * (2 * components) * log2(n), 1.5 * n))   # trials
    total = V                          # the seed candidate's full validation pass
          + 5 * n                      # "bootstrapping" allowance per candidate
          + 35 * N                     # N minibatch evaluations of 35 examples
          + ((N + 1) // 5 + 1) * V     # a full validation pass every 5 trials
          + (V if N < 5 else 0)        # a final full pass for very short runs

With one component and the published protocol's 9 validation tasks (30 tasks,
30 % validation) this gives light 416, medium 735, heavy 1098: exactly the
"iterations" the FEM-Bench 2025 appendix reports, which are therefore metric
calls, not GEPA iterations. The formula assumes minibatches of 35; GEPA with
the protocol's reflection minibatch of 3 spends 3 (+3 for the child) per
iteration plus V per accepted candidate, so these budgets buy tens of GEPA
iterations, not hundreds. For other validation sizes the same formula is
applied (`resolve_budget`), so a preset means what it means in DSPy; an
integer budget is taken as `max_metric_calls` verbatim.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Preset = Literal["light", "medium", "heavy"]
AUTO_CANDIDATES: dict[str, int] = {"light": 6, "medium": 12, "heavy": 18}  # dspy AUTO_RUN_SETTINGS
DSPY_MINIBATCH = 35  # auto_budget's default minibatch_size
DSPY_FULL_EVAL_STEPS = 5  # auto_budget's default full_eval_steps


class Budget(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str  # light | medium | heavy | custom
    max_metric_calls: int = Field(ge=1)
    valset_size: int
    formula: str


def dspy_auto_budget(
    num_candidates: int,
    valset_size: int,
    num_components: int = 1,
    minibatch_size: int = DSPY_MINIBATCH,
    full_eval_steps: int = DSPY_FULL_EVAL_STEPS,
) -> int:
    """DSPy's `GEPA.auto_budget`, term for term (see the module docstring)."""
    trials = int(max(2 * (num_components * 2) * math.log2(num_candidates), 1.5 * num_candidates))
    total = valset_size + num_candidates * 5 + trials * minibatch_size
    if trials == 0:
        return total
    periodic_full = (trials + 1) // full_eval_steps + 1
    extra_final = 1 if trials < full_eval_steps else 0
    return total + (periodic_full + extra_final) * valset_size


def resolve_budget(spec: str | int, valset_size: int) -> Budget:
    """`light`/`medium`/`heavy` through DSPy's formula for this validation size, or an integer."""
    text = str(spec).strip().lower()
    if text in AUTO_CANDIDATES:
        calls = dspy_auto_budget(AUTO_CANDIDATES[text], valset_size)
        return Budget(
            name=text,
            max_metric_calls=calls,
            valset_size=valset_size,
            formula=f"dspy auto_budget(n={AUTO_CANDIDATES[text]}, components=1, V={valset_size})",
        )
    try:
        calls = int(text)
    except ValueError:
        raise ValueError(f"budget must be light, medium, heavy or a positive integer, got {spec!r}") from None
    if calls < 1:
        raise ValueError(f"budget must be a positive number of metric calls, got {calls}")
    return Budget(name="custom", max_metric_calls=calls, valset_size=valset_size, formula="given")

"""GEPA prompt optimization (docs/optimize.md): a single-shot agent's system
prompt tuned on training problems of one track (function code or tests, a PDE
library), scored on validation problems, never shown the held-out problems it
is later judged on. What differs per kind comes from the registry
(`kind_for(track)`); nothing here imports a kind.

Modules: settings (what an optimization is), split, budget (light/medium/heavy
and DSPy's auto budgets), candidates (a candidate on problems, through
`execute_run`), adapter (the GEPA adapter), dspy_engine (`--engine dspy`),
reflection (the reflection LM through our client), heldout (the leak guard,
with what the kind hides), artifacts, progress, search (start to finish),
judgement (the held-out comparison run after optimizing)."""

from fembench_agents.optimize.budget import Budget, dspy_auto_budget, resolve_budget
from fembench_agents.optimize.heldout import LeakReport, scan_prompt
from fembench_agents.optimize.search import (
    Models,
    OptimizeResult,
    StopFlag,
    graceful_interrupts,
    optimize_prompt,
)
from fembench_agents.optimize.settings import OptimizeSettings, load_settings
from fembench_agents.optimize.split import HeldOutViolation, Split, split_tasks

__all__ = [
    "Budget",
    "HeldOutViolation",
    "LeakReport",
    "Models",
    "OptimizeResult",
    "OptimizeSettings",
    "Split",
    "StopFlag",
    "dspy_auto_budget",
    "graceful_interrupts",
    "load_settings",
    "optimize_prompt",
    "resolve_budget",
    "scan_prompt",
    "split_tasks",
]

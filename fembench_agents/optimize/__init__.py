"""GEPA prompt optimization (docs/optimize.md): a single-shot agent's system
prompt tuned on training tasks, scored on validation tasks, never shown the
held-out tasks it is later judged on.

Modules: settings (what an optimization is), split, budget (light/medium/heavy
and DSPy's auto budgets), evaluate (a candidate on tasks, through run logs),
adapter (the GEPA adapter), reflection (the reflection LM through our client),
leak (the leak guard), artifacts, progress, runner (start to finish),
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

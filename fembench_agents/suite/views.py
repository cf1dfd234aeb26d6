"""Text views of tasks and outcomes for the terminal."""

from __future__ import annotations

from fembench_agents.suite.model import Task


def task_card(task: Task) -> str:
    """What a solver is shown: signature, docstring, given helpers, allowed imports, tier."""
    lines = [f"# {task.task_id}", task.short_description, ""]
    if task.tier:
        lines.append(f"tier: {task.tier.label} ({len(task.helpers)} of {task.tier.helpers_used} helpers given)")
    lines += ["allowed imports:", *(f"    {imp}" for imp in task.required_imports), ""]
    lines += ["signature:", f"    {task.main_signature}", "", "docstring:"]
    lines += [f"    {line}" if line else "" for line in task.main_docstring.splitlines()]
    if task.helpers:
        lines += ["", "given helper functions:"]
        for h in task.helpers:
            lines += ["", h.source.rstrip()]
    lines += ["", "tests to write:"]
    lines += [f"    {t.name}: {t.docstring.splitlines()[0] if t.docstring else ''}" for t in task.tests]
    return "\n".join(lines)

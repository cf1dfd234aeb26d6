"""One episode as the viewer shows it: every attempt in order with its prompt,
its reply split into prose and code, the code's diff against the previous
attempt, the stage outcomes, the feedback it produced, and its tokens, cost
and time. Plain JSON-ready dicts; the page renders them as they are."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from fembench_agents.kinds import kind_of_outcome
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord
from fembench_agents.scoring.extraction import code_blocks, python_fences


def reply_segments(reply: str) -> list[dict[str, str]]:
    """The reply cut into {"kind": "text"|"code", "text": ...} in order; code
    segments are the fenced Python blocks the parse stage extracts from."""
    out: list[dict[str, str]] = []
    pos = 0
    for m in python_fences(reply):
        if m.start() > pos:
            out.append({"kind": "text", "text": reply[pos : m.start()]})
        out.append({"kind": "code", "text": m.group(2)})
        pos = m.end()
    if pos < len(reply):
        out.append({"kind": "text", "text": reply[pos:]})
    return out


def extracted_code(reply: str) -> str:
    """The fenced Python blocks joined, or the whole reply when it has none
    (the parse stage then reads it as bare code)."""
    blocks = code_blocks(reply)
    return "\n\n".join(blocks) if blocks else reply


def code_diff(before: str, after: str, labels: tuple[str, str] = ("previous attempt", "this attempt")) -> list[str]:
    """Unified diff lines from one program to another (by default from one
    attempt's code to the next), with two lines of context."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), *labels, lineterm="", n=2)
    return list(lines)


def attempt_view(a: AttemptRecord, previous_code: str | None) -> dict[str, Any]:
    code = extracted_code(a.reply)
    usage = a.response.usage if a.response else None
    o = a.outcome
    return {
        "index": a.attempt_index,
        "messages": [{"role": m.role, "content": m.content} for m in a.messages],
        "reply": reply_segments(a.reply),
        "code": code,
        "diff": None if previous_code is None else code_diff(previous_code, code),
        "passed": None if o is None else o.passed,
        "stages": []
        if o is None
        else [
            {"stage": s.stage, "passed": s.passed, "reason": s.reason, "detail": s.detail, "seconds": s.seconds}
            for s in o.stages
        ],
        # what the outcome measured beyond its stages, one line each, as its kind tells it
        "facts": [] if o is None else kind_of_outcome(o).report.facts(o),
        "model_error": a.model_error,
        "feedback": a.feedback.text if a.feedback else None,
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "completion_tokens": usage.completion_tokens if usage else None,
        "cost_usd": a.response.cost_usd if a.response else None,
        "model_seconds": a.response.latency_seconds if a.response else None,
        "score_seconds": None if o is None else o.seconds,
    }


def episode_view(ep: EpisodeRecord, run_id: str, attempts: Sequence[AttemptRecord]) -> dict[str, Any]:
    """`attempts`: the latest record of each of the episode's attempts."""
    views: list[dict[str, Any]] = []
    previous: str | None = None
    for a in sorted(attempts, key=lambda a: a.attempt_index):
        view = attempt_view(a, previous)
        previous = view["code"]
        views.append(view)
    return {
        "key": ep.episode,
        "run": run_id,
        "model": ep.model,
        "agent": ep.agent,
        "track": ep.track,
        "task": ep.task_id,
        "repeat": ep.repeat,
        "status": ep.status,
        "passed": ep.passed,
        "score": ep.score,
        "failed_stage": ep.failed_stage,
        "reason": ep.reason,
        "error": ep.error,
        "prompt_tokens": ep.prompt_tokens,
        "completion_tokens": ep.completion_tokens,
        "cost_usd": ep.cost_usd,
        "seconds": ep.seconds,
        "attempts": views,
    }

"""Reading what a sandboxed job reported, the same way for every track: an
error frame as the attempt's own `ErrorInfo`, and how a job that sent no
result ended."""

from __future__ import annotations

from typing import Any, Literal

from fembench_agents.scoring.error_text import MESSAGE_LIMIT, TRACEBACK_LINE_LIMIT, shortened
from fembench_agents.scoring.outcomes import ErrorInfo
from fembench_agents.scoring.sandbox import JobResult


def error_info(frame: dict[str, Any]) -> ErrorInfo:
    return ErrorInfo(
        type=str(frame.get("error_type", "Error"))[:100],
        message=shortened(str(frame.get("message", "")), MESSAGE_LIMIT),
        traceback=tuple(shortened(str(x), TRACEBACK_LINE_LIMIT) for x in frame.get("traceback", [])[:8]),
    )


def ended_how(result: JobResult, what: str = "the code") -> tuple[Literal["timeout", "crashed"], str]:
    """Why a job gave no result: the failure reason and a sentence about `what` ran."""
    if result.timed_out:
        return "timeout", f"{what} did not finish within the time limit"
    if result.truncated:
        return "crashed", "the output was larger than the sandbox accepts"
    if result.signal:
        return "crashed", f"the process was killed by signal {result.signal} (memory or CPU limit, or a crash)"
    return "crashed", f"the process exited (code {result.exit_code}) before returning a result"

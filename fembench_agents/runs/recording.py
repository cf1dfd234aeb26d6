"""The one path from any agent to its model: `recorded_call` makes the call
(a client retries, caches and prices it; a recorded model answers from a
log), appends a ModelCallRecord to the run log as it happens, and turns a
failure into `ModelUnavailable`. Prompt agents (through the episode session),
the OpenHands bridge and GEPA's reflection model all call it; nothing else
writes model-call records."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from fembench_agents.contracts import ModelClient
from fembench_agents.messages import CallContext, Message, ModelParams, ModelRequest, ModelResponse
from fembench_agents.runs.log import ModelCallRecord, RunLog
from fembench_agents.scoring.error_text import shortened

ERROR_TEXT_LIMIT = 2000


class ModelUnavailable(RuntimeError):
    """The model call failed after its retries; the episode ends as an error
    (recorded, and retried when the run is resumed). `permanent` is the kind
    of error retrying cannot fix ("authentication", ...), None otherwise;
    `error` is the text the log holds."""

    def __init__(self, error: str, permanent: str | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.permanent = permanent


def diverged_replay(exc: BaseException | None) -> bool:
    """A replay asked something its recording never saw: the run must stop, not
    record a model failure (which a resume would then retry as if the provider
    had been flaky). Looked up in sys.modules, not imported: the models package
    imports litellm, and if it was never imported no client raised its error."""
    errors = sys.modules.get("fembench_agents.models.errors")
    return exc is not None and errors is not None and isinstance(exc, errors.UnrecordedRequestError)


async def recorded_call(
    model: ModelClient, log: RunLog | None, messages: Sequence[Message], context: CallContext, params: ModelParams
) -> ModelResponse:
    request = ModelRequest(model=model.model, messages=tuple(messages), params=params, sample=context.sample)

    def record(request_hash: str, response: ModelResponse | None = None, error: str | None = None) -> None:
        if log is not None:
            log.append(
                ModelCallRecord(
                    episode=context.episode,
                    task_id=context.task_id,
                    attempt_index=context.attempt_index,
                    request=request,
                    request_hash=request_hash,
                    response=response,
                    error=error,
                )
            )

    try:
        response = await model.complete(list(messages), context, params)
    except Exception as exc:  # noqa: BLE001 - any provider failure is recorded, never fatal to the run
        if diverged_replay(exc):
            raise
        # A replayed failure carries the recorded text, so a replay logs it identically.
        error = getattr(exc, "recorded", None) or shortened(f"{type(exc).__name__}: {exc}", ERROR_TEXT_LIMIT)
        record(request_hash=request.request_hash(), error=error)
        # Read off the exception, not imported: see diverged_replay.
        raise ModelUnavailable(error, getattr(exc, "permanent", None)) from exc
    record(request_hash=response.request_hash or request.request_hash(), response=response)
    return response

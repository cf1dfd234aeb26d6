"""Typed failures of a model call."""

from __future__ import annotations

from fembench_agents.messages import CallContext


def _who(model: str, context: CallContext) -> str:
    return f"model {model!r}, task {context.task_id or '?'!r}, attempt {context.attempt or '?'!r}"


class ModelCallError(RuntimeError):
    """A call that failed for good: not retryable, or retries exhausted."""

    def __init__(self, model: str, context: CallContext, request_hash: str, retries: int,
                 last_error: str) -> None:
        self.model = model
        self.context = context
        self.request_hash = request_hash
        self.retries = retries
        self.last_error = last_error
        super().__init__(f"model call failed ({_who(model, context)}) after {retries} "
                         f"retr{'y' if retries == 1 else 'ies'}: {last_error}")


class UnrecordedRequestError(LookupError):
    """A replay was asked something the recording never saw. Deliberately not a
    ModelCallError: a replay that diverges must stop, not be logged and skipped."""

    def __init__(self, model: str, context: CallContext, request_hash: str) -> None:
        self.model = model
        self.context = context
        self.request_hash = request_hash
        super().__init__(f"replay has no recorded response for this request ({_who(model, context)}, "
                         f"request hash {request_hash[:16]}); the run being replayed never asked it")


class LocalServerError(RuntimeError):
    """The embedded local model server could not be found, started or reached."""

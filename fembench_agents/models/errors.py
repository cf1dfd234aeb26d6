"""Typed failures of a model call, and which of them retrying cannot fix."""

from __future__ import annotations

import openai

from fembench_agents.messages import CallContext
from fembench_agents.models._litellm import litellm

# Checked in order: a context-window error is also a bad request.
_PERMANENT: tuple[tuple[type[Exception], str], ...] = (
    (openai.AuthenticationError, "authentication"),
    (openai.PermissionDeniedError, "permission"),
    (openai.NotFoundError, "unknown model"),
    (litellm.ContextWindowExceededError, "context window exceeded"),
    (openai.BadRequestError, "bad request"),
    (openai.UnprocessableEntityError, "bad request"),
)
# The OpenAI SDK refuses to send a request without a key, and litellm reports
# that refusal as an internal server error (which would be retried).
_MISSING_KEY_SIGNS = ("Missing credentials", "api_key client option must be set")


def permanent_failure(exc: BaseException) -> str | None:
    """The kind of a provider error that retrying cannot fix ("authentication",
    "permission", "unknown model", "context window exceeded", "bad request"),
    or None for one that may pass (rate limit, server error, timeout, ...)."""
    for error_type, kind in _PERMANENT:
        if isinstance(exc, error_type):
            return kind
    if isinstance(exc, openai.APIError) and any(sign in str(exc) for sign in _MISSING_KEY_SIGNS):
        return "authentication"
    return None


def _who(model: str, context: CallContext) -> str:
    return f"model {model!r}, task {context.task_id or '?'!r}, attempt {context.attempt or '?'!r}"


class ModelCallError(RuntimeError):
    """A call that failed for good: not retryable, or retries exhausted.
    `permanent` is the kind of error retrying cannot fix (see
    permanent_failure), None when retries ran out on a transient one."""

    def __init__(
        self,
        model: str,
        context: CallContext,
        request_hash: str,
        retries: int,
        last_error: str,
        permanent: str | None = None,
    ) -> None:
        self.model = model
        self.permanent = permanent
        self.context = context
        self.request_hash = request_hash
        self.retries = retries
        self.last_error = last_error
        super().__init__(
            f"model call failed ({_who(model, context)}) after {retries} "
            f"retr{'y' if retries == 1 else 'ies'}: {last_error}"
        )


class UnrecordedRequestError(LookupError):
    """A replay was asked something the recording never saw. Deliberately not a
    ModelCallError: a replay that diverges must stop, not be logged and skipped."""

    def __init__(self, model: str, context: CallContext, request_hash: str) -> None:
        self.model = model
        self.context = context
        self.request_hash = request_hash
        super().__init__(
            f"replay has no recorded response for this request ({_who(model, context)}, "
            f"request hash {request_hash[:16]}); the run being replayed never asked it"
        )


class LocalServerError(RuntimeError):
    """The embedded local model server could not be found, started or reached."""

"""A model that answers from a recorded run, by request hash, and never calls
anything. A request the recording never saw raises UnrecordedRequestError
naming the task and attempt."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from fembench_agents.messages import CallContext, Message, ModelParams, ModelRequest, ModelResponse
from fembench_agents.models.client import OnCall, with_system_prompt
from fembench_agents.models.errors import UnrecordedRequestError
from fembench_agents.runs.log import ModelCallRecord, read_log


class ReplayModel:
    """Answers are looked up by request hash, within the caller's episode
    (CallContext.episode) when the recording has that episode, so that repeats
    of one prompt get their own answers even when replayed concurrently.
    Several answers under one key are served in recorded order; once used up,
    the last one is served again. Responses come back as recorded, marked
    `replayed`."""

    def __init__(
        self,
        model: str,
        responses: Mapping[str, Sequence[ModelResponse | str]],
        *,
        params: ModelParams | None = None,
        system_prompt: str | None = None,
        on_call: OnCall | None = None,
        by_episode: Mapping[tuple[str, str], Sequence[ModelResponse | str]] | None = None,
    ) -> None:
        self.model = model
        self.params = params or ModelParams()
        self.system_prompt = system_prompt
        self.on_call = on_call
        # A str entry is a recorded failure: replayed as the same failure.
        self._responses: dict[tuple[str, str], list[ModelResponse | str]] = {
            ("", h): list(rs) for h, rs in responses.items() if rs
        }
        self._responses.update({k: list(rs) for k, rs in (by_episode or {}).items() if rs and k[0]})
        self._served: dict[tuple[str, str], int] = {}

    @classmethod
    def from_records(
        cls,
        records: Iterable[object],
        model: str | None = None,
        *,
        system_prompt: str | None = None,
        on_call: OnCall | None = None,
    ) -> ReplayModel:
        """From run-log records (other record types are skipped). Without
        `model`, the recording must hold exactly one model. Default params are
        the ones the recording used, when it used one set."""
        calls = [r for r in records if isinstance(r, ModelCallRecord) and (r.response is not None or r.error)]
        models = sorted({r.request.model for r in calls})
        if model is None:
            if len(models) != 1:
                raise ValueError(f"recording holds models {models}; name the one to replay")
            model = models[0]
        elif model not in models:
            raise ValueError(f"recording holds no calls of model {model!r} (it has {models})")
        calls = [r for r in calls if r.request.model == model]
        responses: dict[str, list[ModelResponse | str]] = {}
        by_episode: dict[tuple[str, str], list[ModelResponse | str]] = {}
        for r in calls:
            answer: ModelResponse | str = r.response if r.response is not None else str(r.error)
            request_hash = r.request.request_hash()
            responses.setdefault(request_hash, []).append(answer)
            by_episode.setdefault((r.episode, request_hash), []).append(answer)
        used = {r.request.params.model_copy(update={"timeout": ModelParams().timeout, "api_base": None}) for r in calls}
        params = used.pop() if len(used) == 1 else None
        return cls(model, responses, params=params, system_prompt=system_prompt, on_call=on_call, by_episode=by_episode)

    @classmethod
    def from_log(
        cls,
        run_dir: str | os.PathLike[str],
        model: str | None = None,
        *,
        system_prompt: str | None = None,
        on_call: OnCall | None = None,
    ) -> ReplayModel:
        return cls.from_records(read_log(run_dir), model, system_prompt=system_prompt, on_call=on_call)

    def __len__(self) -> int:
        """How many recorded responses (each counted once)."""
        return sum(len(rs) for (episode, _), rs in self._responses.items() if not episode)

    async def complete(
        self, messages: Sequence[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse:
        request = ModelRequest(
            model=self.model,
            messages=with_system_prompt(messages, self.system_prompt),
            params=params or self.params,
            sample=context.sample,
        )
        request_hash = request.request_hash()
        key = self._key(context.episode, request_hash)
        if key not in self._responses and request.sample is not None:
            # Recorded before samples were named: the hash had no sample in it.
            key = self._key(context.episode, request.model_copy(update={"sample": None}).request_hash())
        recorded = self._responses.get(key)
        if recorded is None:
            error = UnrecordedRequestError(self.model, context, request_hash)
            if self.on_call is not None:
                self.on_call(request, None, str(error), context)
            raise error
        index = self._served.get(key, 0)
        self._served[key] = index + 1
        response = recorded[min(index, len(recorded) - 1)]
        if isinstance(response, str):
            if self.on_call is not None:
                self.on_call(request, None, response, context)
            raise ReplayedFailure(response)
        response = response.model_copy(update={"replayed": True})
        if self.on_call is not None:
            self.on_call(request, response, None, context)
        return response

    def _key(self, episode: str, request_hash: str) -> tuple[str, str]:
        key = (episode, request_hash)
        return key if key in self._responses else ("", request_hash)


class ReplayedFailure(RuntimeError):
    """A model call that failed in the recorded run fails the same way on replay;
    `recorded` is the error text exactly as the run log holds it."""

    def __init__(self, recorded: str) -> None:
        super().__init__(recorded)
        self.recorded = recorded

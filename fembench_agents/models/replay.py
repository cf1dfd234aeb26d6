"""A model that answers from a recorded run, by request hash, and never calls
anything. A request the recording never saw raises UnrecordedRequestError
naming the task and attempt."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from fembench_agents.messages import CallContext, Message, ModelParams, ModelRequest, ModelResponse
from fembench_agents.models.client import OnCall, with_system_prompt
from fembench_agents.models.errors import UnrecordedRequestError
from fembench_agents.runlog import ModelCallRecord, read_log


class ReplayModel:
    """Several recorded answers to one request hash (repeats of a task) are
    served in recorded order; once used up, the last one is served again.
    Responses come back exactly as recorded (usage, cost, latency)."""

    def __init__(self, model: str, responses: Mapping[str, Sequence[ModelResponse]], *,
                 params: ModelParams | None = None, system_prompt: str | None = None,
                 on_call: OnCall | None = None) -> None:
        self.model = model
        self.params = params or ModelParams()
        self.system_prompt = system_prompt
        self.on_call = on_call
        self._responses = {h: list(rs) for h, rs in responses.items() if rs}
        self._served: dict[str, int] = {}

    @classmethod
    def from_records(cls, records: Iterable[object], model: str | None = None, *,
                     system_prompt: str | None = None, on_call: OnCall | None = None) -> ReplayModel:
        """From run-log records (other record types are skipped). Without
        `model`, the recording must hold exactly one model. Default params are
        the ones the recording used, when it used one set."""
        calls = [r for r in records if isinstance(r, ModelCallRecord) and r.response is not None]
        models = sorted({r.request.model for r in calls})
        if model is None:
            if len(models) != 1:
                raise ValueError(f"recording holds models {models}; name the one to replay")
            model = models[0]
        elif model not in models:
            raise ValueError(f"recording holds no calls of model {model!r} (it has {models})")
        calls = [r for r in calls if r.request.model == model]
        responses: dict[str, list[ModelResponse]] = {}
        for r in calls:
            assert r.response is not None
            responses.setdefault(r.request.request_hash(), []).append(r.response)
        used = {r.request.params.model_copy(update={"timeout": ModelParams().timeout, "api_base": None})
                for r in calls}
        params = used.pop() if len(used) == 1 else None
        return cls(model, responses, params=params, system_prompt=system_prompt, on_call=on_call)

    @classmethod
    def from_log(cls, run_dir: str | os.PathLike[str], model: str | None = None, *,
                 system_prompt: str | None = None, on_call: OnCall | None = None) -> ReplayModel:
        return cls.from_records(read_log(run_dir), model, system_prompt=system_prompt, on_call=on_call)

    def __len__(self) -> int:
        return sum(len(rs) for rs in self._responses.values())

    async def complete(self, messages: Sequence[Message], context: CallContext,
                       params: ModelParams | None = None) -> ModelResponse:
        request = ModelRequest(model=self.model, messages=with_system_prompt(messages, self.system_prompt),
                               params=params or self.params)
        request_hash = request.request_hash()
        recorded = self._responses.get(request_hash)
        if recorded is None:
            error = UnrecordedRequestError(self.model, context, request_hash)
            if self.on_call is not None:
                self.on_call(request, None, str(error), context)
            raise error
        index = self._served.get(request_hash, 0)
        self._served[request_hash] = index + 1
        response = recorded[min(index, len(recorded) - 1)]
        if self.on_call is not None:
            self.on_call(request, response, None, context)
        return response

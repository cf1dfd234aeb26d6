"""GEPA's reflection LM, `(prompt) -> text`, as a call through our model
client (litellm, retries, response cache, cost), each call appended to the
reflection run log (`reflection/log.jsonl`) as it happens."""

from __future__ import annotations

from typing import Any

from fembench_agents.contracts import ModelClient
from fembench_agents.messages import CallContext, Message, ModelParams
from fembench_agents.optimize.loop import LoopThread
from fembench_agents.runs.log import ModelCallRecord, RunLog, read_log
from fembench_agents.runs.recording import recorded_call

EPISODE = "reflection"


class ReflectionModel:
    """Exposes `total_cost`, `total_tokens_in` and `total_tokens_out`, which
    GEPA reads (and which make it use this object as is)."""

    def __init__(self, client: ModelClient, params: ModelParams, log: RunLog, loop: LoopThread) -> None:
        self.client, self.params, self.log, self.loop = client, params, log, loop
        self.calls = sum(isinstance(r, ModelCallRecord) for r in read_log(log.dir))
        self.total_cost = 0.0
        self.total_tokens_in = 0
        self.total_tokens_out = 0
        self.unpriced = False

    def __call__(self, prompt: str | list[dict[str, Any]]) -> str:
        messages = [Message(role="user", content=prompt)] if isinstance(prompt, str) else _messages(prompt)
        index = self.calls
        self.calls += 1
        context = CallContext(task_id="", episode=EPISODE, attempt_index=index, attempt=f"reflection call {index}")
        response = self.loop.run(recorded_call(self.client, self.log, messages, context, self.params))
        if response.cost_usd is None:
            self.unpriced = True
        elif not response.cached:
            self.total_cost += response.cost_usd
        self.total_tokens_in += response.usage.prompt_tokens or 0
        self.total_tokens_out += response.usage.completion_tokens or 0
        return response.text


def _messages(chat: list[dict[str, Any]]) -> list[Message]:
    """An OpenAI-style message list (GEPA sends one when a dataset holds images;
    ours never does) reduced to its text parts."""
    out = []
    for m in chat:
        content = m.get("content", "")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        role = m.get("role")  # a tool's or unknown role speaks as the user
        out.append(Message(role=role if role in ("system", "assistant") else "user", content=str(content)))
    return out

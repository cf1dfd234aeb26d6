"""What a call cost, from litellm's bundled price map. An unpriced model costs
None, never a made-up zero."""

from __future__ import annotations

from typing import Any

from fembench_agents.messages import Usage
from fembench_agents.models._litellm import litellm
from fembench_agents.models.config import ClientOptions


def call_cost(model: str, usage: Usage, options: ClientOptions | None = None, raw_usage: Any = None) -> float | None:
    """USD for one call of `model` (a litellm model name) with `usage`.
    `raw_usage` (litellm's Usage object) lets litellm price cached prompt tokens."""
    if usage.prompt_tokens is None and usage.completion_tokens is None:
        return None
    options = options or ClientOptions()
    prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
    if options.token_prices is not None:
        per_in, per_out = options.token_prices
        return prompt * per_in + completion * per_out
    try:
        cost_in, cost_out = litellm.cost_per_token(
            model=options.price_as or model,
            prompt_tokens=prompt,
            completion_tokens=completion,
            usage_object=raw_usage if options.price_as is None else None,
        )
    except Exception:  # litellm raises several types for "not in the price map"
        return None
    return float(cost_in) + float(cost_out)


def prices_per_million(model: str, options: ClientOptions | None = None) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for `model` as calls are billed
    (explicit prices, else `price_as`, else litellm's price map); None when unpriced."""
    options = options or ClientOptions()
    if options.token_prices is not None:
        per_in, per_out = options.token_prices
    else:
        try:
            info = litellm.get_model_info(options.price_as or model)
        except Exception:  # litellm raises several types for "not in the price map"
            return None
        cost_in, cost_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
        if cost_in is None or cost_out is None:
            return None
        per_in, per_out = float(cost_in), float(cost_out)
    return per_in * 1e6, per_out * 1e6

"""OpenHands as a solver agent (spec `openhands[:OPTIONS]`), through the
OpenHands software agent SDK. Importing this package does not import
OpenHands (tens of seconds): only running an episode does. See
docs/openhands.md."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

# Before any submodule imports OpenHands (which imports litellm): litellm's
# bundled price map (no network fetch) and no banner printed on import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")

from fembench_agents.agents.openhands.options import OpenHandsOptions  # noqa: E402

if TYPE_CHECKING:
    from fembench_agents.agents.openhands.agent import OpenHandsAgent

__all__ = ["OpenHandsOptions", "make_openhands_agent"]


def make_openhands_agent(options: str = "") -> OpenHandsAgent:
    """The agent for spec `openhands:OPTIONS`, e.g. `openhands:attempts=3,iterations=20`."""
    from fembench_agents.agents.openhands.agent import OpenHandsAgent

    parsed = OpenHandsOptions.parse(options)
    suffix = parsed.spec_suffix()
    return OpenHandsAgent(options=parsed, name=f"openhands:{suffix}" if suffix else "openhands")

"""mini-swe-agent as a solver agent (spec `mini-swe-agent[:OPTIONS]`), through
the `mini-swe-agent` package. Importing this package does not import
mini-swe-agent: only running an episode does. See docs/mini_swe_agent.md."""

from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING

# Before minisweagent is imported: litellm's bundled price map, no banner, and
# a global config directory of its own, so no user `.env` (keys) is loaded
# into this process by the import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
os.environ.setdefault("MSWEA_GLOBAL_CONFIG_DIR", os.path.join(tempfile.gettempdir(), "fembench-mini-swe-agent-config"))

from fembench_agents.agents.mini_swe.options import MiniSweOptions  # noqa: E402

if TYPE_CHECKING:
    from fembench_agents.agents.mini_swe.agent import MiniSweAgent

__all__ = ["MiniSweOptions", "make_mini_swe_agent"]


def make_mini_swe_agent(options: str = "") -> MiniSweAgent:
    """The agent for spec `mini-swe-agent:OPTIONS`, e.g. `mini-swe-agent:attempts=3,steps=20`."""
    from fembench_agents.agents.mini_swe.agent import MiniSweAgent

    parsed = MiniSweOptions.parse(options)
    suffix = parsed.spec_suffix()
    return MiniSweAgent(options=parsed, name=f"mini-swe-agent:{suffix}" if suffix else "mini-swe-agent")

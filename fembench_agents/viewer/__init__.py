"""A static site for browsing runs: the report's tables and plots, every
episode behind each table cell, and every attempt of an episode (prompt,
reply with its code, stage outcomes, feedback, tokens, cost, time, and the
code's diff from the previous attempt). It opens from disk with no server
and no network:

    write_site(["runs/a", "runs/b"], "view")   # then open view/index.html
"""

from __future__ import annotations

from fembench_agents.viewer.serve import site_server
from fembench_agents.viewer.site import write_site

__all__ = ["site_server", "write_site"]

"""Sandboxed execution of untrusted code: warm workers fork confined children."""

from fembench_agents.scoring.sandbox.isolation import IsolationReport, WeakIsolationRefused
from fembench_agents.scoring.sandbox.policy import SandboxPolicy
from fembench_agents.scoring.sandbox.pool import Sandbox
from fembench_agents.scoring.sandbox.replies import JobResult

__all__ = ["IsolationReport", "JobResult", "Sandbox", "SandboxPolicy", "WeakIsolationRefused"]

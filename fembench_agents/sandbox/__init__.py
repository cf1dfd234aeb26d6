"""Sandboxed execution of untrusted code: warm workers fork confined children."""

from fembench_agents.sandbox.isolation import IsolationReport, WeakIsolationRefused
from fembench_agents.sandbox.policy import SandboxPolicy
from fembench_agents.sandbox.pool import JobResult, Sandbox

__all__ = ["IsolationReport", "JobResult", "Sandbox", "SandboxPolicy", "WeakIsolationRefused"]

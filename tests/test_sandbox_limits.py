"""A job's wall clock, and the limits a scorer inherits (`ulimit -t` in a shell,
a batch scheduler's CPU limit): those are kept, a job's limits never try to
exceed them, so jobs still run."""

from __future__ import annotations

import resource
import subprocess
import sys

from conftest import ROOT

from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy

JOB = """
from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy
with Sandbox(workers=1) as sb:
    job = {"kind": "call", "implementation": {"code": "def f():\\n    return 41 + 1\\n", "function": "f",
           "preamble": []}, "inputs": [[]]}
    r = sb.run(job, SandboxPolicy(wall_seconds=30.0))
    print([f.get("status") for f in r.events("input")], r.stderr.strip()[-200:])
"""


def test_a_job_runs_under_a_lower_inherited_cpu_limit() -> None:
    def lower_limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (20, 20))  # below the job's own 32 s

    done = subprocess.run(
        [sys.executable, "-c", JOB], cwd=ROOT, capture_output=True, text=True, timeout=120, preexec_fn=lower_limit
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['ok']"


def test_a_job_is_killed_at_its_wall_clock_not_at_its_cpu_backstop(sandbox: Sandbox) -> None:
    """A sleeping job uses no CPU: only the wall clock ends it, and what it reported before stays."""
    code = "import time\ndef f(x):\n    if x:\n        time.sleep(120)\n    return x\n"
    job = {"kind": "call", "implementation": {"code": code, "function": "f", "preamble": []}, "inputs": [[0], [1]]}
    result = sandbox.run(job, SandboxPolicy(wall_seconds=1.0, cpu_seconds=100))
    assert (result.timed_out, result.truncated, result.exit_code, result.signal) == (True, False, None, 9)
    assert [f.get("status") for f in result.events("input")] == ["ok"]
    assert 1.0 <= result.wall_seconds < 30.0  # killed at 1 s (100 s had it waited for the CPU limit)

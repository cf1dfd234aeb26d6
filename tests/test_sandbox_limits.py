"""Limits a scorer inherits (`ulimit -t` in a shell, a batch scheduler's CPU
limit) are kept: a job's limits never try to exceed them, so jobs still run."""

from __future__ import annotations

import resource
import subprocess
import sys

from conftest import ROOT

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

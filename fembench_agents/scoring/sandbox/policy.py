"""What a sandboxed child may use: time, memory, environment, visible files."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

# Variables passed through to the sandbox; everything else (API keys, tokens,
# cloud credentials, proxies) is dropped. A whitelist, so a new secret name
# is excluded by default.
# MUTANT_UNDER_TEST: mutmut's selected mutant (scripts/mutation.sh), so that a
# mutant of code that runs in the child (sandbox/runner.py) is active there too.
PASSTHROUGH_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "MUTANT_UNDER_TEST",
)

FIXED_ENV = {
    # One BLAS thread: results reproducible bit for bit and no thread pools to
    # carry across fork.
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "MPLBACKEND": "Agg",
}


def sandbox_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASSTHROUGH_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(FIXED_ENV)
    env["HOME"] = "/tmp"
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class SandboxPolicy:
    """Limits for one sandboxed job.

    `wall_seconds` bounds the whole job (the process group is killed past it);
    `cpu_seconds` is an RLIMIT_CPU backstop; `memory_mb` is address space on
    top of what the warm worker already maps; `hidden_paths` are covered by an
    empty filesystem in the child when namespaces are available.
    """

    wall_seconds: float = 30.0
    cpu_seconds: int | None = None
    memory_mb: int = 2048
    max_output_bytes: int = 32 * 1024 * 1024
    max_processes: int = 64
    scratch_mb: int = 256
    hidden_paths: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.wall_seconds <= 0:
            raise ValueError(f"wall_seconds must be positive, got {self.wall_seconds}")
        if self.memory_mb < 64:
            raise ValueError(f"memory_mb must be at least 64, got {self.memory_mb}")

    @property
    def cpu_limit(self) -> int:
        return self.cpu_seconds or int(self.wall_seconds) + 2

    def as_dict(self) -> dict[str, object]:
        return {
            "wall_seconds": self.wall_seconds,
            "cpu_seconds": self.cpu_limit,
            "memory_mb": self.memory_mb,
            "max_output_bytes": self.max_output_bytes,
            "max_processes": self.max_processes,
            "scratch_mb": self.scratch_mb,
            "hidden_paths": list(self.hidden_paths),
        }

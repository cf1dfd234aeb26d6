"""Where sandbox requests run: the contract between the sandbox (isolation
checks, decoding and checking every frame) and what carries a request to a
warm worker. Two executors: the local pool (`pool.WorkerPool`, the default)
and a Ray cluster (`ray_executor.RayExecutor`, the `[ray]` extra), whose nodes
each run the same local pool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from fembench_agents.scoring.sandbox.jobs import Job
    from fembench_agents.scoring.sandbox.policy import SandboxPolicy


@dataclass(frozen=True)
class SandboxRequest:
    """One job as an executor receives it: plain data, so that it can travel
    to another machine. `hidden`: the paths the driver hides from the job (a
    node adds its own: its home, working directory and world-writable places)."""

    job: Job
    policy: SandboxPolicy
    hidden: tuple[str, ...]
    require_namespaces: bool
    warm: tuple[str, ...] = ()  # modules the job's worker should have imported (`pool.warm_modules`)


class JobExecutor(Protocol):
    """Runs sandbox requests, up to `size` at once, each in a confined child of
    a warm worker, and returns the worker's reply as JSON data (frames still
    undecoded: the sandbox decodes and checks them, whichever executor ran the
    job). Thread-safe. `close` ends what the executor started."""

    @property
    def size(self) -> int: ...

    def execute(self, request: SandboxRequest) -> dict[str, Any]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ExecutorChoice:
    """What `--executor` names: `local` (this machine's pool) or `ray` with an
    optional cluster address (`ray:HOST:PORT`; without one a local Ray
    instance is started, or the one this process already joined is used)."""

    kind: str = "local"
    address: str | None = None

    @classmethod
    def parse(cls, text: str) -> ExecutorChoice:
        kind, sep, address = text.strip().partition(":")
        if kind == "local" and not sep:
            return cls()
        if kind == "ray":
            if sep and not address.strip():
                raise ValueError(f"--executor {text!r}: the Ray address after 'ray:' is empty; expected ray:HOST:PORT")
            return cls("ray", address.strip() or None)
        raise ValueError(f"--executor {text!r}: expected 'local', 'ray' or 'ray:ADDRESS' (e.g. ray:10.0.0.5:6379)")

    def __str__(self) -> str:
        return self.kind if self.address is None else f"{self.kind}:{self.address}"

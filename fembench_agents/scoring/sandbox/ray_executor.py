"""The Ray executor (`--executor ray[:ADDRESS]`, the `[ray]` extra): every
sandbox job is one Ray task, run on some node of the cluster by that node's
own warm-worker pool (`pool.WorkerPool`, the same confinement as locally).
The task returns the worker's reply as it came (frames undecoded), so the
driver decodes and checks it exactly as it does a local one; verdicts are
computed on the driver. Model calls stay on the driver too, so the limits per
provider stay global.

A task whose worker process or node dies is run again by Ray (`max_retries`);
the driver receives one reply per job, so a retried job is counted once.

No secret travels to the cluster: no `runtime_env` is sent, a local Ray
instance this module starts gets only the variables of `ray_environment()`,
and every job's own environment is the sandbox whitelist (`policy.sandbox_env`)
whatever the node's environment holds."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ray
import ray.exceptions
import ray.util

from fembench_agents.scoring.sandbox.executor import SandboxRequest
from fembench_agents.scoring.sandbox.policy import PASSTHROUGH_ENV
from fembench_agents.scoring.sandbox.pool import WorkerPool, default_hidden

# Times Ray runs a job again after the process or node running it died.
MAX_RETRIES = 3

# One line per job at DEBUG: its kind and content digest and the node that ran
# it (which nodes a cluster really uses; a test reads it). Written by the
# driver: nothing of it reaches a job.
log = logging.getLogger(__name__)

# What the processes of a Ray instance started here may see of the driver's
# environment: enough to find Python, the package and Ray's own settings. A
# whitelist, so an API key (or any new secret name) stays on the driver.
_RAY_PASSTHROUGH = (*PASSTHROUGH_ENV, "HOME", "USER", "LOGNAME", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV")


def ray_environment() -> dict[str, str]:
    """The environment a local Ray instance started by the driver runs with."""
    env = {k: v for k, v in os.environ.items() if k in _RAY_PASSTHROUGH or k.startswith("RAY_")}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    return env


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """`os.environ` holds only `env`'s keys inside: Ray copies it into every
    process it spawns. What Ray sets meanwhile (its auth mode) stays after.
    Used once, before the command has started any thread that reads it."""
    removed = {k: v for k, v in os.environ.items() if k not in env}
    for key in removed:
        del os.environ[key]
    try:
        yield
    finally:
        os.environ.update(removed)


@functools.cache
def code_fingerprint() -> str:
    """A hash of this process's fembench_agents sources: a node running other
    code would score by other rules, so its replies are refused."""
    package = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


# ----- on a node: one warm-worker pool per Ray worker process and preload -----
_NODE_POOLS: dict[tuple[str, ...], WorkerPool] = {}
_NODE_LOCK = threading.Lock()


def _node_pool(preload: tuple[str, ...]) -> WorkerPool:
    # A Ray worker process runs one task at a time: one warm worker suffices,
    # and it stays warm for the next job this process is given.
    with _NODE_LOCK:
        pool = _NODE_POOLS.get(preload)
        if pool is None:
            pool = _NODE_POOLS[preload] = WorkerPool(workers=1, preload=preload)
        return pool


@dataclasses.dataclass(frozen=True)
class NodeReply:
    """What a Ray task returns: the worker's reply, undecoded, and where it
    came from (several nodes may share an address: `node_id` tells them apart)."""

    address: str
    node_id: str
    code: str  # the node's `code_fingerprint()`
    reply: dict[str, Any]


# SPREAD: jobs go round the nodes that have a free CPU. Under the default policy a
# job stays on the driver's node whenever that node has a CPU free, so a command
# whose jobs run mostly one at a time may use one node only (a fresh-clone CI run
# on a loaded machine saw all 13 jobs of a small `score` on the head).
@ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False, scheduling_strategy="SPREAD")
def run_on_node(request: SandboxRequest, preload: tuple[str, ...]) -> NodeReply:
    """The Ray task: one sandbox job, on whichever node Ray chose."""
    # The node hides its own home, working directory, checkout and
    # world-writable places besides what the driver hides: the node may be laid
    # out unlike the driver, whose paths may not exist here.
    hidden = tuple(dict.fromkeys((*request.hidden, *default_hidden())))
    reply = _node_pool(preload).execute(dataclasses.replace(request, hidden=hidden))
    node = ray.get_runtime_context().get_node_id()
    return NodeReply(ray.util.get_node_ip_address(), node, code_fingerprint(), reply)


def _digest(job: Any) -> str:
    """Twelve hex digits naming a job by its content: two jobs alike (the same
    attempt scored twice) share them."""
    return hashlib.sha256(json.dumps(job, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _connection_failure(address: str, exc: ConnectionError) -> str:
    """Ray's own message, and what to do when the cluster refused this driver's
    token (or its lack of one): Ray sends none to an address it is given
    unless told to, while `ray start --head` asks for one wherever
    `~/.ray/auth_token` exists."""
    causes = []
    cause: BaseException | None = exc
    while cause is not None:
        causes.append(cause)
        cause = cause.__cause__ or cause.__context__
    if not any(isinstance(c, ray.exceptions.AuthenticationError) or "InvalidAuthToken" in str(c) for c in causes):
        return str(exc)
    mode = os.environ.get("RAY_AUTH_MODE", "unset")
    return (
        f"the Ray cluster at {address} refused this driver's token or its lack of one (RAY_AUTH_MODE is "
        f"{mode}): set RAY_AUTH_MODE=token and the cluster's token (~/.ray/auth_token or RAY_AUTH_TOKEN) "
        "here, as on every node (docs/ray.md)"
    )


class RayExecutor:
    """Sandbox jobs as Ray tasks (`executor.JobExecutor`). Joins the cluster at
    `address`, or starts a local Ray instance without one; a process already
    connected to Ray keeps its connection (and `close` leaves it open).
    `workers`: jobs in flight at once [default: the cluster's CPUs]; a local
    instance started here gets that many CPUs (worker processes)."""

    def __init__(self, address: str | None = None, workers: int | None = None, preload: tuple[str, ...] = ()) -> None:
        self.address = address
        self.preload = tuple(preload)
        self._connected_here = not ray.is_initialized()
        if self._connected_here:
            options: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
            if address is None:
                # "local": a new instance, even where `ray start` left this
                # machine's default address (ray.init() would join that one).
                with _environment(ray_environment()):
                    ray.init(address="local", num_cpus=workers, include_dashboard=False, **options)
            else:
                try:
                    ray.init(address=address, **options)
                except ConnectionError as exc:
                    raise ConnectionError(_connection_failure(address, exc)) from None
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < 1:
            self.close()
            raise RuntimeError(f"the Ray cluster at {address or 'this machine'} has no CPU to run sandbox jobs on")
        self._size = workers or cpus

    @property
    def size(self) -> int:
        return self._size

    def execute(self, request: SandboxRequest) -> dict[str, Any]:
        try:
            done: NodeReply = ray.get(run_on_node.remote(request, self.preload))
        except ray.exceptions.RayError as exc:
            # Past its retries (a worker or node lost each time), or the node's
            # pool failed twice: the job has no reply, which the caller records.
            raise RuntimeError(f"the Ray cluster could not run a sandbox job: {type(exc).__name__}: {exc}") from None
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "sandbox job %s %s ran on Ray node %s at %s",
                request.job["kind"],
                _digest(request.job),
                done.node_id,
                done.address,
            )
        if done.code != code_fingerprint():
            raise RuntimeError(
                f"Ray node {done.address} runs other fembench-agents code (sources {done.code}, the driver's "
                f"{code_fingerprint()}): install the driver's version on every node"
            )
        return done.reply

    def close(self) -> None:
        if self._connected_here and ray.is_initialized():
            ray.shutdown()

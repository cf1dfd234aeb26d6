"""Parent side of the sandbox: a pool of warm workers (zygotes) that run
jobs, and the `Sandbox` that sends them and decodes what comes back
(`replies`). The parent never unpickles anything a child produced."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fembench_agents.scoring.sandbox.executor import JobExecutor, SandboxRequest
from fembench_agents.scoring.sandbox.fresh_probe import view_file
from fembench_agents.scoring.sandbox.implementation_host import implementation_key
from fembench_agents.scoring.sandbox.isolation import (
    NAMESPACED,
    IsolationReport,
    WeakIsolationRefused,
)
from fembench_agents.scoring.sandbox.job_stream import JobTerms, encode_terms, read_reply
from fembench_agents.scoring.sandbox.pairs import job_output_cap
from fembench_agents.scoring.sandbox.policy import SandboxPolicy, sandbox_env
from fembench_agents.scoring.sandbox.replies import JobResult, _decode

if TYPE_CHECKING:  # the workers import this module; a job's shape never needs to be in them
    from fembench_agents.scoring.sandbox.jobs import Job


# The directory holding the package this process imported. The worker runs
# isolated (-I: no environment, no current directory on its path) yet must
# load the same code as the parent (a checkout other than the installed one,
# or a mutation-testing copy), so it is given exactly this directory.
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[3])
_WORKER_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from fembench_agents.scoring.sandbox import zygote; zygote.main(sys.argv[3:], sys.argv[2])"
)


def default_hidden() -> list[str]:
    # The project, every home directory, /run (the user's sockets: ssh and gpg
    # agents, a docker socket) and every world-writable directory: a job may
    # write nowhere but its scratch, so it leaves nothing on the machine for a
    # later job to find. The Python installation is bound back wherever it is.
    hidden = [
        os.path.expanduser("~"),
        os.getcwd(),
        "/home",
        "/root",
        "/run",
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        "/var/lock",
        "/mnt",
        "/media",
    ]
    installs = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}
    if not any(_inside(_PACKAGE_PARENT, p) for p in installs):
        hidden.append(_PACKAGE_PARENT)  # a source checkout: tasks, cases and their references
    hidden += non_system_places()
    return list(dict.fromkeys(h for h in hidden if h and h != "/"))


# What a job needs of the machine's top level: the system's programs, libraries and settings.
# Everything else there (/srv, /work, /data, a second checkout of this project with its own
# cases/hidden beside this one) is hidden; an installation of Python inside it is bound back.
# A checkout under /opt or /var (but /var/tmp) stays readable: those hold software too.
SYSTEM_PLACES = frozenset(
    {"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "sbin", "sys", "usr", "var"}
    | {"nix", "gnu", "snap"}  # software stores
)


def non_system_places(root: str = "/") -> list[str]:
    """The directories at the top of `root` that are not the system's (SYSTEM_PLACES); symbolic
    links (bin -> usr/bin) are left to what they point at."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    return [
        e.path
        for e in entries
        if e.name not in SYSTEM_PLACES and e.is_dir(follow_symlinks=False) and not e.is_symlink()
    ]


def _inside(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


@contextlib.contextmanager
def _payload(job: Job, policy: SandboxPolicy, hidden: list[str], require_namespaces: bool) -> Iterator[dict[str, Any]]:
    """The request for a job. The implementations of a tests job do not
    travel in the request, which every process of the job reads, test
    processes included: each goes in a private file that the job's trusted
    intermediate process opens and unlinks, and only the process that runs
    that implementation reads (see `pairs`)."""
    paths: list[str] = []
    sent: dict[str, Any] = dict(job)
    try:
        if job["kind"] == "tests":
            sent["implementations"] = []
            for implementation in job["implementations"]:
                fd, path = tempfile.mkstemp(prefix="fembench-impl-", suffix=".json")
                paths.append(path)
                with os.fdopen(fd, "w") as fh:
                    json.dump(implementation, fh)
                # named by its content for the worker's implementation servers (`implementation_host`)
                sent["implementations"].append({"file": path, "key": implementation_key(dict(implementation))})
        yield {"job": sent, "policy": policy.as_dict(), "hidden": hidden, "require_namespaces": require_namespaces}
    finally:
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


class _Worker:
    def __init__(self, preload: tuple[str, ...] = ()) -> None:
        self.view_file = view_file(preload, _PACKAGE_PARENT, sandbox_env())  # what a fresh interpreter binds
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _WORKER_BOOT, _PACKAGE_PARENT, self.view_file, *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=sandbox_env(),
            cwd="/",
            start_new_session=True,
        )

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        policy = payload["policy"]
        cap = job_output_cap(payload["job"], int(policy["max_output_bytes"]))
        terms = JobTerms(policy["wall_seconds"], cap, [*payload["hidden"], *policy["hidden_paths"]])
        self.proc.stdin.write(encode_terms(terms) + json.dumps(payload).encode() + b"\n")
        self.proc.stdin.flush()
        return read_reply(self.proc.stdout, cap)

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.view_file)  # a worker that died before reading it


class _Workers:
    """Up to `size` warm workers that imported the same modules."""

    def __init__(self, size: int, preload: tuple[str, ...]) -> None:
        self.size, self.preload = size, preload
        self.idle: queue.Queue[_Worker] = queue.Queue()
        self.started = 0
        self.all: list[_Worker] = []


class WorkerPool:
    """The local executor (`executor.JobExecutor`): up to `size` warm workers
    on this machine for each set of warm imports, started on first use; a
    worker that dies is replaced and its request sent once more. A Ray node
    runs one of these too."""

    def __init__(self, workers: int | None = None, preload: tuple[str, ...] = ()) -> None:
        self._size = workers or max(1, os.cpu_count() or 1)
        self.preload = tuple(preload)
        self._lock = threading.Lock()
        self._kinds: dict[tuple[str, ...], _Workers] = {}

    @property
    def size(self) -> int:
        return self._size

    def _acquire(self, warm: tuple[str, ...]) -> tuple[_Workers, _Worker]:
        preload = tuple(dict.fromkeys((*warm, *self.preload)))
        with self._lock:
            kind = self._kinds.setdefault(preload, _Workers(self._size, preload))
            if kind.idle.empty() and kind.started < kind.size:
                kind.started += 1
                worker = _Worker(preload)
                kind.all.append(worker)
                return kind, worker
        return kind, kind.idle.get()

    def execute(self, request: SandboxRequest) -> dict[str, Any]:
        # No request id: nothing that tells one job from another reaches the child.
        hidden = list(request.hidden)
        kind, worker = self._acquire(request.warm)
        try:
            with _payload(request.job, request.policy, hidden, request.require_namespaces) as payload:
                return worker.request(payload)
        except (OSError, RuntimeError, ValueError):
            worker.close()
            with self._lock:
                kind.all.remove(worker)
                worker = _Worker(kind.preload)
                kind.all.append(worker)
            with _payload(request.job, request.policy, hidden, request.require_namespaces) as payload:
                return worker.request(payload)
        finally:
            kind.idle.put(worker)

    def close(self) -> None:
        with self._lock:
            for kind in self._kinds.values():
                for worker in kind.all:
                    worker.close()
            self._kinds.clear()


# What a job needs warm beyond the worker's own imports (numpy, pytest and the
# standard library; see `zygote`): every fork costs in proportion to what the
# worker holds, and scipy nearly doubles it, so only jobs whose sources name it
# get a worker that imported it (another job importing it pays the import).
SCIPY_WARM = ("scipy", "scipy.linalg", "scipy.sparse", "scipy.sparse.linalg")


def warm_modules(job: Job) -> tuple[str, ...]:
    return SCIPY_WARM if "scipy" in json.dumps(job) else ()


class Sandbox:
    """Runs jobs in confined, freshly forked children of warm workers.

    Thread-safe: up to `size` jobs run at once. The workers are this
    machine's (`WorkerPool` of `workers`, importing `preload`) unless an
    `executor` is given (a Ray cluster's nodes: `ray_executor.RayExecutor`);
    either way every reply is decoded and checked here. Jobs run only with
    namespaced isolation unless `allow_weak_isolation`: the first job finds
    out what the workers give (`isolation`) and raises `WeakIsolationRefused`
    if that is less, and every later job is refused inside the child, before
    its code runs, if its confinement fails.
    """

    def __init__(
        self,
        workers: int | None = None,
        hidden_paths: tuple[str, ...] = (),
        allow_weak_isolation: bool = False,
        preload: tuple[str, ...] = (),
        executor: JobExecutor | None = None,
    ) -> None:
        """`preload`: modules the warm workers import before any job (a PDE
        library, so that its import is not charged to each attempt); an
        `executor` brings its own workers and preload."""
        self.executor: JobExecutor = executor or WorkerPool(workers, tuple(preload))
        self.hidden = default_hidden() + [os.path.abspath(p) for p in hidden_paths]
        self.allow_weak_isolation = allow_weak_isolation
        self._isolation: IsolationReport | None = None

    @property
    def size(self) -> int:
        return self.executor.size

    def isolation(self) -> IsolationReport:
        """The isolation this sandbox gives a job, found by running an empty
        one (once). Raises nothing: `require_isolation` decides."""
        if self._isolation is None:
            probe = self._run({"kind": "probe"}, SandboxPolicy(wall_seconds=30.0), require_namespaces=False)
            level = probe.isolation if probe.isolation != "unknown" else "none"
            detail = probe.isolation_detail or (probe.stderr.strip().splitlines() or ["the probe job failed"])[-1]
            self._isolation = IsolationReport(
                level=level, detail=detail, accepted_weak=level != NAMESPACED and self.allow_weak_isolation
            )
        return self._isolation

    def require_isolation(self) -> IsolationReport:
        """The isolation report; `WeakIsolationRefused` when it is below
        namespaced and weaker isolation was not accepted."""
        report = self.isolation()
        if not report.confined and not self.allow_weak_isolation:
            raise WeakIsolationRefused(report)
        return report

    def run(self, job: Job, policy: SandboxPolicy) -> JobResult:
        self.require_isolation()
        result = self._run(job, policy, require_namespaces=not self.allow_weak_isolation)
        if result.isolation != NAMESPACED and not self.allow_weak_isolation:
            # The child refused to run the job: its confinement failed this time.
            raise WeakIsolationRefused(IsolationReport(level=result.isolation, detail=result.isolation_detail))
        return result

    def _run(self, job: Job, policy: SandboxPolicy, require_namespaces: bool) -> JobResult:
        request = SandboxRequest(job, policy, tuple(self.hidden), require_namespaces, warm_modules(job))
        return _decode(self.executor.execute(request))

    def close(self) -> None:
        self.executor.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

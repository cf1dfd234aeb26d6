"""The namespaces of a warm worker's jobs, made with no process between the
worker and a job's process B.

B must be PID 1 of a PID namespace of its own: when it ends, every process of
the job ends, and a job sees no process of another. `unshare(CLONE_NEWPID)`
in the worker applies to its next child only, and a process may unshare it
again only from its own PID namespace, so the worker makes one before it
forks B (`JobPidNamespaces.before_fork`) and goes back to its own right after
(`after_fork`, setns(2)). Both need CAP_SYS_ADMIN over the worker's user and
PID namespaces: root has it; an ordinary user's worker gets it in a user
namespace of its own that owns its PID namespace (`enter_worker_namespaces`,
once per worker: the worker process continues as PID 1 there, with a /proc
of its own). B makes its IPC namespace itself (`enter_job_namespaces`; the
network namespace is the worker's own, made once, `own_network`), and
`confine` the rest: its mount namespace (a copy of one laid out once per
worker, `mount_layouts`) and a user namespace of the job, so that its
process limit and its keyrings are its own.
"""

from __future__ import annotations

import os
import platform
import signal

from fembench_agents.scoring.sandbox.confine import ROOT_MECHANISM, USERNS_MECHANISM, Namespaces
from fembench_agents.scoring.sandbox.linux_calls import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_REC,
    MS_SLAVE,
    join_new_session_keyring,
    map_user_to_itself,
    mount,
    os_error_reason,
    set_parent_death_signal,
)


def enter_worker_namespaces() -> Namespaces:
    """Once, as the worker starts and before it forks anything. For an
    ordinary user: a new user namespace (the user mapped to itself) and a PID
    namespace of it, which this function's caller continues in as its PID 1,
    a child of the process that called it (that one waits for it, then
    exits)."""
    if not hasattr(os, "unshare"):
        return Namespaces(None, f"namespaces are a Linux feature; this is {platform.system()}")
    if os.geteuid() == 0:
        return Namespaces(ROOT_MECHANISM)
    uid, gid = os.geteuid(), os.getegid()
    try:
        os.unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS)
    except OSError as exc:
        return Namespaces(None, f"creating a user namespace failed: {os_error_reason(exc)}")
    try:
        map_user_to_itself(uid, gid)
        namespaces = Namespaces(USERNS_MECHANISM)
    except OSError as exc:
        # Without a mapping nothing can be mounted: the jobs would be neither confined nor able to run.
        namespaces = Namespaces(None, f"mapping the user into its namespace failed: {os_error_reason(exc)}")
    _continue_in_child()
    if namespaces.mechanism is not None:
        _own_proc()
    return namespaces


def _own_proc() -> None:
    """A /proc of the worker's PID namespace, so that the worker and what it
    loaded find themselves in it (UCX, under mpi4py, opens /proc/<its pid>/fd:
    the inherited /proc would show the machine's PID 1 there). Where the
    kernel refuses it, the inherited one stays."""
    try:
        mount(None, "/", None, MS_REC | MS_SLAVE)  # the machine's later mounts still reach the worker
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        pass


def _continue_in_child() -> None:
    """The caller goes on in a child, the first process of the PID namespace
    just made; this process waits for it, holding nothing of its pipes."""
    pid = os.fork()
    if pid == 0:
        set_parent_death_signal(signal.SIGKILL)
        return
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    _, status = os.waitpid(pid, 0)
    os._exit(0 if os.waitstatus_to_exitcode(status) == 0 else 1)


class JobPidNamespaces:
    """A new PID namespace for each job process the worker forks."""

    def __init__(self, namespaces: Namespaces) -> None:
        self.namespaces = namespaces
        self._own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC) if namespaces.mechanism else -1
        self._made = False

    def before_fork(self) -> Namespaces:
        """What the next child gets: PID 1 of a new PID namespace, or why not."""
        if self._own < 0:
            return self.namespaces
        try:
            os.unshare(CLONE_NEWPID)
        except OSError as exc:
            what = (
                "unshare as root" if self.namespaces.mechanism == ROOT_MECHANISM else "creating the job's PID namespace"
            )
            return Namespaces(None, f"{what} failed: {os_error_reason(exc)}")
        self._made = True
        return self.namespaces

    def after_fork(self) -> None:
        """Back to the worker's own PID namespace for its later children."""
        if self._made:
            os.setns(self._own, CLONE_NEWPID)
            self._made = False


def own_network(namespaces: Namespaces) -> bool:
    """Once, in the worker, after its implementation host has left: a network
    namespace of its own, with no interface up, which its jobs share one
    after another. Nothing of a job outlives its processes there (its sockets
    close with them; addresses, routes, filters and settings need a
    capability over the namespace, which no job has), so a new one per job
    would cost ~0.6 ms of CPU and give nothing more. False where it cannot be
    made: then each job makes its own."""
    if namespaces.mechanism is None:
        return False
    try:
        os.unshare(CLONE_NEWNET)
    except OSError:
        return False
    return True


def enter_job_namespaces(namespaces: Namespaces, new_network: bool) -> Namespaces:
    """In B, before anything of the job: a new IPC namespace (System V
    objects outlive their processes), a network namespace of its own unless
    the worker's is one (`own_network`), and a new session keyring (keys in
    the scorer's are readable by every process that possesses it)."""
    join_new_session_keyring()
    if namespaces.mechanism is None:
        return namespaces
    try:
        os.unshare(CLONE_NEWIPC | (CLONE_NEWNET if new_network else 0))
    except OSError as exc:
        return Namespaces(None, f"creating the job's network and IPC namespaces failed: {os_error_reason(exc)}")
    return namespaces

"""Confinement of a sandbox job, applied before any untrusted code runs.

The job process B, forked by the warm worker as PID 1 of a new PID
namespace (`job_namespaces`), enters its network and IPC namespaces, confines
itself in a mount namespace of its own (`confine`) and then runs the job.

Namespaces come from privilege when the scorer runs as root, and from an
unprivileged user namespace (the user mapped to itself) otherwise; both give
the same confinement:
- a private mount namespace in which every inherited mount is read-only, every
  hidden path (home, the parent's working directory, task and run
  directories, /tmp, /run) is covered by an empty read-only tmpfs, the Python
  installation is bound back read-only, and /tmp is a private size-limited
  scratch, the only writable place;
- private network (no interfaces), PID (every process of the job dies with
  it; /proc shows the job's processes only) and IPC namespaces, and a new
  session keyring;
- no capabilities left and no way to gain any (`no_new_privs`): the covering
  mounts cannot be removed;
- a root scorer's job runs as `nobody`; every job's process count is its own:
  RLIMIT_NPROC is set inside a user namespace of the job, where it counts the
  job's processes and threads only, not the user's other programs;
- resource limits (address space, CPU time, processes, file size, open
  files), a clean environment (whitelist) and a scratch working directory.

Where no namespace can be made, the level is "basic" (limits, environment and
scratch directory only) and `detail` says why; the parent refuses to run
untrusted code at that level unless the user accepted it.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import sys
import tempfile
from dataclasses import dataclass

from fembench_agents.scoring.sandbox.linux_calls import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    LINUX_CAPABILITY_VERSION_3,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    NOBODY,
    PR_CAP_AMBIENT,
    PR_CAP_AMBIENT_CLEAR_ALL,
    PR_CAPBSET_DROP,
    PR_GET_DUMPABLE,
    PR_SET_DUMPABLE,
    forbid_new_privileges,
    join_new_session_keyring,
    libc,
    make_inherited_mounts_read_only,
    map_user_to_itself,
    mount,
    os_error_reason,
    syscall,
    within,
)

ROOT_MECHANISM = "root"
USERNS_MECHANISM = "user namespace"


@dataclass(frozen=True)
class Namespaces:
    """What `enter_namespaces` achieved: `mechanism` is None when nothing
    could be unshared, and `detail` then says why."""

    mechanism: str | None
    detail: str = ""


def enter_namespaces() -> Namespaces:
    """Called in the keeper of a worker's implementation host
    (`implementation_host`), which forks the host: new network, PID and IPC
    namespaces, inside a user namespace that maps the user to itself unless
    it is root. The host's servers make their mount namespaces themselves
    (`confine`)."""
    if not hasattr(os, "unshare"):
        return Namespaces(None, f"namespaces are a Linux feature; this is {platform.system()}")
    flags = CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC
    if os.geteuid() == 0:
        try:
            os.unshare(flags)
            return Namespaces(ROOT_MECHANISM)
        except OSError as exc:
            return Namespaces(None, f"unshare as root failed: {os_error_reason(exc)}")
    uid, gid = os.geteuid(), os.getegid()
    try:
        os.unshare(flags | CLONE_NEWUSER)
    except OSError as exc:
        return Namespaces(None, f"creating a user namespace failed: {os_error_reason(exc)}")
    try:
        map_user_to_itself(uid, gid)
    except OSError as exc:
        # The namespaces exist but without a mapping nothing can be mounted:
        # the job would be neither confined nor able to run. Say so.
        return Namespaces(None, f"mapping the user into its namespace failed: {os_error_reason(exc)}")
    return Namespaces(USERNS_MECHANISM)


def python_paths() -> list[str]:
    """Directories the interpreter needs to keep importing after confinement."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths |= {p for p in sys.path if p and os.path.isdir(p)}
    return sorted({os.path.realpath(p) for p in paths})


def _mount_proc(private_pid_view: bool) -> None:
    """A /proc of the job's PID namespace. Where the kernel refuses a new one
    (a container that masks parts of /proc), a job running as the user itself
    must not see the inherited one, with every process of the user in it: it
    gets an empty /proc instead. A job running as nobody keeps the inherited
    view, where it can read nothing of the user's processes."""
    try:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        if private_pid_view:
            mount("tmpfs", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "size=4k")


SCRATCH = "/tmp/scratch"


def filesystem_plan(hidden: list[str], exposed: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What `lay_out_filesystem` covers (the outermost existing hidden
    directories: a task directory inside a hidden checkout adds nothing) and
    what it binds back. An exposure that contains a hidden path (a project
    root on sys.path) is not brought back: everything needed from it was
    imported before fork."""
    found = sorted({os.path.realpath(h) for h in hidden if os.path.isdir(h)}, key=len)
    tops = tuple(h for i, h in enumerate(found) if not any(within(h, o) for o in found[:i]))
    return tops, tuple(p for p in exposed if os.path.isdir(p) and not any(within(h, p) for h in found))


def lay_out_filesystem(hidden: list[str], exposed: list[str]) -> None:
    """In a new mount namespace, what every job of a worker sees alike: every
    inherited mount read-only, the hidden paths covered by empty read-only
    tmpfs, the exposed paths bound back read-only, and the mount point of the
    job's scratch. A worker lays it out once per set of hidden paths
    (`mount_layouts`); a job copies it and adds its own /proc and scratch
    (`job_mounts`)."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    tops, kept = filesystem_plan(hidden, exposed)
    fds = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in kept}
    make_inherited_mounts_read_only()
    for h in tops:
        mount("tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m")
    for p, fd in sorted(fds.items()):
        if any(within(p, h) for h in tops):
            os.makedirs(p, exist_ok=True)
            mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC)
            keep = os.statvfs(p).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
            mount(None, p, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | keep)
        os.close(fd)
    os.makedirs(SCRATCH, exist_ok=True)
    for h in tops:  # the covers hold nothing, and nothing may be left in them
        mount(None, h, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def job_mounts(scratch_mb: int, as_user: bool) -> str:
    """On a laid-out filesystem, in the job's own mount namespace: a /proc of
    the job's PID namespace and the one writable place, of its own size."""
    _mount_proc(private_pid_view=as_user)
    mount("tmpfs", SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=700,size={scratch_mb}m")
    return SCRATCH


def _own_process_count() -> bool:
    """Run the rest of the job in a user namespace of its own, so that
    RLIMIT_NPROC counts the job's processes and threads, not every process of
    the same uid on the machine (the kernel counts per user namespace)."""
    uid, gid = os.geteuid(), os.getegid()
    # Dropping from root made the process undumpable, which makes its /proc
    # files root's: it could not write its own maps.
    dumpable = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        os.unshare(CLONE_NEWUSER)
        map_user_to_itself(uid, gid)
        return True
    except OSError:
        return False
    finally:
        libc.prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0)


def enter_pair_namespaces(scratch: str, scratch_mb: int) -> bool:
    """In the process of one (test, implementation) pair of a tests job
    (`pairs`), before anything untrusted: new user, mount and IPC namespaces
    (a user namespace needs no privilege, and the other two are its own), a
    fresh scratch mounted over the job's, a new session keyring, and no
    capability left. The pair's files, IPC objects and keys (its user keyring
    is its user namespace's) go with it. False where the kernel refuses a user
    namespace to this process (then the job's coordinator empties what a pair
    can leave behind, `pairs._clear_leftovers`)."""
    uid, gid = os.geteuid(), os.getegid()
    dumpable = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # so that it may write its own maps (see _own_process_count)
    try:
        try:
            os.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC)
        except OSError:
            return False
        map_user_to_itself(uid, gid)
    finally:
        libc.prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0)
    mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=700,size={scratch_mb}m")
    os.chdir(scratch)
    join_new_session_keyring()
    _drop_capabilities()
    return True


def _drop_capabilities() -> None:
    """A process that made a user namespace holds every capability in it;
    none may reach untrusted code (with CAP_SYS_ADMIN it could unmount the
    covers). Bounding set first (needs CAP_SETPCAP), then ambient, then the rest."""
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            break  # past the last capability this kernel knows
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if syscall("capset", ctypes.byref(header), ctypes.byref(data)) != 0:
        raise OSError(ctypes.get_errno(), "capset: cannot drop capabilities")


def _drop_identity(scratch: str) -> None:
    if os.geteuid() != 0:
        return
    os.chown(scratch, NOBODY, NOBODY)
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _limit_resources(vm_kb: int, memory_mb: int, cpu_seconds: int, max_processes: int) -> None:
    address_space = vm_kb * 1024 + memory_mb * 1024 * 1024
    for limit, value in (
        (resource.RLIMIT_AS, address_space),
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_NPROC, max_processes),
        (resource.RLIMIT_FSIZE, 64 * 1024 * 1024),
        (resource.RLIMIT_NOFILE, 256),
        (resource.RLIMIT_CORE, 0),
    ):
        hard = value + 1 if limit == resource.RLIMIT_CPU else value
        # Never above what the scorer itself was given (`ulimit -t`, a batch
        # scheduler): raising a hard limit is refused, and the job would die.
        _, inherited = resource.getrlimit(limit)
        if inherited != resource.RLIM_INFINITY:
            value, hard = min(value, inherited), min(hard, inherited)
        resource.setrlimit(limit, (value, hard))


def _virtual_memory_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1])
    return 0


def confine(
    policy: dict,
    namespaces: Namespaces,
    hidden: list[str],
    exposed: list[str],
    env: dict[str, str],
    fallback_scratch: str,
    layout: int = -1,
) -> tuple[str, str]:
    """Confine the current process (B); returns the isolation level achieved
    ("namespaced" or "basic") and how, or why not. `layout`: a mount
    namespace laid out for these hidden paths (`lay_out_filesystem`), which
    the process copies instead of laying out its own."""
    vm_kb = _virtual_memory_kb()  # before /proc is replaced
    level, detail = "basic", namespaces.detail
    scratch = None
    if namespaces.mechanism is not None:
        try:
            if layout >= 0:
                os.setns(layout, CLONE_NEWNS)
            os.unshare(CLONE_NEWNS)
            if layout < 0:
                lay_out_filesystem(hidden + list(policy["hidden_paths"]), exposed)
            scratch = job_mounts(policy["scratch_mb"], as_user=namespaces.mechanism == USERNS_MECHANISM)
            level, detail = "namespaced", namespaces.mechanism
        except OSError as exc:
            # Nothing of the job has run yet; a partly hidden filesystem is
            # reported as basic, and the parent refuses it unless accepted.
            scratch, detail = None, f"hiding the filesystem failed: {exc}"
    if layout >= 0:
        os.close(layout)  # entered or not, nothing of the job may hold it
    if scratch is None:
        scratch = fallback_scratch
    _drop_identity(scratch)
    if level == "namespaced" and not _own_process_count():
        who = "uid nobody" if namespaces.mechanism == ROOT_MECHANISM else "the worker's user namespace"
        detail += f"; the process limit and the user keyring are those of {who}"
    if namespaces.mechanism is not None:
        _drop_capabilities()
    _limit_resources(vm_kb, policy["memory_mb"], policy["cpu_seconds"], policy["max_processes"])
    forbid_new_privileges()
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update(env)
    os.environ["HOME"] = scratch
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = scratch
    return level, detail

"""Confinement of a sandbox child, applied before any untrusted code runs.

Layers, strongest first:
- namespaces (when the kernel and privileges allow): a private mount, network,
  PID and IPC namespace; every hidden path (home, the parent's working directory,
  task and run directories, /tmp) is covered by an empty tmpfs, the Python
  installation is bound back read-only, /tmp becomes a private size-limited
  scratch, the network has no interfaces, and every process the job spawns and
  every System V IPC object it creates (shared memory a later job could read)
  dies with it;
- identity: a root worker drops to `nobody`, so files of the project are
  read-only and the process-count limit applies;
- resource limits: address space, CPU time, processes, file size, open files;
- a clean environment (whitelist) and a scratch working directory.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys
import tempfile

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000
CLONE_NEWIPC = 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
NOBODY = 65534

_libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    if _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def set_parent_death_signal(sig: int) -> None:
    _libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def unshare_namespaces() -> bool:
    """Called in the trusted intermediate process; True when the job will run
    in its own mount, network, PID and IPC namespaces."""
    try:
        os.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC)
        return True
    except (OSError, AttributeError):
        return False


def python_paths() -> list[str]:
    """Directories the interpreter needs to keep importing after confinement."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths |= {p for p in sys.path if p and os.path.isdir(p)}
    return sorted({os.path.realpath(p) for p in paths})


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _hide_filesystem(hidden: list[str], exposed: list[str], scratch_mb: int) -> str:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:
        pass  # keep the inherited /proc; the job runs as nobody and cannot read others' environ
    hidden = sorted({os.path.realpath(h) for h in hidden if os.path.isdir(h)}, key=len)
    tops = [h for i, h in enumerate(hidden) if not any(_within(h, o) for o in hidden[:i])]
    # An exposure that contains a hidden path (a project root on sys.path) is
    # not brought back: everything needed from it was imported before fork.
    exposed = [p for p in exposed if os.path.isdir(p) and not any(_within(h, p) for h in hidden)]
    fds = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in exposed}
    for h in tops:
        size = f"{scratch_mb}m" if h == "/tmp" else "1m"
        _mount("tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=755,size={size}")
    for p, fd in sorted(fds.items()):
        if any(_within(p, h) for h in tops):
            os.makedirs(p, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC)
            _mount(None, p, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)
        os.close(fd)
    scratch = "/tmp/scratch"
    os.makedirs(scratch, exist_ok=True)
    return scratch


def _drop_identity(scratch: str) -> None:
    if os.geteuid() != 0:
        return
    os.chown(scratch, NOBODY, NOBODY)
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _limit_resources(memory_mb: int, cpu_seconds: int, max_processes: int) -> None:
    vm_kb = 0
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                vm_kb = int(line.split()[1])
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
        resource.setrlimit(limit, (value, hard))


def confine(policy: dict, namespaced: bool, hidden: list[str], exposed: list[str],
            env: dict[str, str], fallback_scratch: str) -> str:
    """Confine the current process; returns the isolation level achieved."""
    level = "basic"
    scratch = None
    if namespaced:
        try:
            scratch = _hide_filesystem(hidden + list(policy["hidden_paths"]), exposed, policy["scratch_mb"])
            level = "namespaced"
        except OSError:
            scratch = None
    if scratch is None:
        scratch = fallback_scratch
    _limit_resources(policy["memory_mb"], policy["cpu_seconds"], policy["max_processes"])
    _drop_identity(scratch)
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update(env)
    os.environ["HOME"] = scratch
    os.environ["TMPDIR"] = scratch
    tempfile.tempdir = scratch
    return level


def set_dumpable(dumpable: bool) -> None:
    """PR_SET_DUMPABLE: an undumpable process cannot be ptraced, nor its
    /proc/<pid>/mem read, by another process of the same uid."""
    _libc.prctl(PR_SET_DUMPABLE, 1 if dumpable else 0, 0, 0, 0)

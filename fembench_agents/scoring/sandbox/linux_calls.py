"""The Linux calls a job's confinement is made of, as thin wrappers: mount, prctl (no new
privileges, the parent-death signal, dumpability), the session keyring, user mapping, huge-page
advice, and the syscalls without a libc wrapper everywhere. What they are combined into, and in
which order, is confine.py's. Standard library only: the agents' confined shell
(agents/coding/confined_shell.py) loads this file by path, without the package."""

from __future__ import annotations

import ctypes
import errno
import os
import platform

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE, MS_SLAVE = 32, 4096, 16384, 1 << 18, 1 << 19
PR_SET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 3, 4, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
# Syscalls without a libc wrapper everywhere (glibc < 2.36 has no mount_setattr).
SYSCALLS = {
    "x86_64": {"mount_setattr": 442, "keyctl": 250, "capset": 126},
    "aarch64": {"mount_setattr": 442, "keyctl": 219, "capset": 91},
}
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1
KEYCTL_JOIN_SESSION_KEYRING = 1
NOBODY = 65534  # the kernel's overflow user and group
LINUX_CAPABILITY_VERSION_3 = 0x20080522

libc = ctypes.CDLL(None, use_errno=True)


def syscall(name: str, *args: object) -> int:
    number = SYSCALLS.get(platform.machine(), {}).get(name)
    if number is None:
        ctypes.set_errno(errno.ENOSYS)
        return -1
    return int(libc.syscall(number, *args))


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    if libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def make_inherited_mounts_read_only() -> None:
    """Every mount the job inherits becomes read-only (in its namespace only):
    whatever the user could write outside the hidden paths, the job cannot."""

    class MountAttr(ctypes.Structure):
        _fields_ = [
            ("attr_set", ctypes.c_uint64),
            ("attr_clr", ctypes.c_uint64),
            ("propagation", ctypes.c_uint64),
            ("userns_fd", ctypes.c_uint64),
        ]

    attr = MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    if syscall("mount_setattr", AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)) == 0:
        return
    # Kernels before 5.12: one remount per mount point, keeping the flags
    # that a user namespace may not clear.
    with open("/proc/self/mountinfo") as fh:
        points = [line.split()[4].encode().decode("unicode_escape") for line in fh]
    for point in points:
        try:
            keep = os.statvfs(point).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
            mount(None, point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | keep)
        except OSError:
            continue


def write_file(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def map_user_to_itself(uid: int, gid: int) -> None:
    """In a user namespace just made by this process: the user (and its group)
    as itself, and no way to drop a supplementary group to escape a denial."""
    write_file("/proc/self/setgroups", "deny")
    write_file("/proc/self/uid_map", f"{uid} {uid} 1")
    write_file("/proc/self/gid_map", f"{gid} {gid} 1")


def forbid_new_privileges() -> None:
    """No exec can give back a privilege (setuid binaries, file capabilities)."""
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def set_parent_death_signal(sig: int) -> None:
    libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)


def os_error_reason(exc: OSError) -> str:
    name = errno.errorcode.get(exc.errno or 0, "error")
    return f"{name} ({exc.strerror or exc})"


def join_new_session_keyring() -> None:
    """Keys in the scorer's session keyring (tokens some tools keep there) are
    readable by every process that possesses the keyring: the job gets its own."""
    syscall("keyctl", KEYCTL_JOIN_SESSION_KEYRING, None)


MADV_HUGEPAGE, MADV_COLLAPSE = 14, 25
HUGE_PAGE_BYTES = 1 << 21


def use_huge_pages() -> None:
    """Back the writable anonymous memory (heap and arenas) with transparent
    huge pages where it spans whole 2 MB pages. Advice only: a kernel without
    them (or before 6.1, without MADV_COLLAPSE) leaves everything as it was."""
    with open("/proc/self/maps") as fh:
        regions = [line.split() for line in fh]
    for parts in regions:
        if not parts[1].startswith("rw") or (len(parts) > 5 and parts[5] != "[heap]"):
            continue
        start, end = (int(v, 16) for v in parts[0].split("-"))
        start, end = (start + HUGE_PAGE_BYTES - 1) & ~(HUGE_PAGE_BYTES - 1), end & ~(HUGE_PAGE_BYTES - 1)
        if end > start:
            for advice in (MADV_HUGEPAGE, MADV_COLLAPSE):
                libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), advice)


def set_dumpable(dumpable: bool) -> None:
    """PR_SET_DUMPABLE: an undumpable process cannot be ptraced, nor its
    /proc/<pid>/mem read, by another process of the same uid."""
    libc.prctl(PR_SET_DUMPABLE, 1 if dumpable else 0, 0, 0, 0)

"""Run a command as an ordinary (non-root) user, from a root test process.

    python as_user.py --uid UID [--expose PATH]... [--no-user-namespaces] -- COMMAND...

The command runs with uid and gid UID and no supplementary groups, in a
private mount namespace where every PATH given is reachable: a directory on
the way that other users may not enter (root's home, where pyenv keeps the
interpreter) is covered by a world-enterable tmpfs with only the needed entry
bound back. Nothing else changes, so the scorer meets the machine as an
ordinary user would. With --no-user-namespaces the command runs where the
kernel refuses to create user namespaces (user.max_user_namespaces = 0 in a
user namespace of its own), as on a machine that forbids them.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
_libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    if _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def _closed_ancestors(paths: list[str]) -> dict[str, set[str]]:
    """For each path, the highest directory on its way that others cannot
    enter, with the entry below it that leads to the path."""
    found: dict[str, set[str]] = {}
    for path in paths:
        parts = os.path.realpath(path).strip("/").split("/")
        current = "/"
        for i, part in enumerate(parts[:-1]):
            current = os.path.join(current, part)
            if not os.stat(current).st_mode & 0o001:
                found.setdefault(current, set()).add(parts[i + 1])
                break
    return found


def expose(paths: list[str]) -> None:
    for _ in range(8):
        closed = _closed_ancestors(paths)
        if not closed:
            return
        for directory, entries in closed.items():
            fds = {e: os.open(os.path.join(directory, e), os.O_PATH) for e in entries}
            _mount("tmpfs", directory, "tmpfs", 0, "mode=755,size=1m")
            for entry, fd in fds.items():
                target = os.path.join(directory, entry)
                if os.path.isdir(f"/proc/self/fd/{fd}"):
                    os.mkdir(target)
                else:
                    open(target, "w").close()
                _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
                os.close(fd)
    raise RuntimeError(f"could not make {paths} reachable")


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def without_user_namespaces(uid: int) -> None:
    """Enter a user namespace (root and UID mapped to themselves) whose limit on
    nested user namespaces is zero. Its maps must be written from outside."""
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    helper = os.fork()
    if helper == 0:
        os.close(ready_w)
        os.close(mapped_r)
        os.read(ready_r, 1)
        target = os.getppid()
        _write(f"/proc/{target}/uid_map", f"0 0 1\n{uid} {uid} 1\n")
        _write(f"/proc/{target}/gid_map", f"0 0 1\n{uid} {uid} 1\n")
        os.write(mapped_w, b"x")
        os._exit(0)
    os.close(ready_r)
    os.close(mapped_w)
    os.unshare(CLONE_NEWUSER)
    os.write(ready_w, b"x")
    os.read(mapped_r, 1)
    os.waitpid(helper, 0)
    _write("/proc/sys/user/max_user_namespaces", "0")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--uid", type=int, required=True)
    parser.add_argument("--expose", action="append", default=[])
    parser.add_argument("--no-user-namespaces", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    os.unshare(CLONE_NEWNS)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    expose(args.expose)
    if args.no_user_namespaces:
        without_user_namespaces(args.uid)
    os.setgroups([])
    os.setgid(args.uid)
    os.setuid(args.uid)
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())

"""The confined shell of the agent's terminal. Run by path as a script (stdlib
only, so it starts fast; of the project it loads only the sandbox's
`linux_calls.py`, by path, for the namespace and mount helpers):

    python -I -S confine.py CONFIG.json -i

It starts the shell in new mount, network and PID namespaces, where every
inherited mount is read-only, every hidden path (the repository, task and run directories, home directories,
/tmp) is covered by an empty tmpfs; the Python installation is bound back
read-only and the workspace read-write at a fixed path (`virtual_root`,
inside the private /tmp). As root it then drops to `nobody` (no capabilities,
so the covering mounts cannot be removed); otherwise it runs in a user
namespace and enters a second one, in which the mounts are locked. The
network has no interfaces, /proc shows only the shell's own processes, the
environment is a whitelist, and the shell dies with the terminal.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import signal
import sys
from types import ModuleType


def _sandbox_confinement() -> ModuleType:
    """The sandbox's namespace and mount helpers (stdlib only), loaded by
    path: this script runs with -I -S and imports nothing of the package."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(package, "scoring", "sandbox", "linux_calls.py")
    spec = importlib.util.spec_from_file_location("fembench_sandbox_linux_calls", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


sc = _sandbox_confinement()
_mount, _within, _write = sc.mount, sc.within, sc.write_file
CLONE_NEWNS, CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWUSER = (
    sc.CLONE_NEWNS,
    sc.CLONE_NEWNET,
    sc.CLONE_NEWPID,
    sc.CLONE_NEWUSER,
)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = sc.MS_RDONLY, sc.MS_NOSUID, sc.MS_NODEV, sc.MS_NOEXEC
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = sc.MS_REMOUNT, sc.MS_BIND, sc.MS_REC, sc.MS_PRIVATE
NOBODY = sc.NOBODY


def enter_namespaces(as_root: bool) -> None:
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID
    if as_root:
        os.unshare(flags)
        return
    uid, gid = os.getuid(), os.getgid()
    os.unshare(flags | CLONE_NEWUSER)
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"0 {uid} 1")
    _write("/proc/self/gid_map", f"0 {gid} 1")


def hide_filesystem(config: dict) -> None:
    """In the new mount namespace: cover hidden paths, bind back what the shell needs."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    hidden = sorted({os.path.realpath(h) for h in config["hidden"] if os.path.isdir(h)}, key=len)
    tops = [h for i, h in enumerate(hidden) if not any(_within(h, o) for o in hidden[:i])]
    exposed = [p for p in config["exposed"] if os.path.isdir(p) and not any(_within(h, p) for h in tops)]
    fds = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in exposed}
    workspace_fd = os.open(config["workspace"], os.O_PATH | os.O_DIRECTORY)
    sc.make_inherited_mounts_read_only()  # the user's files elsewhere too: the shell writes only its workspace
    for h in tops:
        size = "64m" if h == "/tmp" else "1m"
        _mount("tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=755,size={size}")
    for p, fd in sorted(fds.items()):
        if any(_within(p, h) for h in tops):
            os.makedirs(p, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", p, None, MS_BIND | MS_REC)
            _mount(None, p, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
        os.close(fd)
    target = config["virtual_root"]
    os.makedirs(target, exist_ok=True)
    _mount(f"/proc/self/fd/{workspace_fd}", target, None, MS_BIND)
    _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV)
    os.close(workspace_fd)
    os.chmod("/tmp", 0o1777)
    _write("/tmp/.inputrc", "set enable-bracketed-paste off\n")  # no escape codes around command output


def drop_privileges(as_root: bool) -> None:
    if as_root:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    else:  # a nested user namespace: the mounts above become locked
        os.unshare(CLONE_NEWUSER | CLONE_NEWNS)
    sc.forbid_new_privileges()
    for limit, value in (
        (resource.RLIMIT_NPROC, 512),
        (resource.RLIMIT_FSIZE, 256 * 1024 * 1024),
        (resource.RLIMIT_CORE, 0),
    ):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


def shell_environment(config: dict) -> dict[str, str]:
    env = {k: os.environ[k] for k in config["passthrough_env"] if k in os.environ}
    env.update(config["env"])
    return env


def wide_terminal() -> None:
    """A wide window, so readline never redraws long command lines with cursor codes."""
    if os.isatty(0):
        import fcntl
        import struct
        import termios

        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 200, 4000, 0, 0))


def init_process(shell_pid: int) -> int:
    """PID 1 of the namespace: reap everything until the shell exits."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 1
        if pid == shell_pid:
            return os.waitstatus_to_exitcode(status) & 0xFF


def main(argv: list[str]) -> int:
    with open(argv[1]) as fh:
        config = json.load(fh)
    as_root = os.geteuid() == 0
    try:
        enter_namespaces(as_root)
    except OSError as exc:
        print(f"fembench: cannot confine the terminal (namespaces unavailable: {exc})", file=sys.stderr)
        return 126
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the shell's business
    child = os.fork()
    if child:
        _, status = os.waitpid(child, 0)
        return os.waitstatus_to_exitcode(status) & 0xFF
    try:  # PID 1 of the new namespace
        sc.set_parent_death_signal(signal.SIGKILL)
        hide_filesystem(config)
        drop_privileges(as_root)
        os.chdir(config["virtual_root"])
        env = shell_environment(config)
        wide_terminal()
        shell = os.fork()
        if shell == 0:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execve(config["shell"], [config["shell"], *argv[2:]], env)
        os._exit(init_process(shell))
    except BaseException as exc:  # noqa: BLE001 - report and die; never run unconfined
        print(f"fembench: cannot confine the terminal: {exc}", file=sys.stderr)
        os._exit(126)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

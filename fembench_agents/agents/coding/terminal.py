"""What the agent's terminal may see, and the launcher that confines it.

The terminal's shell is started by `confine.py` in its own mount, network and
PID namespaces (see there). Hidden: /tmp (other workspaces, run directories
made there), /var/tmp, /dev/shm, home directories, the repository (tasks,
cases and their evaluator-only references), the task and run directories of
the episode and the current directory. Bound back read-only: the Python
installation (so `python` is the project's interpreter with numpy and scipy);
read-write: the workspace, at `VIRTUAL_ROOT`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from fembench_agents.agents.coding.workspace import VIRTUAL_ROOT, Workspace
from fembench_agents.scoring.error_text import shortened

REPO_ROOT = Path(__file__).resolve().parents[3]
CONFINE_SCRIPT = Path(__file__).resolve().parent / "confined_shell.py"
ALWAYS_HIDDEN = ("/tmp", "/var/tmp", "/dev/shm", "/root", "/home", "/run/user")
# Never covered, whatever a caller asks: the shell needs its tools.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc")
PASSTHROUGH_ENV = (
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "PS1",
    "PS2",
    "TERM",
    "PAGER",
    "GIT_PAGER",
    "PROMPT_COMMAND",
)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def python_paths() -> list[str]:
    """The interpreter's installation: prefixes and the directories on sys.path
    that hold installed packages (never the project's own source tree)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths |= {p for p in sys.path if p and os.path.isdir(p) and ("site-packages" in p or "lib/python" in p)}
    real = {os.path.realpath(p) for p in paths}
    real.add(os.path.dirname(os.path.realpath(sys.executable)))
    return sorted(real)


def hidden_paths(extra: Iterable[str | os.PathLike[str]] = ()) -> list[str]:
    wanted = [*ALWAYS_HIDDEN, str(Path.home()), str(REPO_ROOT), os.getcwd(), *map(str, extra)]
    hidden = []
    for p in wanted:
        real = os.path.realpath(p)
        if real == "/" or any(_within(s, real) for s in SYSTEM_DIRS):
            continue  # covering it would take the shell's own tools away
        hidden.append(real)
    return sorted(set(hidden))


def shell_env(python_bin: str) -> dict[str, str]:
    return {
        "PATH": f"{python_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": VIRTUAL_ROOT,
        "TMPDIR": "/tmp",
        "PWD": VIRTUAL_ROOT,
        "INPUTRC": "/tmp/.inputrc",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def write_launcher(ws: Workspace, extra_hidden: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """An executable in the workspace's control directory (hidden from the
    shell) that starts a confined bash; the terminal tool's `shell_path`."""
    python_bin = str(Path(sys.prefix) / "bin")
    config = {
        "hidden": hidden_paths([*extra_hidden, ws.root]),
        "exposed": python_paths(),
        "workspace": str(ws.dir),
        "virtual_root": VIRTUAL_ROOT,
        "shell": "/bin/bash",
        "passthrough_env": list(PASSTHROUGH_ENV),
        "env": shell_env(python_bin),
    }
    config_path = ws.control / "confine.json"
    config_path.write_text(json.dumps(config, indent=1))
    launcher = ws.control / "confined-bash"
    command = [sys.executable, "-I", "-S", str(CONFINE_SCRIPT), str(config_path)]
    launcher.write_text(f'#!/bin/sh\nexec {shlex.join(command)} "$@"\n')
    launcher.chmod(0o700)
    return launcher


class ConfinementUnavailable(RuntimeError):
    """The terminal cannot be confined here; the agent refuses to run unconfined."""


_CHECKED: list[bool] = []


def check_launcher(launcher: Path) -> None:
    """Start the confined shell once per process and see that it really is
    confined (runs in the workspace, cannot see the repository)."""
    if _CHECKED:
        return
    probe = f'test "$PWD" = {VIRTUAL_ROOT} && test ! -e {shlex.quote(str(REPO_ROOT / "fembench_agents"))}'
    done = subprocess.run(
        [str(launcher), "-c", probe], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        raise ConfinementUnavailable(
            "the openhands agent cannot confine its terminal on this machine (it needs Linux mount, network "
            f"and PID namespaces: root, or unprivileged user namespaces): {shortened(done.stderr.strip(), 500)}"
        )
    _CHECKED.append(True)

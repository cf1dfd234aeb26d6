"""What isolation this machine gives generated code, why, and what to do when
it is weaker than namespaced.

"namespaced" is the only level at which untrusted code runs by default (see
`confine`). At "basic" a job runs with the scorer's own identity, files,
network and processes, limited only by rlimits and a clean environment: the
sandbox refuses it unless the user accepts it explicitly, and that acceptance
travels with the run (manifest, report, score table).
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

NAMESPACED = "namespaced"
BASIC = "basic"
ACCEPT_OPTION = "--allow-weak-isolation"


@dataclass(frozen=True)
class IsolationReport:
    """The isolation a sandbox achieved: `detail` says how ("root", "user
    namespace") or, below namespaced, why not. Recorded in run manifests.
    A dataclass, not a pydantic model: the sandbox's workers import this
    module, and nothing a generated test can walk into should come with them."""

    level: str
    detail: str = ""
    accepted_weak: bool = False

    @property
    def confined(self) -> bool:
        return self.level == NAMESPACED

    def summary(self) -> str:
        if self.confined:
            return f"isolation: {NAMESPACED} ({self.detail})"
        accepted = f"; accepted with {ACCEPT_OPTION}" if self.accepted_weak else ""
        return (
            f"isolation: {self.level}{accepted}: generated code ran with this user's files, "
            f"network and processes ({self.detail})"
        )


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read().strip()
    except OSError:
        return None


def remedies() -> list[str]:
    """What would give this machine namespaced isolation, most specific first."""
    if platform.system() != "Linux":
        return [
            "run fembench-agents inside a Linux container or virtual machine (namespaces are a Linux "
            f"feature; this is {platform.system()})"
        ]
    found = []
    if _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        found.append(
            "AppArmor forbids unprivileged user namespaces here (Ubuntu 23.10 and later): allow them "
            "for this Python with an AppArmor profile that grants `userns,` (README: 'Isolation'), "
            "or system-wide with `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`"
        )
    if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        found.append(
            "the kernel forbids unprivileged user namespaces: `sudo sysctl kernel.unprivileged_userns_clone=1`"
        )
    if _read("/proc/sys/user/max_user_namespaces") == "0":
        found.append("user namespaces are switched off: `sudo sysctl user.max_user_namespaces=15000`")
    found.append(
        "or run fembench-agents inside a container (Docker, Podman, Apptainer) that permits "
        "user namespaces, or as root in a container of its own"
    )
    found.append(
        f"or accept weaker isolation for this command with {ACCEPT_OPTION} (recorded in the run "
        "and printed in every report built from it)"
    )
    return found


class WeakIsolationRefused(RuntimeError):
    """Generated code would run with less than namespaced isolation and the
    user has not accepted that."""

    def __init__(self, report: IsolationReport) -> None:
        self.report = report
        lines = [
            f"refusing to run generated code: this machine gives it only '{report.level}' isolation "
            f"({report.detail or 'no namespaces'}), so it would run with {_who()}'s files, network "
            "and processes.",
            "To fix:",
        ]
        lines += [f"  - {r}" for r in remedies()]
        lines.append("Check with `fembench-agents sandbox check`.")
        super().__init__("\n".join(lines))


def _who() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return f"uid {os.geteuid()}"

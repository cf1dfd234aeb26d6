"""The filesystem a worker's jobs see, laid out once per worker for each set
of hidden paths instead of in every job.

A fork of the worker makes a mount namespace and lays it out
(`confine.lay_out_filesystem`: everything read-only, the hidden paths
covered, the Python installation bound back); the worker keeps the namespace
by a descriptor and the fork exits. Each job's process enters it and copies
it at once (`confine.confine`), then mounts its own /proc and scratch in the
copy: what a job mounts or writes stays in its copy, the layout holds nothing
writable, and no job holds the descriptor past its confinement. Where a
layout cannot be made, a job lays out its own, as before.
"""

from __future__ import annotations

import os
import signal
from collections import OrderedDict

from fembench_agents.scoring.sandbox.confine import Namespaces, filesystem_plan, lay_out_filesystem
from fembench_agents.scoring.sandbox.linux_calls import CLONE_NEWNS

MAX_LAYOUTS = 4  # a scorer's jobs share one set of hidden paths; a few more cost a descriptor each


class MountLayouts:
    def __init__(self, namespaces: Namespaces, exposed: list[str]) -> None:
        self._usable = namespaces.mechanism is not None
        self._exposed = exposed
        self._made: OrderedDict[tuple[tuple[str, ...], tuple[str, ...]], int] = OrderedDict()

    def for_hidden(self, hidden: list[str]) -> int:
        """A descriptor of the mount namespace laid out for `hidden`, or -1."""
        if not self._usable:
            return -1
        key = filesystem_plan(hidden, self._exposed)  # the paths a job gives often differ, not what they cover
        if key in self._made:
            self._made.move_to_end(key)
            return self._made[key]
        fd = self._lay_out(hidden)
        if fd >= 0:
            self._made[key] = fd
            while len(self._made) > MAX_LAYOUTS:
                os.close(self._made.popitem(last=False)[1])
        return fd

    def _lay_out(self, hidden: list[str]) -> int:
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(ready_r)
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1):  # the worker's request and reply pipes
                    os.dup2(devnull, fd)
                os.unshare(CLONE_NEWNS)
                lay_out_filesystem(hidden, self._exposed)
                os.write(ready_w, b"1")
                signal.pause()  # until the worker holds the namespace and ends this process
                code = 0
            finally:
                os._exit(code)
        os.close(ready_w)
        fd = -1
        try:
            if os.read(ready_r, 1) == b"1":
                fd = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            fd = -1
        finally:
            os.close(ready_r)
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        return fd

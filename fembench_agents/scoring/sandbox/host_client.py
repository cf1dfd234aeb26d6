"""A tests job's connection to its worker's implementation host (`implementation_host`): the
coordinator asks it, pair by pair, for a session with a server of the pair's implementation."""

from __future__ import annotations

import json
import os
import socket
from typing import Any

from fembench_agents.scoring.sandbox.implementation_host import SERVER_POLICY
from fembench_agents.scoring.sandbox.implementation_server import CONTROL_BYTES


class HostClient:
    """B's connection to its worker's host, made once per job."""

    def __init__(self, host_fd: int, hidden: list[str], policy: dict[str, Any]) -> None:
        self._conn: socket.socket | None = None
        self._cpu_seconds = int(policy["cpu_seconds"])
        try:
            host = socket.socket(fileno=host_fd)
        except OSError:  # not a socket (any more): no host
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            # what confines a server (a job's time limits are each pair's, sent with it)
            confinement = {k: policy[k] for k in SERVER_POLICY}
            settings = {"hidden": hidden, "policy": confinement}
            socket.send_fds(host, [json.dumps(settings).encode()], [theirs.fileno()])
            self._conn = ours
        except OSError:
            ours.close()
            self._conn = None
        finally:
            theirs.close()
            host.close()

    def session(self, key: str, implementation_fd: int, stderr_fd: int, wait_seconds: float) -> int | None:
        """A socket to a server of the implementation for one pair, or None (then the pair runs it itself)."""
        if self._conn is None or not key or implementation_fd < 0:
            return None
        try:
            request = json.dumps({"key": key, "cpu_seconds": self._cpu_seconds}).encode()
            socket.send_fds(self._conn, [request], [implementation_fd, stderr_fd])
            self._conn.settimeout(wait_seconds)
            message, fds, _, _ = socket.recv_fds(self._conn, CONTROL_BYTES, 1)
        except OSError:
            message, fds = b"", []
        if not message or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            self.close()  # no host, or a host that cannot serve: every later pair runs as before
            return None
        return fds[0]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

"""The host of a worker's implementation servers: the task's own code that
generated tests are run against (a reference, an expected failure), built
once and served pair after pair instead of in a fresh process per pair.

Untrusted code never runs here: a test still runs in a fresh process of its
own for each (test, implementation) pair (`pairs`), and reaches the server
only through the socket the host hands its pair, as plain data (`proxy`).

Processes: the warm worker forks, before its first job, a keeper that enters
new network, PID and IPC namespaces (inside a user namespace unless root) and
forks the host, PID 1 there. The host holds one server per (implementation,
confinement), started on first use: a fork of the host that confines itself
as a job process does (`confine.confine`: hidden files, scratch, limits, no
capabilities, `nobody` for root) and builds its implementation from a file
only it reads (`implementation_server.serve_pairs`). Nothing of a job reaches
the host but keys, confinements and descriptors; it never reads an
implementation.

A tests job's coordinator B connects once (`connect`), then asks for a
session per pair: the host gives the server one end of a new socket pair and
the pair's stderr, B the other end for the pair's test process. The host keeps
a copy of the server's end, so that when a server ends during a pair the test
finds, after whatever the server sent, one last message saying how it ended
(and ends the same way, `proxy._Channel`). A server is reused only when it
said "idle" after its last pair (it found itself unchanged); one that ended,
said nothing within `IDLE_SECONDS` (it hangs on an earlier pair's call) or
found itself changed is replaced by a fresh one. Whenever the host cannot give
a session, B runs the pair as before: the implementation in a fresh child of
the test's process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import signal
import socket
from dataclasses import dataclass, field
from typing import Any

from fembench_agents.scoring.sandbox import confine, linux_calls
from fembench_agents.scoring.sandbox.implementation import close_all_but
from fembench_agents.scoring.sandbox.implementation_server import CONTROL_BYTES, FAILED, serve_pairs
from fembench_agents.scoring.sandbox.wire import _send

IDLE_SECONDS = 1.0  # how long a server may take to finish its last pair before it is replaced
READY_SECONDS = 60.0  # how long a new server may take to confine itself and build its implementation
MAX_SERVERS = 24  # per worker (~4 MB of its own memory each); the least recently used idle one goes first
SERVER_POLICY = ("memory_mb", "max_processes", "scratch_mb", "hidden_paths")


def implementation_key(implementation: dict[str, Any]) -> str:
    """What tells one implementation from another: its whole content."""
    return hashlib.sha256(json.dumps(implementation, sort_keys=True).encode()).hexdigest()


# ----- in the worker ---------------------------------------------------------------------------------------------
def start(exposed: list[str], env: dict[str, str], root: str) -> tuple[int, int]:
    """Fork the keeper and the host; the worker's end of the host's socket,
    which every tests job's coordinator inherits, and the keeper's pid."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        code = FAILED
        try:
            ours.close()
            _keeper(theirs, exposed, env, root)
            code = 0
        finally:
            os._exit(code)
    theirs.close()
    return ours.detach(), pid


def stop(host: tuple[int, int]) -> None:
    """In the worker, at its end: the host ends its servers and itself, and
    everything it ran is waited for (so that its CPU time is counted as the worker's)."""
    fd, keeper = host
    os.close(fd)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(keeper, 0)


def _keeper(listener: socket.socket, exposed: list[str], env: dict[str, str], root: str) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the worker's request and reply pipes are not the host's
        os.dup2(devnull, fd)
    linux_calls.set_parent_death_signal(signal.SIGKILL)
    namespaces = confine.enter_namespaces()
    if namespaces.mechanism is None:
        return  # no namespaces, no servers: every pair runs its implementation in a child of its own
    linux_calls.join_new_session_keyring()
    pid = os.fork()
    if pid == 0:
        code = FAILED
        try:
            linux_calls.set_parent_death_signal(signal.SIGKILL)
            _Host(listener, namespaces, exposed, env, root).run()
            code = 0
        finally:
            os._exit(code)
    listener.close()
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


# ----- the host ---------------------------------------------------------------------------------------------------
@dataclass
class _Server:
    pid: int
    pidfd: int
    control: socket.socket
    idle: bool = True
    pair_end: socket.socket | None = None  # the host's copy of the server's end of its current pair
    last_used: int = 0
    speaks: bool = True  # False once the server closed its control socket (it is ending)


@dataclass
class _Job:
    conn: socket.socket
    settings: dict[str, Any]
    confinement: str = field(init=False)

    def __post_init__(self) -> None:
        self.confinement = json.dumps(self.settings, sort_keys=True)


# What the host waits on, by descriptor: the worker (None), a job, or a server's ("control" | "ended", key, server).
_Watched = _Job | tuple[str, tuple[str, str], _Server] | None


class _Host:
    def __init__(
        self,
        listener: socket.socket,
        namespaces: confine.Namespaces,
        exposed: list[str],
        env: dict[str, str],
        root: str,
    ) -> None:
        self.listener = listener
        self.namespaces, self.exposed, self.env, self.root = namespaces, exposed, env, root
        self.servers: dict[tuple[str, str], _Server] = {}
        self.jobs: dict[int, _Job] = {}
        self.clock = 0

    def run(self) -> None:
        while True:
            watched = self._watched()
            ready, _, _ = select.select(list(watched), [], [])
            if not self._dispatch(ready, watched):
                self._end()  # the worker is gone, or at its end
                return

    def _watched(self) -> dict[int, _Watched]:
        """What the host waits on, by descriptor: the worker (None), each job, each server's control
        socket and its end."""
        watched: dict[int, _Watched] = {self.listener.fileno(): None}
        watched.update({fd: job for fd, job in self.jobs.items()})
        for which, server in self.servers.items():
            if server.speaks:
                watched[server.control.fileno()] = ("control", which, server)
            watched[server.pidfd] = ("ended", which, server)
        return watched

    def _dispatch(self, ready: list[int], watched: dict[int, _Watched]) -> bool:
        """Serve what `select` found ready; False when the worker is gone. What an event before it
        in the same round ended is passed over: serving a job can end a server and start its
        successor, whose descriptors then carry the numbers of the ended one's."""
        for fd in ready:
            what = watched[fd]
            if what is None:
                if not self._accept():
                    return False
            elif isinstance(what, _Job):
                if self.jobs.get(fd) is what:
                    self._serve_job(what)
            else:
                event, which, server = what
                if self.servers.get(which) is not server:
                    continue
                if event == "control":
                    self._heard(which, server)
                else:
                    self._ended(which, server)
        return True

    def _accept(self) -> bool:
        message, fds, _, _ = socket.recv_fds(self.listener, CONTROL_BYTES, 1)
        if not message:
            return False
        if len(fds) == 1:
            job = _Job(socket.socket(fileno=fds[0]), json.loads(message))
            self.jobs[job.conn.fileno()] = job
        return True

    def _serve_job(self, job: _Job) -> None:
        try:
            message, fds, _, _ = socket.recv_fds(job.conn, CONTROL_BYTES, 2)
        except OSError:
            message, fds = b"", []
        if not message or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            del self.jobs[job.conn.fileno()]
            job.conn.close()
            return
        implementation_fd, stderr_fd = fds
        try:
            request = json.loads(message)
            server_end = self._session(job, str(request["key"]), implementation_fd, stderr_fd, request)
            with contextlib.suppress(OSError):
                if server_end is None:
                    job.conn.send(b'{"refused": true}')
                else:
                    socket.send_fds(job.conn, [b'{"session": true}'], [server_end.fileno()])
            if server_end is not None:
                server_end.close()
        finally:
            os.close(implementation_fd)
            os.close(stderr_fd)

    def _session(
        self, job: _Job, key: str, implementation_fd: int, stderr_fd: int, request: dict[str, Any]
    ) -> socket.socket | None:
        """The test's end of a new pair with a server of `key` (None: no server could be had)."""
        which = (key, job.confinement)
        busy = self.servers.get(which)
        if busy is not None and not busy.idle:
            self._await_idle(which, busy)
            if which in self.servers and not busy.idle:
                os.kill(busy.pid, signal.SIGKILL)  # still busy with an earlier pair: it hangs
                self._ended(which, busy)
        if which not in self.servers:
            server = self._start(job, implementation_fd)
            if server is None:
                return None
            self.servers[which] = server
        server = self.servers[which]
        test_end, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pair = json.dumps({"cpu_seconds": int(request.get("cpu_seconds", 1))}).encode()
        try:
            socket.send_fds(server.control, [pair], [server_end.fileno(), stderr_fd])
        except OSError:
            test_end.close()
            server_end.close()
            return None
        self.clock += 1
        server.idle, server.pair_end, server.last_used = False, server_end, self.clock
        return test_end

    def _await_idle(self, which: tuple[str, str], server: _Server) -> None:
        deadline = _now() + IDLE_SECONDS
        while which in self.servers and not server.idle and (left := deadline - _now()) > 0:
            watched = [server.control.fileno(), server.pidfd] if server.speaks else [server.pidfd]
            ready, _, _ = select.select(watched, [], [], left)
            if server.pidfd in ready:
                self._ended(which, server)
            elif ready:
                self._heard(which, server)

    def _heard(self, which: tuple[str, str], server: _Server) -> None:
        try:
            message = server.control.recv(CONTROL_BYTES, socket.MSG_DONTWAIT)
        except BlockingIOError:  # heard already, while waiting for it to be idle
            return
        except OSError:
            message = b""
        if not message:
            server.speaks = False
        elif message == b'{"idle": true}':
            server.idle = True
            if server.pair_end is not None:
                server.pair_end.close()
                server.pair_end = None

    def _ended(self, which: tuple[str, str], server: _Server) -> None:
        """The server ended: reap it, and tell the test of its pair, if any, how."""
        _, status = os.waitpid(server.pid, 0)
        os.close(server.pidfd)
        server.control.close()
        del self.servers[which]
        if server.pair_end is None:
            return
        ended = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"exit_code": os.WEXITSTATUS(status)}
        server.pair_end.setblocking(False)
        with contextlib.suppress(OSError):
            _send(server.pair_end, {"ended": ended})
        with contextlib.suppress(OSError):
            server.pair_end.shutdown(socket.SHUT_RD)  # a test that writes on finds the pipe broken
        server.pair_end.close()

    def _start(self, job: _Job, implementation_fd: int) -> _Server | None:
        self._make_room()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            code = FAILED
            try:
                linux_calls.set_parent_death_signal(signal.SIGKILL)
                ours.close()
                self._keep_only(implementation_fd, theirs.fileno())
                serve_pairs(implementation_fd, theirs, job.settings, self.namespaces, self.exposed, self.env, self.root)
                code = 0
            finally:
                os._exit(code)
        theirs.close()
        server = _Server(pid, os.pidfd_open(pid), ours)
        ready, _, _ = select.select([ours], [], [], READY_SECONDS)
        try:
            hello = ours.recv(CONTROL_BYTES) if ready else b""
        except OSError:
            hello = b""
        if hello != b'{"ready": true}':
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(server.pidfd)
            ours.close()
            return None
        return server

    def _keep_only(self, *fds: int) -> None:
        """In a new server: nothing of the host's but its implementation's file and its control socket."""
        for sock in (self.listener, *(j.conn for j in self.jobs.values()), *(s.control for s in self.servers.values())):
            sock.detach()  # never closed again by a finalizer, whatever number it had
        for server in self.servers.values():
            if server.pair_end is not None:
                server.pair_end.detach()
        close_all_but(fds)

    def _end(self) -> None:
        for which, server in list(self.servers.items()):
            os.kill(server.pid, signal.SIGKILL)
            self._ended(which, server)

    def _make_room(self) -> None:
        while len(self.servers) >= MAX_SERVERS:
            idle = [(s.last_used, which) for which, s in self.servers.items() if s.idle]
            if not idle:
                return
            which = min(idle)[1]
            server = self.servers[which]
            os.kill(server.pid, signal.SIGKILL)
            self._ended(which, server)


def _now() -> float:
    import time

    return time.monotonic()

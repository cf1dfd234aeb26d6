"""Test jobs: a generated test runs against an implementation that lives in a
process of its own, reached through a proxy that passes plain data."""

from __future__ import annotations

import builtins
import os
import signal
import time
import types
from collections.abc import Callable
from typing import Any

from fembench_agents.scoring import codec
from fembench_agents.scoring.sandbox.callbacks import encode_arguments
from fembench_agents.scoring.sandbox.implementation import (
    GIVEN_FILE,
    TEST_FILE,
    FrameWriter,
    error_frame,
    exec_given,
    exec_source,
    fresh_namespace,
    register_source,
    seed_generators,
)
from fembench_agents.scoring.sandbox.implementation_server import FAILED, serve_one_pair
from fembench_agents.scoring.sandbox.wire import (  # noqa: F401 - the proxy's messages, named here too
    _exception_reply,
    _rebuild_exception,
    _recv,
    _send,
)

# A generated test must not reach the implementation it checks: its helpers,
# globals, code or source (hidden from the solver on T3 tasks). So the test's
# process P (one per pair, `pairs`) never holds the implementation: it gets
# one end of a socket to a process that built it and serves calls. That is
# the worker's long-lived server of that implementation
# (`implementation_host`), in namespaces of its own that the test cannot see
# into, or, where none can be had, a child C that P forks before anything
# untrusted runs, which makes itself undumpable (the same-uid test process can
# neither ptrace it nor read its memory). The implementation itself never
# passes through the memory of P or of the job's coordinator B, not even as a
# freed copy: the parent sends it in a file that the trusted intermediate
# opens and unlinks (`pool._payload`, `zygote._open_private`), and only the
# server (or C) reads it. P hands the test a proxy: arguments and return
# values cross as `codec` data (plain numpy arrays, scalars and containers),
# exceptions as their type's name, MRO and message (re-raised as the same type
# when builtin or numpy), functions the test passes as callbacks run in P
# (`callbacks.py`). Consequences a test can see: arguments must be plain data
# or functions (a custom object raises TypeError), a function passed to fcn
# cannot call fcn, and an argument array the implementation mutates in place
# is not mutated on the test's side (the implementation gets a copy). If the
# implementation's process dies during a call, P ends the same way
# (`_Channel._gone`), as when both ran in one process. The implementation is
# seeded before the pair's first call, as P is before the test.


def _start_implementation(spec: dict[str, Any], out: FrameWriter) -> tuple[int, Any]:
    """Fork C; returns its pid and P's end of the socketpair."""
    import socket

    from fembench_agents.scoring.sandbox import linux_calls

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            ours.close()
            linux_calls.set_parent_death_signal(signal.SIGKILL)
            if os.getppid() != parent:  # B died before the line above
                os._exit(0)
            linux_calls.set_dumpable(False)
            os.close(out._fd)  # C reports to P only
            serve_one_pair(spec, theirs)
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    theirs.close()
    if isinstance(spec.get("fd"), int) and spec["fd"] >= 0:
        os.close(spec["fd"])  # P never reads the implementation
    return pid, ours


def _plain(data: Any) -> bool:
    if isinstance(data, list):
        return all(_plain(v) for v in data)
    if isinstance(data, dict):
        if "__unsupported__" in data:
            return False
        return all(_plain(v) for v in data.values())
    return True


class _Channel:
    """P's side of the connection to the implementation's process: its
    server (`pid` None) or its child C."""

    def __init__(self, pid: int | None, sock: Any) -> None:
        import threading

        self._pid = pid
        self._sock = sock
        self._lock = threading.Lock()
        self._caller: int | None = None  # the thread whose call is in flight

    def _gone(self, ended: Any = None) -> None:
        """The implementation's process ended without answering: end P the same
        way, as if it had run the implementation itself. A server's end comes
        from its host, as the last message (`ended`); C's, from waiting for it."""
        if self._pid is not None:
            try:
                _, status = os.waitpid(self._pid, 0)
            except ChildProcessError:
                os._exit(FAILED)
            code = os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        else:
            # A test that ignores SIGCHLD would have had its child reaped unseen: its end is not known.
            if not isinstance(ended, dict) or signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
                os._exit(FAILED)
            code, sig = ended.get("exit_code"), ended.get("signal")
        if isinstance(sig, int) and sig > 0:
            try:
                if sig not in (signal.SIGKILL, signal.SIGSTOP):
                    signal.signal(sig, signal.SIG_DFL)
                os.kill(os.getpid(), sig)
            except BaseException:
                pass
            os._exit(128 + sig)  # still here: the signal is blocked
        os._exit(code if isinstance(code, int) else FAILED)

    def receive(self) -> Any:
        reply = _recv(self._sock)
        if reply is None:
            self._gone()
        if self._pid is None and isinstance(reply, dict) and "ended" in reply:
            self._gone(reply["ended"])
        return reply

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import threading

        functions: list[Callable[..., Any]] = []
        request = {"args": encode_arguments(args, functions), "kwargs": encode_arguments(kwargs, functions)}
        if not _plain(request):
            raise TypeError(
                "fcn accepts plain data and functions only (numpy arrays, numbers, strings, lists, tuples, dicts, "
                "sets, functions)"
            )
        if self._caller == threading.get_ident():
            raise RuntimeError("fcn cannot be called from inside a function passed to fcn")
        with self._lock:
            self._caller = threading.get_ident()
            try:
                _send(self._sock, request)
                reply = self.receive()
                while isinstance(reply, dict) and "callback" in reply:
                    _send(self._sock, _run_callback(functions, reply))
                    reply = self.receive()
            finally:
                self._caller = None
        if isinstance(reply, dict) and "value" in reply:
            return codec.from_data(reply["value"])
        raise _rebuild_exception(reply.get("error", {}) if isinstance(reply, dict) else {})


def _run_callback(functions: list[Callable[..., Any]], request: dict[str, Any]) -> dict[str, Any]:
    """In B: one call C asked for of a function the test passed; the answer as data."""
    try:
        function = functions[int(request["callback"])]
        args = codec.from_data(request.get("args"))
        kwargs = codec.from_data(request.get("kwargs"))
        value = function(*args, **kwargs)
    except Exception as exc:
        return _exception_reply(exc)
    return {"value": codec.to_data(value)}


def _proxy(name: str, channel: _Channel) -> Callable[..., Any]:
    """A plain function calling the implementation in C. Its globals are its
    own, so whatever a test does to them touches nothing of B's."""

    def fcn(*args: Any, **kwargs: Any) -> Any:
        return channel.call(args, kwargs)

    proxy = types.FunctionType(
        fcn.__code__, {"__name__": "__task__", "__builtins__": builtins}, name, None, fcn.__closure__
    )
    proxy.__qualname__ = name
    return proxy


def run_test(job: dict[str, Any], out: FrameWriter) -> None:
    spec = job.pop("implementation")
    if "socket" in spec:  # the implementation's server
        import socket

        pid, sock = None, socket.socket(fileno=int(spec["socket"]))
    else:
        pid, sock = _start_implementation(spec, out)
    spec.clear()  # the implementation's process holds it; P keeps nothing of it
    del spec
    channel = _Channel(pid, sock)
    hello = channel.receive()
    if "build_error" in hello:
        out.emit({"event": "build_error", "side": "implementation", **hello["build_error"]})
        return
    impl = _proxy(str(hello["ready"]), channel)
    del channel, hello
    spec = job["test"]
    compiled = spec.get("compiled")  # by the job's coordinator, when the source compiles
    try:
        ns = fresh_namespace("__tests__")
        exec_given(spec.get("preamble", ()), ns, compiled[0] if compiled else None)
        register_source(TEST_FILE, spec["code"])
        if compiled:
            exec(compiled[1], ns)
        else:
            exec_source(spec["code"], TEST_FILE, ns)
        test_fn = ns[spec["name"]]
    except BaseException as exc:
        out.emit({"event": "build_error", "side": "test", **error_frame(exc, (TEST_FILE, GIVEN_FILE))})
        return
    seed_generators()
    start = time.perf_counter()
    try:
        test_fn(impl)
    except BaseException as exc:
        out.emit(
            {
                "event": "test",
                "status": "failed",
                "seconds": time.perf_counter() - start,
                **error_frame(exc, (TEST_FILE, GIVEN_FILE)),  # as an attempt's call: the given code is the author's
            }
        )
        return
    out.emit({"event": "test", "status": "passed", "seconds": time.perf_counter() - start})

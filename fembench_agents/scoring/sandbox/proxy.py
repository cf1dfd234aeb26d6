"""Test jobs: a generated test runs against an implementation that lives in a
process of its own, reached through a proxy that passes plain data."""

from __future__ import annotations

import builtins
import os
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from fembench_agents.scoring import codec
from fembench_agents.scoring.error_text import shortened
from fembench_agents.scoring.sandbox.callbacks import decode_arguments, encode_arguments
from fembench_agents.scoring.sandbox.implementation import (
    GIVEN_FILE,
    MESSAGE_LIMIT,
    TEST_FILE,
    FrameWriter,
    build_implementation,
    error_frame,
    exec_given,
    exec_source,
    fresh_namespace,
    register_source,
    seed_generators,
)

# # A generated test must not reach the implementation it checks: its helpers,
# globals, code or source (hidden from the solver on T3 tasks). So the job
# process B forks, before anything untrusted runs, a grandchild C that builds
# the implementation, makes itself undumpable (the same-uid test process can
# neither ptrace it nor read its memory) and serves calls over a socketpair.
# The implementation itself never passes through B's memory, not even as a
# freed copy: the parent sends it in a file that the trusted intermediate A
# opens and unlinks (`pool._payload`, `zygote._child`), B closes its copy of
# that descriptor once C is forked, and only C reads it. B hands the test a
# proxy: arguments and return values cross as `codec` data (plain numpy
# arrays, scalars and containers), exceptions as their type's name, MRO and
# message (re-raised as the same type when builtin or numpy), functions the
# test passes as callbacks run in B (`callbacks.py`). Consequences a test can
# see: arguments must be plain data or functions (a custom object raises
# TypeError), a function passed to fcn cannot call fcn, and an argument array the implementation mutates in place
# is not mutated on the test's side (the implementation gets a copy). If C
# dies during a call, B ends the same way (`_Channel._gone`), as when both
# ran in one process. C seeds once before its first call, as B does before
# the test.

_LEN = 8  # bytes of the big-endian length prefix of every message
_MAX_MESSAGE = 1 << 31


def _send(sock: Any, payload: dict[str, Any]) -> None:
    import json

    data = json.dumps(payload, allow_nan=False).encode()
    sock.sendall(len(data).to_bytes(_LEN, "big") + data)


def _recv_exact(sock: Any, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf.extend(chunk)
    return bytes(buf)


def _recv(sock: Any) -> Any:
    """One message, or None at end of stream."""
    import json

    head = _recv_exact(sock, _LEN)
    if head is None:
        return None
    size = int.from_bytes(head, "big")
    if size > _MAX_MESSAGE:
        raise ValueError("message too large")
    body = _recv_exact(sock, size)
    return None if body is None else json.loads(body)


def _exception_reply(exc: BaseException) -> dict[str, Any]:
    try:
        message = shortened(str(exc), MESSAGE_LIMIT)
    except BaseException:  # a hostile __str__
        message = "<unprintable message>"
    return {"error": {"mro": [_class_name(c) for c in type(exc).__mro__], "message": message}}


def _class_name(cls: type) -> list[str]:
    """[module, name] of an exception's class. The test's classes are its own: one may hold anything as
    its `__module__` or `__name__`, or raise for either, and still crosses, as what can be read of it."""
    names = []
    for attribute in ("__module__", "__name__"):
        try:
            value = getattr(cls, attribute)
        except BaseException:
            value = None
        names.append(value if type(value) is str else "")
    return [names[0], names[1] or "Exception"]


def _serve_implementation(spec: dict[str, Any], sock: Any) -> None:
    """In C: build the implementation, then answer calls until B goes away."""
    try:
        if "fd" in spec:  # the implementation comes in a file only this process reads
            spec = _read_spec(int(spec["fd"]))
        fn = build_implementation(spec)
    except BaseException as exc:
        _send(sock, {"build_error": error_frame(exc, ())})
        return
    _send(sock, {"ready": str(spec["function"])})
    seed_generators()
    while True:
        request = _recv(sock)
        if request is None:
            return
        try:
            args = decode_arguments(request["args"], lambda k: _callback(sock, k))
            kwargs = decode_arguments(request["kwargs"], lambda k: _callback(sock, k))
            if (
                not isinstance(args, tuple)
                or not isinstance(kwargs, dict)
                or not all(isinstance(k, str) for k in kwargs)
            ):
                raise TypeError("malformed call")
        except BaseException as exc:
            _send(sock, _exception_reply(TypeError(f"malformed call: {type(exc).__name__}")))
            continue
        try:
            value = fn(*args, **kwargs)
        except BaseException as exc:
            reply = _exception_reply(exc)
        else:
            reply = {"value": codec.to_data(value)}
        del args, kwargs
        _send(sock, reply)


def _callback(sock: Any, index: int) -> Callable[..., Any]:
    """In C: a function the test passed (`callbacks.py`), called in B."""

    def call_test_function(*args: Any, **kwargs: Any) -> Any:
        _send(sock, {"callback": index, "args": codec.to_data(args), "kwargs": codec.to_data(kwargs)})
        reply = _recv(sock)
        if reply is None:
            os._exit(0)  # B is gone: nobody is waiting for this call
        if isinstance(reply, dict) and "value" in reply:
            return codec.from_data(reply["value"])
        raise _rebuild_exception(reply.get("error", {}) if isinstance(reply, dict) else {})

    return call_test_function


def _read_spec(fd: int) -> dict[str, Any]:
    import json

    if fd < 0:
        raise OSError("the implementation file could not be opened")
    data = bytearray()
    while chunk := os.pread(fd, 1 << 20, len(data)):
        data.extend(chunk)
    os.close(fd)
    spec = json.loads(data)
    if not isinstance(spec, dict):
        raise ValueError("malformed implementation")
    return spec


def _start_implementation(spec: dict[str, Any], out: FrameWriter) -> tuple[int, Any]:
    """Fork C; returns its pid and B's end of the socketpair."""
    import signal
    import socket

    from fembench_agents.scoring.sandbox import confine

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            ours.close()
            confine.set_parent_death_signal(signal.SIGKILL)
            if os.getppid() != parent:  # B died before the line above
                os._exit(0)
            confine.set_dumpable(False)
            os.close(out._fd)  # C reports to B only
            _serve_implementation(spec, theirs)
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    theirs.close()
    if isinstance(spec.get("fd"), int) and spec["fd"] >= 0:
        os.close(spec["fd"])  # B never reads the implementation
    return pid, ours


def _known_exception(module: str, name: str) -> type[BaseException] | None:
    """Builtin and numpy exception types, by name; nothing else is recreated."""
    if module == "builtins":
        found = getattr(builtins, name, None)
    elif module.split(".")[0] == "numpy":
        found = _NUMPY_EXCEPTIONS.get(name)
    else:
        return None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _numpy_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {"LinAlgError": np.linalg.LinAlgError}
    for name in dir(np.exceptions):
        value = getattr(np.exceptions, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            found[name] = value
    return found


_NUMPY_EXCEPTIONS = _numpy_exceptions()


def _rebuild_exception(error: dict[str, Any]) -> BaseException:
    """The exception to raise in the test for an exception the implementation
    raised: the same type when builtin or numpy, otherwise a new type of the
    same name deriving from the nearest builtin or numpy base (RuntimeError
    when that is only Exception)."""
    mro = [(str(m), str(n)) for m, n in error.get("mro", [])] or [("", "Exception")]
    message = str(error.get("message", ""))
    exact = _known_exception(*mro[0])
    base: type[BaseException] = RuntimeError
    if exact is None:
        for module, name in mro[1:]:
            known = _known_exception(module, name)
            if known is not None:
                if known not in (Exception, BaseException):
                    base = known
                break
    try:
        return (exact or type(mro[0][1], (base,), {"__module__": mro[0][0]}))(message)
    except Exception:
        return type(mro[0][1], (RuntimeError,), {"__module__": mro[0][0]})(message)


def _plain(data: Any) -> bool:
    if isinstance(data, list):
        return all(_plain(v) for v in data)
    if isinstance(data, dict):
        if "__unsupported__" in data:
            return False
        return all(_plain(v) for v in data.values())
    return True


class _Channel:
    """B's side of the connection to C."""

    def __init__(self, pid: int, sock: Any) -> None:
        import threading

        self._pid = pid
        self._sock = sock
        self._lock = threading.Lock()
        self._caller: int | None = None  # the thread whose call is in flight

    def _gone(self) -> None:
        """C ended without answering: end B the same way, as if it had run the
        implementation itself."""
        import signal

        try:
            _, status = os.waitpid(self._pid, 0)
        except ChildProcessError:
            os._exit(70)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                if sig not in (signal.SIGKILL, signal.SIGSTOP):
                    signal.signal(sig, signal.SIG_DFL)
                os.kill(os.getpid(), sig)
            except BaseException:
                pass
            os._exit(128 + sig)  # still here: the init of a PID namespace ignores its own signals
        os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 70)

    def receive(self) -> Any:
        reply = _recv(self._sock)
        if reply is None:
            self._gone()
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
    pid, sock = _start_implementation(spec, out)
    spec.clear()  # C holds the implementation; B keeps nothing of it
    del spec
    channel = _Channel(pid, sock)
    hello = channel.receive()
    if "build_error" in hello:
        out.emit({"event": "build_error", "side": "implementation", **hello["build_error"]})
        return
    impl = _proxy(str(hello["ready"]), channel)
    del channel, hello
    spec = job["test"]
    try:
        ns = fresh_namespace("__tests__")
        exec_given(spec.get("preamble", ()), ns)
        register_source(TEST_FILE, spec["code"])
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

"""The side of a (test, implementation) pair that runs the implementation: a
task's reference or one of its expected failures, reached by the test only
through the proxy (`proxy`), as plain data.

It runs in one of two kinds of process:
- a fresh process C that the pair's test process forks for that pair only
  (`serve_one_pair`), where no implementation server can be had;
- a long-lived implementation server (`serve_pairs`), started by the worker's
  host (`implementation_host`) for one implementation and one confinement,
  serving one pair after another. It confines itself as a job process does,
  builds the implementation once, and before each pair is seeded as a fresh
  process would be; after each pair whose test sent it anything it takes the
  fingerprint of everything a call could have changed (`server_state`), and
  ends instead of serving another pair when that differs from the one taken
  after building. A pair thus finds the server as a fresh process would have
  been, whatever an earlier pair's test sent it.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import types
from collections.abc import Callable
from typing import Any

from fembench_agents.scoring import codec
from fembench_agents.scoring.sandbox import confine, server_state
from fembench_agents.scoring.sandbox.callbacks import decode_arguments
from fembench_agents.scoring.sandbox.implementation import (
    build_implementation,
    error_frame,
    seed_default_rng,
    seed_generators,
)
from fembench_agents.scoring.sandbox.wire import _exception_reply, _rebuild_exception, _recv, _send

CONTROL_BYTES = 1 << 16  # the largest message between the host and a server
FAILED = 70  # the exit code of a server (or C) whose own code failed
_NO_CPU_LIMIT = 1 << 30


def read_spec(fd: int) -> dict[str, Any]:
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


def build(spec: dict[str, Any]) -> tuple[Callable[..., Any] | None, dict[str, Any]]:
    """The implementation and the first message of every pair: ready, or why it failed to build."""
    try:
        if "fd" in spec:  # the implementation comes in a file only this process reads
            spec = read_spec(int(spec["fd"]))
        fn = build_implementation(spec)
    except BaseException as exc:
        return None, {"build_error": error_frame(exc, ())}
    return fn, {"ready": str(spec["function"])}


def serve_calls(fn: Callable[..., Any], sock: Any, ends: Callable[[], None]) -> None:
    """Answer calls until the test's side goes away; `ends` is called when it
    goes away while the implementation waits on a function the test passed."""
    while True:
        request = _recv(sock)
        if request is None:
            return
        try:
            args = decode_arguments(request["args"], lambda k: _callback(sock, k, ends))
            kwargs = decode_arguments(request["kwargs"], lambda k: _callback(sock, k, ends))
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


def _callback(sock: Any, index: int, ends: Callable[[], None]) -> Callable[..., Any]:
    """A function the test passed (`callbacks.py`), called in the test's process."""

    def call_test_function(*args: Any, **kwargs: Any) -> Any:
        _send(sock, {"callback": index, "args": codec.to_data(args), "kwargs": codec.to_data(kwargs)})
        reply = _recv(sock)
        if reply is None:
            ends()  # the test is gone: nobody is waiting for this call
        if isinstance(reply, dict) and "value" in reply:
            return codec.from_data(reply["value"])
        raise _rebuild_exception(reply.get("error", {}) if isinstance(reply, dict) else {})

    return call_test_function


def _exit_now() -> None:
    os._exit(0)


def serve_one_pair(spec: dict[str, Any], sock: Any) -> None:
    """In C: build the implementation, then answer calls until the test's process goes away."""
    fn, hello = build(spec)
    _send(sock, hello)
    if fn is None:
        return
    seed_generators()
    serve_calls(fn, sock, _exit_now)


def serve_pairs(
    spec_fd: int,
    control: socket.socket,
    settings: dict[str, Any],
    namespaces: confine.Namespaces,
    exposed: list[str],
    env: dict[str, str],
    fallback_scratch: str,
) -> None:
    """A long-lived implementation server (see the module's text). `control`
    is its connection to the host: one message per pair, with the pair's end
    of the test's socket and the pair's stderr; the server answers "idle" when
    the pair is over and it found itself unchanged, and ends otherwise."""
    policy = {**settings["policy"], "cpu_seconds": _NO_CPU_LIMIT}  # each pair gets its own budget (`_cpu_budget`)
    level, detail = confine.confine(policy, namespaces, list(settings["hidden"]), exposed, env, fallback_scratch)
    if level != "namespaced":
        control.send(json.dumps({"refused": detail}).encode())
        return
    seed_default_rng()
    fn, hello = build({"fd": spec_fd})
    state = _fingerprint(fn)
    control.send(json.dumps({"ready": True}).encode())
    quiet = os.open(os.devnull, os.O_WRONLY)
    while True:
        message, fds, _, _ = socket.recv_fds(control, CONTROL_BYTES, 2)
        if not message or len(fds) != 2:
            return
        pair = json.loads(message)
        data, stderr = fds
        os.dup2(stderr, 2)  # what the implementation writes goes with the pair, as from a process of its own
        os.close(stderr)
        _cpu_budget(int(pair["cpu_seconds"]))
        sock = socket.socket(fileno=data)
        try:
            _send(sock, hello)
            # Nothing of the implementation runs, and nothing of the test is read, until its first
            # byte: a pair that sent none (its test never called fcn) left the server as it found it.
            heard = fn is not None and bool(sock.recv(1, socket.MSG_PEEK))
            if fn is not None and heard:
                seed_generators()
                serve_calls(fn, sock, _exit_now)
        except BaseException:  # the implementation closed what it serves on, or the test's side went away
            os._exit(FAILED)
        sock.close()
        os.dup2(quiet, 2)
        if state is None or (heard and not server_state.unchanged(state, _fingerprint(fn) or (b"", 0))):
            return  # not reused: the host starts a fresh server for the next pair
        control.send(b'{"idle": true}')


def _fingerprint(fn: Callable[..., Any] | None) -> tuple[bytes, int] | None:
    try:
        return server_state.fingerprint(fn if fn is not None else types.SimpleNamespace())
    except Exception:  # noqa: BLE001 - what cannot be fingerprinted is not reused
        return None


def _cpu_budget(seconds: int) -> None:
    """The pair's CPU time on top of what the server used before it, as a fresh process had."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = int(usage.ru_utime + usage.ru_stime) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = used + seconds
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))

"""The messages between a generated test and the implementation it checks
(`proxy`, `implementation_server`): length-prefixed JSON on a stream socket,
and exceptions as the names of their classes and their message, raised on the
other side as the same builtin or numpy type or a new type of that name."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from fembench_agents.scoring.error_text import MESSAGE_LIMIT, shortened

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

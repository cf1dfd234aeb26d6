"""Functions a test passes to the implementation it checks (FEM-Bench passes a
body force as a function), across the proxy of the test track (`proxy.py`).

A function cannot cross as data, so the test's side sends `{CALLBACK: k}` in
its place and keeps the function; the implementation's side gets a stub that,
when called, asks the test's side to call function k with plain-data
arguments and waits for the plain-data answer. The function runs where it was
written (in the test's process) and the implementation stays in its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fembench_agents.scoring import codec

CALLBACK = "__callback__"


def encode_arguments(value: Any, functions: list[Callable[..., Any]], depth: int = 0) -> Any:
    """`codec.to_data`, except that a function anywhere in lists, tuples and
    dict values is appended to `functions` and sent as its index."""
    t = type(value)
    if depth > codec.MAX_DEPTH:
        return codec.to_data(value, depth)
    if callable(value) and not isinstance(value, type):  # functions, numpy ufuncs, callable objects
        functions.append(value)
        return {CALLBACK: len(functions) - 1}
    if t is list:
        return [encode_arguments(v, functions, depth + 1) for v in value]
    if t is tuple:
        return {"__tuple__": [encode_arguments(v, functions, depth + 1) for v in value]}
    if t is dict:
        return {
            "__dict__": [
                [codec.to_data(k, depth + 1), encode_arguments(v, functions, depth + 1)] for k, v in value.items()
            ]
        }
    return codec.to_data(value, depth)


def decode_arguments(data: Any, stub: Callable[[int], Callable[..., Any]], depth: int = 0) -> Any:
    """`codec.from_data`, except that `{CALLBACK: k}` becomes `stub(k)`."""
    if depth > codec.MAX_DEPTH + 2:
        raise ValueError("encoded value nested too deeply")
    if isinstance(data, list):
        return [decode_arguments(v, stub, depth + 1) for v in data]
    if isinstance(data, dict) and len(data) == 1:
        ((tag, body),) = data.items()
        if tag == CALLBACK and type(body) is int and body >= 0:
            return stub(body)
        if tag == "__tuple__" and isinstance(body, list):
            return tuple(decode_arguments(v, stub, depth + 1) for v in body)
        if tag == "__dict__" and isinstance(body, list):
            return {codec.from_data(k, depth + 1): decode_arguments(v, stub, depth + 1) for k, v in body}
    return codec.from_data(data, depth)

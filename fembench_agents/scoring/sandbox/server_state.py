"""What a long-lived implementation server must find unchanged after each
pair before it serves the next one (`implementation_server`).

A task implementation is trusted code, but a test chooses its arguments: an
implementation that keeps something of them (a module-level list or cache, a
mutable default, an attribute on a function, an lru_cache) would carry it to
the next pair, whose test another attempt may have written. So the server
takes a fingerprint of everything a call could change and that a later call
could see, once after it is built and again after each pair; when they
differ, the server is not reused (a fresh one is built from the task's
source), so a pair sees what it would have seen in a process of its own:

- every object reachable from the implementation's module globals and the
  function itself, through containers, functions (defaults, closures,
  attributes), classes of the task module, instances, arrays (their bytes)
  and anything else by its pickled state; a library module is a name, not
  walked (task code does not reassign numpy's attributes);
- what the interpreter keeps for the whole process: the builtins, the loaded
  modules, numpy's error and print settings, warning filters, the recursion
  limit, the environment, the working directory and what is in it, the
  running threads, and the size of the address space (an implementation that
  keeps memory would leave the next pair less of its limit).

The random generators are not compared: the server seeds them before every
pair, as a fresh process did.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import os
import sys
import threading
import types
import warnings
from typing import Any

import numpy as np

_ATOMS = (type(None), bool, int, float, complex, str, bytes, range, type(Ellipsis))
_ADDRESS_SPACE_SLACK = 16 << 20  # allocator caches the interpreter keeps after a call are not a pair's state
_MAX_OBJECTS = 100_000  # a namespace larger than this is not fingerprinted: the server is not reused


class TooLarge(Exception):
    """The implementation's reachable state is larger than a fingerprint covers."""


def fingerprint(function: Any) -> tuple[bytes, int]:
    """The fingerprint of what `function` can see, and the address space in
    bytes (compared with a slack, `unchanged`)."""
    digest = hashlib.blake2b(digest_size=32)
    namespace = getattr(function, "__globals__", {})
    _Walker(digest, namespace).walk([function, namespace])
    _interpreter(digest)
    return digest.digest(), _address_space()


def unchanged(before: tuple[bytes, int], after: tuple[bytes, int]) -> bool:
    return before[0] == after[0] and after[1] <= before[1] + _ADDRESS_SPACE_SLACK


class _Walker:
    """Writes each object's type and state; an object the walk reached by
    reference also by its identity (a list replaced by an equal one is a
    change), one it made itself (an object's pickled state) by value only."""

    def __init__(self, digest: Any, namespace: dict[str, Any]) -> None:
        self.digest = digest
        self.namespace = namespace  # the task module's: only its functions are walked into
        self.seen: set[int] = set()
        self.keep: list[Any] = []  # what the walk made stays alive, so that no id is reused during it

    def put(self, *parts: object) -> None:
        self.digest.update(repr(parts).encode("utf-8", "backslashreplace"))

    def walk(self, roots: list[Any]) -> None:
        todo: list[tuple[Any, bool]] = [(root, False) for root in reversed(roots)]
        while todo:
            obj, made = todo.pop()
            if isinstance(obj, bytes):
                self.put("bytes", len(obj))
                self.digest.update(obj)
                continue
            if isinstance(obj, _ATOMS):
                self.put(type(obj).__name__, obj)
                continue
            if id(obj) in self.seen:
                self.put("ref", 0 if made else id(obj))
                continue
            self.seen.add(id(obj))
            if len(self.seen) > _MAX_OBJECTS:
                raise TooLarge(f"more than {_MAX_OBJECTS} objects reachable")
            self.put("obj", type(obj).__qualname__, 0 if made else id(obj))
            children, made_here = self.children(obj)
            todo.extend((child, made or made_here) for child in reversed(children))

    def children(self, obj: Any) -> tuple[list[Any], bool]:
        """What `obj` holds that a call could change (after writing its own
        state), and whether the walk made it."""
        if isinstance(obj, types.ModuleType):
            self.put("module", obj.__name__)
            return [], False
        if obj is builtins.__dict__:
            return [], False  # the builtins are compared once, by `_interpreter`
        if isinstance(obj, np.ndarray):
            self.put(obj.dtype.str, obj.shape, obj.flags.writeable)
            return (list(obj.flat), False) if obj.dtype.hasobject else ([obj.tobytes()], True)
        if isinstance(obj, np.generic):
            self.put(repr(obj))
            return [], False
        if isinstance(obj, (list, tuple)):
            return [len(obj), *obj], False
        if isinstance(obj, (set, frozenset)):
            return [len(obj), *sorted(obj, key=repr)], False
        if isinstance(obj, dict):
            return [len(obj), *(x for item in obj.items() for x in item)], False
        if isinstance(obj, bytearray):
            return [bytes(obj)], True
        if isinstance(obj, types.FunctionType):
            if obj.__globals__ is not self.namespace:  # a library's function: what it is, not what it reaches
                self.put("function", obj.__module__, obj.__qualname__)
                return [], False
            attrs = [obj.__code__, obj.__defaults__, obj.__kwdefaults__, obj.__dict__]
            cells = [c.cell_contents if _filled(c) else "<empty cell>" for c in obj.__closure__ or ()]
            return [*attrs, *cells], False
        if isinstance(obj, types.CodeType):
            return [], False  # immutable; its identity is written
        if isinstance(obj, types.MethodType):
            return [obj.__func__, obj.__self__], False
        if isinstance(obj, type):
            if obj.__module__ != "__task__":
                self.put("class", obj.__module__, obj.__qualname__)
                return [], False
            attributes = obj.__dict__  # a new mappingproxy at each access: its items are the class's
            return [len(attributes), *(x for item in attributes.items() for x in item)], False
        if isinstance(obj, (types.BuiltinFunctionType, types.WrapperDescriptorType, types.MethodDescriptorType)):
            self.put("builtin", getattr(obj, "__qualname__", ""), id(getattr(obj, "__self__", None)))
            return [], False
        return self.state(obj), True

    def state(self, obj: Any) -> list[Any]:
        """Anything else: its attributes, its cache's statistics (functools.lru_cache), its pickled state."""
        found: list[Any] = []
        if isinstance(obj, functools._lru_cache_wrapper):
            found.append(repr(obj.cache_info()))
        attributes = getattr(obj, "__dict__", None)
        if isinstance(attributes, dict):
            found.append(dict(attributes))
        try:
            found.append(obj.__reduce_ex__(4))
        except Exception:  # noqa: BLE001 - an object that will not say its state: its text
            found.append(repr(obj))
        self.keep.append(found)
        return found


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _interpreter(digest: Any) -> None:
    """The process-wide state, written cheaply: a dict's keys and the identity of each value, in
    order (a pair's check must cost less than the process it saves), the rest by value."""
    builtin, modules = builtins.__dict__, sys.modules
    parts = (
        hash((tuple(builtin), tuple(map(id, builtin.values())))),
        hash((tuple(modules), tuple(map(id, modules.values())))),
        tuple(np.geterr().items()),
        np.getbufsize(),
        tuple(np.get_printoptions().items()),
        hash(tuple(map(id, warnings.filters))),
        len(warnings.filters),
        sys.getrecursionlimit(),
        hash(tuple(getattr(os.environ, "_data", os.environ).items())),  # undecoded: decoding costs more
        os.getcwd(),
        tuple(os.listdir(".")),
        threading.active_count(),
    )
    digest.update(repr(parts).encode("utf-8", "backslashreplace"))


def _address_space() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")

"""What an attempt can reach of the worker's preloaded modules: what a fresh
interpreter would give it, no more.

The warm worker imports a library's submodules before any job (dolfinx.fem.petsc
among them) and the import system binds each to its parent package, so without
this an attempt that only did `import dolfinx` could use `dolfinx.fem.petsc`,
which raises AttributeError in a fresh interpreter. Preloading stays for speed;
once the worker has preloaded and warmed up, before its first fork, `hide` undoes
what a fresh interpreter would not have, and every job inherits that state:

- every preloaded submodule that no fresh import of a preloaded top-level
  package binds to its parent (`FreshView.detached`, measured once per preload
  by `fresh_probe`) is unbound from its parent, and leaves `sys.modules` unless
  such an import loads it without binding it (`FreshView.loaded`);
- a finder first on `sys.meta_path` hands a hidden module back, as loaded,
  when anything imports it (an import statement, `from pkg import sub`,
  `importlib.import_module`, a package's own lazy `__getattr__`), and binds
  what a fresh import of it binds (`FreshView.detached[name]`): the module
  object is the preloaded one, so nothing is executed again.

A module an attempt imports is handed back in its own job process only: each
job is a fresh fork of the worker, so nothing of it reaches the next job. Our own
preloaded code (a calibration solver) gets everything back first (`reveal`).
Standard library only: the worker imports it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FreshView:
    """`detached`: each preloaded submodule a fresh interpreter does not bind
    after importing the preloaded top-level packages, with the detached
    submodules a fresh import of it binds (itself included), outermost first.
    `loaded`: the detached ones such an import loads all the same, which stay
    in `sys.modules` (a fresh interpreter has them there, unbound)."""

    detached: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    loaded: frozenset[str] = frozenset()

    def to_data(self) -> dict[str, Any]:
        return {"detached": {k: list(v) for k, v in sorted(self.detached.items())}, "loaded": sorted(self.loaded)}

    @classmethod
    def from_data(cls, data: Any) -> FreshView:
        if not isinstance(data, dict) or not isinstance(data.get("detached"), dict):
            raise ValueError(f"a fresh view must be an object with 'detached' and 'loaded', got {str(data)[:200]!r}")
        detached = {str(k): tuple(str(x) for x in v) for k, v in data["detached"].items()}
        return cls(detached=detached, loaded=frozenset(str(x) for x in data.get("loaded", ())))


def _bind(name: str, module: types.ModuleType) -> None:
    parent_name, _, child = name.rpartition(".")
    parent = sys.modules.get(parent_name)
    if parent is not None:
        setattr(parent, child, module)


class _HiddenModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a hidden module and loads it as it is (see the module docstring)."""

    def __init__(self, hidden: dict[str, types.ModuleType], binds: Mapping[str, Sequence[str]]) -> None:
        self.hidden = hidden
        self.unbound: list[tuple[str, types.ModuleType]] = []  # what `hide` unbound, for `reveal`
        self._binds = binds
        self._specs: dict[str, Any] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        module = self.hidden.get(fullname)
        if module is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=hasattr(module, "__path__"))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = self.hidden[spec.name]
        self._specs[spec.name] = module.__spec__  # before the import system sets ours
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__spec__.name if module.__spec__ is not None else module.__name__
        module.__spec__ = self._specs.pop(name)  # the module keeps its own
        self.hidden.pop(name, None)
        # What a fresh import of it binds besides itself (the import system binds it once this returns).
        for other in self._binds.get(name, ()):
            if other == name:
                continue
            found = self.hidden.pop(other, None)
            if found is not None:
                sys.modules[other] = found
            found = found or sys.modules.get(other)
            if found is not None:
                _bind(other, found)


def hide(view: FreshView) -> None:
    """In the warm worker, once, after its preload (module docstring)."""
    finder = _HiddenModules({}, view.detached)
    for name in view.detached:
        preloaded = sys.modules.get(name)
        if not isinstance(preloaded, types.ModuleType):
            continue
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        bound = vars(parent).get(child) if parent is not None else None
        if parent is not None and bound is not None and bound is preloaded:  # a binding the import made, nothing else
            delattr(parent, child)
            finder.unbound.append((name, bound))
        if name not in view.loaded:
            finder.hidden[name] = sys.modules.pop(name)
    if finder.hidden or finder.unbound:
        sys.meta_path.insert(0, finder)


def reveal() -> None:
    """Undo `hide` in this process: for our own preloaded code (a calibration
    solver), whose imports all happened in the worker."""
    for finder in [f for f in sys.meta_path if isinstance(f, _HiddenModules)]:
        sys.meta_path.remove(finder)
        sys.modules.update(finder.hidden)
        for name, module in sorted(finder.unbound, key=lambda bound: bound[0].count(".")):
            _bind(name, module)

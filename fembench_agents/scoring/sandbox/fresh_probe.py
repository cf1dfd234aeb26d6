"""Measures, once per set of preloaded modules, what a fresh interpreter binds
(`fresh_view.FreshView`): the parent runs this file as a script in a clean
interpreter (`fresh_view_data`, cached per process), which

1. in a fork, imports what a warm worker imports (`zygote.prepare`) and lists
   the submodules the worker holds bound to their parents (in scope: not the
   standard library's, not ours, made by the import system);
2. for each top-level package the worker holds (the preloaded ones first), in
   a fork of the clean interpreter, imports it (after the preload's first
   modules when it does not import alone: dolfinx and petsc4py need mpi4py.MPI
   loaded first) and lists what is bound and loaded, until every submodule the
   worker holds bound is accounted for or the packages run out; what no such
   import binds is hidden;
3. for each package with hidden submodules, imports it fresh again and, in a
   fork of that for each hidden submodule, imports the submodule and lists
   what that bound.

Every figure comes from a real import in a process that had imported nothing
else, so the view is exact for an attempt that imports a package and then its
submodules. Standard library only at module level: the clean interpreter must
stay clean.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import site
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROBE_SECONDS = 600
CACHE_VARIABLE = "FEMBENCH_CACHE_DIR"  # a directory where measured views are kept across processes


@functools.cache
def fresh_view_data(preload: tuple[str, ...], package_parent: str, env: tuple[tuple[str, str], ...]) -> str:
    """The fresh view of a worker preloading `preload`, as JSON text: measured
    once per process and preload, or once per installation where
    $FEMBENCH_CACHE_DIR names a directory to keep it in (`_cached`)."""
    cached = _cached(preload, package_parent, env)
    try:
        text = cached.read_text() if cached is not None else ""
        json.loads(text)
        return text
    except (OSError, ValueError):
        pass
    text = _probe_in_clean_interpreter(preload, package_parent, env)
    if cached is not None:
        try:  # written whole or not at all: a concurrent reader never sees half of it
            cached.parent.mkdir(parents=True, exist_ok=True)
            fd, partial = tempfile.mkstemp(dir=cached.parent, prefix=".fresh-view-")
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(partial, cached)
        except OSError:
            pass
    return text


def _cached(preload: tuple[str, ...], package_parent: str, env: tuple[tuple[str, str], ...]) -> Path | None:
    """Where the view of this preload on this installation is kept. The probe
    costs seconds of CPU per preload (scipy's: ~20 s, one import per hidden
    submodule), and its result depends only on what a fresh interpreter
    imports: the interpreter, the environment, the directories a worker
    imports from as they are listed (installing, removing or upgrading a
    distribution changes a listing), and the sandbox's own code, which runs in
    the worker before it is measured. A package's file edited in place, with
    nothing installed, is not seen: remove the cache directory after that."""
    home = os.environ.get(CACHE_VARIABLE, "")
    if not os.path.isabs(home):
        return None  # kept only where the user asked: nothing is written to a home directory unasked
    sandbox = Path(__file__).parent
    listed = []
    for directory in (*site.getsitepackages(), package_parent):
        try:
            listed.append([(e.name, e.stat(follow_symlinks=False).st_mtime_ns) for e in os.scandir(directory)])
        except OSError:
            listed.append([])
    code = sorted((p.name, hashlib.sha256(p.read_bytes()).hexdigest()) for p in sandbox.glob("*.py"))
    key = [sys.executable, sys.version, list(preload), package_parent, list(env), sorted(map(sorted, listed)), code]
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:40]
    return Path(home) / f"fresh-view-{digest}.json"


def _probe_in_clean_interpreter(preload: tuple[str, ...], package_parent: str, env: tuple[tuple[str, str], ...]) -> str:
    done = subprocess.run(
        [sys.executable, "-I", os.path.abspath(__file__), package_parent, *preload],
        capture_output=True,
        text=True,
        env=dict(env),
        cwd="/",
        timeout=PROBE_SECONDS,
    )
    if done.returncode != 0:
        tail = done.stderr.strip()[-1000:]
        raise RuntimeError(f"measuring what a fresh interpreter binds for preload {list(preload)} failed: {tail}")
    return done.stdout


def view_file(preload: tuple[str, ...], package_parent: str, env: dict[str, str]) -> str:
    """A new file holding the fresh view of `preload`, for one worker to read and remove."""
    data = fresh_view_data(preload, package_parent, tuple(sorted(env.items())))
    fd, path = tempfile.mkstemp(prefix="fembench-view-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        fh.write(data)
    return path


def in_scope(name: str, module: Any) -> bool:
    """A submodule the view governs: bound to its parent by the import system,
    not part of the standard library nor of this package (the sandbox's own)."""
    top = name.partition(".")[0]
    if "." not in name or top in sys.stdlib_module_names or top == "fembench_agents":
        return False
    if getattr(getattr(module, "__spec__", None), "name", None) != name:
        return False  # made by hand (Cython's shared modules), not imported
    parent_name, _, child = name.rpartition(".")
    parent = sys.modules.get(parent_name)
    return parent is not None and vars(parent).get(child) is module


def _importable_top(name: str, module: Any) -> bool:
    if "." in name or name in sys.stdlib_module_names or name == "fembench_agents":
        return False
    return getattr(getattr(module, "__spec__", None), "name", None) == name


def bound_submodules() -> set[str]:
    return {name for name, module in list(sys.modules.items()) if in_scope(name, module)}


def _in_fork(work: Callable[[], Any]) -> Any:
    """`work()` in a fork of this process, its JSON result back; None if it raised."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 1
        try:
            data = json.dumps(work()).encode()
            view = memoryview(data)
            while view:
                view = view[os.write(write, view) :]
            code = 0
        except BaseException:  # noqa: BLE001 - a failed import is a result here: None
            pass
        finally:
            os._exit(code)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    return json.loads(b"".join(chunks)) if os.waitstatus_to_exitcode(status) == 0 else None


def _worker_bound(package_parent: str, preload: list[str]) -> dict[str, list[str]]:
    sys.path.insert(0, package_parent)
    from fembench_agents.scoring.sandbox import zygote

    zygote.prepare(preload)
    tops = {name for name, module in list(sys.modules.items()) if _importable_top(name, module)}
    return {"bound": sorted(bound_submodules()), "tops": sorted(tops)}


def _top(top: str, prefix: list[str], candidates: list[str]) -> dict[str, Any]:
    """In a fork: import `top` fresh, then each of `candidates` in a fork of that."""
    for name in prefix:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - a prefix module is a help, not a requirement
            pass
    importlib.import_module(top)
    bound = bound_submodules()

    def submodule(name: str) -> list[str]:
        importlib.import_module(name)
        return sorted(bound_submodules() - bound)

    return {
        "bound": sorted(bound),
        "loaded": sorted(name for name in sys.modules if name.partition(".")[0] not in sys.stdlib_module_names),
        "binds": {c: _in_fork(functools.partial(submodule, c)) for c in candidates},
    }


def _fresh_top(
    top: str, preload: list[str], candidates: list[str], after: int = 0
) -> tuple[int, dict[str, Any]] | None:
    """`_top` alone first, else after the preload's first k modules; with the k it took."""
    for k in range(after, len(preload) + 1):
        report = _in_fork(functools.partial(_top, top, preload[:k], candidates))
        if report is not None:
            return k, report
    return None


def _probe_order(tops: list[str], preload: list[str], bound: set[str]) -> list[str]:
    """The preloaded packages first, in their order, then the others by how many
    submodules the worker holds bound under them: the imports most likely to
    bind everything come first, so that the probe can stop early."""
    first = list(dict.fromkeys(name.partition(".")[0] for name in preload))
    weight = {top: sum(1 for name in bound if name.partition(".")[0] == top) for top in tops}
    rest = sorted((t for t in tops if t not in first), key=lambda t: (-weight[t], t))
    return [t for t in first if t in weight] + rest


def _depth_first(names: set[str]) -> list[str]:
    return sorted(names, key=lambda n: (n.count("."), n))


def probe(package_parent: str, preload: list[str]) -> dict[str, Any]:
    worker = _in_fork(functools.partial(_worker_bound, package_parent, preload))
    if worker is None:
        raise RuntimeError(f"a worker preloading {preload} does not start: importing them failed")
    bound_in_worker = set(worker["bound"])
    fresh_bound: set[str] = set()
    loaded: set[str] = set()
    prefixes: dict[str, int] = {}
    for top in _probe_order(worker["tops"], preload, bound_in_worker):  # each package an attempt may import
        if not bound_in_worker - fresh_bound:
            break  # every submodule bound in the worker is bound by a fresh import: no other import changes that
        found = _fresh_top(top, preload, [])
        if found is None:  # it never imports fresh: its submodules stay as the worker has them
            fresh_bound.update(n for n in bound_in_worker if n.partition(".")[0] == top)
            continue
        prefixes[top], report = found
        fresh_bound.update(report["bound"])
        loaded.update(report["loaded"])
    detached = bound_in_worker - fresh_bound
    binds: dict[str, list[str] | None] = {}
    for top in sorted({name.partition(".")[0] for name in detached}):
        mine = sorted(n for n in detached if n.partition(".")[0] == top)
        found = _fresh_top(top, preload, mine, prefixes.get(top, 0)) if top in prefixes else None
        binds.update(found[1]["binds"] if found is not None else {})
    view = {}
    for name in _depth_first(detached):
        got = binds.get(name)
        # One that does not import after its package alone binds, as far as we know, its whole package's.
        top = name.partition(".")[0]
        binding = set(got) if got is not None else {d for d in detached if d.partition(".")[0] == top}
        view[name] = _depth_first((binding & detached) | {name})
    return {"detached": view, "loaded": sorted(loaded & detached)}


if __name__ == "__main__":
    print(json.dumps(probe(sys.argv[1], sys.argv[2:])))

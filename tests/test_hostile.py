"""A corpus of hostile submissions. Each must be scored as a failure, must not
take the evaluator down, and must leave the next (correct) attempt passing.

Most attempts run against a task that allows `import os`, `sys`, `signal`,
`socket`, `ctypes`, ... so that they reach the sandbox instead of being stopped
by the static import check; where possible an attack is written so that it
*passes* when it succeeds (it returns the right answer, or the reference's), so
a failure shows that the sandbox stopped it rather than that the attack was
clumsy."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

import numpy as np
import pytest
from conftest import CORRECT_SCALE, FEM_1D, FRAME_STACK, GOOD_SCALE_TESTS, ROOT, scale_source, write_module

from fembench_agents.scoring import codec
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.scoring.sandbox.pool import non_system_places
from fembench_agents.suite import outcomes as oc
from fembench_agents.suite.loader import load_task
from fembench_agents.suite.model import Task
from fembench_agents.suite.scoring import FunctionScorer

HOSTILE_IMPORTS = (
    "import os",
    "import sys",
    "import signal",
    "import socket",
    "import builtins",
    "import shutil",
    "import ctypes",
    "import resource",
    "import json",
    "import time",
    "import re",
)
HOSTILE_INPUTS = "[[np.array([1.0, 2.0, 3.0]), 2.0]]"  # one input: a timeout costs 1 s + the job overhead
CORRECT_VALUE = np.array([2.0, 4.0, 6.0])  # the reference's output on it

# Shared by attacks: the frames of the running job, found without importing anything.
STACK = FRAME_STACK


@dataclass
class Context:
    task_path: Path
    task_dir: Path
    outside: Path  # a directory of the parent's, outside every sandbox
    marker: str  # a process name attacks give themselves, to find leftovers
    port: int = 0
    abstract: str = ""
    listener_hits: list[bytes] = field(default_factory=list)

    def values(self) -> dict[str, str]:
        good = json.dumps(
            {"event": "input", "index": 0, "status": "ok", "seconds": 0.0, "value": codec.to_data(CORRECT_VALUE)}
        )
        return {
            "task_path": repr(str(self.task_path)),
            "task_dir": repr(str(self.task_dir)),
            "outside": repr(str(self.outside)),
            "root": repr(str(ROOT)),
            "marker": repr(self.marker),
            "pytest_pid": str(os.getpid()),
            "port": str(self.port),
            "abstract": repr(self.abstract),
            "forged_good": repr(good),
            "stack": STACK,
        }


@dataclass(frozen=True)
class Case:
    id: str
    code: str  # a string.Template over Context.values()
    kind: str = "function"  # function | tests
    # hostile (permissive imports) | strict (numpy and pytest only) | solo (one worker) | stateful (implementations
    # that keep what they are given, and crash or hang when told to: `stateful_task`)
    task: str = "hostile"
    reasons: tuple[str, ...] = ()  # acceptable failure reasons; empty: any failure
    check: Callable[[Context], None] | None = None  # what must hold afterwards
    no_test_passes: bool = False  # tests: not one of them may count as passing on the reference


def no_leftover_processes(ctx: Context) -> None:
    deadline = time.monotonic() + 3.0
    while True:
        alive = []
        for pid in os.listdir("/proc"):
            try:
                if pid.isdigit() and Path(f"/proc/{pid}/comm").read_text().strip() == ctx.marker:
                    alive.append(pid)
            except OSError:
                continue
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not alive, f"processes of the job outlived it: {alive}"


def nothing_written(ctx: Context) -> None:
    assert not (ctx.outside / "escaped.txt").exists()
    assert not (ctx.task_dir / "escaped.py").exists()
    assert not (ROOT / "tests" / "_escaped.txt").exists()
    for d in ("/run/lock", "/var/tmp", "/dev/shm"):
        assert not Path(d, ctx.marker).exists()


def nothing_deleted(ctx: Context) -> None:
    assert ctx.task_path.exists()
    assert (ctx.outside / "sentinel.txt").read_text() == "keep me"


def listener_untouched(ctx: Context) -> None:
    time.sleep(0.2)
    assert ctx.listener_hits == []


NAME_SELF = "ctypes.CDLL(None).prctl(15, $marker.encode(), 0, 0, 0)"

CASES = [
    Case(
        "infinite_loop",
        """
def scale_vector(x, factor):
    while True:
        pass
""",
        reasons=("timeout",),
    ),
    Case(
        "ignore_signals_and_spin",
        """
import signal
def scale_vector(x, factor):
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGXCPU, signal.SIGHUP, signal.SIGUSR1):
        signal.signal(s, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGXCPU})
    while True:
        pass
""",
        reasons=("timeout",),
    ),
    Case(
        "fork_bomb",
        f"""
import os, ctypes
def scale_vector(x, factor):
    {NAME_SELF}
    while True:
        os.fork()
""",
        check=no_leftover_processes,
    ),
    Case(
        "fork_bomb_via_subclasses",
        """
def scale_vector(x, factor):
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            fork = cls.__init__.__globals__["fork"]
            break
    while True:
        fork()
""",
        task="strict",
    ),
    Case(
        "daemon_escapes_with_setsid",
        f"""
import os, ctypes
def scale_vector(x, factor):
    {NAME_SELF}
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:  # outlives the job unless the sandbox kills it
                try:
                    open($outside + "/escaped.txt", "w").write("late")
                except OSError:
                    pass
        os._exit(0)
    return [0.0]
""",
        check=lambda ctx: (no_leftover_processes(ctx), nothing_written(ctx)),
    ),
    Case(
        "allocate_20_gb",
        """
import numpy as np
def scale_vector(x, factor):
    block = np.ones(20 * 2**30 // 8)
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float) + 0 * block[0]
""",
        reasons=("runtime_error", "crashed"),
    ),
    Case(
        "raise_own_limits_then_allocate",
        """
import numpy as np, resource
def scale_vector(x, factor):
    for limit in (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NPROC, resource.RLIMIT_FSIZE):
        try:
            resource.setrlimit(limit, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        except (ValueError, OSError):
            pass
    block = np.ones(20 * 2**30 // 8)
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float) + 0 * block[0]
""",
        reasons=("runtime_error", "crashed"),
    ),
    Case(
        "write_outside_scratch",
        """
import numpy as np
def scale_vector(x, factor):
    with open("in_scratch.txt", "w") as fh:  # the scratch directory is writable
        fh.write("fine")
    wrote = []
    for path in ($outside + "/escaped.txt", $task_dir + "/escaped.py", $root + "/tests/_escaped.txt",
                 "/escaped.txt", "/usr/escaped.txt", "/run/lock/" + $marker, "/var/tmp/" + $marker,
                 "/dev/shm/" + $marker):
        try:
            with open(path, "w") as fh:
                fh.write("escaped")
            wrote.append(path)
        except OSError:
            pass
    if not wrote:
        raise PermissionError("every write outside scratch was refused")
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float)
""",
        reasons=("runtime_error",),
        check=nothing_written,
    ),
    Case(
        "find_any_writable_directory",
        """
import os
import numpy as np
def scale_vector(x, factor):
    scratch = os.getcwd()
    for root, dirs, _ in os.walk("/"):
        if root in ("/proc", "/sys") or root == scratch:
            dirs[:] = []
            continue
        if os.access(root, os.W_OK):
            try:
                open(os.path.join(root, $marker), "w").close()
            except OSError:
                continue
            return np.array([2.0, 4.0, 6.0])  # somewhere to leave a note for a later attempt
    raise PermissionError("nowhere to write but scratch")
""",
        reasons=("runtime_error", "timeout"),
        check=nothing_written,
    ),
    Case(
        "delete_files",
        """
import os, shutil
import numpy as np
def scale_vector(x, factor):
    removed = []
    for path in ($task_path, $outside + "/sentinel.txt"):
        try:
            os.remove(path)
            removed.append(path)
        except OSError:
            pass
    for d in ($task_dir, $outside):
        shutil.rmtree(d, ignore_errors=True)
    if not removed:
        raise FileNotFoundError("nothing could be deleted")
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float)
""",
        reasons=("runtime_error",),
        check=nothing_deleted,
    ),
    Case(
        "sys_exit_zero",
        """
import sys
def scale_vector(x, factor):
    sys.exit(0)
""",
        reasons=("runtime_error",),
    ),
    Case(
        "os_exit_zero",
        """
import os
def scale_vector(x, factor):
    os._exit(0)
""",
        reasons=("crashed",),
    ),
    Case(
        "keyboard_interrupt",
        """
def scale_vector(x, factor):
    raise KeyboardInterrupt
""",
        reasons=("runtime_error",),
    ),
    Case(
        "reassign_numpy_and_builtins",
        """
import builtins
import numpy as np
def scale_vector(x, factor):
    np.allclose = lambda *a, **k: True
    np.isclose = lambda *a, **k: np.ones(np.shape(a[0]), dtype=bool)
    np.array_equal = lambda *a, **k: True
    np.testing.assert_allclose = lambda *a, **k: None
    builtins.abs = lambda v: 0
    builtins.isinstance = lambda *a: True
    builtins.len = lambda v: 0
    return np.asarray(x, dtype=float) * 0 + 7
""",
        reasons=("wrong_output", "crashed"),
    ),  # a broken isinstance may break the child's own reporting
    Case(
        "mutate_inputs",
        """
import numpy as np
def scale_vector(x, factor):
    x[...] = 0.0
    if factor < 0:
        raise ValueError
    return factor * x
""",
        reasons=("wrong_output",),
    ),
    Case(
        "forged_frames_on_stdout_and_stderr",
        """
import os, sys
import numpy as np
def scale_vector(x, factor):
    for line in ($forged_good, '{"event": "done"}'):
        print(line)
        sys.stdout.write(line + "\\n")
        sys.stdout.flush()
        os.write(1, (line + "\\n").encode())
        os.write(2, (line + "\\n").encode())
    return np.asarray(x, dtype=float) * 0 + 7
""",
        reasons=("wrong_output",),
    ),
    Case(
        "forged_and_malformed_frames_on_result_pipe",
        """
import os
import numpy as np
$stack
FORGED = [
    '{"event": "isolation", "level": "none"}',
    '{"event": "input", "index": 0, "status": "match"}',
    '{"event": "verdict", "passed": true}',
    '{"event": "input", "index": 0, "status": "error", "error_mro": 5, "traceback": 5}',
    '{"event": "input", "index": 0, "status": "error", "error_type": {"a": 1}, "traceback": [{"b": 2}]}',
    '{"event": "input", "index": 0, "status": "ok", "value": {"__ndarray__": {"dtype": "float64", "shape": [0, 1e30], "data": ""}}}',
    '{"event": "input", "index": 0, "status": "ok", "value": {"__unknown__": 1}}',
    "[" * 100000 + "]" * 100000,
    '{"event": ' + '{"x": ' * 50000 + '1' + '}' * 50000 + '}',
    "not json at all",
]
def scale_vector(x, factor):
    out = next(f.f_locals["out"] for f in _stack() if "out" in f.f_locals)
    for line in FORGED:
        os.write(out._fd, (line + "\\n").encode())
    return np.asarray(x, dtype=float) * 0 + 7
""",
        reasons=("wrong_output",),
    ),
    Case(
        "object_whose_eq_is_always_true",
        """
import numpy as np
class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    def __array__(self, dtype=None, copy=None):
        return np.array([2.0, 4.0, 6.0])
    def __float__(self):
        return 2.0
def scale_vector(x, factor):
    if factor < 0:
        raise ValueError
    return Anything()
""",
        reasons=("wrong_output",),
    ),
    Case(
        "numpy_subclass_that_lies",
        """
import numpy as np
class Liar(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool)
    def tobytes(self, *a, **k):
        return self.good.tobytes()
    def __array__(self, *a, **k):
        return self.good
    def view(self, *a, **k):
        return self.good
    def copy(self, *a, **k):
        return self.good
def scale_vector(x, factor):
    if factor < 0:
        raise ValueError
    good = factor * np.asarray(x, dtype=float)
    wrong = np.zeros_like(good).view(Liar)
    wrong.good = good
    return wrong
""",
        reasons=("wrong_output",),
    ),
    Case(
        "container_subclasses",
        """
import numpy as np
class L(list):
    pass
class D(dict):
    pass
def scale_vector(x, factor):
    if factor < 0:
        raise ValueError
    return L(factor * np.asarray(x, dtype=float))
""",
        reasons=("wrong_output",),
    ),
    Case(
        "huge_output",
        """
def scale_vector(x, factor):
    return "x" * (200 * 2**20)
""",
        reasons=("crashed", "runtime_error", "timeout"),
    ),
    Case(
        "huge_array_output",
        """
import numpy as np
def scale_vector(x, factor):
    return np.zeros(6_000_000)  # 48 MB, 64 MB encoded
""",
        reasons=("crashed", "runtime_error", "timeout"),
    ),
    Case(
        "unpicklable_generator",
        """
def scale_vector(x, factor):
    if factor < 0:
        raise ValueError
    return (factor * v for v in x)
""",
        reasons=("wrong_output",),
    ),
    Case(
        "unpicklable_lambda",
        """
def scale_vector(x, factor):
    if factor < 0:
        raise ValueError
    return lambda: factor * x
""",
        reasons=("wrong_output",),
    ),
    Case(
        "recursion_bomb",
        """
def scale_vector(x, factor):
    return scale_vector(x, factor)
""",
        reasons=("runtime_error",),
    ),
    Case(
        "segfault",
        """
import ctypes
def scale_vector(x, factor):
    return ctypes.string_at(8, 16)  # reads unmapped memory: SIGSEGV
""",
        reasons=("crashed",),
    ),
    Case(
        "read_reference_task_file",
        """
$stack
def scale_vector(x, factor):
    for path in ($task_path, "/proc/1/root" + $task_path, "/proc/$pytest_pid/root" + $task_path):
        try:
            with open(path) as fh:
                source = fh.read()
        except OSError:
            continue
        ns = {}
        exec(source, ns)
        return ns["scale_vector"](x, factor)
    raise FileNotFoundError("the task file is out of reach")
""",
        reasons=("runtime_error",),
    ),
    Case(
        "list_task_directory",
        """
import os
def scale_vector(x, factor):
    names = os.listdir($task_dir)
    if any(n.endswith(".py") for n in names):
        source = open(os.path.join($task_dir, [n for n in names if n.endswith(".py")][0])).read()
        ns = {}
        exec(source, ns)
        return ns["scale_vector"](x, factor)
    raise FileNotFoundError(str(names))
""",
        reasons=("runtime_error",),
    ),
    Case(
        "tcp_to_parent_listener",
        """
import socket
import numpy as np
def scale_vector(x, factor):
    with socket.create_connection(("127.0.0.1", $port), timeout=2) as s:
        s.sendall(b"escaped")
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float)
""",
        reasons=("runtime_error",),
        check=listener_untouched,
    ),
    Case(
        "abstract_unix_socket_to_parent",
        """
import socket
import numpy as np
def scale_vector(x, factor):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\\0" + $abstract)
    s.sendall(b"escaped")
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float)
""",
        reasons=("runtime_error",),
        check=listener_untouched,
    ),
    Case(
        "network_interfaces",
        """
import socket
import numpy as np
def scale_vector(x, factor):
    names = [name for _, name in socket.if_nameindex() if name != "lo"]
    if not names:
        raise OSError("no network interface but loopback")
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float)
""",
        reasons=("runtime_error",),
    ),
    Case(
        "kill_parent_and_runner",
        """
import os, signal
import numpy as np
def scale_vector(x, factor):
    killed = 0
    for pid in (os.getppid(), $pytest_pid, 1):
        if pid <= 1 or pid == os.getpid():
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    if not killed:
        raise PermissionError("no other process could be signalled")
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float)
""",
        reasons=("runtime_error",),
    ),
    Case(
        "stop_own_process_group",
        """
import os, signal
def scale_vector(x, factor):
    os.kill(0, signal.SIGSTOP)  # hangs the job, unless it runs as the init of its own PID namespace
    return x
""",
    ),
    Case(
        "read_inherited_descriptors",
        """
import os
import numpy as np
def scale_vector(x, factor):
    leaked = []
    for fd in range(0, 256):
        if fd in (1, 2):
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            continue
        if data:
            leaked.append(fd)
    if not leaked:
        raise OSError("no descriptor holds anything to read")
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float)
""",
        reasons=("runtime_error",),
    ),
    # Reference values of an earlier job, looked for on the worker's stack
    # (run on a one-worker sandbox right after the reference ran).
    Case(
        "reference_outputs_from_the_stack",
        """
import json
import numpy as np
$stack
def scale_vector(x, factor):
    if factor < 0:
        raise ValueError("as documented")
    codec = next(f.f_globals["codec"] for f in _stack() if "codec" in f.f_globals)
    for frame in _stack():
        for value in list(frame.f_locals.values()):
            if isinstance(value, dict) and "frames_text" in value:
                for line in value["frames_text"].splitlines():
                    found = json.loads(line)
                    if found.get("status") == "ok":
                        decoded = codec.from_data(found["value"])
                        if np.shape(decoded) == np.shape(x):
                            return decoded
    raise LookupError("no earlier reply in reach")
""",
        task="solo",
        reasons=("runtime_error",),
    ),
    Case(
        "reference_outputs_from_the_heap",
        """
import ctypes, json, re
import numpy as np
PATTERN = re.compile(rb'\\{"event": "input", "index": 0, "status": "ok"[^\\n]*?"value": (\\{"__ndarray__": \\{[^}]*\\}\\})')
$stack
def scale_vector(x, factor):
    if factor < 0:
        raise ValueError("as documented")
    codec = next(f.f_globals["codec"] for f in _stack() if "codec" in f.f_globals)
    with open("/proc/self/maps") as fh:
        regions = [line.split() for line in fh]
    for r in regions:
        if "rw" not in r[1] or (len(r) > 5 and r[5].startswith("/")):
            continue
        start, end = (int(v, 16) for v in r[0].split("-"))
        if end - start > 512 * 2**20:
            continue
        try:
            blob = ctypes.string_at(start, end - start)
        except Exception:
            continue
        for m in PATTERN.finditer(blob):
            try:
                value = codec.from_data(json.loads(m.group(1)))
            except Exception:
                continue
            if np.shape(value) == np.shape(x):
                return value
    raise LookupError("no earlier reply in memory")
""",
        task="solo",
        reasons=("runtime_error",),
    ),
    # ----- generated tests
    Case(
        "tests_call_pytest_skip",
        """
import pytest
def test_scales_values(fcn):
    pytest.skip("nothing to see")
def test_negative_factor_raises(fcn):
    pytest.skip("nothing to see")
""",
        kind="tests",
        no_test_passes=True,
    ),
    Case(
        "tests_call_pytest_exit",
        """
import pytest
def test_scales_values(fcn):
    pytest.exit("bye", returncode=0)
def test_negative_factor_raises(fcn):
    pytest.exit("bye", returncode=0)
""",
        kind="tests",
        no_test_passes=True,
    ),
    Case(
        "tests_raise_system_exit_and_xfail",
        """
import pytest
def test_scales_values(fcn):
    raise SystemExit(0)
def test_negative_factor_raises(fcn):
    pytest.xfail("expected")
""",
        kind="tests",
        no_test_passes=True,
    ),
    Case(
        "tests_exit_the_process",
        """
import os
def test_scales_values(fcn):
    os._exit(0)
def test_negative_factor_raises(fcn):
    os._exit(0)
""",
        kind="tests",
        no_test_passes=True,
    ),
    Case(
        "tests_mutate_reference_through_globals",
        """
import numpy as np
def test_scales_values(fcn):
    g = fcn.__globals__
    for name in list(g):
        if not name.startswith("__"):
            g[name] = None
    g["np"] = None
    fcn.__code__ = (lambda x, factor: 0).__code__
    fcn.__defaults__ = (1,)
    assert fcn(1, 2) == 0
def test_negative_factor_raises(fcn):
    fcn.__globals__.clear()
    assert True
""",
        kind="tests",
    ),
    Case(
        "tests_reassign_numpy_checks",
        """
import numpy as np
import builtins
def test_scales_values(fcn):
    np.allclose = lambda *a, **k: True
    np.isclose = lambda *a, **k: True
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [3.0, 6.0])
def test_negative_factor_raises(fcn):
    builtins.AssertionError = type("Quiet", (Exception,), {})
    assert True
""",
        kind="tests",
    ),
    Case(
        "tests_identify_the_implementation_from_the_stack",
        """
$stack
def _is_reference(fcn):
    for frame in _stack():
        job = frame.f_locals.get("job")
        if isinstance(job, dict) and isinstance(job.get("implementation"), dict):
            spec = job["implementation"]
            if str(spec.get("function", "")).startswith("fail"):
                return False
            ns = {}
            exec(spec["module_source"], ns)
            return ns["scale_vector"].__code__.co_code == fcn.__code__.co_code
    raise LookupError("no job on the stack")
def test_scales_values(fcn):
    assert _is_reference(fcn)
def test_negative_factor_raises(fcn):
    assert _is_reference(fcn)
""",
        kind="tests",
    ),
    Case(
        "tests_identify_the_reference_by_its_docstring",
        """
def _documented(fcn):
    consts = [c for c in fcn.__code__.co_consts if isinstance(c, str)]
    return bool(fcn.__doc__) or any("Raises" in c or "Return" in c for c in consts)
def test_scales_values(fcn):
    assert _documented(fcn)
def test_negative_factor_raises(fcn):
    assert _documented(fcn)
""",
        kind="tests",
    ),
    # ----- generated tests against implementations served pair after pair by one long-lived server each
    # (sandbox/implementation_host.py): what they leave there reaches no later pair, so the next attempt's
    # tests still pass on the reference and catch every expected failure
    Case(
        "tests_leave_arguments_in_a_shared_implementation",
        """
import numpy as np
def test_scales_values(fcn):
    for _ in range(3):
        fcn(np.array([1.0]), "keep")  # a stateful implementation keeps them...
    assert np.allclose(fcn(np.array([1.0, 2.0]), 3.0), [12.0, 15.0])  # ...and they show, within this pair
def test_negative_factor_raises(fcn):
    assert fcn(np.array([1.0]), "keep") == 1.0
""",
        kind="tests",
        task="stateful",
    ),
    Case(
        "tests_crash_a_shared_implementation",
        """
import numpy as np
def test_scales_values(fcn):
    fcn(np.array([1.0]), "crash")
def test_negative_factor_raises(fcn):
    fcn(np.array([1.0]), "crash")
""",
        kind="tests",
        task="stateful",
        no_test_passes=True,
    ),
    Case(
        "tests_leave_a_shared_implementation_hanging",
        """
import threading, time
import numpy as np
def _hang(fcn):
    threading.Thread(target=fcn, args=(np.array([1.0]), "hang"), daemon=True).start()
    time.sleep(0.2)  # the call is still running when this pair ends
def test_scales_values(fcn):
    _hang(fcn)
def test_negative_factor_raises(fcn):
    _hang(fcn)
""",
        kind="tests",
        task="stateful",
    ),
    Case(
        "tests_read_the_task_module",
        """
def _reference():
    try:
        source = open($task_path).read()
    except OSError:
        return None
    ns = {}
    exec(source, ns)
    return ns["scale_vector"]
def test_scales_values(fcn):
    import numpy as np
    ref = _reference()
    assert ref is not None
    for f in (1.0, 2.5):
        assert np.allclose(fcn(np.array([1.0, -2.0]), f), ref(np.array([1.0, -2.0]), f))
def test_negative_factor_raises(fcn):
    import numpy as np
    ref = _reference()
    assert ref is not None
    try:
        ref(np.array([1.0]), -1.0)
    except ValueError:
        import pytest
        with pytest.raises(ValueError):
            fcn(np.array([1.0]), -1.0)
""",
        kind="tests",
    ),
]


# ----------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile_tasks")


@pytest.fixture(scope="module")
def hostile_task(sandbox: Sandbox, hostile_dir: Path) -> Task:
    source = scale_source(
        "hostile_scale_CC0_H0_T0", imports=HOSTILE_IMPORTS, inputs=HOSTILE_INPUTS, extensions={"time_limit": "1"}
    )
    return load_task(write_module(hostile_dir, "hostile_scale_CC0_H0_T0.py", source), sandbox)


STATEFUL_HELPER = '''

_KEPT = []  # what the implementation keeps of the calls it is given (a cache, say)


def _kept(word):
    """A factor given as a word is kept, or obeyed ("crash", "hang"); the number kept so far."""
    if word == "crash":
        os.kill(os.getpid(), signal.SIGKILL)
    while word == "hang":
        pass
    _KEPT.append(word)
    return float(len(_KEPT))
'''
# each implementation answers a word with `_kept`, and shifts every other answer by what it keeps
STATEFUL_PREFIX = (
    "    if isinstance(factor, str):\n        return _kept(factor)\n    x = np.asarray(x, dtype=float) + len(_KEPT)\n"
)
STATEFUL_BODIES = (
    ("    x = np.asarray(x, dtype=float)\n    if factor < 0:", STATEFUL_PREFIX + "    if factor < 0:"),
    ('    """Adds the factor instead of multiplying by it."""\n', '    """Adds the factor."""\n' + STATEFUL_PREFIX),
    ('    """Never checks the sign of the factor."""\n', '    """Never checks the sign."""\n' + STATEFUL_PREFIX),
)


@pytest.fixture(scope="module")
def stateful_task(sandbox: Sandbox, hostile_dir: Path) -> Task:
    """The scale task whose implementations keep what a test gives them, and crash or hang when told to."""
    source = scale_source("stateful_scale_CC0_H0_T0", imports=(*HOSTILE_IMPORTS, "import threading"))
    for old, new in STATEFUL_BODIES:
        assert old in source
        source = source.replace(old, new, 1)
    source = source.replace("\n\n\ndef scale_vector(", STATEFUL_HELPER + "\n\ndef scale_vector(", 1)
    return load_task(write_module(hostile_dir, "stateful_scale_CC0_H0_T0.py", source), sandbox)


@pytest.fixture(scope="module")
def solo_evaluator() -> Iterator[Evaluator]:
    """One worker: an attempt runs on the worker that just ran the reference."""
    with Sandbox(workers=1) as sb:
        ev = FunctionScorer(sb)
        yield ev
        ev.close()


@pytest.fixture
def listeners() -> Iterator[tuple[int, str, list[bytes]]]:
    """A TCP listener on loopback and one on an abstract unix socket, in this process."""
    hits: list[bytes] = []
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"fembench-test-{uuid.uuid4().hex}"
    unix.bind("\0" + name)
    unix.listen()
    stop = threading.Event()

    def serve(sock: socket.socket) -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                hits.append(conn.recv(100) or b"<connected>")

    threads = [threading.Thread(target=serve, args=(s,), daemon=True) for s in (tcp, unix)]
    for t in threads:
        t.start()
    yield tcp.getsockname()[1], name, hits
    stop.set()
    for t in threads:
        t.join()
    tcp.close()
    unix.close()


def score(evaluator: Evaluator, task: Task, case: Case, code: str) -> oc.FunctionOutcome | oc.TestSuiteOutcome:
    return evaluator.score(task, "tests", code) if case.kind == "tests" else evaluator.score(task, "code", code)


def correct_for(task: Task) -> str:
    return CORRECT_SCALE.replace("def scale_vector", f"def {task.main_name}")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_attempt_fails_and_the_next_attempt_passes(
    case: Case,
    evaluator: Evaluator,
    solo_evaluator: Evaluator,
    hostile_task: Task,
    stateful_task: Task,
    hostile_dir: Path,
    load: Callable[[str], Task],
    tmp_path: Path,
    listeners: tuple[int, str, list[bytes]],
) -> None:
    port, abstract, hits = listeners
    task = hostile_task
    ev = solo_evaluator if case.task == "solo" else evaluator
    if case.task == "strict":
        task = load("slow_scale_CC0_H0_T0")
    elif case.task == "stateful":
        task = stateful_task
    outside = tmp_path / "parent"
    outside.mkdir()
    (outside / "sentinel.txt").write_text("keep me")
    ctx = Context(
        task_path=Path(task.path),
        task_dir=Path(task.path).parent,
        outside=outside,
        marker=f"fb{uuid.uuid4().hex[:10]}",
        port=port,
        abstract=abstract,
        listener_hits=hits,
    )
    code = Template(case.code).substitute(ctx.values())
    inputs_before = json.dumps(task.inputs)
    if case.task == "solo":
        ev._references.clear()  # the reference runs on the one worker right before the attempt

    outcome = score(ev, task, case, code)

    assert not outcome.passed, outcome
    if case.kind == "function":
        assert outcome.failed_stage in ("execute", "correct"), "the attack must reach the sandbox"
        if case.reasons:
            assert outcome.reason in case.reasons, outcome.stages
    else:
        assert outcome.failed_stage == "tests", "the attack must reach the sandbox"
        assert outcome.joint_score < 1.0
        if case.no_test_passes:
            assert not any(t.passes_reference for t in outcome.tests), outcome.tests
    if case.check:
        case.check(ctx)
    assert json.dumps(task.inputs) == inputs_before
    assert Path(task.path).exists()

    after = ev.score(task, "code", correct_for(task))
    assert after.passed, after.stages
    if case.kind == "tests":
        suite = ev.score(task, "tests", GOOD_SCALE_TESTS)
        assert suite.passed and suite.joint_score == 1.0


def test_generated_tests_cannot_tell_implementations_apart(evaluator: Evaluator, scale_task: Task) -> None:
    """Every implementation a test runs against (reference or expected failure)
    looks alike from inside: same name, no docstring, same globals, same place."""
    probe = """
def _fingerprint(fcn):
    code = fcn.__code__
    return (fcn.__name__, fcn.__qualname__, fcn.__doc__, fcn.__module__, code.co_filename, code.co_firstlineno,
            sorted(k for k in fcn.__globals__ if not k.startswith("__")),
            [d for d in ("Return factor * x", "Adds the factor", "Never checks the sign") if d in str(code.co_consts)])
def test_scales_values(fcn):
    assert _fingerprint(fcn) == EXPECTED
def test_negative_factor_raises(fcn):
    assert _fingerprint(fcn) == EXPECTED
"""
    # Learn the reference's fingerprint, then require it from every implementation.
    learn = probe.replace("assert _fingerprint(fcn) == EXPECTED", "raise RuntimeError(repr(_fingerprint(fcn)))")
    impl = FunctionScorer.task_implementation(scale_task, "fail_adds")
    source = {"preamble": ["import numpy as np\nimport pytest"], "code": learn}
    seen = set()
    for name in (scale_task.main_name, "fail_adds", "fail_no_check"):
        implementation = FunctionScorer.task_implementation(scale_task, name)
        result = evaluator.scorer_for("code").run_pairs(
            scale_task, source, [implementation], [("test_scales_values", 0)]
        )[0]
        seen.add(result.events("test")[0]["message"])
    assert len(seen) == 1, seen
    assert "scale_vector" in next(iter(seen)) and "fail_" not in next(iter(seen))
    assert "fail_" not in impl["module_source"] and "test_" not in impl["module_source"]
    assert "task_info" not in impl["module_source"]


def test_secret_in_parent_environment_never_reaches_an_attempt(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret = f"sk-fake-{uuid.uuid4().hex}"
    monkeypatch.setenv("FEMBENCH_FAKE_SECRET", secret)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    attempt = """
import os
import numpy as np
def scale_vector(x, factor):
    found = [f"{k}={v}" for k, v in os.environ.items() if "SECRET" in k or "API_KEY" in k]
    for pid in ["self", "1", str(os.getppid()), "$pytest_pid"] + os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                text = fh.read().decode(errors="replace")
        except OSError:
            continue
        found += [v for v in text.split("\\0") if "SECRET" in v or "API_KEY" in v]
    if found:
        raise RuntimeError(" ".join(found))
    if factor < 0:
        raise ValueError
    return factor * np.asarray(x, dtype=float) + 1.0  # nothing found: an honest wrong answer
"""
    task_dir = tmp_path / "tasks"
    path = write_module(
        task_dir,
        "hostile_scale_CC0_H0_T0.py",
        scale_source("hostile_scale_CC0_H0_T0", imports=HOSTILE_IMPORTS, inputs=HOSTILE_INPUTS),
    )
    with Sandbox(workers=1) as sb:
        ev = FunctionScorer(sb)
        task = load_task(path, sb)
        outcome = ev.score(task, "code", attempt.replace("$pytest_pid", str(os.getpid())))
        after = ev.score(task, "code", CORRECT_SCALE)
        ev.close()
    text = outcome.model_dump_json()
    assert secret not in text
    assert not outcome.passed
    assert outcome.reason == "wrong_output", outcome.stages  # the search ran to the end and found nothing
    assert after.passed


def test_kill_every_process_spares_a_concurrent_attempt(evaluator: Evaluator, hostile_task: Task) -> None:
    slow_correct = CORRECT_SCALE.replace("    if factor < 0:", "    sum(range(4 * 10**7))\n    if factor < 0:", 1)
    killer = """
import os, signal, time
import numpy as np
def scale_vector(x, factor):
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        for sig in (signal.SIGKILL, signal.SIGSTOP):
            try:
                os.kill(-1, sig)
            except OSError:
                pass
    return np.asarray(x, dtype=float) * 0 + 7
"""
    evaluator.scorer_for("code").reference_outputs(hostile_task)
    results: dict[str, oc.FunctionOutcome] = {}
    slow = threading.Thread(target=lambda: results.update(slow=evaluator.score(hostile_task, "code", slow_correct)))
    slow.start()
    time.sleep(0.2)
    hostile = evaluator.score(hostile_task, "code", killer)
    slow.join()
    assert not hostile.passed
    assert results["slow"].passed, results["slow"].stages
    assert results["slow"].stages[2].seconds > 0.3  # it really ran while the killer did


def test_sandbox_reports_namespaced_isolation(evaluator: Evaluator, scale_task: Task) -> None:
    report = evaluator.sandbox.isolation()
    assert (report.level, report.detail) == ("namespaced", "root" if os.geteuid() == 0 else "user namespace")
    outcome = evaluator.score(scale_task, "code", CORRECT_SCALE)
    assert outcome.passed
    assert outcome.isolation == "namespaced"
    suite = evaluator.score(scale_task, "tests", GOOD_SCALE_TESTS)
    assert suite.isolation == "namespaced"
    # allowing weaker isolation accepts nothing where there is none: no run says "accepted"
    with Sandbox(workers=1, allow_weak_isolation=True) as allowing:
        assert allowing.isolation() == report
        assert "accepted" not in allowing.isolation().summary()


def test_real_task_file_is_out_of_reach(evaluator: Evaluator, sandbox: Sandbox) -> None:
    path = FEM_1D / "FEM_1D_uniform_mesh_CC0_H0_T0.py"
    task = load_task(path, sandbox)
    attempt = f"""
def generate_uniform_mesh_1d(x_min, x_max, num_elements):
    ns = {{}}
    exec(open({str(path)!r}).read(), ns)
    return ns["generate_uniform_mesh_1d"](x_min, x_max, num_elements)
"""
    outcome = evaluator.score(task, "code", attempt)
    assert not outcome.passed
    assert outcome.reason == "runtime_error"
    assert outcome.inputs[0].error is not None and outcome.inputs[0].error.type == "FileNotFoundError"


def test_every_top_level_directory_but_the_systems_is_hidden(tmp_path: Path) -> None:
    for name in ("usr", "etc", "opt", "var", "nix", "work", "srv", "data", ".cache"):
        (tmp_path / name).mkdir()
    (tmp_path / "bin").symlink_to("usr")  # merged /usr: the link is left to what it points at
    (tmp_path / "elsewhere").symlink_to(tmp_path / "work")
    (tmp_path / "notes.txt").write_text("a file, not a place")
    assert non_system_places(str(tmp_path)) == [str(tmp_path / n) for n in (".cache", "data", "srv", "work")]
    assert non_system_places(str(tmp_path / "missing")) == []


def test_another_checkout_at_the_top_of_the_machine_is_out_of_reach(hostile_task: Task) -> None:
    """A second checkout of the project outside every home and /tmp (as /work/other or /srv/x would
    be; here a new directory at the top of the filesystem) keeps its cases' hidden records from an
    attempt: every top-level directory but the system's is hidden (pool.non_system_places)."""
    if os.geteuid() != 0:
        pytest.skip("needs root: it creates a directory at the top of the filesystem")
    other = Path("/") / f"fembench-other-checkout-{uuid.uuid4().hex[:8]}"
    secret = other / "cases" / "hidden" / "poisson_basic.json"
    secret.parent.mkdir(parents=True)
    secret.write_text('{"solution": "2.0 4.0 6.0"}')
    other.chmod(0o755)
    secret.parent.chmod(0o755)
    attempt = f"""
import json
import numpy as np
def scale_vector(x, factor):
    return np.array([float(v) for v in json.load(open({str(secret)!r}))["solution"].split()])
"""
    try:
        with Sandbox(workers=1) as sb:
            scorer = FunctionScorer(sb)
            outcome = scorer.score(hostile_task, "code", attempt)
            scorer.close()
    finally:
        secret.unlink()
        secret.parent.rmdir()
        secret.parent.parent.rmdir()
        other.rmdir()
    assert not outcome.passed
    assert outcome.reason == "runtime_error"
    assert outcome.inputs[0].error is not None and outcome.inputs[0].error.type == "FileNotFoundError"


SHM_WRITER = """
import ctypes
import numpy as np
def scale_vector(x, factor):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget($key, 4096, 0o1666)  # IPC_CREAT | 0666
    if shmid < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    ctypes.memmove(libc.shmat(shmid, None, 0), b"2.0 4.0 6.0", 11)
    return np.zeros(1)
"""

SHM_READER = """
import ctypes
import numpy as np
def scale_vector(x, factor):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget($key, 4096, 0o666)
    if shmid < 0:
        raise OSError(ctypes.get_errno(), "no message from an earlier attempt")
    return np.array([float(v) for v in ctypes.string_at(libc.shmat(shmid, None, 0), 11).split()])
"""


def test_shared_memory_does_not_outlive_an_attempt(evaluator: Evaluator, hostile_task: Task) -> None:
    """An attempt cannot leave a System V shared-memory segment behind for a
    later attempt to read (which would make a score depend on what ran before)."""
    import ctypes
    import random

    key = random.randrange(1 << 20, 1 << 30)
    try:
        writer = evaluator.score(hostile_task, "code", Template(SHM_WRITER).substitute(key=key))
        reader = evaluator.score(hostile_task, "code", Template(SHM_READER).substitute(key=key))
        assert not writer.passed and writer.reason == "wrong_output"  # the segment was created and written
        assert not reader.passed, "a later attempt read what an earlier one left"
        assert reader.inputs[0].error is not None and "no message" in reader.inputs[0].error.message
    finally:  # never leave a segment on the machine
        libc = ctypes.CDLL(None, use_errno=True)
        shmid = libc.shmget(key, 0, 0)
        if shmid >= 0:
            libc.shmctl(shmid, 0, None)  # IPC_RMID

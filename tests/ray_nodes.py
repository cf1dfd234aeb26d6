"""A Ray cluster of two raylets on this machine, started as docs/ray.md says
(`ray start --head`, then `ray start --address HEAD:PORT`, token
authentication on every node and on the driver), each raylet with its own
worker pool, process group, temporary directory and home. The second node is
laid out unlike the driver: it runs a copy of the checkout from another path,
with a home, cases, calibration and run directories of its own.

Used by tests/test_ray_cluster.py and benchmarks/ray_throughput.py. Every
process a raylet starts stays in the process group of the `ray start` that
started it, so `stop` ends exactly those (never `ray stop`, which ends every
Ray process on the machine, other users' included)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import ray.util

ROOT = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).parent / "ray"

# What a node's `ray start` sees of this process's environment: enough to find
# Python; no key of the driver's.
_NODE_PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "TMPDIR", "LITELLM_LOCAL_MODEL_COST_MAP")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def descendants(roots: set[int]) -> set[int]:
    """Every live process below `roots`."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    below: set[int] = set()
    frontier = set(roots)
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier and p not in below}
        below |= frontier
    return below


@dataclass
class Node:
    """One raylet: the process group of the `ray start` that started it."""

    name: str
    pgid: int
    node_manager_port: int
    home: Path
    checkout: Path  # the code its workers import (PYTHONPATH)
    node_id: str = ""

    def processes(self) -> dict[int, str]:
        """pid -> command line of every live process of this node's group."""
        found = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z" and int(fields[2]) == self.pgid:
                found[int(entry)] = cmd
        return found

    def raylet(self) -> int:
        [pid] = [p for p, cmd in self.processes().items() if cmd.split(" ", 1)[0].endswith("/raylet")]
        return pid

    def stop(self) -> None:
        """SIGKILL to every process of the node: its group, and below it the
        Ray workers (each in a group of its own) and their sandbox workers."""
        doomed = descendants(set(self.processes()))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, signal.SIGKILL)
        for pid in doomed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@dataclass
class TwoNodes:
    address: str
    token: str
    head: Node
    second: Node
    node_root: Path  # the second node's own places: its checkout, home, cases, runs
    markers: dict[str, Path] = field(default_factory=dict)  # what the second node hides: name -> file

    def driver_env(self, **extra: str) -> dict[str, str]:
        """A driver's environment: this process's, with the cluster's token (given
        as RAY_AUTH_TOKEN, the second way docs/ray.md names)."""
        env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token, **extra}
        env.pop("RAY_ADDRESS", None)
        return env


def _node_env(home: Path, checkout: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _NODE_PASSTHROUGH}
    return {**env, "HOME": str(home), "PYTHONPATH": str(checkout), "RAY_AUTH_MODE": "token"}


def _ray_start(name: str, args: list[str], home: Path, checkout: Path, cwd: Path, timeout: float = 120) -> Node:
    port = free_port()
    proc = subprocess.Popen(
        [str(RAY), "start", *args, "--node-manager-port", str(port), "--disable-usage-stats"],
        env=_node_env(home, checkout),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its pid is the group of every process the node starts
    )
    node = Node(name, proc.pid, port, home, checkout)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        node.stop()
        raise
    if proc.returncode != 0:
        node.stop()
        raise RuntimeError(f"ray start of the {name} node exited {proc.returncode}:\n{out[-3000:]}")
    return node


def _home_with_token(home: Path, token: str) -> Path:
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(token)  # where docs/ray.md copies the head's token
    return home


def _copy_checkout(root: Path) -> Path:
    """The package copied to `root`/checkout: the same sources (the same code
    fingerprint) at another path."""
    checkout = root / "checkout"
    shutil.copytree(
        ROOT / "fembench_agents", checkout / "fembench_agents", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", checkout)
    return checkout


def _plant(checkout: Path, home: Path, marker: str) -> dict[str, Path]:
    """Files of the second node that no job may see, each name and text holding `marker`."""
    places = {
        "hidden test": checkout / "tasks" / f"hidden_{marker}.py",
        "reference": checkout / "cases" / "references" / f"reference_{marker}.json",
        "calibration": checkout / "cases" / "calibration" / f"calibration_{marker}.json",
        "run directory": checkout / "runs" / f"run_{marker}" / "log.jsonl",
        "home": home / f"secret_{marker}.txt",
    }
    for what, path in places.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{what} of the second node: {marker}\n")
    return places


def node_ids(cluster: TwoNodes, expected: int = 2, timeout: float = 60) -> dict[int, str]:
    """The alive nodes' ids by node manager port, read by a driver."""
    script = (
        "import json, sys, ray; ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False); "
        "print(json.dumps({n['NodeManagerPort']: n['NodeID'] for n in ray.nodes() if n['Alive']}))"
    )
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run(
            [sys.executable, "-c", script, cluster.address],
            env=cluster.driver_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if out.returncode == 0:
            ids = {int(k): v for k, v in json.loads(out.stdout.strip().splitlines()[-1]).items()}
            if len(ids) >= expected or time.monotonic() > deadline:
                return ids
        elif time.monotonic() > deadline:
            raise RuntimeError(f"no driver could list the cluster's nodes:\n{out.stderr[-3000:]}")
        time.sleep(0.5)


def _unhidden_parent() -> Path:
    """Where the second node's own places go: beside the checkout unless the driver hides that
    too (a checkout in /tmp or a home), else the first writable system directory it does not."""
    from fembench_agents.scoring.sandbox.pool import default_hidden

    hidden = [os.path.realpath(h) for h in default_hidden()]

    def reached(path: Path) -> bool:
        real = os.path.realpath(path)
        return any(real == h or real.startswith(h.rstrip("/") + "/") for h in hidden)

    for parent in (ROOT.parent, Path("/srv"), Path("/opt"), Path("/var/opt"), Path("/var/lib")):
        if parent.is_dir() and os.access(parent, os.W_OK) and not reached(parent):
            return parent
    raise RuntimeError(f"no writable directory outside the driver's hidden places {hidden} for the second node")


@contextlib.contextmanager
def two_nodes(cpus: int = 1, second: bool = True, token: str | None = None) -> Iterator[TwoNodes]:
    """A head and (with `second`) a second raylet of `cpus` CPUs each; every
    process of both ends when the context does, whatever happened inside.
    `token`: the cluster's (a new one by default; a driver process keeps the
    first token it used, so one that joins several clusters gives them one)."""
    token = token or uuid.uuid4().hex
    marker = f"node{uuid.uuid4().hex[:10]}"
    base = Path(tempfile.mkdtemp(prefix="fbray-"))  # short: Ray's socket paths live below it
    node_root = Path(tempfile.mkdtemp(prefix=".fembench-node-", dir=_unhidden_parent()))
    node_root.chmod(0o755)  # as a checkout usually is: readable to a job's user but for the hiding
    nodes: list[Node] = []
    try:
        head_home = _home_with_token(base / "head-home", token)
        port = free_port()
        common = ["--num-cpus", str(cpus)]
        nodes.append(
            _ray_start(
                "head",
                [
                    "--head",
                    "--port",
                    str(port),
                    "--ray-client-server-port",
                    str(free_port()),
                    "--include-dashboard=false",
                    "--temp-dir",
                    str(base / "h"),
                    *common,
                ],
                head_home,
                ROOT,
                base,
            )
        )
        address = f"{ray.util.get_node_ip_address()}:{port}"
        checkout = _copy_checkout(node_root)
        home = _home_with_token(node_root / "home", token)
        markers = _plant(checkout, home, marker)
        if second:
            nodes.append(
                _ray_start(
                    "second", ["--address", address, "--temp-dir", str(base / "n"), *common], home, checkout, checkout
                )
            )
        cluster = TwoNodes(address, token, nodes[0], nodes[-1], node_root, markers)
        ids = node_ids(cluster, expected=len(nodes))
        for node in nodes:
            node.node_id = ids[node.node_manager_port]
        yield cluster
    finally:
        for node in reversed(nodes):
            node.stop()
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(node_root, ignore_errors=True)


# A driver: the CLI with scripted models, whose executor's job lines (the node
# each sandbox job ran on) go to a file. argv: the models' rules (JSON: name ->
# [system text, text of the last message, reply, delay]: the reply of the first
# rule whose texts are in the request), the job log, then the CLI's arguments.
DRIVER = """
import asyncio, json, logging, sys
from fembench_agents.models import register_script

rules_path, jobs_path = sys.argv[1:3]

def model(rules):
    async def reply(messages):
        system = messages[0].content if messages[0].role == "system" else ""
        for in_system, in_last, text, delay in rules:
            if in_system in system and in_last in messages[-1].content:
                await asyncio.sleep(delay)
                return text
        return "no rule of the scripted model matched"
    return reply

for name, rules in json.loads(open(rules_path).read()).items():
    register_script(name, model(rules))
handler = logging.FileHandler(jobs_path)
handler.setFormatter(logging.Formatter("%(message)s"))
jobs = logging.getLogger("fembench_agents.scoring.sandbox.ray_executor")
jobs.addHandler(handler)
jobs.setLevel(logging.DEBUG)
sys.argv = ["fembench-agents", *sys.argv[3:]]
from fembench_agents.cli import main
main()
"""

# A driver whose every sandbox job runs on one node: argv: the address, the
# node's id, a task module, a file holding the attempt. Prints the attempt's
# outcome (JSON), then what a plain Ray task on that node (no sandbox) finds
# of `places` (argv[5:]): proof that the node has them and can read them.
ON_ONE_NODE = """
import json, os, sys
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.scoring.sandbox.ray_executor import RayExecutor, run_on_node
from fembench_agents.suite.loader import load_task

address, node, task_path, attempt_path = sys.argv[1:5]
there = NodeAffinitySchedulingStrategy(node, soft=False)

class OnOneNode(RayExecutor):
    def execute(self, request):
        done = ray.get(run_on_node.options(scheduling_strategy=there).remote(request, self.preload))
        assert done.node_id == node, (done.node_id, node)
        return done.reply

@ray.remote
def unconfined(places):
    import fembench_agents
    readable = {}
    for place in places:
        try:
            with open(place) as fh:
                readable[place] = fh.read()
        except OSError:
            pass
    return {"package": fembench_agents.__file__, "home": os.environ["HOME"], "readable": readable}

with Sandbox(executor=OnOneNode(address)) as sandbox:
    evaluator = Evaluator(sandbox)
    outcome = evaluator.score(load_task(task_path, sandbox), "code", open(attempt_path).read())
    evaluator.close()
    print(outcome.model_dump_json())
    print(json.dumps(ray.get(unconfined.options(scheduling_strategy=there).remote(sys.argv[5:]))))
"""

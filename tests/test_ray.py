"""`--executor ray`: sandbox jobs as Ray tasks on a local Ray instance with two
worker processes (started once for this module). The same `score` folder and
`compare` grid give the same outcomes on Ray as on the local pool; a killed
driver resumes on Ray without redoing finished episodes; a job whose Ray
worker is killed runs again and is recorded once; no secret of the driver
reaches a Ray process or a job."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import CORRECT_SCALE, FEM_1D, GOOD_SCALE_TESTS, scale_source, write_module

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import ray
import ray.util

from fembench_agents.models import make_client, register_script
from fembench_agents.runs.log import LOG_NAME, AttemptRecord, EpisodeRecord, episode_key, read_log
from fembench_agents.runs.reader import finished_episodes
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox, ray_executor
from fembench_agents.scoring.sandbox.executor import ExecutorChoice, SandboxRequest
from fembench_agents.scoring.sandbox.ray_executor import RayExecutor, run_on_node
from fembench_agents.suite.loader import load_task, load_tasks
from fembench_agents.suite.validation import ideal_answer

SECRET = f"sk-fake-{uuid.uuid4().hex}"
SECRET_VARS = ("OPENAI_API_KEY", "FEMBENCH_FAKE_SECRET")
SCALE = "scale_vector_CC0_H0_T0"
MESH = "FEM_1D_uniform_mesh_CC0_H0_T0"

WRONG_SCALE = """
import numpy as np

def scale_vector(x, factor):
    if factor < 0:
        raise ValueError("negative factor")
    return factor * np.asarray(x, dtype=float) + 1.0
"""

# The CLI with a scripted model: the reply of the first (text, reply) rule
# whose text is in the last message, from a JSON file; each call is counted
# in a file and delayed.
CLI_WITH_SCRIPT = """
import asyncio, json, sys
from fembench_agents.models import register_script

replies_path, calls_path, delay, name = sys.argv[1:5]
replies = json.loads(open(replies_path).read())

async def reply(messages):
    with open(calls_path, "a") as fh:
        fh.write("call\\n")
    await asyncio.sleep(float(delay))
    return next(reply for text, reply in replies if text in messages[-1].content)

register_script(name, reply)
sys.argv = ["fembench-agents", *sys.argv[5:]]
from fembench_agents.cli import main
main()
"""


@dataclass
class Cluster:
    sandbox: Sandbox  # a sandbox whose executor started the local Ray instance
    address: str  # for drivers in other processes: --executor ray:ADDRESS


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A local Ray instance with two worker processes, started by the executor
    while this process (the driver) holds secrets in its environment."""
    saved = {k: os.environ.get(k) for k in SECRET_VARS}
    os.environ.update(dict.fromkeys(SECRET_VARS, SECRET))
    sandbox = Sandbox(executor=RayExecutor(workers=2))
    try:
        yield Cluster(sandbox, ray.get_runtime_context().gcs_address)
    finally:
        sandbox.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def grid_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ray_tasks")
    write_module(d, f"{SCALE}.py", scale_source())
    shutil.copy(FEM_1D / f"{MESH}.py", d)
    return d


def fenced(code: str) -> str:
    return f"```python\n{code.strip()}\n```\n"


def cli_with_script(
    replies: list[tuple[str, str]], args: list[str | Path], tmp: Path, delay: float = 0.0, name: str = "grid"
) -> subprocess.Popen[str]:
    replies_path = tmp / f"replies-{uuid.uuid4().hex[:6]}.json"
    replies_path.write_text(json.dumps(replies))
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("FEMBENCH_TASKS", None)
    return subprocess.Popen(
        [sys.executable, "-c", CLI_WITH_SCRIPT, str(replies_path), str(tmp / "calls.txt"), str(delay), name]
        + [str(a) for a in args],
        cwd=tmp,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(*procs: subprocess.Popen[str]) -> list[tuple[int, str]]:
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        done.append((proc.returncode, out + err))
    return done


def timeless(data: Any) -> Any:
    """`data` without the wall times, the one thing two scorings of the same attempt may differ in."""
    if isinstance(data, dict):
        return {k: timeless(v) for k, v in data.items() if "seconds" not in k}
    if isinstance(data, list):
        return [timeless(v) for v in data]
    return data


def run_outcomes(run_dir: Path) -> tuple[list[Any], list[Any]]:
    """Every attempt's outcome and feedback, and every episode's verdict, of a run directory, in key order."""
    records = read_log(run_dir)
    attempts = sorted(
        (
            (r.episode, r.attempt_index, r.reply, timeless(r.outcome.model_dump(mode="json")) if r.outcome else None)
            + (r.feedback.model_dump(mode="json") if r.feedback else None,)
            for r in records
            if isinstance(r, AttemptRecord)
        ),
        key=lambda a: (a[0], a[1]),
    )
    episodes = sorted(
        (r.episode, r.status, r.passed, r.score, r.attempts, r.first_pass_attempt, r.failed_stage, r.reason)
        for r in records
        if isinstance(r, EpisodeRecord)
    )
    return attempts, episodes


# ----------------------------------------------------------------- the option


@pytest.mark.parametrize(
    ("text", "kind", "address"),
    [("local", "local", None), ("ray", "ray", None), ("ray:10.0.0.5:6379", "ray", "10.0.0.5:6379")],
)
def test_executor_choice_reads_local_ray_and_a_ray_address(text: str, kind: str, address: str | None) -> None:
    choice = ExecutorChoice.parse(text)
    assert (choice.kind, choice.address, str(choice)) == (kind, address, text)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("dask", "--executor 'dask': expected 'local', 'ray' or 'ray:ADDRESS'"),
        ("local:x", "--executor 'local:x': expected 'local', 'ray' or 'ray:ADDRESS'"),
        ("ray:", "--executor 'ray:': the Ray address after 'ray:' is empty; expected ray:HOST:PORT"),
    ],
)
def test_a_bad_executor_is_named_with_what_was_expected(text: str, says: str) -> None:
    with pytest.raises(ValueError) as exc:
        ExecutorChoice.parse(text)
    assert str(exc.value).startswith(says)


def test_score_with_a_bad_executor_exits_2_naming_it_before_scoring(tmp_path: Path) -> None:
    (tmp_path / "completions").mkdir()
    [(code, output)] = finish(cli_with_script([], ["score", "completions", "--executor", "dask"], tmp_path))
    assert code == 2
    assert "error: --executor 'dask': expected 'local', 'ray' or 'ray:ADDRESS' (e.g. ray:10.0.0.5:6379)" in output


# ----------------------------------------------------------------- same verdicts as locally


def test_score_on_ray_gives_the_outcomes_of_the_local_pool(cluster: Cluster, grid_tasks: Path, tmp_path: Path) -> None:
    with Sandbox(workers=1) as sandbox:
        tasks = {t.task_id: t for t in load_tasks(grid_tasks, sandbox)}
    folder = tmp_path / "completions"
    folder.mkdir()
    for task_id, task in tasks.items():
        (folder / f"{task_id}_code_good.py").write_text(fenced(ideal_answer(task)))
        (folder / f"{task_id}_test_good.py").write_text("\n\n".join(t.source for t in task.tests))
    (folder / f"{SCALE}_code_bad.py").write_text(fenced(WRONG_SCALE))
    (folder / f"{MESH}_code_bad.py").write_text("import os\ndef generate_uniform_mesh_1d(a, b, n):\n    return a\n")
    (folder / f"{SCALE}_test_bad.py").write_text(GOOD_SCALE_TESTS.replace("[3.0, 6.0]", "[3.0, 7.0]"))
    (folder / f"{MESH}_test_bad.py").write_text(tasks[MESH].tests[0].source)

    local, on_ray = finish(
        cli_with_script([], ["score", folder, "--tasks", grid_tasks, "--json", tmp_path / "local.json"], tmp_path),
        cli_with_script(
            [],
            [
                "score",
                folder,
                "--tasks",
                grid_tasks,
                "--json",
                tmp_path / "ray.json",
                "--executor",
                f"ray:{cluster.address}",
            ],
            tmp_path,
        ),
    )

    assert local[0] == 0, local[1]
    assert on_ray[0] == 0, on_ray[1]
    local_data = json.loads((tmp_path / "local.json").read_text())
    ray_data = json.loads((tmp_path / "ray.json").read_text())
    assert timeless(ray_data) == timeless(local_data)
    summaries = {s["label"]: (s["functions_correct"], s["mean_joint_test_success"]) for s in ray_data["summaries"]}
    assert summaries == {"good": (2, 1.0), "bad": (0, 0.5)}  # half of each bad suite is right
    bad = ray_data["function_outcomes"]["bad"]
    assert [s["reason"] for s in bad[SCALE]["stages"]] == [None, None, None, "wrong_output"]
    assert bad[MESH]["stages"][-1]["reason"] == "disallowed_import"
    assert ray_data["isolation"]["level"] == "namespaced"


def test_compare_on_ray_gives_the_verdicts_of_the_local_pool(
    cluster: Cluster, grid_tasks: Path, tmp_path: Path
) -> None:
    with Sandbox(workers=1) as sandbox:
        mesh = load_task(grid_tasks / f"{MESH}.py", sandbox)
    # scale: wrong, then right once it has seen feedback; mesh: right at once
    replies = [
        ("returned wrong results", fenced(CORRECT_SCALE)),
        ("scale_vector", fenced(WRONG_SCALE)),
        ("generate_uniform_mesh_1d", fenced(ideal_answer(mesh))),
    ]
    grid = ["compare", "--models", "scripted/grid", "--agents", "single-shot,feedback-loop:2", "--tasks-path", grid_tasks, "--repeats", "2"]  # fmt: skip
    (tmp_path / "local").mkdir()
    (tmp_path / "ray").mkdir()

    local, on_ray = finish(
        cli_with_script(replies, [*grid, "--out", tmp_path / "local" / "grid"], tmp_path / "local"),
        cli_with_script(
            replies,
            [*grid, "--out", tmp_path / "ray" / "grid", "--executor", f"ray:{cluster.address}"],
            tmp_path / "ray",
        ),
    )

    assert local[0] == 0, local[1]
    assert on_ray[0] == 0, on_ray[1]
    assert "2 sandbox workers on ray:" in on_ray[1]
    runs = ["scripted-grid__single-shot", "scripted-grid__feedback-loop-2"]
    for run in runs:
        assert run_outcomes(tmp_path / "ray" / "grid" / run) == run_outcomes(tmp_path / "local" / "grid" / run)
    single = run_outcomes(tmp_path / "ray" / "grid" / runs[0])[1]
    loop = run_outcomes(tmp_path / "ray" / "grid" / runs[1])[1]
    assert [(e[0].split("|")[3], e[2], e[4]) for e in single] == [
        (MESH, True, 1), (MESH, True, 1), (SCALE, False, 1), (SCALE, False, 1)
    ]  # fmt: skip
    assert [(e[0].split("|")[3], e[2], e[4], e[5]) for e in loop] == [
        (MESH, True, 1, 0), (MESH, True, 1, 0), (SCALE, True, 2, 1), (SCALE, True, 2, 1)
    ]  # fmt: skip


def test_a_reply_from_a_node_running_other_code_is_refused(
    cluster: Cluster, grid_tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = load_task(grid_tasks / f"{SCALE}.py", cluster.sandbox)
    evaluator = Evaluator(cluster.sandbox)
    assert evaluator.score(task, "code", fenced(CORRECT_SCALE)).passed
    monkeypatch.setattr(ray_executor, "code_fingerprint", lambda: "the-drivers-code")  # the nodes keep theirs
    with pytest.raises(RuntimeError) as exc:
        evaluator.score(task, "code", fenced(WRONG_SCALE))
    evaluator.close()
    node, driver = ray.util.get_node_ip_address(), "the-drivers-code"
    assert str(exc.value).startswith(f"Ray node {node} runs other fembench-agents code (sources ")
    assert str(exc.value).endswith(f", the driver's {driver}): install the driver's version on every node")


# ----------------------------------------------------------------- resume and lost workers


def test_kill_9_on_ray_and_resume_redoes_no_finished_episode(
    cluster: Cluster, grid_tasks: Path, tmp_path: Path
) -> None:
    repeats = 8
    out = tmp_path / "run"
    args = ["run", "--model", "scripted/slow", "--tasks", SCALE, "--tasks-path", grid_tasks, "--repeats", str(repeats),
            "--out", out, "--cache", tmp_path / "cache", "--executor", f"ray:{cluster.address}"]  # fmt: skip
    replies = [("scale_vector", fenced(CORRECT_SCALE))]
    proc = cli_with_script(replies, args, tmp_path, delay=0.4, name="slow")
    log = out / LOG_NAME
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if log.exists() and log.read_text().count('"type":"episode"') >= 3:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the driver ended before it was killed: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    before_text = log.read_text()
    done_before = finished_episodes(read_log(out))
    assert 3 <= len(done_before) < repeats
    calls_before = (tmp_path / "calls.txt").read_text().count("call")
    shutil.rmtree(tmp_path / "cache")  # a resumed episode asks the model again: counted below

    [(code, output)] = finish(cli_with_script(replies, args, tmp_path, delay=0.0, name="slow"))

    assert code == 0, output
    assert (tmp_path / "calls.txt").read_text().count("call") - calls_before == repeats - len(done_before)
    after = read_log(out)
    keys = {episode_key("scripted/slow", "single-shot", "code", SCALE, r) for r in range(repeats)}
    done = Counter(r.episode for r in after if isinstance(r, EpisodeRecord) and r.status == "done")
    assert set(done) == keys and set(done.values()) == {1}
    assert all(r.passed for r in after if isinstance(r, EpisodeRecord))
    assert log.read_text().startswith(before_text[: before_text.rfind("\n") + 1])
    for key, record in done_before.items():
        assert finished_episodes(after)[key] == record


def _children(pid: int) -> dict[int, int]:
    """Every process below `pid`: pid -> parent pid."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    below, frontier = {}, {pid}
    while frontier:
        found = {p: pp for p, pp in parents.items() if pp in frontier and p not in below}
        below.update(found)
        frontier = set(found)
    return below


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _ray_worker_running_a_job() -> int | None:
    """The Ray worker whose warm sandbox worker has had the same job child for half a second."""
    seen: dict[int, int] = {}
    for _ in range(2):
        below = _children(os.getpid())
        now = {}
        for pid, parent in below.items():
            if "zygote.main" in _cmdline(pid) and _cmdline(parent).startswith("ray::"):
                jobs = [p for p, pp in below.items() if pp == pid]
                if jobs:
                    now[parent] = jobs[0]
        if not seen:
            seen = now
            time.sleep(0.5)
            continue
        return next((w for w, job in now.items() if seen.get(w) == job), None)
    return None


def test_a_job_whose_ray_worker_is_killed_runs_again_and_is_recorded_once(cluster: Cluster, tmp_path: Path) -> None:
    task_path = write_module(
        tmp_path / "tasks", "slow_CC0_H0_T0.py", scale_source("slow_CC0_H0_T0", imports=("import time",))
    )
    slow = CORRECT_SCALE.replace("    if factor < 0:", "    time.sleep(1.5)\n    if factor < 0:").replace(
        "import numpy", "import time\nimport numpy"
    )
    name = f"lost{uuid.uuid4().hex[:6]}"
    script = register_script(name, lambda _: fenced(slow))
    evaluator = Evaluator(cluster.sandbox)
    task = load_task(task_path, cluster.sandbox)
    config = RunConfig(model=f"scripted/{name}", agent="single-shot", tasks=task.task_id)
    out = tmp_path / "run"
    ran: list[Any] = []
    thread = threading.Thread(
        target=lambda: ran.append(asyncio.run(execute_run(config, [task], out, make_client(config.model), evaluator)))
    )
    thread.start()
    killed = None
    deadline = time.monotonic() + 60
    while killed is None and time.monotonic() < deadline and thread.is_alive():
        killed = _ray_worker_running_a_job()
    assert killed is not None, "no Ray worker was seen running the attempt"
    os.kill(killed, signal.SIGKILL)
    thread.join(timeout=120)
    evaluator.close()

    assert not thread.is_alive() and len(ran) == 1
    assert not Path(f"/proc/{killed}").exists()
    records = read_log(out)
    attempts = [r for r in records if isinstance(r, AttemptRecord)]
    episodes = [r for r in records if isinstance(r, EpisodeRecord)]
    assert len(attempts) == 1 and attempts[0].outcome is not None and attempts[0].outcome.passed
    assert [(e.status, e.passed, e.attempts) for e in episodes] == [("done", True, 1)]
    assert script.calls == 1


# ----------------------------------------------------------------- secrets


def _environ(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def test_no_secret_of_the_driver_reaches_a_ray_process_or_a_job(cluster: Cluster, tmp_path: Path) -> None:
    assert os.environ["OPENAI_API_KEY"] == SECRET  # the driver holds it
    ray_processes = [p for p in _children(os.getpid()) if "ray" in _cmdline(p) or "gcs_server" in _cmdline(p)]
    assert len(ray_processes) >= 3  # the GCS, the raylet and worker processes
    assert [p for p in _children(os.getpid()) if SECRET in _environ(p)] == []

    # Even a Ray worker that holds the secret (given here through a runtime
    # env) runs its job with the sandbox's whitelisted environment.
    holding = {"env_vars": {"FEMBENCH_FAKE_SECRET": SECRET}}
    assert (
        ray.get(ray.remote(lambda: os.environ.get("FEMBENCH_FAKE_SECRET")).options(runtime_env=holding).remote())
        == SECRET
    )

    class SecretHoldingWorkers:
        size = 1

        def execute(self, request: SandboxRequest) -> dict[str, Any]:
            return ray.get(run_on_node.options(runtime_env=holding).remote(request, ())).reply  # type: ignore[no-any-return]

        def close(self) -> None:
            pass

    attempt = """
import os
import numpy as np
def scale_vector(x, factor):
    found = [f"{k}={v}" for k, v in os.environ.items() if "SECRET" in k or "API_KEY" in k]
    for pid in ["self", "1", str(os.getppid())] + os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                text = fh.read().decode(errors="replace")
        except OSError:
            continue
        found += [v for v in text.split("\\0") if "SECRET" in v or "API_KEY" in v]
    if found:
        raise RuntimeError(" ".join(found))
    if factor < 0:
        raise ValueError("negative factor")
    return factor * np.asarray(x, dtype=float)
"""
    task_path = write_module(
        tmp_path / "tasks", "env_CC0_H0_T0.py", scale_source("env_CC0_H0_T0", imports=("import os",))
    )
    with Sandbox(executor=SecretHoldingWorkers()) as sandbox:
        evaluator = Evaluator(sandbox)
        task = load_task(task_path, sandbox)
        outcome = evaluator.score(task, "code", attempt)
        evaluator.close()
    assert SECRET not in outcome.model_dump_json()
    assert [i.status for i in outcome.inputs] == ["match", "match", "match"]  # found nothing to raise about
    assert outcome.passed

"""`--executor ray:ADDRESS` on a real cluster of two raylets started with
`ray start` as docs/ray.md says (tests/ray_nodes.py): `score`, `compare`,
`optimize` and `replay --rescore` give the local pool's verdicts attempt by
attempt with jobs on both nodes; a node laid out unlike the driver hides its
own places from the attempts it runs; and killing the second node's raylet in
the middle of a run loses no episode and duplicates none (last: it leaves one
node)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CORRECT_SCALE, FEM_1D, GOOD_SCALE_TESTS, scale_source, write_module
from ray_nodes import DRIVER, TwoNodes, descendants, two_nodes
from test_ray import MESH, SCALE, WRONG_SCALE, fenced, run_outcomes, timeless

from fembench_agents.runs.log import LOG_NAME, AttemptRecord, EpisodeRecord, episode_key, read_log
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.scoring.sandbox.pool import default_hidden
from fembench_agents.suite.loader import load_task, load_tasks
from fembench_agents.suite.validation import ideal_answer

KEYWORD = "CHECK-EVERY-INDEX"


def slowed(code: str) -> str:
    """`code` whose scale_vector takes 0.3 s a call: a job outlasts the start of
    a Ray worker on the other node, so jobs queue for both (a node whose worker
    is warm would otherwise take every short job in turn)."""
    return "import time\n" + code.replace(
        "def scale_vector(x, factor):\n", "def scale_vector(x, factor):\n    time.sleep(0.3)\n"
    )


SLOW_RIGHT, SLOW_WRONG = slowed(CORRECT_SCALE), slowed(WRONG_SCALE)


@pytest.fixture(scope="module")
def cluster() -> Iterator[TwoNodes]:
    with two_nodes() as nodes:
        yield nodes


@pytest.fixture(scope="module")
def grid_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cluster_tasks")
    write_module(d, f"{SCALE}.py", scale_source(imports=("import time",)))
    shutil.copy(FEM_1D / f"{MESH}.py", d)
    return d


def driver(
    cluster: TwoNodes | None, args: list[Any], cwd: Path, models: dict[str, list[Any]] | None = None
) -> subprocess.Popen[str]:
    """The CLI with `models` scripted, on the cluster (`--executor ray:ADDRESS`) or, without one, locally."""
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "models.json").write_text(json.dumps(models or {}))
    executor = ["--executor", f"ray:{cluster.address}"] if cluster else []
    env = cluster.driver_env() if cluster else dict(os.environ)
    env.update({"COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    env.pop("FEMBENCH_TASKS", None)
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, cwd / "models.json", cwd / "jobs.log", *map(str, args), *executor],
        cwd=cwd,  # not the checkout: Ray puts the driver's directory on every worker's path
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(*procs: subprocess.Popen[str]) -> list[str]:
    """Each command's output; every one must have exited 0."""
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=400)
        assert proc.returncode == 0, out + err
        outputs.append(out + err)
    return outputs


def jobs_by_node(cwd: Path) -> Counter[str]:
    lines = (cwd / "jobs.log").read_text().splitlines() if (cwd / "jobs.log").exists() else []
    return Counter(m.group(1) for line in lines if (m := re.search(r"ran on Ray node (\w+)", line)))


def both_ran_jobs(cluster: TwoNodes, cwd: Path) -> None:
    ran = jobs_by_node(cwd)
    assert set(ran) == {cluster.head.node_id, cluster.second.node_id}, ran


# ----------------------------------------------------------------- same verdicts as the local pool


def test_score_on_two_raylets_gives_the_local_pools_outcomes(
    cluster: TwoNodes, grid_tasks: Path, tmp_path: Path
) -> None:
    with Sandbox(workers=1) as sandbox:
        tasks = {t.task_id: t for t in load_tasks(grid_tasks, sandbox)}
    folder = tmp_path / "completions"
    folder.mkdir()
    for task_id, task in tasks.items():
        (folder / f"{task_id}_code_good.py").write_text(fenced(ideal_answer(task)))
        (folder / f"{task_id}_test_good.py").write_text("\n\n".join(t.source for t in task.tests))
    (folder / f"{SCALE}_code_bad.py").write_text(fenced(SLOW_WRONG))
    (folder / f"{MESH}_code_bad.py").write_text("import os\ndef generate_uniform_mesh_1d(a, b, n):\n    return a\n")
    (folder / f"{SCALE}_test_bad.py").write_text(GOOD_SCALE_TESTS.replace("[3.0, 6.0]", "[3.0, 7.0]"))
    (folder / f"{MESH}_test_bad.py").write_text(tasks[MESH].tests[0].source)
    score = ["score", folder, "--tasks", grid_tasks, "--json", "scored.json"]

    finish(driver(None, score, tmp_path / "local"), driver(cluster, score, tmp_path / "ray"))

    on_ray = json.loads((tmp_path / "ray" / "scored.json").read_text())
    assert timeless(on_ray) == timeless(json.loads((tmp_path / "local" / "scored.json").read_text()))
    summaries = {s["label"]: (s["functions_correct"], s["mean_joint_test_success"]) for s in on_ray["summaries"]}
    assert summaries == {"good": (2, 1.0), "bad": (0, 0.5)}
    both_ran_jobs(cluster, tmp_path / "ray")


GRID = ["--models", "scripted/grid", "--agents", "single-shot,feedback-loop:2", "--repeats", "2"]
RUNS = ["scripted-grid__single-shot", "scripted-grid__feedback-loop-2"]


@pytest.fixture(scope="module")
def compared(cluster: TwoNodes, grid_tasks: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same `compare` grid run locally (local/) and on the cluster (ray/)."""
    tmp = tmp_path_factory.mktemp("compare")
    with Sandbox(workers=1) as sandbox:
        mesh = load_task(grid_tasks / f"{MESH}.py", sandbox)
    # scale: wrong, then right once it has seen feedback; mesh: right at once
    models = {
        "grid": [
            ["", "returned wrong results", fenced(SLOW_RIGHT), 0],
            ["", "scale_vector", fenced(SLOW_WRONG), 0],
            ["", "generate_uniform_mesh_1d", fenced(ideal_answer(mesh)), 0],
        ]
    }
    grid = ["compare", *GRID, "--tasks-path", grid_tasks, "--out", "grid", "--concurrency", "4"]
    finish(driver(None, grid, tmp / "local", models), driver(cluster, grid, tmp / "ray", models))
    return tmp


def test_compare_on_two_raylets_gives_the_local_pools_verdicts(cluster: TwoNodes, compared: Path) -> None:
    for run in RUNS:
        assert run_outcomes(compared / "ray" / "grid" / run) == run_outcomes(compared / "local" / "grid" / run)
    loop = run_outcomes(compared / "ray" / "grid" / RUNS[1])[1]
    assert [(e[0].split("|")[3], e[2], e[4], e[5]) for e in loop] == [
        (MESH, True, 1, 0), (MESH, True, 1, 0), (SCALE, True, 2, 1), (SCALE, True, 2, 1)
    ]  # fmt: skip
    both_ran_jobs(cluster, compared / "ray")


def test_replay_rescore_on_two_raylets_finds_every_outcome_unchanged(
    cluster: TwoNodes, compared: Path, grid_tasks: Path, tmp_path: Path
) -> None:
    run = compared / "ray" / "grid" / RUNS[1]
    before = (run / LOG_NAME).read_text()
    [output] = finish(driver(cluster, ["replay", run, "--rescore", "--tasks", grid_tasks], tmp_path))
    assert "re-scored: every attempt's outcome is identical" in output
    assert sum(jobs_by_node(tmp_path).values()) >= 6  # 6 attempts, each scored on the cluster
    assert (run / LOG_NAME).read_text() == before


def test_optimize_on_two_raylets_gives_the_local_result(cluster: TwoNodes, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    for i in range(3):
        write_module(tasks, f"scale{i}_CC0_H0_T0.py", scale_source(f"scale{i}_CC0_H0_T0", imports=("import time",)))
    experiment = tmp_path / "ray.toml"
    experiment.write_text(
        'kind = "optimize"\nname = "ray"\nheldout = "scale2_CC0_H0_T0"\nval_fraction = 0.5\n'
        "reflection_minibatch_size = 1\nheldout_repeats = 2\n[params]\ntemperature = 0.0\nmax_tokens = 512\n"
    )
    models = {  # the task model is right only under a system prompt holding KEYWORD
        "task": [[KEYWORD, "", fenced(SLOW_RIGHT), 0], ["", "", fenced(SLOW_WRONG), 0]],
        "reflect": [["", "", f"Here is the new instruction:\n```\nWrite clean code and {KEYWORD}.\n```", 0]],
    }
    optimize = ["optimize", "--experiment", experiment, "--model", "scripted/task", "--reflection-model",
                "scripted/reflect", "--budget", "4", "--tasks-path", tasks, "--out", "opt", "--prompt-out", "p.json"]  # fmt: skip

    finish(driver(None, optimize, tmp_path / "local", models), driver(cluster, optimize, tmp_path / "ray", models))

    judged = {
        where: timeless(json.loads((tmp_path / where / "opt" / "heldout.json").read_text()))
        for where in ("local", "ray")
    }
    assert judged["ray"] == judged["local"]
    assert [(r["task_id"], r["baseline_passed"], r["optimized_passed"]) for r in judged["ray"]["rows"]] == [
        ("scale2_CC0_H0_T0", 0, 2)
    ]
    assert KEYWORD in json.loads((tmp_path / "ray" / "p.json").read_text())["system_prompt"]
    both_ran_jobs(cluster, tmp_path / "ray")


# ----------------------------------------------------------------- a node laid out unlike the driver

SEARCH = """
import os
import numpy as np

PLACES = {places!r}
MARKER = {marker!r}
ROOT = {root!r}


def _found():
    found = []
    for place in PLACES:
        try:
            with open(place) as fh:
                found.append(f"read {{place}}: {{fh.read()}}")
        except OSError:
            pass
    for top, depth in ((ROOT, 9), ("/", 4)):
        for here, dirs, files in os.walk(top):
            if here.count("/") - top.rstrip("/").count("/") >= depth or here in ("/proc", "/sys", "/usr", "/dev"):
                dirs[:] = []
            found += [f"saw {{os.path.join(here, n)}}" for n in dirs + files if MARKER in n]
    return found


def scale_vector(x, factor):
    found = _found()
    if found:
        raise RuntimeError("; ".join(found))
    if factor < 0:
        raise ValueError("negative factor")
    return factor * np.asarray(x, dtype=float)
"""


def test_a_node_laid_out_unlike_the_driver_hides_its_own_places(cluster: TwoNodes, tmp_path: Path) -> None:
    second = cluster.second
    # None of the driver's hidden places covers the second node's: only the node's own hiding protects them.
    driver_hidden = [os.path.realpath(p) for p in (*default_hidden(), str(tmp_path))]
    root = os.path.realpath(cluster.node_root)
    assert not [h for h in driver_hidden if root == h or root.startswith(h.rstrip("/") + "/")]
    marker = cluster.markers["home"].name.split("_")[1].split(".")[0]
    places = [str(p) for p in cluster.markers.values()]
    task = write_module(
        tmp_path / "tasks", "search_CC0_H0_T0.py", scale_source("search_CC0_H0_T0", imports=("import os",))
    )
    attempt = tmp_path / "attempt.py"
    attempt.write_text(SEARCH.format(places=places, marker=marker, root=root))

    from ray_nodes import ON_ONE_NODE

    proc = subprocess.run(
        [sys.executable, "-c", ON_ONE_NODE, cluster.address, second.node_id, task, attempt, *places],
        cwd=tmp_path,
        env=cluster.driver_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outcome_line, unconfined_line = proc.stdout.strip().splitlines()[-2:]
    outcome, unconfined = json.loads(outcome_line), json.loads(unconfined_line)
    # The node is laid out apart: its own checkout and home, and every hidden file is there and readable to it.
    assert unconfined["package"] == str(second.checkout / "fembench_agents" / "__init__.py")
    assert unconfined["home"] == str(second.home)
    assert sorted(unconfined["readable"]) == sorted(places) and all(
        marker in t for t in unconfined["readable"].values()
    )
    # ... to any user, the job's too, but for the node's hiding
    for place in cluster.markers.values():
        assert place.stat().st_mode & 0o004 and all(d.stat().st_mode & 0o001 for d in place.parents)
    # An attempt run there finds none of them.
    assert marker not in outcome_line
    assert [i["status"] for i in outcome["inputs"]] == ["match", "match", "match"], outcome
    assert outcome["passed"] is True


def test_a_driver_without_the_clusters_token_is_told_what_to_set(cluster: TwoNodes, tmp_path: Path) -> None:
    (tmp_path / "completions").mkdir()
    env = {k: v for k, v in cluster.driver_env().items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
    proc = subprocess.run(
        [sys.executable, "-m", "fembench_agents.cli", "score", "completions", "--executor", f"ray:{cluster.address}"],
        cwd=tmp_path,
        env={**env, "HOME": str(tmp_path), "COLUMNS": "400"},  # no ~/.ray/auth_token either
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"error: --executor ray:{cluster.address}: the Ray cluster at {cluster.address} refused this driver's "
        "token or its lack of one (RAY_AUTH_MODE is unset): set RAY_AUTH_MODE=token and the cluster's token "
        "(~/.ray/auth_token or RAY_AUTH_TOKEN) here, as on every node (docs/ray.md)"
    )


# ----------------------------------------------------------------- a node lost in the middle of a run


def test_killing_the_second_raylet_mid_run_loses_no_episode_and_duplicates_none(
    cluster: TwoNodes, grid_tasks: Path, tmp_path: Path
) -> None:
    """Every process of the second node is killed while it runs a job (the job
    too, so it cannot reply). Last in this module: the cluster keeps its head only."""
    repeats = 8
    slower = fenced(slowed(CORRECT_SCALE).replace("time.sleep(0.3)", "time.sleep(0.6)"))  # 1.8 s a job
    models = {"slow": [["", "scale_vector", slower, 0]]}
    args = ["run", "--model", "scripted/slow", "--tasks", SCALE, "--tasks-path", grid_tasks, "--repeats", str(repeats),
            "--concurrency", "4", "--out", "run"]  # fmt: skip
    proc = driver(cluster, args, tmp_path, models)
    second = cluster.second
    raylet = second.raylet()
    killed_mid_job = False
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None and not killed_mid_job:
            # the second node has run a call job and is running another: its sandbox worker has a job child
            log = tmp_path / "jobs.log"
            ran_there = log.exists() and any(
                line.startswith("sandbox job call ") and second.node_id in line for line in log.read_text().splitlines()
            )
            below = descendants({raylet})
            busy = [p for p in below if "zygote" in _cmdline(p) and descendants({p})]
            if ran_there and busy:
                second.stop()  # the machine lost: its raylet, Ray workers, sandbox workers and the job
                killed_mid_job = True
            time.sleep(0.05)
        assert killed_mid_job, "the second node never ran a job to kill it in: " + str(jobs_by_node(tmp_path))
        before = Counter(jobs_by_node(tmp_path))
        gone = time.monotonic() + 10
        while second.processes() and time.monotonic() < gone:
            time.sleep(0.05)
        assert not second.processes()
        [_] = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    records = read_log(tmp_path / "run")
    keys = {episode_key("scripted/slow", "single-shot", "code", SCALE, r) for r in range(repeats)}
    episodes = Counter(r.episode for r in records if isinstance(r, EpisodeRecord))
    attempts = Counter(r.episode for r in records if isinstance(r, AttemptRecord))
    assert episodes == attempts == Counter(dict.fromkeys(keys, 1))  # every episode once, one attempt each
    assert all(r.passed for r in records if isinstance(r, EpisodeRecord))
    assert all(r.outcome and r.outcome.passed for r in records if isinstance(r, AttemptRecord))
    # What ran after the kill ran on the head, the job the second node was running too: it never replied.
    after = jobs_by_node(tmp_path) - before
    assert set(after) == {cluster.head.node_id}, after
    # The attempts' jobs are alike (one digest), each received once, the one lost with the node too.
    lines = (tmp_path / "jobs.log").read_text().splitlines()
    calls = Counter(line.split()[3] for line in lines if line.startswith("sandbox job call "))
    assert max(calls.values()) == repeats, calls
    assert not Path(f"/proc/{raylet}").exists()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""

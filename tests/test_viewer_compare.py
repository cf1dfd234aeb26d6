"""The side-by-side comparison's data, read back from what `view` writes for
two runs (tests/compare_runs.py): the arms, each task's verdict per arm, the
episodes paired by repeat index with the diffs of their programs attempt by
attempt, and the paired-test cells linking to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from compare_runs import HOSTILE, compare_runs
from run_builders import TASK_1D, TASK_2D, TASK_3D, episode
from viewer_runs import index_data, read_js_call, viewer_run

from fembench_agents.viewer import write_site
from fembench_agents.viewer.compare import ComparedEpisode, comparison


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare")
    return write_site(compare_runs(root), root / "site").parent


def task_file(site: Path, k: int) -> dict[str, Any]:
    number, data = read_js_call(site / "data" / "compare" / f"{k}.js", "fembenchCompareTask")
    assert number == k
    return data


def result(passes: int, repeats: int, solved: bool) -> dict[str, Any]:
    return {"passes": passes, "repeats": repeats, "solved": solved}


def test_the_arms_and_each_tasks_verdict_per_arm(site: Path) -> None:
    compare = index_data(site)["compare"]
    assert compare["arms"] == [
        {"model": "mock/model", "agent": "loop", "label": "mock/model / loop", "runs": ["alpha"], "episodes": 5},
        {"model": "mock/model", "agent": "single", "label": "mock/model / single", "runs": ["beta"], "episodes": 6},
    ]
    assert [(t["track"], t["task"], t["results"]) for t in compare["tasks"]] == [
        ("code", TASK_1D, [result(2, 2, True), result(1, 2, False)]),  # one of two repeats is no majority
        ("code", TASK_2D, [result(0, 1, False), result(0, 1, False)]),
        ("code", TASK_3D, [None, result(1, 1, True)]),  # loop never ran it
        ("numpy-scipy", "poisson_1", [result(0, 1, False), result(1, 1, True)]),
        ("numpy-scipy", "poisson_2", [result(1, 1, True), result(1, 1, True)]),
    ]
    assert len(list((site / "data" / "compare").iterdir())) == 5


def test_episodes_are_paired_by_repeat_and_diffed_attempt_by_attempt(site: Path) -> None:
    rows = index_data(site)["episodes"]
    assert [(r[2], r[4][:6], r[5]) for r in rows[:2] + rows[5:7]] == [
        ("loop", "FEM_1D", 0),
        ("loop", "FEM_1D", 1),
        ("single", "FEM_1D", 0),
        ("single", "FEM_1D", 1),
    ]
    header = ["--- mock/model / loop, attempt 1", "+++ mock/model / single, attempt 1"]
    assert task_file(site, 0) == {
        "track": "code",
        "task": TASK_1D,
        "repeats": [
            {
                "repeat": 0,
                "episodes": [0, 5],
                # loop's second attempt has no counterpart: single passed at once
                "diffs": {
                    "0-1": [[*header, "@@ -1,2 +1,2 @@", " def f(x):", "-    return x", "+    return x + x"], None]
                },
            },
            {
                "repeat": 1,
                "episodes": [1, 6],
                "diffs": {"0-1": [[*header, "@@ -1,2 +1,2 @@", " def f(x):", "-    return 2 * x", "+    return x"]]},
            },
        ],
    }
    assert task_file(site, 2) == {
        "track": "code",
        "task": TASK_3D,
        "repeats": [{"repeat": 0, "episodes": [None, 8], "diffs": {}}],
    }


def test_pde_cases_are_compared_alike(site: Path) -> None:
    header = ["--- mock/model / loop, attempt 1", "+++ mock/model / single, attempt 1"]
    assert task_file(site, 3)["repeats"] == [
        {
            "repeat": 0,
            "episodes": [3, 9],
            "diffs": {
                "0-1": [
                    [
                        *header,
                        "@@ -1,3 +1,3 @@",
                        " import numpy as np",
                        " ",
                        "-u = np.zeros(3)",
                        "+u = np.linalg.solve(A, b)",
                    ]
                ]
            },
        }
    ]
    assert task_file(site, 4)["repeats"] == [{"repeat": 0, "episodes": [4, 10], "diffs": {"0-1": [[]]}}]  # same code


def test_paired_test_cells_link_to_the_comparison_of_their_two_arms(site: Path) -> None:
    paired = {s["stem"]: s for s in index_data(site)["sections"]}["paired_tests"]
    assert paired["headers"] == [
        "Model",
        "Track",
        "Agent A",
        "Agent B",
        "Tasks",
        "Both",
        "A only",
        "B only",
        "Neither",
        "p",
    ]
    assert paired["rows"] == [
        ["mock/model", "code", "loop", "single", "2", "0", "1", "0", "1", "1"],
        ["mock/model", "numpy-scipy", "loop", "single", "2", "1", "0", "1", "0", "1"],
    ]
    code = paired["links"][0]

    def compare(show: str) -> dict[str, str]:
        return {"view": "compare", "arms": "0,1", "track": "code", "show": show}

    assert code == [
        compare("disagree"),
        compare("disagree"),
        {"model": "mock/model", "track": "code", "agent": "loop"},  # an agent's cell lists its episodes
        {"model": "mock/model", "track": "code", "agent": "single"},
        compare("all"),
        compare("AB"),
        compare("A"),
        compare("B"),
        compare("none"),
        compare("disagree"),
    ]
    assert paired["links"][1][0] == {"view": "compare", "arms": "0,1", "track": "numpy-scipy", "show": "disagree"}


def test_the_comparisons_verdicts_are_the_paired_tests(site: Path) -> None:
    """Both, A only, B only and Neither, counted from the comparison's verdicts
    on the tasks both arms ran, are the paired-test row's."""
    data = index_data(site)
    paired = {s["stem"]: s for s in data["sections"]}["paired_tests"]
    for row in paired["rows"]:
        verdicts = [
            (t["results"][0]["solved"], t["results"][1]["solved"])
            for t in data["compare"]["tasks"]
            if t["track"] == row[1] and None not in t["results"]
        ]
        counts = [(True, True), (True, False), (False, True), (False, False)]
        assert [str(verdicts.count(c)) for c in counts] == row[5:9]


def test_the_comparison_adds_nothing_the_episode_pages_do_not_show(site: Path) -> None:
    """Its files hold episode numbers and diffs; every changed or kept line of
    a diff is a line of the code the two episode pages show."""
    for k in range(5):
        data = task_file(site, k)
        assert set(data) == {"track", "task", "repeats"}
        for pair in data["repeats"]:
            assert set(pair) == {"repeat", "episodes", "diffs"}
            for key, diffs in pair["diffs"].items():
                i, j = (int(x) for x in key.split("-"))
                shown = set()
                for n in (pair["episodes"][i], pair["episodes"][j]):
                    _, ep = read_js_call(site / "data" / "episodes" / f"{n}.js", "fembenchEpisode")
                    shown |= {line for a in ep["attempts"] for line in a["code"].splitlines()}
                body = [line for d in diffs if d for line in d if not line.startswith(("---", "+++", "@@"))]
                assert all(line[1:] in shown for line in body), body


def test_a_hostile_reply_is_kept_as_text_in_the_data(site: Path) -> None:
    _, ep = read_js_call(site / "data" / "episodes" / "6.js", "fembenchEpisode")
    assert ep["attempts"][0]["reply"][0] == {"kind": "text", "text": HOSTILE.split("```")[0]}


def test_three_arms_of_two_models_sort_by_model_then_agent_and_diff_every_pair() -> None:
    def entry(n: int, agent: str, model: str, code: str) -> ComparedEpisode:
        return ComparedEpisode(n, "r", episode(agent, TASK_1D, 0, False, model=model), (code,))

    index, files = comparison(
        [entry(0, "b", "m2", "x = 1\n"), entry(1, "a", "m2", "x = 2\n"), entry(2, "z", "m1", "x = 1\n")]
    )
    assert [a["label"] for a in index["arms"]] == ["m1 / z", "m2 / a", "m2 / b"]
    (pair,) = files[0]["repeats"]
    assert pair["episodes"] == [2, 1, 0]
    assert {k: len(d[0]) for k, d in pair["diffs"].items()} == {"0-1": 5, "0-2": 0, "1-2": 5}
    assert pair["diffs"]["1-2"][0][2:] == ["@@ -1 +1 @@", "-x = 2", "+x = 1"]


def test_a_site_written_again_keeps_no_stale_comparison(site: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    write_site(compare_runs(tmp_path / "two"), out)
    write_site([viewer_run(tmp_path / "one")], out)
    assert len(list((out / "data" / "compare").iterdir())) == len(index_data(out)["compare"]["tasks"]) == 6

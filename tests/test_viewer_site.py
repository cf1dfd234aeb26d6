"""What `view` writes, read back as data: the index rows and linked tables,
one file per episode with every attempt, the reply's code, the diffs, and
the CLI over a directory of runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from viewer_runs import LOOP_CODES, index_data, read_js_call, viewer_run

from fembench_agents.cli import app
from fembench_agents.viewer import write_site
from fembench_agents.viewer.episodes import code_diff, extracted_code, reply_segments
from fembench_agents.viewer.index import EPISODE_FIELDS


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("viewer")
    return write_site([viewer_run(root / "run")], root / "site").parent


def episode_data(site: Path, n: int) -> dict[str, Any]:
    number, data = read_js_call(site / "data" / "episodes" / f"{n}.js", "fembenchEpisode")
    assert number == n
    return data


def rows(site: Path) -> list[dict[str, Any]]:
    data = index_data(site)
    return [dict(zip(data["fields"], r, strict=True)) for r in data["episodes"]]


def test_the_site_is_a_page_its_script_and_data_files(site: Path) -> None:
    assert {p.name for p in site.iterdir()} == {"index.html", "app.js", "compare.js", "style.css", "data", "plots"}
    html = (site / "index.html").read_text()
    scripts = (
        '<script src="app.js"></script>',
        '<script src="compare.js"></script>',
        '<script src="data/index.js"></script>',
    )
    assert [html.index(s) for s in scripts] == sorted(html.index(s) for s in scripts)  # the page's code before its data
    assert "http" not in html.replace('name="viewport"', "")  # nothing from the network
    for script in ("app.js", "compare.js"):
        assert "http:" not in (site / script).read_text() and "https:" not in (site / script).read_text()
        assert "innerHTML" not in (site / script).read_text()  # every text goes in as a text node
    assert len(list((site / "data" / "episodes").iterdir())) == 7
    assert {p.name for p in (site / "plots").iterdir()} >= {"correctness.png", "correctness.svg"}


def test_the_index_has_one_row_per_episode(site: Path) -> None:
    assert index_data(site)["fields"] == list(EPISODE_FIELDS)
    got = [(r["agent"], r["track"], r["task"][:6], r["status"], r["stage"], r["attempts"]) for r in rows(site)]
    assert got == [
        ("loop", "code", "MSA_3D", "passed", "", 3),
        ("single", "code", "FEM_1D", "passed", "", 1),
        ("single", "code", "FEM_2D", "failed", "correct", 1),
        ("single", "code", "MSA_3D", "failed", "correct", 1),
        ("single", "numpy-scipy", "poisso", "failed", "accurate", 1),
        ("single", "tests", "FEM_1D", "failed", "tests", 1),
        ("single", "tests", "FEM_2D", "failed", "model_error", 1),
    ]
    assert [r["n"] for r in rows(site)] == list(range(7))
    # tokens are prompt and completion together (100 + 40 per attempt); the loop's three attempts add up
    figures = [(r["score"], r["tokens"], r["cost"], r["seconds"]) for r in rows(site)]
    one = (140, 0.001, 1.0)
    assert figures == [
        (1.0, 420, 0.003, 3.0),
        (1.0, *one),
        (0.0, *one),
        (0.0, *one),
        (0.0, *one),
        (0.5, *one),
        (0.0, *one),
    ]
    assert (rows(site)[0]["domain"], rows(site)[0]["tier"], rows(site)[0]["knowledge"]) == ("MSA 3D", "T1", "CC1")


def test_a_feedback_loop_shows_every_attempt_with_diffs_and_feedback(site: Path) -> None:
    ep = episode_data(site, 0)
    assert [a["index"] for a in ep["attempts"]] == [0, 1, 2]
    assert [a["code"] for a in ep["attempts"]] == list(LOOP_CODES)
    assert [a["passed"] for a in ep["attempts"]] == [False, False, True]
    assert [a["feedback"] for a in ep["attempts"]] == ["attempt 0 failed", "attempt 1 failed", None]
    first, second, third = ep["attempts"]
    assert first["diff"] is None
    assert second["diff"][2:] == [
        "@@ -1,2 +1,3 @@",
        " def f(x):",
        "-    return x",
        "+    # scale it",
        "+    return 2 * x",
    ]
    assert third["diff"][4:] == ["     # scale it", "-    return 2 * x", "+    return 2.0 * x"]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert [s["stage"] for s in first["stages"]] == ["parse", "imports", "execute", "correct"]
    assert first["facts"] == ["input 0: mismatch, relative error 0.5"]
    assert first["reply"] == [
        {"kind": "text", "text": "Here is my attempt 0.\n"},
        {"kind": "code", "text": LOOP_CODES[0]},
        {"kind": "text", "text": "\n"},
    ]


def test_a_failed_model_call_and_a_pde_attempt_are_shown_as_they_ended(site: Path) -> None:
    failed = episode_data(site, 6)
    (a,) = failed["attempts"]
    assert (a["model_error"], a["passed"], a["stages"], failed["failed_stage"]) == ("timeout", None, [], "model_error")
    pde = episode_data(site, 4)
    assert pde["attempts"][0]["facts"] == [
        "library numpy-scipy, family poisson",
        "relative L2 error 0.002",
        "solve time 0.5 s",
        "gates: ours (alpha_acc 10, tau_min 1e-06, alpha_time 2, t_floor 0.1 s)",
    ]


def test_table_cells_link_to_the_episodes_behind_them(site: Path) -> None:
    sections = {s["stem"]: s for s in index_data(site)["sections"]}
    paper = sections["paper_code"]
    assert paper["headers"][3] == "mock/model / loop: any of 1"
    msa = next(i for i, r in enumerate(paper["rows"]) if r[2].startswith("MSA_3D"))
    assert paper["links"][msa][3] == {
        "model": "mock/model",
        "agent": "loop",
        "track": "code",
        "task": paper["rows"][msa][2],
    }
    assert paper["links"][-1][5] == {"model": "mock/model", "agent": "single", "track": "code"}  # the total row
    stages = sections["stage_failures"]
    col = stages["headers"].index("correct")
    code_single = next(i for i, r in enumerate(stages["rows"]) if r[1:3] == ["single", "code"])
    assert stages["links"][code_single][col] == {
        "model": "mock/model",
        "agent": "single",
        "track": "code",
        "stage": "correct",
    }
    # the "Failed" total lists every episode of its row, no stage of that name
    assert stages["headers"][3] == "Failed"
    assert stages["links"][code_single][3] == {"model": "mock/model", "agent": "single", "track": "code"}
    tier = sections["by_tier"]
    assert tier["links"][0][3] == {"model": "mock/model", "agent": "loop", "track": "code", "tier": "T1"}


def test_reply_segments_mark_only_python_blocks() -> None:
    reply = "Intro\n```python\nx = 1\n```\nthen\n```bash\nls\n```\n```\ny = 2\n```"
    assert reply_segments(reply) == [
        {"kind": "text", "text": "Intro\n"},
        {"kind": "code", "text": "x = 1\n"},
        {"kind": "text", "text": "\nthen\n```bash\nls\n```\n"},
        {"kind": "code", "text": "y = 2\n"},
    ]
    assert reply_segments("no code") == [{"kind": "text", "text": "no code"}]
    # the code an attempt is shown with: every Python block, as the parse stage reads them; bare code as it is
    assert extracted_code(reply) == "x = 1\n\n\ny = 2\n"
    assert extracted_code("def f():\n    return 1\n") == "def f():\n    return 1\n"
    assert code_diff("a\n", "a\n") == []


def test_view_over_a_compare_directory(tmp_path: Path) -> None:
    viewer_run(tmp_path / "compare" / "mock__loop")
    result = CliRunner().invoke(app, ["view", str(tmp_path / "compare"), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "site" / "index.html").exists()
    assert len(list((tmp_path / "site" / "data" / "episodes").iterdir())) == 7
    bad = CliRunner().invoke(app, ["view", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "not a run directory" in bad.output

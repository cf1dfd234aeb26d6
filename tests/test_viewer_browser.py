"""The viewer in a real headless Chromium, opened from disk: the index loads,
the filters and the table links change which episodes are listed, an
episode shows every attempt, a paired test's cell opens its two agents side
by side, and nothing reaches the console as an error.
Chromium missing is a failure, not a skip: scripts/test.sh installs it."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import MISSING, Browser, find_chromium
from compare_runs import HOSTILE, compare_runs
from run_builders import TASK_1D, TASK_2D, TASK_3D, attempt, episode, function_outcome, make_run
from viewer_runs import viewer_run

from fembench_agents.viewer import site_server, write_site

ROWS = "document.querySelectorAll('#episodes tr.episode-row').length"
COUNT = "document.getElementById('episode-count') && document.getElementById('episode-count').textContent"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    return write_site([viewer_run(root / "run")], root / "site")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = find_chromium()
    if executable is None:
        pytest.fail(MISSING.format(names=", ".join(("chromium", "chromium-browser", "google-chrome"))))
    with Browser(executable) as b:
        yield b


def open_index(browser: Browser, site: Path, fragment: str = "#/") -> None:
    browser.open(site.as_uri() + fragment)
    browser.wait_for(f"{COUNT} && {ROWS} > 0")


def select(browser: Browser, key: str, value: str) -> None:
    browser.evaluate(
        f"(() => {{ const s = document.getElementById('filter-{key}'); s.value = {json.dumps(value)};"
        " s.dispatchEvent(new Event('change')); })()"
    )


def test_the_index_loads_with_its_tables_plots_and_episodes(browser: Browser, site: Path) -> None:
    open_index(browser, site)
    assert browser.evaluate(COUNT) == "7 of 7 episodes"
    assert browser.evaluate(ROWS) == 7
    stems = browser.evaluate("[...document.querySelectorAll('table.section')].map(t => t.dataset.stem)")
    assert {"summary", "paper_code", "paper_tests", "test_track_metrics", "diagnostics", "stage_failures"} <= set(stems)
    browser.wait_for("[...document.images].every(i => i.complete)")
    assert browser.evaluate("[...document.images].filter(i => i.naturalWidth > 0).length") >= 2
    assert browser.errors() == []


def test_filters_change_what_is_shown(browser: Browser, site: Path) -> None:
    open_index(browser, site)
    select(browser, "agent", "loop")
    browser.wait_for(f"{COUNT} === '1 of 7 episodes'")
    assert browser.evaluate(ROWS) == 1
    assert browser.evaluate("location.hash") == "#/?agent=loop"
    select(browser, "agent", "single")
    select(browser, "status", "failed")
    browser.wait_for(f"{COUNT} === '5 of 7 episodes'")
    select(browser, "stage", "correct")
    browser.wait_for(f"{COUNT} === '2 of 7 episodes'")
    tasks = browser.evaluate(
        "[...document.querySelectorAll('#episodes tr.episode-row td:nth-child(5)')].map(c => c.textContent)"
    )
    assert [t[:6] for t in tasks] == ["FEM_2D", "MSA_3D"]
    browser.evaluate(
        "(() => { const q = document.getElementById('filter-q'); q.value = 'msa_3d';"
        " q.dispatchEvent(new Event('change')); })()"
    )
    browser.wait_for(f"{COUNT} === '1 of 7 episodes'")
    assert browser.errors() == []


def test_a_table_cell_lists_the_episodes_behind_it(browser: Browser, site: Path) -> None:
    open_index(browser, site)
    browser.evaluate(
        'document.querySelector(\'table[data-stem="stage_failures"] a[href*="track=tests&stage=model_error"]\').click()'
    )
    browser.wait_for(f"{COUNT} === '1 of 7 episodes'")
    assert browser.evaluate("document.getElementById('filter-stage').value") == "model_error"
    assert browser.errors() == []


def test_an_episode_page_shows_every_attempt(browser: Browser, site: Path) -> None:
    open_index(browser, site, "#/?agent=loop")
    browser.evaluate("document.querySelector('#episodes tr.episode-row a').click()")
    browser.wait_for("document.querySelectorAll('section.attempt').length === 3")
    assert browser.evaluate("[...document.querySelectorAll('section.attempt')].map(s => s.dataset.index)") == [
        "0",
        "1",
        "2",
    ]
    assert browser.evaluate("document.querySelector('#attempt-3 h2').textContent") == "Attempt 3 of 3: passed"
    assert browser.evaluate("document.getElementById('episode-status').textContent") == "passed"
    assert browser.evaluate("document.querySelectorAll('pre.feedback').length") == 2
    assert browser.evaluate("document.querySelectorAll('pre.diff').length") == 2
    assert browser.evaluate("document.querySelector('#attempt-3 .diff-add').textContent") == "+    return 2.0 * x"
    assert browser.evaluate("document.querySelector('#attempt-1 pre.code .tok-k').textContent") == "def"
    assert browser.evaluate("document.querySelectorAll('#attempt-1 .prompt pre.message').length") == 2
    browser.evaluate("document.getElementById('back').click()")
    browser.wait_for(f"{COUNT} === '1 of 7 episodes'")
    assert browser.errors() == []


def test_a_missing_episode_is_said_so(browser: Browser, site: Path) -> None:
    browser.open(site.as_uri() + "#/episode/99")
    try:
        browser.wait_for("!!document.querySelector('#app .warning')")
        assert (
            browser.evaluate("document.querySelector('#app .warning').textContent") == "episode 99 is not in this site"
        )
        assert [e.split(": ", 1)[1] for e in browser.errors()] == ["Failed to load resource: net::ERR_FILE_NOT_FOUND"]
    finally:
        browser.events.clear()  # the failed load of episode 99 is the one error expected here


def test_the_site_served_on_loopback(browser: Browser, site: Path) -> None:
    server = site_server(site.parent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        with urllib.request.urlopen(base + "/data/index.js", timeout=10) as r:
            assert r.read().startswith(b"fembenchIndex(")
        browser.open(base + "/index.html#/episode/0")
        browser.wait_for("document.querySelectorAll('section.attempt').length === 3")
        assert browser.errors() == []
    finally:
        server.shutdown()
        server.server_close()


def test_without_chromium_the_tests_fail_saying_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", "")
    assert find_chromium() is None
    assert "apt-get install -y chromium" in MISSING


def test_episodes_are_listed_a_hundred_to_a_page_and_the_last_page_holds_the_rest(
    browser: Browser, tmp_path: Path
) -> None:
    records: list[Any] = []
    for repeat in range(201):
        ep = episode("single", TASK_1D, repeat, repeat % 2 == 0)
        records += [attempt(ep, 0, function_outcome(TASK_1D, [("match", None)], True) if ep.passed else None), ep]
    site = write_site([make_run(tmp_path / "run", "many", records)], tmp_path / "site")
    open_index(browser, site)
    label = "document.getElementById('page-label').textContent"
    assert (browser.evaluate(COUNT), browser.evaluate(label), browser.evaluate(ROWS)) == (
        "201 of 201 episodes",
        "page 1 of 3",
        100,
    )
    for _ in range(3):  # the third click finds no page after the last
        browser.evaluate("document.getElementById('page-next').click()")
    assert (browser.evaluate(label), browser.evaluate(ROWS)) == ("page 3 of 3", 1)
    assert browser.evaluate("document.querySelector('#episodes tr.episode-row').dataset.n") == "200"
    assert browser.errors() == []


# ------------------------------------------------------------ side by side

COUNTS = "document.getElementById('compare-counts') && document.getElementById('compare-counts').textContent"
TASKS = "[...document.querySelectorAll('.compare-task')].map(t => t.dataset.task)"
CELLS = "document.querySelectorAll('.compare-row[data-attempt] .compare-cell').length"


@pytest.fixture(scope="module")
def compare_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("compare")
    return write_site(compare_runs(root), root / "site")


def choose(browser: Browser, select_id: str, value: str) -> None:
    browser.evaluate(
        f"(() => {{ const s = document.getElementById({json.dumps(select_id)}); s.value = {json.dumps(value)};"
        " s.dispatchEvent(new Event('change')); })()"
    )


def test_a_paired_test_cell_opens_the_two_agents_side_by_side(browser: Browser, compare_site: Path) -> None:
    open_index(browser, compare_site)
    paired = "document.querySelector('table[data-stem=\"paired_tests\"] tbody tr')"
    cells = browser.evaluate(f"[...{paired}.querySelectorAll('td')].map(c => c.textContent)")
    assert cells == ["mock/model", "code", "loop", "single", "2", "0", "1", "0", "1", "1"]
    assert browser.evaluate(f"{paired}.querySelector('td a').getAttribute('href')") == (
        "#/compare?arms=0,1&track=code&show=disagree"
    )
    browser.evaluate(f"{paired}.querySelector('td a').click()")
    browser.wait_for(f"{CELLS} === 6")  # FEM_1D: repeat 0 in two attempts rows, repeat 1 in one
    # the paired row's Both, A only, B only and Neither, and the task only single ran
    assert browser.evaluate(COUNTS) == (
        "Tasks: 3 Both: 0 A only: 1 B only: 0 Neither: 1 Disagree: 1 Not run by every arm: 1 "
    )
    assert browser.evaluate("document.getElementById('compare-task-count').textContent") == "1 of 3 tasks"
    assert browser.evaluate(TASKS) == [TASK_1D]
    assert browser.evaluate("[...document.querySelectorAll('#compare-arms li')].map(l => l.textContent)") == [
        "A: mock/model / loop (run alpha; 5 episodes)",
        "B: mock/model / single (run beta; 6 episodes)",
    ]
    assert browser.evaluate("document.querySelector('.compare-verdicts').textContent") == (
        "A: 2 of 2 passed, solved; B: 1 of 2 passed, not solved"
    )
    heads = "[...document.querySelectorAll('.compare-repeat[data-repeat=\"0\"] .compare-row[data-attempt] h4')]"
    assert browser.evaluate(f"{heads}.map(h => h.textContent)") == [
        "A, attempt 1 of 2: failed",
        "B, attempt 1 of 1: passed",
        "A, attempt 2 of 2: passed",
    ]
    repeat0 = "document.querySelector('.compare-repeat[data-repeat=\"0\"]')"
    assert browser.evaluate(
        f"{repeat0}.querySelector('.compare-row[data-attempt=\"2\"] [data-arm=B]').textContent"
    ) == ("no attempt 2")
    assert browser.evaluate(f"[...{repeat0}.querySelectorAll('pre.diff span')].map(s => s.textContent)") == [
        "--- mock/model / loop, attempt 1",
        "+++ mock/model / single, attempt 1",
        "@@ -1,2 +1,2 @@",
        "-    return x",
        "+    return x + x",
    ]
    assert (
        browser.evaluate(f"{repeat0}.querySelector('.compare-diff-title').textContent") == "Code, attempt 1: A \u2192 B"
    )
    a_cell = f"{repeat0}.querySelector('.compare-row[data-attempt=\"1\"] [data-arm=A]')"
    assert browser.evaluate(f"{a_cell}.querySelector('pre.feedback').textContent") == "attempt 0 failed"
    assert browser.evaluate(
        f"[...{a_cell}.querySelectorAll('table.stages td:first-child')].map(c => c.textContent)"
    ) == [
        "parse",
        "imports",
        "execute",
        "correct",
    ]
    assert browser.errors() == []


def test_a_reply_with_html_and_a_closing_script_tag_is_shown_as_text(browser: Browser, compare_site: Path) -> None:
    browser.open(compare_site.as_uri() + "#/compare?arms=0,1&track=code&show=A")
    browser.wait_for(f"{CELLS} === 6")
    prose = "document.querySelector('.compare-repeat[data-repeat=\"1\"] [data-arm=B] pre.prose')"
    assert browser.evaluate(f"{prose}.textContent") == HOSTILE.split("```")[0]
    assert browser.evaluate(f"{prose}.children.length") == 0
    assert (
        browser.evaluate("document.querySelectorAll('#app img, #app b:not(#compare-arms b), #app script').length") == 0
    )
    assert browser.evaluate("window.pwned === undefined")
    browser.open(compare_site.as_uri() + "#/episode/6")  # the episode page as well
    browser.wait_for("document.querySelectorAll('section.attempt').length === 1")
    assert browser.evaluate("document.querySelector('#attempt-1 pre.prose').textContent") == HOSTILE.split("```")[0]
    assert browser.evaluate("document.querySelectorAll('#app img').length === 0 && window.pwned === undefined")
    assert browser.errors() == []


def test_the_filter_and_the_arm_picker_change_what_is_compared(browser: Browser, compare_site: Path) -> None:
    browser.open(compare_site.as_uri() + "#/compare?arms=0,1&track=code&show=disagree")
    browser.wait_for(f"{CELLS} === 6")
    choose(browser, "compare-show", "all")
    browser.wait_for(f"{TASKS}.length === 3")
    assert browser.evaluate("location.hash") == "#/compare?arms=0,1&track=code"
    assert browser.evaluate(TASKS) == [TASK_1D, TASK_2D, TASK_3D]
    browser.evaluate("document.querySelector('#compare-counts a[data-show=none]').click()")  # Neither
    browser.wait_for(f"JSON.stringify({TASKS}) === {json.dumps(json.dumps([TASK_2D], separators=(',', ':')))}")
    choose(browser, "compare-track", "numpy-scipy")
    choose(browser, "compare-show", "disagree")
    browser.wait_for("location.hash === '#/compare?arms=0,1&track=numpy-scipy&show=disagree'")
    browser.wait_for(f"{TASKS}[0] === 'poisson_1'")
    assert browser.evaluate(COUNTS) == "Tasks: 2 Both: 1 A only: 0 B only: 1 Neither: 0 Disagree: 1 "
    browser.evaluate("document.querySelector('#compare-counts a[data-show=AB]').click()")  # Both: the same code
    browser.wait_for("document.querySelectorAll('pre.diff').length === 1")
    assert browser.evaluate(TASKS) == ["poisson_2"]
    assert browser.evaluate("document.querySelector('pre.diff').textContent") == "(the same code)"
    browser.evaluate(
        "(() => { const b = document.getElementById('arm-1'); b.checked = false; b.dispatchEvent(new Event('change')); })()"
    )
    browser.wait_for("!!document.getElementById('compare-warning')")
    assert browser.evaluate("document.getElementById('compare-warning').textContent") == (
        "pick two to 26 arms to compare (1 picked)"
    )
    assert browser.errors() == []


def test_an_episode_links_to_its_task_side_by_side_and_the_index_to_the_comparison(
    browser: Browser, compare_site: Path
) -> None:
    open_index(browser, compare_site)
    assert browser.evaluate("document.getElementById('compare-link').getAttribute('href')") == "#/compare?arms=0,1"
    browser.open(compare_site.as_uri() + "#/episode/3")  # loop on poisson_1
    browser.wait_for("!!document.getElementById('episode-compare')")
    browser.evaluate("document.getElementById('episode-compare').click()")
    browser.wait_for(f"{CELLS} === 2")
    assert browser.evaluate("location.hash") == "#/compare?arms=0,1&track=numpy-scipy&q=poisson_1"
    assert browser.evaluate(TASKS) == ["poisson_1"]
    assert browser.evaluate("[...document.querySelectorAll('.compare-head a')].map(a => a.getAttribute('href'))") == [
        "#/episode/3",
        "#/episode/9",
    ]
    assert browser.errors() == []


def test_the_comparison_served_on_loopback(browser: Browser, compare_site: Path) -> None:
    server = site_server(compare_site.parent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        browser.open(f"http://127.0.0.1:{server.server_address[1]}/index.html#/compare?arms=0,1&track=code&show=A")
        browser.wait_for(f"{CELLS} === 6")
        assert browser.errors() == []
    finally:
        server.shutdown()
        server.server_close()


def test_a_task_shows_five_repeats_until_asked_for_the_rest(browser: Browser, tmp_path: Path) -> None:
    records: list[Any] = []
    for agent in ("a", "b"):
        for repeat in range(7):
            ep = episode(agent, TASK_1D, repeat, True)
            records += [attempt(ep, 0, function_outcome(TASK_1D, [("match", None)], True)), ep]
    site = write_site([make_run(tmp_path / "run", "seven", records)], tmp_path / "site")
    browser.open(site.as_uri() + "#/compare?arms=0,1")
    repeats = "[...document.querySelectorAll('.compare-repeat')].map(r => r.dataset.repeat)"
    browser.wait_for("document.querySelectorAll('.compare-head').length === 5")
    assert browser.evaluate(repeats) == ["0", "1", "2", "3", "4"]
    assert browser.evaluate("document.querySelector('.more-repeats').textContent") == "show the other 2 repeats"
    browser.evaluate("document.querySelector('.more-repeats').click()")
    browser.wait_for("document.querySelectorAll('.compare-head').length === 7")
    assert browser.evaluate(repeats) == ["0", "1", "2", "3", "4", "5", "6"]
    assert browser.evaluate("document.querySelectorAll('.more-repeats').length") == 0
    assert browser.errors() == []


def test_three_arms_are_counted_by_pattern_and_diffed_from_arm_a(browser: Browser, tmp_path: Path) -> None:
    records: list[Any] = []
    for agent, code, passes in (("a", "x = 1\n", True), ("b", "x = 2\n", False), ("c", "x = 1\n", True)):
        for task, passed in ((TASK_1D, passes), (TASK_2D, False)):
            ep = episode(agent, task, 0, passed)
            outcome = function_outcome(task, [("match", None)] if passed else [("mismatch", 0.5)], passed)
            records += [attempt(ep, 0, outcome, code=code), ep]
    site = write_site([make_run(tmp_path / "run", "three", records)], tmp_path / "site")
    browser.open(site.as_uri() + "#/compare?arms=0,1,2")
    browser.wait_for("document.querySelectorAll('.compare-head').length === 2")
    assert browser.evaluate(COUNTS) == "Tasks: 2 All: 0 A and C only: 1 None: 1 Disagree: 1 "
    assert browser.evaluate("[...document.querySelectorAll('#compare-show option')].map(o => o.textContent)") == [
        "every task",
        "where they disagree",
        "All",
        "A and C only",
        "None",
        "not run by every arm",
    ]
    first = "document.querySelector('.compare-task')"
    assert browser.evaluate(f"[...{first}.querySelectorAll('.compare-diff-title')].map(h => h.textContent)") == [
        "Code, attempt 1: A \u2192 B",
        "Code, attempt 1: A \u2192 C",
    ]
    assert browser.evaluate(f"[...{first}.querySelectorAll('pre.diff')].map(p => p.textContent)")[1] == (
        "(the same code)"
    )
    browser.evaluate("document.querySelector('#compare-counts a[data-show=AC]').click()")
    browser.wait_for("document.getElementById('compare-show').value === 'AC'")
    assert browser.evaluate(TASKS) == [TASK_1D]
    assert browser.errors() == []

"""The viewer in a real headless Chromium, opened from disk: the index loads,
the filters and the table links change which episodes are listed, an
episode shows every attempt, and nothing reaches the console as an error.
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
from run_builders import TASK_1D, attempt, episode, function_outcome, make_run
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

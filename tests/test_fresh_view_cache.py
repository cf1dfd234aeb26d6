"""The fresh view of a preload (`sandbox/fresh_probe.py`) is measured once per
installation where $FEMBENCH_CACHE_DIR names a directory: a later process reads it
instead of probing again, and anything the measurement depends on that
changes (the preload, a listing of the directories a worker imports from,
the sandbox's code) makes it measure again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fembench_agents.scoring.sandbox import fresh_probe

ENV = (("PATH", "/usr/bin"),)


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[tuple[str, ...]]]:
    """The probes that ran (each preload), with the cache under tmp_path and the real probe replaced."""
    ran: list[tuple[str, ...]] = []

    def probe(preload: tuple[str, ...], package_parent: str, env: tuple[tuple[str, str], ...]) -> str:
        ran.append(preload)
        return json.dumps({"detached": {f"{p}.sub": [f"{p}.sub"] for p in preload}, "loaded": []})

    monkeypatch.setenv("FEMBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fresh_probe, "_probe_in_clean_interpreter", probe)
    fresh_probe.fresh_view_data.cache_clear()
    yield ran
    fresh_probe.fresh_view_data.cache_clear()


def test_without_a_cache_directory_nothing_is_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FEMBENCH_CACHE_DIR", raising=False)
    assert fresh_probe._cached(("numpy",), str(tmp_path), ENV) is None


def test_a_view_is_measured_once_and_read_back_in_a_later_process(
    probes: list[tuple[str, ...]], tmp_path: Path
) -> None:
    parent = str(tmp_path / "checkout")
    Path(parent).mkdir()
    first = fresh_probe.fresh_view_data(("numpy",), parent, ENV)
    fresh_probe.fresh_view_data.cache_clear()  # as a new process
    again = fresh_probe.fresh_view_data(("numpy",), parent, ENV)
    assert (first, again, probes) == (again, first, [("numpy",)])
    (kept,) = (tmp_path / "cache").iterdir()
    assert kept.name.startswith("fresh-view-") and json.loads(kept.read_text()) == json.loads(first)


def test_another_preload_or_a_changed_listing_is_measured_again(probes: list[tuple[str, ...]], tmp_path: Path) -> None:
    parent = tmp_path / "checkout"
    parent.mkdir()
    fresh_probe.fresh_view_data(("numpy",), str(parent), ENV)
    fresh_probe.fresh_view_data(("scipy",), str(parent), ENV)
    (parent / "new_package").mkdir()  # something installed where the worker imports from
    fresh_probe.fresh_view_data.cache_clear()
    fresh_probe.fresh_view_data(("numpy",), str(parent), ENV)
    assert probes == [("numpy",), ("scipy",), ("numpy",)]
    assert len(list((tmp_path / "cache").iterdir())) == 3


def test_a_cache_entry_that_is_not_json_is_measured_again(probes: list[tuple[str, ...]], tmp_path: Path) -> None:
    parent = str(tmp_path / "checkout")
    Path(parent).mkdir()
    fresh_probe.fresh_view_data(("numpy",), parent, ENV)
    (kept,) = (tmp_path / "cache").iterdir()
    kept.write_text('{"detached": ')  # cut short
    fresh_probe.fresh_view_data.cache_clear()
    text = fresh_probe.fresh_view_data(("numpy",), parent, ENV)
    assert probes == [("numpy",), ("numpy",)] and json.loads(kept.read_text()) == json.loads(text)

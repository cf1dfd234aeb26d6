"""The one reader of a run directory: its manifest and log, with the rules
every consumer shares (report, replay, resume, compare, optimize, the Python
API): the latest record wins; an episode counts by its latest finished
record, else its latest error; only finished episodes are skipped on resume."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fembench_agents.runs.log import (
    MANIFEST_NAME,
    AttemptRecord,
    DamagedLog,
    EpisodeRecord,
    LogFault,
    ModelCallRecord,
    RunManifest,
    read_manifest,
    scan_log,
)


def chosen_episodes(records: list[Any]) -> dict[str, EpisodeRecord]:
    """Episode key -> the record it counts by: the latest "done" one, else the
    latest "error" one (a failure that a resume did not redo)."""
    chosen: dict[str, EpisodeRecord] = {}
    for r in records:
        if isinstance(r, EpisodeRecord) and (r.status == "done" or chosen.get(r.episode, r).status == "error"):
            chosen[r.episode] = r
    return chosen


def finished_episodes(records: list[Any]) -> dict[str, EpisodeRecord]:
    """Episodes a resume skips: those with a "done" record."""
    return {r.episode: r for r in records if isinstance(r, EpisodeRecord) and r.status == "done"}


def latest_attempts(records: list[Any]) -> dict[tuple[str, int], AttemptRecord]:
    """(episode, attempt index) -> its latest attempt record."""
    return {(r.episode, r.attempt_index): r for r in records if isinstance(r, AttemptRecord)}


@dataclass(frozen=True)
class RunRecords:
    """A run directory as read back."""

    path: Path
    manifest: RunManifest
    records: list[Any]
    skipped: tuple[LogFault, ...] = ()  # bad log lines left out (only when asked to skip them)
    torn_line: int | None = None  # an incomplete last line (a writer stopped mid-record), left out

    def episodes(self) -> list[EpisodeRecord]:
        """One record per episode (see `chosen_episodes`), in model, agent,
        track, task and repeat order."""
        return sorted(
            chosen_episodes(self.records).values(), key=lambda e: (e.model, e.agent, e.track, e.task_id, e.repeat)
        )

    def attempts(self) -> list[AttemptRecord]:
        return [r for r in self.records if isinstance(r, AttemptRecord)]

    def model_calls(self) -> list[ModelCallRecord]:
        return [r for r in self.records if isinstance(r, ModelCallRecord)]

    def episode_rows(self) -> list[dict[str, Any]]:
        """Flat rows, one per episode: `pandas.DataFrame(run.episode_rows())`."""
        return [
            {"run": self.manifest.run_id, **e.model_dump(exclude={"schema_version", "type"})} for e in self.episodes()
        ]


def expand_run_dirs(paths: list[Path]) -> list[Path]:
    """Each path that is a run directory as it is; a directory holding run
    directories (what `compare --out` writes) as those runs, sorted. A path
    that is neither is kept, so that opening it names the problem."""
    out: list[Path] = []
    for p in paths:
        nested = sorted(d for d in p.iterdir() if (d / MANIFEST_NAME).exists()) if p.is_dir() else []
        out += [p] if (p / MANIFEST_NAME).exists() or not nested else nested
    return out


def open_run(path: str | os.PathLike[str], skip_bad_lines: bool = False) -> RunRecords:
    """The run in `path`; FileNotFoundError when it holds no manifest. A log
    line that is not a record is DamagedLog, or with `skip_bad_lines` left out
    and listed in `skipped`."""
    manifest = read_manifest(path)
    reading = scan_log(path)
    if reading.faults and not skip_bad_lines:
        raise DamagedLog(reading.faults)
    return RunRecords(Path(path), manifest, reading.records, reading.faults, reading.torn_line)

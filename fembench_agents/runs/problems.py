"""What a run, a score or an optimization draws from: each track's problems,
loaded once per source through the registered kinds, and one evaluator with
the scorers they need. The CLI, the Python API and the optimizer all start here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fembench_agents.kinds import kind_for
from fembench_agents.kinds.contract import PreviewedProblems, Progress, ScoringOptions, SkippedTask
from fembench_agents.runs.selection import select_tasks
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.sandbox import Sandbox


@dataclass
class ProblemSets:
    by_track: dict[str, list[Any]]
    evaluator: Evaluator
    skipped_by_track: dict[str, list[SkippedTask]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the kinds said about their loads (`LoadedProblems.notes`)
    made: dict[str, str] = field(default_factory=dict)  # a made item of a selection -> the ids it names

    @property
    def skipped(self) -> list[SkippedTask]:
        """Every source file left out, once."""
        return list({s.path: s for group in self.skipped_by_track.values() for s in group}.values())


def preload_for(tracks: Iterable[str]) -> tuple[str, ...]:
    """The modules the sandbox's warm workers import once for attempts on `tracks`."""
    return tuple(dict.fromkeys(m for t in tracks for m in kind_for(t).preload))


def load_problems(
    tracks: Iterable[str],
    sandbox: Sandbox,
    paths: Mapping[str, str] | None = None,
    options: ScoringOptions | None = None,
    selections: Iterable[tuple[str, str]] = (),
) -> ProblemSets:
    """Each track's problems and an evaluator that can score them all. `paths`:
    where each source is, by the kinds' `default_path` (a source not named is
    read from its default). `selections`: (track, selector) of what will be drawn, so
    that a kind makes what their made items name. Raises ProblemsUnavailable (a ValueError)."""
    options = options or ScoringOptions()
    selections = list(selections)
    paths = paths or {}
    groups: dict[str, list[str]] = {}  # kinds sharing a scorer share one load
    for track in dict.fromkeys(tracks):
        groups.setdefault(kind_for(track).scorer_key, []).append(track)
    evaluator = Evaluator(sandbox, options=options)
    sets = ProblemSets(by_track={}, evaluator=evaluator)
    for group in groups.values():
        kind = kind_for(group[0])
        mine = tuple(dict.fromkeys(selector for track, selector in selections if track in group))
        own = replace(options, selections=mine) if mine else options
        loaded = kind.load(paths.get(kind.default_path, kind.default_path), sandbox, own, group)
        sets.by_track.update(loaded.by_track)
        sets.made.update(loaded.made)
        sets.skipped_by_track.update({track: list(loaded.skipped) for track in group})
        sets.notes += loaded.notes
        evaluator.use(group[0], loaded.scorer)
    return sets


def preview_problems(
    tracks: Iterable[str], paths: Mapping[str, str] | None = None, selections: Iterable[tuple[str, str]] = ()
) -> PreviewedProblems:
    """Each track's problems as its kind reads them without a sandbox job (a dry
    run's), one read per source, with what the made items of `selections` ((track,
    selector), as for `load_problems`) name, previewed. Raises ProblemsUnavailable (a ValueError)."""
    paths = paths or {}
    selections = list(selections)
    groups: dict[str, list[str]] = {}
    for track in dict.fromkeys(tracks):
        groups.setdefault(kind_for(track).scorer_key, []).append(track)
    found = PreviewedProblems(by_track={})
    for group in groups.values():
        kind = kind_for(group[0])
        mine = tuple(dict.fromkeys(selector for track, selector in selections if track in group))
        read = kind.preview(paths.get(kind.default_path, kind.default_path), group, mine)
        found.by_track.update(read.by_track)
        found.skipped += [s for s in read.skipped if s not in found.skipped]
        found.made.update(read.made)
        found.notes += read.notes
    return found


def prepare_selected(
    sets: ProblemSets, paths: Mapping[str, str], selections: Iterable[tuple[str, str]], progress: Progress
) -> None:
    """Before a run's first episode: for each (track, selector) of the runs, the track's kind makes
    what scoring the problems selected there needs on this machine and does not have yet (load
    with ScoringOptions(prepared_later=True))."""
    chosen: dict[str, dict[str, Any]] = {}
    for track, selector in selections:
        chosen.setdefault(track, {}).update((p.task_id, p) for p in select_tasks(sets.by_track[track], selector))
    for track, problems in chosen.items():
        kind = kind_for(track)
        path = paths.get(kind.default_path, kind.default_path)
        kind.prepare(path, list(problems.values()), sets.evaluator.scorer_for(track), progress)

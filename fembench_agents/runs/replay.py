"""`replay`: re-run a recorded run with no model calls, re-score stored
attempts under the current evaluator, or show a feedback loop turn by turn."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from fembench_agents.contracts import Problem
from fembench_agents.errors import BadInput
from fembench_agents.kinds.contract import ScoringOptions
from fembench_agents.messages import ModelParams
from fembench_agents.runs.defaults import DEFAULT_TRACK
from fembench_agents.runs.log import MANIFEST_NAME, AttemptRecord, EpisodeRecord, LogRecord, read_log, read_manifest
from fembench_agents.runs.reader import latest_attempts
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator

REPLAY_DIR = "replay"  # where a run is re-run from its log, inside its own directory


class Change(BaseModel):
    episode: str
    attempt_index: int
    before: str
    after: str


def outcome_signature(record: AttemptRecord) -> str:
    """Everything about an attempt's verdict, without timings."""
    if record.outcome is None:
        return f"model_error:{record.model_error}"
    return repr(record.outcome.verdict_data())


def compare_runs(original: list, replayed: list) -> list[Change]:
    """Attempts whose outcome differs between two logs of the same run."""
    a, b = latest_attempts(original), latest_attempts(replayed)
    changes = []
    for key in sorted(set(a) | set(b)):
        before = outcome_signature(a[key]) if key in a else "absent"
        after = outcome_signature(b[key]) if key in b else "absent"
        if before != after:
            changes.append(Change(episode=key[0], attempt_index=key[1], before=before[:300], after=after[:300]))
    return changes


def rescore(
    run_dir: Path, tasks: dict[str, Problem], evaluator: Evaluator, records: Sequence[LogRecord] | None = None
) -> list[Change]:
    """Re-evaluate every stored attempt's reply with the current evaluator
    (`records`: the run's log already read; default: read it)."""
    changes = []
    for record in read_log(run_dir) if records is None else records:
        if not isinstance(record, AttemptRecord) or record.outcome is None:
            continue
        task = tasks.get(record.task_id)
        if task is None:
            raise ValueError(f"{run_dir}: task {record.task_id!r} from the log is not in the task set")
        new = record.model_copy(update={"outcome": evaluator.score(task, record.track, record.reply)})
        before, after = outcome_signature(record), outcome_signature(new)
        if before != after:
            changes.append(
                Change(
                    episode=record.episode, attempt_index=record.attempt_index, before=before[:300], after=after[:300]
                )
            )
    return changes


def episode_turns(
    run_dir: Path, task_id: str, records: Sequence[LogRecord] | None = None
) -> list[tuple[EpisodeRecord | None, list[AttemptRecord]]]:
    """Each episode of `task_id`: its end (None if it has none) and its latest try's attempts."""
    records = read_log(run_dir) if records is None else records
    episodes: dict[str, list[AttemptRecord]] = {}
    for r in records:
        if isinstance(r, AttemptRecord) and r.task_id == task_id:
            turns = episodes.setdefault(r.episode, [])
            if r.attempt_index == 0:
                turns.clear()  # a resumed episode starts over; show its last try
            turns.append(r)
    ends = {r.episode: r for r in records if isinstance(r, EpisodeRecord)}
    return [(ends.get(k), v) for k, v in sorted(episodes.items())]


def run_track(run_dir: Path) -> str:
    """The track a run directory's manifest says it ran (runs before the field: code)."""
    return str(read_manifest(run_dir).config.get("track", DEFAULT_TRACK))


def run_options(run_dir: Path) -> ScoringOptions:
    """What the run's problems were loaded with: its fresh-inputs seed, when it drew fresh instances."""
    seed = read_manifest(run_dir).config.get("fresh_inputs")
    return ScoringOptions(fresh_inputs=seed if isinstance(seed, int) else None)


def replay_run(
    run_dir: Path, problems: Sequence[Problem], evaluator: Evaluator, records: Sequence[LogRecord] | None = None
) -> list[Change]:
    """Re-run the run at `run_dir` from its log with no model call (every reply
    as recorded, every attempt scored again) into `run_dir/replay`, and the
    attempts whose outcome differs. Raises UnrecordedRequestError where the
    replay asks what the recording never answered (it diverged)."""
    from fembench_agents.models import ReplayModel  # the model layer's litellm import, only when replaying

    manifest = read_manifest(run_dir)
    try:
        config = RunConfig(**{**manifest.config, "params": ModelParams(**manifest.config["params"])})
    except (KeyError, TypeError, ValueError) as exc:  # the manifest's config, as read from the file
        raise BadInput(f"{run_dir / MANIFEST_NAME}: config is not a run this build can replay ({exc!r})") from None
    records = read_log(run_dir) if records is None else list(records)
    target = run_dir / REPLAY_DIR
    if target.exists():
        shutil.rmtree(target)
    asyncio.run(execute_run(config, problems, target, ReplayModel.from_records(records), evaluator))
    return compare_runs(records, read_log(target))

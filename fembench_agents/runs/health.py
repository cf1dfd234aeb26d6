"""When a run should stop early, and what the terminal says about episodes
that ended in a model error.

A run stops once a few episodes in a row end with the same error that retrying
cannot fix (a bad key, an unknown model): every further episode would fail the
same way. The failed and unstarted episodes stay unfinished in the log, so the
same command, run again after the cause is fixed, resumes them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from fembench_agents.runs.log import EpisodeRecord

BUDGET_ERROR_KIND = "budget"  # an episode's error_kind when the spend cap stopped it (runs/budget.py)
STOP_AFTER = 3  # consecutive episodes failing with the same permanent error
# ModelCallError's message (models/errors.py) as an episode records it: the task and attempt differ per episode.
_CALL_CONTEXT = re.compile(r"^ModelCallError: model call failed \(.*?\) after \d+ retr(?:y|ies): ")
_VARYING = re.compile(r"\S*\d\S*")  # counts, request ids, timestamps: differ between identical failures, left out
_SHOWN_CHARS = 300


def provider_message(error: str | None) -> str:
    """An episode's error without the task and attempt it happened in: the
    provider's own words, the same for every episode that failed alike;
    "unknown error" when the provider said nothing."""
    lines = _CALL_CONTEXT.sub("", (error or "").lstrip()).strip().splitlines()
    text = lines[0] if lines else "unknown error"
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."


def _sameness(record: EpisodeRecord) -> tuple[str, tuple[str, ...]] | None:
    if record.status != "error" or record.error_kind in (None, BUDGET_ERROR_KIND):
        return None  # a budget stop is not the provider failing: the cap's own message says it
    return record.error_kind, tuple(_VARYING.split(provider_message(record.error)))


class RunStopped(RuntimeError):
    """The run stopped early after `failed` episodes in a row failed alike;
    `not_run` episodes (started or not) were left for a resume."""

    def __init__(self, kind: str, message: str, failed: int, not_run: int) -> None:
        self.kind, self.message, self.failed, self.not_run = kind, message, failed, not_run
        super().__init__(
            f"run stopped early: {failed} episodes in a row failed with the same {kind} error; "
            f"{not_run} episode{'s' if not_run != 1 else ''} not run"
        )


@dataclass
class FailureStreak:
    """Counts episodes, in the order they finish, that end with the same
    permanent error; any other ending breaks the streak."""

    stop_after: int = STOP_AFTER
    _key: tuple[str, tuple[str, ...]] | None = field(default=None, init=False)
    _count: int = field(default=0, init=False)

    def observe(self, record: EpisodeRecord, not_ended: int) -> None:
        """Raise RunStopped when `record` makes the streak long enough;
        `not_ended` is how many episodes of the run have not ended yet."""
        key = _sameness(record)
        self._count = self._count + 1 if key is not None and key == self._key else int(key is not None)
        self._key = key
        if key is not None and self._count >= self.stop_after:
            raise RunStopped(key[0], provider_message(record.error), self._count, not_ended)


def error_summary(episodes: Iterable[EpisodeRecord], shown: int = 3) -> list[str]:
    """Lines for the terminal: how many episodes ended in a model error, and the
    first `shown` distinct error messages with how many episodes each ended."""
    failed = [e for e in episodes if e.status == "error" and e.error_kind != BUDGET_ERROR_KIND]
    if not failed:
        return []
    counts: dict[str, int] = {}
    for e in failed:
        message = provider_message(e.error)
        counts[message] = counts.get(message, 0) + 1
    lines = [f"{len(failed)} episode{'s' if len(failed) != 1 else ''} ended in a model error:"]
    lines += [f"  {message} ({n} episode{'s' if n != 1 else ''})" for message, n in list(counts.items())[:shown]]
    if len(counts) > shown:
        lines.append(f"  ... and {len(counts) - shown} other errors (see log.jsonl of the run)")
    return lines

"""The parts of a task kind the offline commands ask for: what a report and the
viewer show of it (`KindReport`), how `score DIR` reads and sums up a folder of
saved attempts (`KindFolder`), and how `validate` proves its problems
consistent (`KindValidator`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from fembench_agents.kinds.contract import ScoringOptions, SkippedTask

if TYPE_CHECKING:
    from fembench_agents.report.kind_parts import KindFigure, PairedHeadline, ReportSection
    from fembench_agents.report.schema import Report, ReportSettings, TaskInfo
    from fembench_agents.runs.log import AttemptRecord, EpisodeRecord
    from fembench_agents.scoring.sandbox import IsolationReport


class KindReport(Protocol):
    """What reports and the viewer show of a kind beyond what every kind gets
    (summary, per-task table, stage failures, paired tests, episode pages).
    `report.kind_parts.PlainReport` is the part of a kind with nothing more."""

    @property
    def family(self) -> str:
        """Kinds whose parts share a family have their sections built once, over all
        their episodes (the function tracks' paper tables span code and tests)."""
        ...

    @property
    def graded(self) -> bool:
        """Its episode score grades partial success: a group's summary adds the
        mean over tasks ("Joint tests") and a per-task cell the mean score."""
        ...

    @property
    def headline_label(self) -> str | None:
        """What a plot calls its groups' headline rate; None: nothing more specific than "correct"."""
        ...

    @property
    def paired_headline(self) -> PairedHeadline | None:
        """The track whose headline this kind's is plotted against, if any."""
        ...

    def task_info(self, task_id: str) -> TaskInfo:
        """What a task id says (domain, tier, knowledge class): the viewer's filter columns."""
        ...

    def report_fields(
        self, episodes: Sequence[EpisodeRecord], attempts: Sequence[AttemptRecord], settings: ReportSettings
    ) -> dict[str, list[Any]]:
        """Its sections of the typed `Report` (field name -> rows) from the episodes of
        its family's tracks and the latest record of each of their attempts."""
        ...

    def sections(self, report: Report) -> list[ReportSection]:
        """Its tables of `report`, in the order shown; none when it holds none of its data."""
        ...

    def figures(self, report: Report) -> list[KindFigure]:
        """Its plots of `report`, drawn after the ones every report has."""
        ...

    def facts(self, outcome: Any) -> list[str]:
        """What one of its outcomes measured beyond its stages, a line each (the viewer's attempt facts)."""
        ...

    def notes(self, report: Report) -> list[str]:
        """Lines the terminal prints under its tables, short or full: what a reader must know to
        read the figures beside others' (the gates that judged the PDE attempts)."""
        ...


@dataclass(frozen=True)
class SavedAttempt:
    """One attempt saved in a folder (`score DIR`): the problem it answers, the
    track it is scored on, the label it was saved under, and its file."""

    task_id: str
    track: str
    label: str
    path: Path


@dataclass
class SavedAttempts:
    """What a kind reads from a folder: the problems the file names were matched
    against, each saved attempt, and the files that hold none (by name)."""

    problems: list[Any]
    attempts: list[SavedAttempt]
    unmatched: list[str]


@dataclass(frozen=True)
class FolderTable:
    """What `score DIR` prints of a kind's summary: the title counts the problems
    as `noun`, and a file matching none is said to match no `unmatched`."""

    noun: str
    columns: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    unmatched: str
    notes: tuple[str, ...] = ()  # lines printed under the table (the gates that judged, say)


class FolderSummary(Protocol):
    """A kind's summary of a scored folder: what `score --json` writes."""

    @property
    def unmatched_files(self) -> list[str]: ...

    @property
    def isolation(self) -> IsolationReport: ...

    def model_dump_json(self, *, indent: int | None = None) -> str: ...


class KindFolder(Protocol):
    """`score DIR` for a kind: which of its tracks a folder's saved attempts need,
    which attempt each file holds, and the summary written and printed."""

    def tracks(self, folder: Path, path: str) -> list[str]:
        """The tracks the attempts in `folder` are scored on (their problems are
        loaded and their modules preloaded), read before any sandbox opens;
        raises ProblemsUnavailable when `path` holds no problems."""
        ...

    def find(self, folder: Path, path: str, by_track: dict[str, list[Any]]) -> SavedAttempts:
        """The attempts saved in `folder` at the problems `by_track` holds (loaded for
        `tracks`), the problems their names were read against, and the files holding none."""
        ...

    def summary(
        self,
        found: SavedAttempts,
        scored: list[tuple[SavedAttempt, Any]],
        isolation: IsolationReport,
        skipped: list[SkippedTask],
        options: ScoringOptions,
    ) -> FolderSummary:
        """The outcomes of `found`'s attempts (in its order), summed up per label; `options`:
        what the scorer was asked beyond its defaults (a summary that records them can be re-scored alike)."""
        ...

    def table(self, summary: Any, found: SavedAttempts) -> FolderTable:
        """What the command prints of `summary` (one this part made)."""
        ...


class ValidationProblem(BaseModel):
    """One way a problem, or its source as a whole (`task_id` None), fails its kind's own checks."""

    model_config = ConfigDict(frozen=True)
    task_id: str | None
    check: str
    message: str


class Validation(BaseModel):
    """What a kind's validator found at a path: the problems that passed every
    check, each problem found, the sources left out, and what a clean run says."""

    valid: list[str] = []
    problems: list[ValidationProblem] = []
    skipped: list[SkippedTask] = []
    summary: str


@dataclass(frozen=True)
class ValidationOptions:
    """What a command may ask of a kind's validator beyond its defaults."""

    rebuild: bool = True  # rebuild each problem from its definition and compare (PDE cases)
    calibration: bool = True  # score the kind's own solvers against their gates (PDE cases)


class ValidationProgress(Protocol):
    """How a validator tells the command how far it is, and what it left unchecked."""

    def start(self, total: int) -> None: ...

    def advance(self) -> None: ...

    def note(self, line: str) -> None: ...


class KindValidator(Protocol):
    """Proves a kind's problems internally consistent (`tasks validate`, `cases validate`)."""

    def validate(self, path: str, options: ValidationOptions, progress: ValidationProgress) -> Validation:
        """Every check on the problems at `path`, each in a sandbox the validator
        opens; raises ProblemsUnavailable when none can be had there."""
        ...

"""What the report and the viewer ask a kind for (`TaskKind.report`): the
shapes a kind's part answers in, the part of a kind with nothing more to show,
and the walk over the registered parts. Nothing here knows a kind."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fembench_agents.kinds import kind_for, tracks
from fembench_agents.report.schema import Report, ReportSettings, TaskInfo
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from fembench_agents.kinds.review import KindReport

Rows = tuple[list[str], list[list[str]]]  # headers, body: every rendering reads these
Filter = dict[str, str]  # an episode field -> the value the viewer's list is filtered to
# (headers, row, column, the filter the row's Model/Agent/Track/... columns give) -> the cell's filter
CellLinks = Callable[[list[str], list[str], int, Filter], Filter | None]


@dataclass(frozen=True)
class ReportSection:
    """One table of a kind: its file stem, its title and its text cells."""

    stem: str
    title: str
    rows: Rows
    after_tasks: bool = False  # shown after the per-task tables rather than right after the summary
    note: str | None = None  # a paragraph the Markdown report puts under the title
    terminal_title: str | None = None  # the terminal's title, where it says more than `title`
    # The episode filter behind cell (row, column) from the filter its row's
    # Model/Agent/Track/... columns give (which it may change); None: that filter.
    links: CellLinks | None = None
    # Says nothing the summary does not (a breakdown with one value per model x agent x
    # track): report.md keeps it, the terminal leaves it out even with --full.
    repeats_summary: bool = False


@dataclass(frozen=True)
class PairedHeadline:
    """The correctness plot puts one point per model x agent that ran both
    tracks: the headline of `x_track` across, this kind's up."""

    x_track: str
    title: str


@dataclass(frozen=True)
class KindFigure:
    caption: str
    file_name: str  # the PNG's name; its SVG twin shares the stem
    draw: Callable[[Report], Figure]


@dataclass(frozen=True)
class PlainReport:
    """The part of a kind with nothing more to show than every kind gets."""

    family: str = "plain"
    graded: bool = False
    headline_label: str | None = None
    paired_headline: PairedHeadline | None = None

    def task_info(self, task_id: str) -> TaskInfo:
        return TaskInfo(domain="other", tier="-", knowledge="-")

    def report_fields(
        self, episodes: Sequence[EpisodeRecord], attempts: Sequence[AttemptRecord], settings: ReportSettings
    ) -> dict[str, list[Any]]:
        return {}

    def sections(self, report: Report) -> list[ReportSection]:
        return []

    def figures(self, report: Report) -> list[KindFigure]:
        return []

    def facts(self, outcome: Any) -> list[str]:
        return []

    def notes(self, report: Report) -> list[str]:
        return []


# The report's sections a kind may fill: those empty unless a kind fills them
# (every report has the summary, groups, per-task tables and paired tests).
KIND_FIELDS = tuple(name for name, f in Report.model_fields.items() if f.default == [])


def report_part(track: str) -> KindReport:
    return kind_for(track).report


def family_parts() -> dict[str, KindReport]:
    """One part per family, the first registered; in registration order."""
    out: dict[str, KindReport] = {}
    for track in tracks():
        part = report_part(track)
        out.setdefault(part.family, part)
    return out


def kind_fields(
    episodes: Sequence[EpisodeRecord], attempts: Sequence[AttemptRecord], settings: ReportSettings
) -> dict[str, list[Any]]:
    """Every family's sections of the typed report, each built from its own tracks' records."""
    fields: dict[str, list[Any]] = {}
    for family, part in family_parts().items():
        mine = {t for t in tracks() if report_part(t).family == family}
        own_episodes = [e for e in episodes if e.track in mine]
        own_attempts = [a for a in attempts if a.track in mine]
        for name, rows in part.report_fields(own_episodes, own_attempts, settings).items():
            if name not in KIND_FIELDS:
                raise ValueError(
                    f"the {family!r} report part fills {name!r}, which is no kind's field of Report; "
                    f"known: {', '.join(KIND_FIELDS)}"
                )
            fields.setdefault(name, []).extend(rows)
    return fields


def kind_sections(report: Report) -> list[ReportSection]:
    """Every family's tables of `report`, families in registration order."""
    return [s for part in family_parts().values() for s in part.sections(report)]


def kind_notes(report: Report) -> list[str]:
    """Every family's lines for the terminal under its tables, families in registration order."""
    return [line for part in family_parts().values() for line in part.notes(report)]


def kind_figures(report: Report) -> list[KindFigure]:
    return [f for part in family_parts().values() for f in part.figures(report)]

"""The contracts every part plugs into. Small on purpose: a task kind and the
problems it poses, the evaluator as agents see it, a feedback builder, a model
client, a solver agent.

A task kind (function tasks' code track, their tests track, a PDE library
track, or a kind of your own) is one package plus one registry entry
(`fembench_agents.kinds`): everything outside the kind asks it through
`TaskKind` and never tests which kind it holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from fembench_agents.messages import CallContext, Message, ModelParams, ModelResponse
from fembench_agents.vocabulary import Track

__all__ = [
    "AttemptScorer",
    "Feedback",
    "FeedbackBuilder",
    "FolderSummary",
    "FolderTable",
    "HiddenMaterial",
    "HiddenNumbers",
    "KindFeedback",
    "KindFolder",
    "KindHidden",
    "KindReport",
    "KindValidator",
    "LoadedProblems",
    "ModelClient",
    "Problem",
    "ProblemsUnavailable",
    "SavedAttempt",
    "SavedAttempts",
    "ScoringOptions",
    "SkippedTask",
    "SolveSession",
    "SolverAgent",
    "SolverView",
    "TaskKind",
    "Templates",
    "Track",
    "Validation",
    "ValidationOptions",
    "ValidationProblem",
    "ValidationProgress",
    "WorkspaceFiles",
]

if TYPE_CHECKING:
    from fembench_agents.report.kind_parts import KindFigure, PairedHeadline, ReportSection
    from fembench_agents.report.schema import Report, ReportSettings, TaskInfo
    from fembench_agents.runs.log import AttemptRecord, EpisodeRecord
    from fembench_agents.scoring.outcomes import AnyOutcome
    from fembench_agents.scoring.sandbox import IsolationReport, Sandbox


class Problem(Protocol):
    """One thing a solver is asked to write: a function task, a PDE case, or a
    problem of a kind registered elsewhere. Only what every layer may ask."""

    @property
    def task_id(self) -> str: ...

    @property
    def main_name(self) -> str:
        """The function every attempt defines."""
        ...

    @property
    def content_hash(self) -> str:
        """Changes whenever anything the verdict depends on changes (a resume refuses drift)."""
        ...

    @property
    def hidden_dir(self) -> Path:
        """Where the problem's evaluator-only data lives: hidden from every sandboxed job."""
        ...

    @property
    def leak(self) -> str | None:
        """How the problem gives its answer away, if it does: then only its own id selects it."""
        ...


class SkippedTask(BaseModel):
    """A problem source that did not load: `name` is the file's stem (a task id by
    convention, the task's id for a duplicate), `reason` why."""

    model_config = ConfigDict(frozen=True)
    name: str
    path: str
    reason: str


class ProblemsUnavailable(ValueError):
    """A kind cannot offer its problems here: a missing folder, an uninstalled
    library, no machine calibration. The message says what to do; `skipped`
    names the sources that did not load, each with its reason."""

    def __init__(self, message: str, skipped: Sequence[SkippedTask] = ()) -> None:
        super().__init__(message)
        self.skipped = list(skipped)


@dataclass(frozen=True)
class ScoringOptions:
    """What a command may ask of a kind's scorer beyond its defaults."""

    compat: tuple[str, ...] = ()  # compatibility rewrites a kind offers (PDE: cases/compat.py)


@dataclass
class LoadedProblems:
    """The problems of one source for each track asked for, what was skipped, and the scorer they need."""

    by_track: dict[str, list[Any]]
    scorer: AttemptScorer
    skipped: list[SkippedTask] = field(default_factory=list)


class AttemptScorer(Protocol):
    """Scores attempts at a kind's problems to the kind's typed outcome, in the
    sandbox. One scorer may serve several tracks (code and tests share one)."""

    @property
    def calibration_id(self) -> str | None:
        """The machine calibration its verdicts are measured against (a run's manifest keeps it)."""
        ...

    def score(self, problem: Any, track: str, text: str) -> AnyOutcome: ...

    def close(self) -> None: ...


class KindFeedback(Protocol):
    """What a repairing agent may learn of an outcome: which template, rendered
    from which view (stage facts only, never hidden data), and a graded score."""

    def template(self, outcome: Any) -> str: ...

    def view(self, outcome: Any, targets: dict[str, str]) -> dict[str, Any]: ...

    def score(self, outcome: Any) -> float: ...


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


class Templates(Protocol):
    """The scaffold files (`scaffolds/`) a solver view builds from: jinja
    templates, rendered with one environment, and plain files read as they are."""

    def render(self, name: str, **context: Any) -> str: ...

    def read(self, name: str) -> str: ...


@dataclass(frozen=True)
class WorkspaceFiles:
    """What a coding agent's workspace starts with besides the task prompt: the
    solution file (its final content is the attempt) and its stub, the public
    check script the agent runs, and any other file the problem needs, by name."""

    solution: str
    stub: str
    check: str
    extra: dict[str, str] = field(default_factory=dict)


class SolverView(Protocol):
    """What a solver sees of a problem on the kind's track, built from its
    prompt-facing parts only: never hidden inputs, references or thresholds."""

    def task_prompt(self, problem: Any, scaffold: str, templates: Templates) -> str:
        """The task prompt of `scaffold` (single_shot, template_guided, fembench_paper)."""
        ...

    def skeleton(self, problem: Any, templates: Templates) -> str:
        """The runnable module a template-guided prompt asks the solver to complete."""
        ...

    def reply_code(self, problem: Any, reply: str) -> str:
        """The code of a model reply that a repair prompt quotes ("" when it holds none)."""
        ...

    def workspace(self, problem: Any, templates: Templates) -> WorkspaceFiles:
        """A coding agent's starting files; the agent adds the task prompt (`TASK.md`) and
        names the check script `check.py`."""
        ...


@dataclass(frozen=True)
class HiddenNumbers:
    """Numbers of one problem no attempt may see, and what they are."""

    what: str  # as a leak report names them: "reference output", "accuracy threshold (tau_acc)"
    values: Any  # plain numbers, arrays, or lists, tuples and dicts of them
    min_digits: int = 4  # a number written with fewer significant digits says too little to count


@dataclass(frozen=True)
class HiddenMaterial:
    """What of one problem stays hidden from attempts, in the shapes a leak
    guard looks for it: lines of source, numbers, names."""

    source: str = ""  # text none of whose distinctive lines may appear
    source_label: str = "reference"  # what `source` is, as a leak report names it
    numbers: tuple[HiddenNumbers, ...] = ()
    names: tuple[str, ...] = ()  # identifiers hidden from attempts (a function task's expected failures)
    notes: tuple[str, ...] = ()  # what could not be gathered, and why


class KindHidden(Protocol):
    """What of a kind's problems stays hidden from attempts, and what of a
    problem an optimizer may show its reflection step."""

    def material(self, problem: Any, scorer: AttemptScorer) -> HiddenMaterial:
        """Everything of `problem` neither an attempt nor an optimized prompt may hold;
        `scorer` is the kind's, for what it computes (a function task's reference outputs)."""
        ...

    def visible(self, problem: Any) -> str:
        """The text of a training or validation problem an optimizer may have seen:
        hidden material of a held-out problem found there too is an overlap, not a leak."""
        ...

    def reference_answer(self, problem: Any, track: str) -> str | None:
        """A worked answer a reflection step may see for a training problem
        (`include_reference`); None when the kind shows none."""
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
    ) -> FolderSummary:
        """The outcomes of `found`'s attempts (in its order), summed up per label."""
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


class TaskKind(Protocol):
    """One registered track: its problems, how attempts at them are scored and
    explained, and what a solver sees of them."""

    @property
    def track(self) -> str:
        """The registry key: `--track` / `--library`, the log's track."""
        ...

    @property
    def label(self) -> str:
        """What reports call it."""
        ...

    @property
    def default_path(self) -> str:
        """Where its problems live unless a command names a path (`--tasks-path`, `--cases-path`)."""
        ...

    @property
    def preload(self) -> tuple[str, ...]:
        """Modules the sandbox's warm workers import once, so no attempt is charged for them."""
        ...

    @property
    def outcome_type(self) -> type[Any]:
        """Its outcome model; the model's `kind` field tags it in a log."""
        ...

    @property
    def scorer_key(self) -> str:
        """Kinds with one key share one scorer per evaluator (and one load of their problems)."""
        ...

    @property
    def feedback(self) -> KindFeedback: ...

    @property
    def report(self) -> KindReport: ...

    @property
    def solver(self) -> SolverView: ...

    @property
    def hidden(self) -> KindHidden:
        """What of its problems stays hidden from attempts (the optimizer's leak guard checks it)."""
        ...

    @property
    def folder(self) -> KindFolder:
        """How `score DIR` reads and sums up a folder of saved attempts at its problems."""
        ...

    @property
    def validator(self) -> KindValidator: ...

    def load(self, path: str, sandbox: Sandbox, options: ScoringOptions, tracks: Sequence[str]) -> LoadedProblems:
        """The problems at `path` each of `tracks` (this kind's and those sharing its
        scorer) offers, and one scorer with what it needs (a machine calibration,
        an installed library); raises ProblemsUnavailable saying what to do."""
        ...

    def scorer(self, sandbox: Sandbox, options: ScoringOptions) -> AttemptScorer:
        """A scorer with no more than the sandbox (what an evaluator builds when none was given)."""
        ...


class Feedback(BaseModel):
    """What a repairing agent (or a GEPA reflection step) sees about an attempt."""

    model_config = ConfigDict(frozen=True)
    score: float
    text: str


@runtime_checkable
class ModelClient(Protocol):
    model: str

    async def complete(
        self, messages: list[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse: ...


class FeedbackBuilder(Protocol):
    def __call__(self, outcome: AnyOutcome) -> Feedback: ...


class SolverAgent(Protocol):
    """Produces attempts at one task; every attempt is scored by the scorer and
    recorded by the session before the next one is asked for."""

    name: str

    async def solve(self, task: Problem, session: SolveSession) -> None: ...


class SolveSession(Protocol):
    """What an agent works with for one (task, repeat): a model, the scorer,
    the feedback builder, the track, and `attempt` which records everything."""

    track: Track
    model: ModelClient
    feedback: FeedbackBuilder
    params: ModelParams

    async def call_model(
        self, messages: list[Message], *, attempt_index: int, attempt: str, sample: str | None = None
    ) -> ModelResponse:
        """A model call, recorded in the run log; raises ModelUnavailable on failure."""
        ...

    async def attempt(self, messages: list[Message]) -> tuple[AnyOutcome, Feedback]: ...

    async def submit(
        self, text: str, messages: list[Message], response: ModelResponse | None
    ) -> tuple[AnyOutcome, Feedback]: ...

    def last_reply(self) -> str: ...

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
    "KindFeedback",
    "KindFolder",
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
    "TaskKind",
    "Track",
    "Validation",
    "ValidationOptions",
    "ValidationProblem",
    "ValidationProgress",
]

if TYPE_CHECKING:
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

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
    "HiddenMaterial",
    "HiddenNumbers",
    "KindFeedback",
    "KindHidden",
    "LoadedProblems",
    "ModelClient",
    "Problem",
    "ProblemsUnavailable",
    "ScoringOptions",
    "SkippedTask",
    "SolveSession",
    "SolverAgent",
    "TaskKind",
    "Track",
]

if TYPE_CHECKING:
    from fembench_agents.scoring.outcomes import AnyOutcome
    from fembench_agents.scoring.sandbox import Sandbox


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
    library, no machine calibration. The message says what to do."""


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
    def hidden(self) -> KindHidden:
        """What of its problems stays hidden from attempts (the optimizer's leak guard checks it)."""
        ...

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

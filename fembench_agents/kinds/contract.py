"""The contract of a task kind: what every kind supplies and everything outside
it asks through the registry (`fembench_agents.kinds`), never testing which
kind it holds. A task kind (the function tasks' code track, their tests track,
a PDE library track, or a kind of your own) is one package plus one registry
entry. The parts the offline commands ask for (report, `score DIR`,
`validate`) are in `kinds/review.py`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from fembench_agents.kinds.review import KindFolder, KindReport, KindValidator
    from fembench_agents.scoring.outcomes import OutcomeBase
    from fembench_agents.scoring.sandbox import Sandbox


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

    compat: tuple[str, ...] = ()  # compatibility options a kind offers (PDE: cases/compat.py)
    # which gates judge: the kind's own ("ours"), or another set it offers (PDE: "published",
    # each imported case by its published record's thresholds)
    gates: str = "ours"
    # The caller will `prepare` the problems it selects before scoring them (a run does): a
    # kind need not refuse to load for want of what `prepare` makes (a machine calibration).
    prepared_later: bool = False
    # Beside each problem, a fresh instance drawn with this seed where the kind can draw one
    # (function tasks: new verification inputs, docs/fresh_instances.md); None: published only.
    fresh_inputs: int | None = None
    # The selections the command will draw from this kind's tracks (`--cases`, an experiment's
    # `cases`): a kind makes the problems their made items name (`NAME:...`, runs/selection.py;
    # the PDE cases' `fresh:...`) and `load` offers them beside the others.
    selections: tuple[str, ...] = ()


@dataclass
class LoadedProblems:
    """The problems of one source for each track asked for, what was skipped, and the scorer they need."""

    by_track: dict[str, list[Any]]
    scorer: AttemptScorer
    skipped: list[SkippedTask] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what a command tells its user about the load
    # each made item of `ScoringOptions.selections` -> the ids of the problems it names, comma-separated
    made: dict[str, str] = field(default_factory=dict)


@dataclass
class PreviewedProblems:
    """The problems of one source for each track asked for, read without starting a
    sandbox job (what a dry run renders prompts from), and the sources left out."""

    by_track: dict[str, list[Any]]
    skipped: list[SkippedTask] = field(default_factory=list)
    # each made item of the selections -> the ids it names, as `LoadedProblems.made`; the problems are
    # previews where they are not made yet (a dry run makes nothing), which `notes` says
    made: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class AttemptScorer(Protocol):
    """Scores attempts at a kind's problems to the kind's typed outcome, in the
    sandbox. One scorer may serve several tracks (code and tests share one)."""

    @property
    def calibration_id(self) -> str | None:
        """The machine calibration its verdicts are measured against (a run's manifest keeps it)."""
        ...

    def score(self, problem: Any, track: str, text: str) -> OutcomeBase: ...

    def close(self) -> None: ...


class KindFeedback(Protocol):
    """What a repairing agent may learn of an outcome: which template, rendered
    from which view (stage facts only, never hidden data), and a graded score."""

    @property
    def folder(self) -> Path | None:
        """Where its templates are; None: the feedback builder's folder (`feedback/`)."""
        ...

    def template(self, outcome: Any) -> str: ...

    def view(self, outcome: Any, targets: dict[str, str]) -> dict[str, Any]: ...

    def score(self, outcome: Any) -> float: ...


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


def check_script(common: str, checks: str, spec: str) -> str:
    """A workspace's public check script: the checks every workspace runs
    (scaffolds/workspace/check.py: it parses, imports only what it may, imports)
    with a kind's own `check(namespace, tree, path)` and the spec it reads."""
    return common.replace("__CHECKS__", checks.rstrip("\n")).replace("__SPEC__", spec)


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

    def oracle_program(self, problem: Any, track: str) -> str:
        """What an agent that knows the answer hands in (the body of a fenced reply, or the
        solution file's content): a program that passes. `parity` proves with it that every
        agent's harness lets a right answer through."""
        ...


# what is being made, how many of how many are done (a progress bar's description and counts)
Progress = Callable[[str, int, int], None]


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

    def prepare(self, path: str, problems: Sequence[Any], scorer: AttemptScorer, progress: Progress) -> None:
        """Before a run's first episode: make what scoring `problems` on this machine needs and
        does not have yet (a PDE case's timing of its calibration solver), once per machine,
        saying how far it is through `progress`; nothing when all is there. Raises
        ProblemsUnavailable when it cannot."""
        ...

    def preview(self, path: str, tracks: Sequence[str], selections: Sequence[str] = ()) -> PreviewedProblems:
        """The problems at `path` each of `tracks` offers, with what their prompts need,
        read without starting a sandbox job or needing a scorer (a dry run's), and those the made
        items of `selections` name, previewed without being made; raises ProblemsUnavailable when
        there are none to read."""
        ...

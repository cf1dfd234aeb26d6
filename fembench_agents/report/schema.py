"""The typed report: what `build_report` returns, `report.json` holds, and the
Markdown, terminal and plot renderings read."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fembench_agents.contracts import Track
from fembench_agents.scoring.sandbox.isolation import IsolationReport

REPORT_SCHEMA_VERSION = 1

# The order stages are shown in; anything else a log names follows, sorted.
STAGE_ORDER = ("parse", "imports", "execute", "correct", "tests", "model_error", "error", "unknown")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ReportSettings(_Frozen):
    """How the statistics are computed. The seed makes every interval reproducible."""

    resamples: int = Field(default=2000, ge=1)
    confidence: float = Field(default=0.95, gt=0, lt=1)
    seed: int = 0
    # FEABench-style near miss: a wrong but executable attempt whose relative
    # error on its worst input is at most this.
    near_miss_error: float = Field(default=1e-2, gt=0)


class Estimate(_Frozen):
    """A mean over tasks with its bootstrap interval (tasks resampled)."""

    value: float
    low: float
    high: float


class RunInfo(_Frozen):
    run_id: str
    path: str
    created: str
    git_commit: str | None = None
    episodes: int
    isolation: IsolationReport | None = None  # None: recorded before isolation was kept
    episode_budget: str | None = None  # its agents' caps (calls=..,usd=..); None: uncapped


class GroupSummary(_Frozen):
    """One model x agent x track over every task it ran."""

    model: str
    agent: str
    track: Track
    runs: list[str]
    tasks: int
    repeats_min: int
    repeats_max: int
    episodes: int
    attempts: int = 0  # scored attempts over every episode (a report written before the field: 0)
    passed: int  # episodes that passed
    errors: int  # episodes recorded with status "error" (counted as failures)
    tasks_solved: int  # tasks a strict majority of whose repeats passed
    correct: Estimate  # mean over tasks of the share of repeats that passed
    joint_tests: Estimate | None = None  # tests track: mean over tasks of the joint test score
    # best-of-N: mean over tasks of the share of repeats any of whose samples passes (the oracle
    # choice: what a choice by the hidden verdict would give, an upper bound on the scaffold's)
    oracle: Estimate | None = None
    pass_at_k: dict[int, float]  # k = 1 .. repeats_min
    k_of_n: dict[int, int]  # k -> tasks passed in at least k repeats
    stage_failures: dict[str, int]  # failed stage -> failed episodes
    failure_reasons: dict[str, int]  # "stage/reason" -> failed episodes
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None when any episode's cost is unknown
    seconds: float  # summed over episodes (not wall clock when episodes overlap)
    model_seconds: float
    budget_stops: dict[str, int] = {}  # episode budget cap -> episodes it ended
    model_calls: int = 0  # one per model sample
    reused_calls: int = 0  # of those, served by the response cache or a recording


class TaskCell(_Frozen):
    passes: int
    repeats: int
    score: float  # mean episode score


class TaskRow(_Frozen):
    task_id: str
    cells: dict[str, TaskCell]  # agent -> cell; absent when the agent did not run the task


class TaskTable(_Frozen):
    """Per-task results of every agent for one model and track."""

    model: str
    track: Track
    agents: list[str]
    rows: list[TaskRow]


class PairedTest(_Frozen):
    """Exact McNemar test between two agents on the tasks both ran, with one
    binary outcome per task: solved by a strict majority of its repeats."""

    model: str
    track: Track
    agent_a: str
    agent_b: str
    pairing: Literal["task_majority"] = "task_majority"
    tasks: int
    both: int
    a_only: int
    b_only: int
    neither: int
    p_value: float


class CaseStageRow(_Frozen):
    """PDE cases, one model x agent x library x family, over every scored attempt."""

    model: str
    agent: str
    library: str
    family: str
    attempts: int
    executes: int
    accurate: int
    fast: int  # passed all three gates
    executes_rate: float | None  # over all attempts
    accurate_rate: float | None  # over executed
    fast_rate: float | None  # over accurate
    pass_rate: float | None  # over all attempts
    median_error: float | None  # relative L2, among executed attempts
    median_seconds: float | None  # fastest solve time, among executed attempts


class TaskInfo(_Frozen):
    """What a task id says about the task: FEM-Bench's domain, tier and knowledge class."""

    domain: str  # "FEM 1D", "FEM 2D", "MSA 3D", or "other"
    tier: str  # "T0" .. "T3", or "-"
    knowledge: str  # "CC0" / "CC1", or "-"
    origin: str = "published"  # "published" or "fresh": a fresh instance was drawn for this run
    stratum: str | None = None  # what a fresh instance is compared with published ones on


class PaperCell(_Frozen):
    """One model x agent on one task over its repeats: best-of-n is passes > 0,
    n-of-n is passes == repeats."""

    passes: int
    repeats: int
    score: float  # mean episode score (joint test score on the tests track)

    @property
    def best_of_n(self) -> bool:
        return self.passes > 0

    @property
    def n_of_n(self) -> bool:
        return self.passes == self.repeats


class PaperRow(_Frozen):
    task_id: str
    info: TaskInfo
    cells: dict[str, PaperCell]  # column ("model / agent") -> cell; absent when not run


class PaperTable(_Frozen):
    """A paper-style per-task table of one track: tasks grouped by domain and
    ordered by tier, one column per model x agent."""

    track: Track
    columns: list[str]
    rows: list[PaperRow]


class AgentMetrics(_Frozen):
    """FEM-Bench's four aggregates for one model x agent, each a mean over tasks
    (of the mean over repeats, each repeat read from its last attempt); None
    where the track was not run."""

    model: str
    agent: str
    function_correctness: float | None  # code track: share of repeats that passed
    reference_pass: float | None  # tests track: share of tests that pass on the reference
    failures_detected: float | None  # tests track: share of expected failures the tests catch
    joint_success: float | None  # tests track: share of tests that do both


class BreakdownRow(_Frozen):
    """One model x agent x track over the tasks of one tier, knowledge class or domain."""

    model: str
    agent: str
    track: Track
    by: Literal["tier", "knowledge", "domain"]
    value: str
    tasks: int
    episodes: int
    correct: float  # mean over tasks of the share of repeats that passed
    best_of_n: int  # tasks passed at least once
    n_of_n: int  # tasks passed in every repeat


class Diagnostics(_Frozen):
    """FEABench-style diagnostics over every scored function attempt of one model x agent."""

    model: str
    agent: str
    attempts: int
    executable: int  # ran on every input (matched or not)
    executable_share: float | None
    wrong_executable: int  # executable but wrong
    median_error: float | None  # worst-input relative error among the wrong executable ones
    near_misses: int  # wrong executable with that error <= the near-miss threshold
    near_miss_share: float | None  # over the wrong executable ones with a measured error


class CaseMargins(_Frozen):
    """PDE attempts that executed, each measured against its own thresholds:
    error / tau_acc and solve time / tau_time (<= 1 passes that gate)."""

    model: str
    agent: str
    library: str
    family: str
    error_ratios: list[float]
    time_ratios: list[float]


class ContaminationRow(_Frozen):
    """One model x agent x track over the strata with both published and fresh tasks, of one
    family (`scope`, the strata's prefix before "/") or of all ("overall"): the mean over those
    strata of each side's pass rate (a stratum's: the mean over its tasks of the share of repeats
    that passed), and their paired difference, published - fresh, with its bootstrap interval
    over strata. A positive difference is what recall of the published tasks would give."""

    model: str
    agent: str
    track: Track
    scope: str
    strata: int
    published_tasks: int
    fresh_tasks: int
    published: float
    fresh: float
    difference: Estimate


class UnpairedStratum(_Frozen):
    """A stratum of a model x agent x track with tasks on one side only: not in any difference."""

    model: str
    agent: str
    track: Track
    stratum: str
    side: Literal["published", "fresh"]
    tasks: int


class Report(_Frozen):
    schema_version: int = REPORT_SCHEMA_VERSION
    settings: ReportSettings = ReportSettings()
    runs: list[RunInfo]
    groups: list[GroupSummary]
    task_tables: list[TaskTable]
    paired: list[PairedTest]
    case_stages: list[CaseStageRow] = []
    paper_tables: list[PaperTable] = []
    test_metrics: list[AgentMetrics] = []
    breakdowns: list[BreakdownRow] = []
    diagnostics: list[Diagnostics] = []
    case_margins: list[CaseMargins] = []
    # published beside fresh instances (report/contamination.py): every kind's, so no kind's
    # field (a default factory keeps them out of kind_parts.KIND_FIELDS)
    contamination: list[ContaminationRow] = Field(default_factory=list)
    contamination_unpaired: list[UnpairedStratum] = Field(default_factory=list)
    case_gates: list[str] = []  # the gates that judged the PDE attempts, as named ("ours (alpha_acc 10, ...)")

"""A third task kind, defined here and not in the package: sums. A problem asks
for `solve(spec) -> {"total": ...}`, the sum of `spec["numbers"]`; the expected
total sits in the source's hidden folder, which no attempt may read. It is one
module plus one registry entry (`register_kind(SUMS)`), and implements every
part of `TaskKind` with nothing of the package changed."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from fembench_agents.kinds.contract import (
    HiddenMaterial,
    HiddenNumbers,
    LoadedProblems,
    PreviewedProblems,
    ProblemsUnavailable,
    ScoringOptions,
    SkippedTask,
    Templates,
    WorkspaceFiles,
)
from fembench_agents.kinds.review import FolderTable, SavedAttempt, SavedAttempts, Validation, ValidationProblem
from fembench_agents.report.kind_parts import PlainReport
from fembench_agents.scoring import codec
from fembench_agents.scoring.extraction import parse_code
from fembench_agents.scoring.outcomes import OutcomeBase, StageResult
from fembench_agents.scoring.sandbox import IsolationReport, Sandbox, SandboxPolicy

TRACK = "sums"
SOURCE = "sums"  # the kind's default_path: a folder holding problems.json and hidden/answers.json
FEEDBACK = Path(__file__).resolve().parent / "fixtures" / "sums_feedback"
REFERENCE = "def solve(spec):\n    return {'total': float(sum(spec['numbers']))}\n"


@dataclass(frozen=True)
class SumProblem:
    task_id: str
    numbers: tuple[float, ...]
    hidden_dir: Path
    main_name: str = "solve"
    leak: str | None = None

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(f"{self.task_id}:{self.numbers}".encode()).hexdigest()[:16]

    def expected(self) -> float:
        answers: dict[str, float] = json.loads((self.hidden_dir / "answers.json").read_text())
        return answers[self.task_id]


class SumOutcome(OutcomeBase):
    kind: Literal["sum"] = "sum"
    total: float | None = None  # what the attempt returned, when it returned a number

    varying_fields: ClassVar[frozenset[str]] = frozenset({"seconds", "isolation"})


def write_source(folder: Path, problems: dict[str, list[float]]) -> Path:
    """A source of sums problems at `folder`: the visible numbers and the hidden totals."""
    (folder / "hidden").mkdir(parents=True, exist_ok=True)
    (folder / "problems.json").write_text(json.dumps([{"id": k, "numbers": v} for k, v in problems.items()]))
    (folder / "hidden" / "answers.json").write_text(json.dumps({k: float(sum(v)) for k, v in problems.items()}))
    return folder


def read_source(path: str) -> list[SumProblem]:
    folder = Path(path)
    try:
        rows = json.loads((folder / "problems.json").read_text())
    except FileNotFoundError:
        raise ProblemsUnavailable(f"no sums problems in {folder} (problems.json missing)") from None
    return [SumProblem(r["id"], tuple(r["numbers"]), folder / "hidden") for r in rows]


class SumScorer:
    """parse -> execute (solve(spec) in the sandbox) -> correct (the hidden total)."""

    calibration_id = None

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def score(self, problem: SumProblem, track: str, text: str) -> SumOutcome:
        start = time.perf_counter()
        parsed = parse_code(text, ("solve",))
        if parsed.error:
            stage = StageResult(stage="parse", passed=False, reason=parsed.reason, detail=parsed.error)
            return SumOutcome(task_id=problem.task_id, passed=False, stages=(stage,))
        job = {
            "kind": "solve",
            "spec": {"numbers": list(problem.numbers)},
            "implementation": {"code": parsed.code, "function": "solve"},
        }
        policy = SandboxPolicy(wall_seconds=20.0, memory_mb=1024, hidden_paths=(str(problem.hidden_dir),))
        result = self.sandbox.run(job, policy)  # type: ignore[arg-type]
        frames = result.events("solve")
        stages = [StageResult(stage="parse", passed=True)]
        if not frames or frames[0].get("status") != "ok":
            detail = frames[0].get("error_type") if frames else "no result"
            stages.append(StageResult(stage="execute", passed=False, reason="runtime_error", detail=detail))
            return SumOutcome(task_id=problem.task_id, passed=False, stages=tuple(stages), isolation=result.isolation)
        value = codec.from_data(frames[0]["value"])
        total = value.get("total") if isinstance(value, dict) else None
        total = float(total) if isinstance(total, (int, float)) else None
        right = total is not None and math.isclose(total, problem.expected(), rel_tol=1e-12, abs_tol=1e-12)
        stages += [
            StageResult(stage="execute", passed=True),
            StageResult(stage="correct", passed=right, reason=None if right else "wrong_output"),
        ]
        return SumOutcome(
            task_id=problem.task_id,
            passed=right,
            stages=tuple(stages),
            total=total,
            isolation=result.isolation,
            seconds=time.perf_counter() - start,
        )

    def close(self) -> None:
        pass


class SumFeedback:
    folder = FEEDBACK

    def template(self, outcome: SumOutcome) -> str:
        return "passed.j2" if outcome.passed else "failed.j2"

    def view(self, outcome: SumOutcome, targets: dict[str, str]) -> dict[str, Any]:
        failed = next((s for s in outcome.stages if not s.passed), None)
        return {"stage": failed.stage if failed else None, "detail": failed.detail if failed else None}

    def score(self, outcome: SumOutcome) -> float:
        return 1.0 if outcome.passed else {"parse": 0.0, "execute": 0.1}.get(outcome.failed_stage or "parse", 0.5)


class SumView:
    def task_prompt(self, problem: SumProblem, scaffold: str, templates: Templates) -> str:
        return (
            f"Task {problem.task_id}: write `solve(spec)` returning {{'total': s}}, where s is the sum of the "
            f"{len(problem.numbers)} numbers in spec['numbers'] (for instance {list(problem.numbers)}).\n"
        )

    def skeleton(self, problem: SumProblem, templates: Templates) -> str:
        return "def solve(spec):\n    ...\n"

    def reply_code(self, problem: SumProblem, reply: str) -> str:
        return parse_code(reply, ("solve",)).code

    def workspace(self, problem: SumProblem, templates: Templates) -> WorkspaceFiles:
        spec = json.dumps({"numbers": list(problem.numbers)})
        check = f"import json\nfrom solution import solve\nprint(solve(json.loads({spec!r})))\n"
        return WorkspaceFiles(solution="solution.py", stub=self.skeleton(problem, templates), check=check)


class SumHidden:
    def material(self, problem: SumProblem, scorer: Any) -> HiddenMaterial:
        return HiddenMaterial(numbers=(HiddenNumbers(what="expected total", values=[problem.expected()]),))

    def visible(self, problem: SumProblem) -> str:
        return SumView().task_prompt(problem, "single_shot", None)  # type: ignore[arg-type]

    def reference_answer(self, problem: SumProblem, track: str) -> str | None:
        return REFERENCE

    def oracle_program(self, problem: SumProblem, track: str) -> str:
        return REFERENCE


class SumFolderSummary(BaseModel):
    labels: dict[str, int]  # label -> attempts that passed
    unmatched_files: list[str]
    isolation: IsolationReport


class SumFolder:
    """`score DIR`: files `{task_id}_{label}.py`."""

    def tracks(self, folder: Path, path: str) -> list[str]:
        return [TRACK]

    def find(self, folder: Path, path: str, by_track: dict[str, list[Any]]) -> SavedAttempts:
        problems = by_track[TRACK]
        found, unmatched = [], []
        for file in sorted(folder.glob("*.py")):
            hit = next((p for p in problems if file.stem.startswith(f"{p.task_id}_")), None)
            if hit is None:
                unmatched.append(file.name)
            else:
                found.append(SavedAttempt(hit.task_id, TRACK, file.stem[len(hit.task_id) + 1 :], file))
        return SavedAttempts(problems, found, unmatched)

    def summary(
        self,
        found: SavedAttempts,
        scored: list[tuple[SavedAttempt, Any]],
        isolation: IsolationReport,
        skipped: list[SkippedTask],
        options: ScoringOptions,
    ) -> SumFolderSummary:
        labels: dict[str, int] = {}
        for attempt, outcome in scored:
            labels[attempt.label] = labels.get(attempt.label, 0) + int(outcome.passed)
        return SumFolderSummary(labels=labels, unmatched_files=found.unmatched, isolation=isolation)

    def table(self, summary: Any, found: SavedAttempts) -> FolderTable:
        rows = [(label, str(n)) for label, n in sorted(summary.labels.items())]
        return FolderTable(noun="sums", columns=("label", "passed"), rows=rows, unmatched="sum")


class SumValidator:
    def validate(self, path: str, options: Any, progress: Any) -> Validation:
        problems = read_source(path)
        progress.start(len(problems))
        found = []
        for p in problems:
            if not math.isclose(p.expected(), sum(p.numbers)):
                found.append(ValidationProblem(task_id=p.task_id, check="answer", message="the hidden total is wrong"))
            progress.advance()
        bad = {f.task_id for f in found}
        return Validation(
            valid=[p.task_id for p in problems if p.task_id not in bad],
            problems=found,
            summary=f"all {len(problems)} sums are consistent",
        )


@dataclass(frozen=True)
class SumKind:
    track: str = TRACK
    label: str = "sums"
    default_path: str = SOURCE
    preload: tuple[str, ...] = ()
    outcome_type: type[SumOutcome] = SumOutcome
    scorer_key: str = "sums"
    feedback: SumFeedback = field(default_factory=SumFeedback)
    report: PlainReport = field(default_factory=lambda: PlainReport(family="sums"))
    solver: SumView = field(default_factory=SumView)
    hidden: SumHidden = field(default_factory=SumHidden)
    folder: SumFolder = field(default_factory=SumFolder)
    validator: SumValidator = field(default_factory=SumValidator)

    def load(self, path: str, sandbox: Sandbox, options: ScoringOptions, tracks: Any) -> LoadedProblems:
        return LoadedProblems({t: read_source(path) for t in tracks}, self.scorer(sandbox, options))

    def scorer(self, sandbox: Sandbox, options: ScoringOptions) -> SumScorer:
        return SumScorer(sandbox)

    def prepare(self, path: str, problems: Sequence[Any], scorer: Any, progress: Any) -> None:
        """A sum needs nothing of the machine."""

    def preview(self, path: str, tracks: Any, selections: Sequence[str] = ()) -> PreviewedProblems:
        return PreviewedProblems({t: read_source(path) for t in tracks})

"""What an episode is recorded as, and which record wins where records are
read: the episode summary (the last scored attempt decides unless one passed),
its tokens and cost, resume (the latest finished record of an episode), the
log reader, and the outcome's own summary properties."""

from __future__ import annotations

import asyncio
import re
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from fembench_agents.cases.outcomes import CaseOutcome, CaseThresholds
from fembench_agents.contracts import Feedback
from fembench_agents.messages import (
    CallContext,
    Message,
    ModelParams,
    ModelRequest,
    ModelResponse,
    Usage,
)
from fembench_agents.models.errors import ModelCallError
from fembench_agents.runs.health import FailureStreak, RunStopped, error_summary, provider_message
from fembench_agents.runs.log import (
    AttemptRecord,
    EpisodeRecord,
    ModelCallRecord,
    RunLog,
    RunManifest,
    episode_key,
    now,
    read_log,
    read_manifest,
    write_manifest,
)
from fembench_agents.runs.reader import expand_run_dirs, finished_episodes, open_run
from fembench_agents.runs.run import RunConfig, execute_run, prepare_run_dir, record_skipped_tasks
from fembench_agents.runs.selection import resolve_selection, select_tasks, selector_items
from fembench_agents.runs.session import EpisodeSession, ModelUnavailable
from fembench_agents.scoring.feedback import TemplateFeedback
from fembench_agents.scoring.outcomes import ErrorInfo, StageResult
from fembench_agents.scoring.sandbox import IsolationReport
from fembench_agents.suite.loader import SkippedTask
from fembench_agents.suite.outcomes import FunctionOutcome, InputResult
from fembench_agents.suite.outcomes import TestResult as CaseResult  # aliased: pytest would collect Test*
from fembench_agents.suite.outcomes import TestSuiteOutcome as SuiteOutcome

MODEL = "mock/model"
PROMPT = [Message(role="user", content="write f")]


# ----------------------------------------------------------------- outcomes by hand


def fn(*failed: tuple[str, str], passed: tuple[str, ...] = ()) -> FunctionOutcome:
    return FunctionOutcome(
        task_id="T",
        passed=not failed,
        stages=(
            *(StageResult(stage=s, passed=True) for s in passed),
            *(StageResult(stage=s, passed=False, reason=r) for s, r in failed),
        ),
    )


PARSE_FAIL = fn(("parse", "syntax_error"))
RUNTIME_FAIL = fn(("execute", "runtime_error"), passed=("parse", "imports"))
WRONG = fn(("correct", "wrong_output"), passed=("parse", "imports", "execute"))
PASS = fn(passed=("parse", "imports", "execute", "correct"))


def make_suite(*tests: CaseResult, parse_error: bool = False) -> SuiteOutcome:
    if parse_error:
        return SuiteOutcome(
            task_id="T",
            passed=False,
            tests=tests,
            stages=(StageResult(stage="parse", passed=False, reason="syntax_error"),),
        )
    joint = all(t.joint for t in tests)
    return SuiteOutcome(
        task_id="T",
        passed=joint,
        tests=tests,
        stages=(
            StageResult(stage="parse", passed=True),
            StageResult(stage="imports", passed=True),
            StageResult(stage="tests", passed=joint, reason=None if joint else "failure_not_detected"),
        ),
    )


def case(name: str, present: bool = True, reference: bool = True, **detected: bool) -> CaseResult:
    return CaseResult(name=name, present=present, passes_reference=reference, detected=detected)


HALF_RIGHT = make_suite(case("test_a", f=True), case("test_b", g=False))
# joint 1/3 (test_a), passing the reference 2/3, detecting 3 of the 4 failures: a score tells which it is
THIRD_RIGHT = make_suite(
    case("test_a", f=True, h=True), case("test_b", g=False), case("test_c", reference=False, k=True)
)
UNPARSED = make_suite(case("test_a", False, False, f=False), case("test_b", False, False, g=False), parse_error=True)


# ----------------------------------------------------------------- fakes


class QueuedEvaluator:
    """Returns the given outcomes in order and records what it was asked to score."""

    def __init__(self, outcomes: list[Any]) -> None:
        self.outcomes = list(outcomes)
        self.asked: list[tuple[str, str, str]] = []

    # What a run reads of the evaluator's sandbox: its size and isolation (for the manifest).
    sandbox = SimpleNamespace(size=1, isolation=lambda: IsolationReport(level="namespaced", detail="stub"))

    calibrations: dict[str, str] = {}  # track -> the machine calibration its scorer measures against

    def score(self, task: Any, track: str, text: str) -> Any:
        self.asked.append(("function" if track == "code" else "tests", task.task_id, text))
        return self.outcomes.pop(0)

    def calibration_id(self, track: str) -> str | None:
        return self.calibrations.get(track)


class QueuedModel:
    """Answers with the given responses in order; an exception in the list is raised."""

    model = MODEL

    def __init__(self, responses: list[ModelResponse | Exception]) -> None:
        self.responses = list(responses)
        self.calls: list[tuple[list[Message], CallContext, ModelParams | None]] = []

    async def complete(
        self, messages: list[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse:
        self.calls.append((messages, context, params))
        item = self.responses.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def response(
    prompt: int = 10,
    completion: int = 5,
    cost: float | None = 0.5,
    cached: bool = False,
    latency: float = 1.0,
    replayed: bool = False,
) -> ModelResponse:
    return ModelResponse(
        text="```python\ndef f(): pass\n```",
        usage=Usage(prompt_tokens=prompt, completion_tokens=completion),
        cost_usd=cost,
        cached=cached,
        latency_seconds=latency,
        replayed=replayed,
    )


def session(
    tmp_path: Path,
    outcomes: list[Any],
    responses: list[ModelResponse | Exception] | None = None,
    track: str = "code",
    params: ModelParams | None = None,
) -> tuple[EpisodeSession, RunLog]:
    log = RunLog(tmp_path)
    s = EpisodeSession(
        task=SimpleNamespace(task_id="T"),
        track=track,  # type: ignore[arg-type]
        model=QueuedModel(responses or [response() for _ in outcomes]),
        params=params or ModelParams(),
        evaluator=QueuedEvaluator(outcomes),
        feedback=TemplateFeedback(),  # type: ignore[arg-type]
        log=log,
        episode=episode_key(MODEL, "loop", track, "T", 0),
        agent="loop",
        repeat=0,
    )
    return s, log


def run_attempts(s: EpisodeSession, n: int) -> str | None:
    async def go() -> str | None:
        try:
            for _ in range(n):
                await s.attempt(PROMPT)
        except ModelUnavailable as exc:
            return str(exc)
        return None

    return asyncio.run(go())


def summary_fields(record: EpisodeRecord) -> tuple[Any, ...]:
    return (
        record.status,
        record.passed,
        record.score,
        record.attempts,
        record.first_pass_attempt,
        record.failed_stage,
        record.reason,
    )


# ----------------------------------------------------------------- the episode summary


def test_records_are_stamped_in_utc_to_the_millisecond() -> None:
    before = datetime.now(UTC)
    stamp = now()
    record = episode("t", "done", True, 1.0)
    for text in (stamp, record.timestamp):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", text), text
        assert datetime.fromisoformat(text).utcoffset() == timedelta(0)
        assert before - timedelta(seconds=1) <= datetime.fromisoformat(text) <= datetime.now(UTC)


def test_a_test_suite_episode_is_scored_by_its_last_attempt(tmp_path: Path) -> None:
    s, log = session(tmp_path, [UNPARSED, THIRD_RIGHT], track="tests")
    assert run_attempts(s, 2) is None
    assert summary_fields(s.summary(0.0)) == ("done", False, 1 / 3, 2, None, "tests", "failure_not_detected")
    log.close()


def test_a_later_worse_attempt_decides_a_failed_episode(tmp_path: Path) -> None:
    s, log = session(tmp_path, [HALF_RIGHT, UNPARSED], track="tests")
    run_attempts(s, 2)
    assert summary_fields(s.summary(0.0)) == ("done", False, 0.0, 2, None, "parse", "syntax_error")
    log.close()


def test_a_function_episode_fails_at_its_last_attempt_stage(tmp_path: Path) -> None:
    s, log = session(tmp_path, [PARSE_FAIL, WRONG, RUNTIME_FAIL])
    run_attempts(s, 3)
    assert summary_fields(s.summary(0.0)) == ("done", False, 0.0, 3, None, "execute", "runtime_error")
    log.close()


def test_the_first_passing_attempt_is_recorded_and_passes_the_episode(tmp_path: Path) -> None:
    s, log = session(tmp_path, [PARSE_FAIL, PASS, WRONG])
    run_attempts(s, 3)
    assert summary_fields(s.summary(0.0)) == ("done", True, 1.0, 3, 1, None, None)
    log.close()


def test_a_model_failure_after_a_scored_attempt(tmp_path: Path) -> None:
    s, log = session(tmp_path, [WRONG], [response(), RuntimeError("rate limited")])
    error = run_attempts(s, 2)
    assert error == "RuntimeError: rate limited"
    record = s.summary(0.0, error)
    assert summary_fields(record) == ("error", False, 0.0, 2, None, "correct", "wrong_output")
    assert record.error == "RuntimeError: rate limited"
    log.close()


def test_a_model_failure_before_any_answer(tmp_path: Path) -> None:
    s, log = session(tmp_path, [], [ValueError("no key")])
    error = run_attempts(s, 1)
    record = s.summary(0.0, error)
    assert summary_fields(record) == ("error", False, 0.0, 1, None, "model_error", "model_error")
    assert (record.prompt_tokens, record.completion_tokens, record.cost_usd) == (0, 0, 0.0)
    attempts = [r for r in read_log(tmp_path) if isinstance(r, AttemptRecord)]
    assert [(a.attempt_index, a.model_error, a.outcome) for a in attempts] == [(0, "ValueError: no key", None)]
    log.close()


def test_no_attempt_and_no_error(tmp_path: Path) -> None:
    s, log = session(tmp_path, [])
    assert summary_fields(s.summary(0.0)) == ("done", False, 0.0, 0, None, None, None)
    log.close()


def test_tokens_cost_and_model_time_are_summed_over_calls(tmp_path: Path) -> None:
    s, log = session(
        tmp_path,
        [WRONG, WRONG, WRONG, PASS],
        [
            response(10, 5, 0.25, latency=1.5),
            response(20, 7, 0.75, cached=True, latency=0.5),
            response(30, 11, 0.125, latency=2.0),
            response(40, 13, 0.5, replayed=True, latency=0.25),
        ],
    )
    run_attempts(s, 4)
    record = s.summary(0.0)
    # a cached answer is the same sample asked again: its recorded tokens and cost count once
    assert (record.prompt_tokens, record.completion_tokens, record.cost_usd, record.model_seconds) == (
        100,
        36,
        1.625,
        4.25,
    )
    assert (record.model_calls, record.reused_calls) == (4, 2)  # a cached answer and a replayed one
    log.close()


def test_one_unknown_price_makes_the_cost_unknown(tmp_path: Path) -> None:
    s, log = session(tmp_path, [WRONG, WRONG], [response(cost=0.5), response(cost=None)])
    run_attempts(s, 2)
    assert s.summary(0.0).cost_usd is None
    log.close()
    # served from the cache, an unpriced sample is still unpriced
    s, log = session(tmp_path / "cached", [WRONG, WRONG], [response(cost=0.5), response(cost=None, cached=True)])
    run_attempts(s, 2)
    assert s.summary(0.0).cost_usd is None
    log.close()


def test_attempts_are_logged_in_order_with_their_feedback(tmp_path: Path) -> None:
    s, log = session(tmp_path, [PARSE_FAIL, PASS])
    run_attempts(s, 2)
    log.close()
    attempts = [r for r in read_log(tmp_path) if isinstance(r, AttemptRecord)]
    assert [
        (a.attempt_index, a.outcome.passed if a.outcome else None, a.feedback.score if a.feedback else None)
        for a in attempts
    ] == [(0, False, 0.0), (1, True, 1.0)]
    assert s.last_reply() == attempts[-1].reply


# ----------------------------------------------------------------- outcome summaries


def test_an_outcome_names_its_first_failed_stage_and_reason() -> None:
    outcome = FunctionOutcome(
        task_id="T",
        passed=False,
        stages=(
            StageResult(stage="parse", passed=True, reason="syntax_error"),  # a passed stage's reason is ignored
            StageResult(stage="execute", passed=False, reason="timeout"),
            StageResult(stage="correct", passed=False, reason="wrong_output"),
        ),
    )
    assert (outcome.failed_stage, outcome.reason, outcome.stage_reached) == ("execute", "timeout", "correct")
    assert (PASS.failed_stage, PASS.reason, PASS.stage_reached) == (None, None, "correct")
    empty = FunctionOutcome(task_id="T", passed=False, stages=())
    assert (empty.failed_stage, empty.reason, empty.stage_reached) == (None, None, "none")


def test_test_suite_shares() -> None:
    outcome = make_suite(
        case("test_a", f=True, g=True),
        case("test_b", f=False, g=True),
        case("test_c", reference=False, h=True),
        case("test_d", False, False, k=False),
    )
    assert outcome.joint_score == 0.25
    assert outcome.reference_pass_share == 0.5
    assert outcome.detection_share == pytest.approx(4 / 6)
    assert [t.joint for t in outcome.tests] == [True, False, False, False]
    assert [t.detects_all for t in outcome.tests] == [True, False, True, False]
    none = make_suite()
    assert (none.joint_score, none.reference_pass_share, none.detection_share) == (0.0, 0.0, 0.0)


def test_a_missing_test_detects_nothing_even_with_no_expected_failures() -> None:
    assert not case("test_a", present=False).detects_all
    assert case("test_a").detects_all and case("test_a").joint
    assert not case("test_a", reference=False).joint


def test_outcomes_survive_the_log(tmp_path: Path) -> None:
    outcome = FunctionOutcome(
        task_id="T",
        passed=False,
        stages=(StageResult(stage="execute", passed=False),),
        inputs=(InputResult(index=0, status="error", error=ErrorInfo(type="E")),),
    )
    s, log = session(tmp_path, [outcome, HALF_RIGHT])
    run_attempts(s, 2)
    log.close()
    outcomes = [r.outcome for r in read_log(tmp_path) if isinstance(r, AttemptRecord)]
    assert outcomes == [outcome, HALF_RIGHT]


def test_a_verdict_leaves_out_only_what_varies_between_scorings_of_the_same_attempt() -> None:
    """What a rescore and a replay compare (replay.py): every field but the measured times, the
    isolation, and for a PDE attempt its timings, thresholds and the fast stage's detail."""
    function = FunctionOutcome(
        task_id="T",
        passed=False,
        isolation="namespaces",
        seconds=1.5,
        stages=(
            StageResult(stage="parse", passed=True, seconds=0.1),
            StageResult(stage="execute", passed=False, reason="timeout", detail="input 1: timed out", seconds=2.0),
        ),
        inputs=(InputResult(index=0, status="match", seconds=0.3), InputResult(index=1, status="timeout")),
    )
    no_mismatch = {"error": None, "mismatch": None, "where": None, "relative_error": None}
    assert function.verdict_data() == {
        "schema_version": 1,
        "task_id": "T",
        "passed": False,
        "kind": "function",
        "stages": (
            {"stage": "parse", "passed": True, "reason": None, "detail": None},
            {"stage": "execute", "passed": False, "reason": "timeout", "detail": "input 1: timed out"},
        ),
        "inputs": ({"index": 0, "status": "match", **no_mismatch}, {"index": 1, "status": "timeout", **no_mismatch}),
    }
    suite = SuiteOutcome(
        task_id="S",
        passed=True,
        seconds=3.0,
        stages=(StageResult(stage="tests", passed=True, seconds=2.5),),
        tests=(CaseResult(name="test_a", present=True, passes_reference=True, detected={"f": True}),),
    )
    assert suite.verdict_data() == {
        "schema_version": 1,
        "task_id": "S",
        "passed": True,
        "kind": "tests",
        "stages": ({"stage": "tests", "passed": True, "reason": None, "detail": None},),
        "tests": (
            {
                "name": "test_a",
                "present": True,
                "passes_reference": True,
                "reference_error": None,
                "detected": {"f": True},
            },
        ),
    }
    thresholds = CaseThresholds(
        e_base=1e-3, tau_acc=1e-2, t_base=0.5, tau_time=1.5, alpha_acc=10, tau_min=1e-6, alpha_time=3, t_floor=0.01
    )
    case_outcome = CaseOutcome(
        task_id="C",
        passed=False,
        isolation="namespaces",
        seconds=9.0,
        library="numpy-scipy",
        family="poisson",
        stages=(
            StageResult(stage="executes", passed=True, detail="ran", seconds=1.0),
            StageResult(stage="accurate", passed=True, detail="error 1e-4"),
            StageResult(stage="fast", passed=False, reason="too_slow", detail="2.1 s against 1.5 s", seconds=6.3),
        ),
        relative_l2_error=1e-4,
        solve_seconds=2.1,
        timings=(2.1, 2.2, 2.3),
        max_abs_error=2e-4,
        rmse=5e-5,
        solver_info={"dofs": 100},
        thresholds=thresholds,
        substitutions=("petsc4py",),
    )
    assert case_outcome.verdict_data() == {
        "schema_version": 1,
        "task_id": "C",
        "passed": False,
        "kind": "case",
        "library": "numpy-scipy",
        "family": "poisson",
        "stages": (
            {"stage": "executes", "passed": True, "reason": None, "detail": "ran"},
            {"stage": "accurate", "passed": True, "reason": None, "detail": "error 1e-4"},
            {"stage": "fast", "passed": False, "reason": "too_slow"},
        ),
        "relative_l2_error": 1e-4,
        "max_abs_error": 2e-4,
        "rmse": 5e-5,
        "solver_info": {"dofs": 100},
        "error": None,
        "substitutions": ("petsc4py",),
    }


# ----------------------------------------------------------------- reading records


def episode(task: str, status: str, passed: bool, score: float, repeat: int = 0) -> EpisodeRecord:
    return EpisodeRecord(
        episode=episode_key(MODEL, "loop", "code", task, repeat),
        task_id=task,
        track="code",
        agent="loop",
        model=MODEL,
        repeat=repeat,
        status=status,  # type: ignore[arg-type]
        passed=passed,
        score=score,
        attempts=1,
    )


def test_finished_episodes_keep_the_latest_done_record() -> None:
    records = [
        episode("a", "done", False, 0.0),
        episode("b", "error", False, 0.0),
        episode("a", "done", True, 1.0),
        episode("a", "error", False, 0.0),
        episode("c", "done", False, 0.5),
    ]
    done = finished_episodes(records)
    assert {k.split("|")[3]: (r.status, r.score) for k, r in done.items()} == {"a": ("done", 1.0), "c": ("done", 0.5)}


def test_a_run_read_back_has_one_row_per_episode_in_model_agent_track_task_repeat_order(tmp_path: Path) -> None:
    def record(agent: str, task: str, repeat: int, status: str, passed: bool, track: str = "code") -> EpisodeRecord:
        return EpisodeRecord(
            episode=episode_key(MODEL, agent, track, task, repeat), task_id=task, track=track, agent=agent,
            model=MODEL, repeat=repeat, status=status, passed=passed, score=float(passed), attempts=1,
        )  # fmt: skip

    write_manifest(tmp_path, RunManifest(run_id="r7", config={}, task_hashes={}, versions={}))
    with RunLog(tmp_path) as log:
        for r in (
            record("b", "t1", 0, "done", True),
            record("a", "t2", 1, "done", False),
            record("a", "t2", 0, "error", False),
            record("a", "t1", 0, "done", False),
            record("a", "t2", 0, "done", True),  # resumed: the finished record counts
            record("a", "t1", 1, "done", True),
            record("a", "t0", 0, "done", True, track="tests"),  # a track of its own, after code
            record("b", "t2", 0, "error", False),  # ended in a model error, not resumed: it counts too
        ):
            log.append(r)
    run = open_run(tmp_path)
    assert [(e.agent, e.task_id, e.repeat, e.status, e.passed) for e in run.episodes()] == [
        ("a", "t1", 0, "done", False),
        ("a", "t1", 1, "done", True),
        ("a", "t2", 0, "done", True),
        ("a", "t2", 1, "done", False),
        ("a", "t0", 0, "done", True),
        ("b", "t1", 0, "done", True),
        ("b", "t2", 0, "error", False),
    ]
    rows = run.episode_rows()
    assert [(r["run"], r["agent"], r["task_id"], r["repeat"], r["passed"]) for r in rows] == [
        ("r7", "a", "t1", 0, False),
        ("r7", "a", "t1", 1, True),
        ("r7", "a", "t2", 0, True),
        ("r7", "a", "t2", 1, False),
        ("r7", "a", "t0", 0, True),
        ("r7", "b", "t1", 0, True),
        ("r7", "b", "t2", 0, False),
    ]
    assert "schema_version" not in rows[0] and "type" not in rows[0] and rows[0]["episode"] == run.episodes()[0].episode


def test_run_paths_expand_to_the_runs_a_compare_folder_holds(tmp_path: Path) -> None:
    def run(path: Path) -> Path:
        path.mkdir(parents=True)
        write_manifest(path, RunManifest(run_id=path.name, config={}, task_hashes={}, versions={}))
        return path

    single = run(tmp_path / "single")
    run(single / "inner")  # a run directory holding another is still the run itself
    folder = tmp_path / "compare"
    b, a = run(folder / "b"), run(folder / "a")
    (folder / "notes").mkdir()  # not a run: left out
    empty, missing, file = tmp_path / "empty", tmp_path / "missing", tmp_path / "file.txt"
    empty.mkdir()
    file.write_text("x")
    assert expand_run_dirs([single, folder, empty, missing, file]) == [single, a, b, empty, missing, file]


def test_the_log_reader_returns_every_record_in_order_and_skips_a_torn_tail(tmp_path: Path) -> None:
    with RunLog(tmp_path) as log:
        for r in (episode("a", "done", False, 0.0), episode("b", "done", True, 1.0)):
            log.append(r)
    with open(tmp_path / "log.jsonl", "a") as fh:
        fh.write('{"type": "episode", "epis')
    assert [(r.task_id, r.score) for r in read_log(tmp_path)] == [("a", 0.0), ("b", 1.0)]
    with RunLog(tmp_path) as log:  # reopening cuts the torn line; the next record starts on its own line
        log.append(episode("c", "done", True, 1.0))
    assert [r.task_id for r in read_log(tmp_path)] == ["a", "b", "c"]
    assert (tmp_path / "log.jsonl").read_text().count("\n") == 3


def test_a_line_torn_inside_a_character_is_skipped_and_a_complete_bad_last_line_is_an_error(tmp_path: Path) -> None:
    """Each record is written with its newline: only what follows the last newline is torn."""
    with RunLog(tmp_path) as log:
        log.append(episode("a", "done", True, 1.0))
    whole = episode("b", "done", True, 1.0).model_copy(update={"error": "σ × ε"}).model_dump_json().encode()
    with open(tmp_path / "log.jsonl", "ab") as fh:
        fh.write(whole[: whole.index("×".encode()) + 1])  # cut after the first of the two bytes of "×"
    assert [r.task_id for r in read_log(tmp_path)] == ["a"]
    with RunLog(tmp_path) as log:
        pass
    with open(tmp_path / "log.jsonl", "a") as fh:
        fh.write('{"type": "episode", "episode": "x"}\n')  # complete, not a record: a resume keeps it
    with pytest.raises(ValueError, match=r"log.jsonl:2: episode record: field task_id: Field required \(and 8 more\)$"):
        read_log(tmp_path)


def test_a_bad_line_inside_the_log_names_its_line(tmp_path: Path) -> None:
    with RunLog(tmp_path) as log:
        log.append(episode("a", "done", False, 0.0))
    with open(tmp_path / "log.jsonl", "a") as fh:
        fh.write('{"type": "nonsense"}\n')
    with RunLog(tmp_path) as log:
        log.append(episode("b", "done", False, 0.0))
    with pytest.raises(ValueError, match=r"log.jsonl:2: a JSON object with type 'nonsense', not a log record"):
        read_log(tmp_path)
    assert read_log(tmp_path / "absent") == []
    # of a line's several faults, the first in the record's field order is named
    lines = (tmp_path / "log.jsonl").read_text().splitlines()
    (tmp_path / "log.jsonl").write_text("\n".join([lines[0], '{"type": "episode", "episode": 5}', lines[2]]) + "\n")
    with pytest.raises(ValueError) as err:
        read_log(tmp_path)
    assert str(err.value) == (
        f"{tmp_path / 'log.jsonl'}:2: episode record: field episode: Input should be a valid string (and 9 more)"
    )


# ----------------------------------------------------------------- resume


class OneShot:
    """An agent that submits one answer; its session's evaluator decides."""

    name = "loop"

    def __init__(self) -> None:
        self.solved: list[str] = []

    async def solve(self, task: Any, s: EpisodeSession) -> None:
        self.solved.append(task.task_id)
        await s.attempt(PROMPT)


def fake_task(task_id: str) -> Any:
    return SimpleNamespace(task_id=task_id, content_hash="h-" + task_id, leak=None)


class StoppedClock(datetime):
    """Every episode ends at the same millisecond (fast episodes on a coarse clock)."""

    @classmethod
    def now(cls, tz: Any = None) -> StoppedClock:
        return cls(2026, 1, 2, 3, 4, 5, tzinfo=tz)


def test_resume_skips_episodes_whose_latest_record_is_done_and_redoes_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # episodes are told apart by who they are, never by when they ended
    monkeypatch.setattr("fembench_agents.runs.log.datetime", StoppedClock)
    config = RunConfig(model=MODEL, agent="loop", tasks="all", repeats=1, concurrency=1)
    tasks = [fake_task("a"), fake_task("b"), fake_task("c")]

    async def run(outcomes: list[Any], responses: list[Any], agent: OneShot) -> list[EpisodeRecord]:
        return await execute_run(
            config, tasks, tmp_path, QueuedModel(responses), QueuedEvaluator(outcomes), agent=agent
        )

    first = OneShot()
    # a passes, b's model call fails (an error record), c gets a wrong answer
    records = asyncio.run(run([PASS, WRONG], [response(), RuntimeError("down"), response()], first))
    assert sorted(first.solved) == ["a", "b", "c"]
    assert [(r.task_id, r.status, r.passed, r.error) for r in records] == [
        ("a", "done", True, None),
        ("b", "error", False, "RuntimeError: down"),
        ("c", "done", False, None),
    ]
    assert {r.timestamp for r in records} == {"2026-01-02T03:04:05.000+00:00"}
    again = OneShot()
    records = asyncio.run(run([PASS], [response()], again))
    assert again.solved == ["b"]
    assert [(r.task_id, r.status, r.passed) for r in records] == [
        ("a", "done", True),
        ("b", "done", True),
        ("c", "done", False),
    ]
    assert len(finished_episodes(read_log(tmp_path))) == 3


def test_the_manifest_records_isolation_limits_and_only_a_library_tracks_calibration(tmp_path: Path) -> None:
    evaluator = QueuedEvaluator([PASS, PASS])
    evaluator.calibrations = {"scikit-fem": "cal-7"}
    code = RunConfig(model=MODEL, agent="loop", repeats=1, concurrency=3, model_concurrency=2)
    asyncio.run(execute_run(code, [fake_task("a")], tmp_path / "code", QueuedModel([response()]), evaluator, OneShot()))
    manifest = read_manifest(tmp_path / "code")
    assert manifest.isolation == IsolationReport(level="namespaced", detail="stub")
    assert manifest.limits == {"episodes": 3, "model_calls": 2, "sandbox_workers": 1}
    assert manifest.calibrations == []  # the code track has no fast gate to calibrate
    pde = RunConfig(model=MODEL, agent="loop", track="scikit-fem", repeats=1, concurrency=1)
    asyncio.run(execute_run(pde, [fake_task("b")], tmp_path / "pde", QueuedModel([response()]), evaluator, OneShot()))
    manifest = read_manifest(tmp_path / "pde")
    assert (manifest.limits, manifest.calibrations) == (
        {"episodes": 1, "model_calls": 1, "sandbox_workers": 1},
        ["cal-7"],
    )


def test_a_resumed_run_keeps_its_weakest_isolation_and_every_calibration(tmp_path: Path) -> None:
    config, tasks = RunConfig(model=MODEL, agent="loop", repeats=1, concurrency=1), [fake_task("a")]
    namespaced = IsolationReport(level="namespaced", detail="root")
    basic = IsolationReport(level="basic", detail="no user namespace", accepted_weak=True)
    other_basic = IsolationReport(level="basic", detail="another reason", accepted_weak=True)
    prepare_run_dir(tmp_path, config, tasks, isolation=namespaced, calibration="cal-1")
    for isolation, calibration in ((namespaced, "cal-2"), (basic, "cal-1"), (namespaced, None), (other_basic, "cal-3")):
        prepare_run_dir(tmp_path, config, tasks, isolation=isolation, calibration=calibration)
    manifest = read_manifest(tmp_path)
    # the scores are only as confined as the weakest session that scored them: its report, the first of them
    assert (manifest.isolation, manifest.calibrations) == (basic, ["cal-1", "cal-2", "cal-3"])


def test_a_resumed_run_records_the_latest_sessions_limits_and_refuses_changed_tasks(tmp_path: Path) -> None:
    config = RunConfig(model=MODEL, agent="loop", repeats=1, concurrency=1)
    tasks = [fake_task("a"), fake_task("b"), fake_task("c")]
    first = {"episodes": 1, "model_calls": 1, "sandbox_workers": 2}
    prepare_run_dir(tmp_path, config, tasks, limits=first)
    manifest = read_manifest(tmp_path)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent)
    commit = head.stdout.strip() or None  # None outside a git checkout (a source archive)
    assert manifest.git_commit == commit and (commit is None or len(commit) == 40)
    written = (tmp_path / "manifest.json").read_bytes()
    prepare_run_dir(tmp_path, config, tasks, limits=dict(first))  # the same limits: the manifest is not rewritten
    prepare_run_dir(tmp_path, config, tasks)  # limits not said: the last ones stay
    assert (tmp_path / "manifest.json").read_bytes() == written
    later = {"episodes": 4, "model_calls": 2, "sandbox_workers": 2}
    prepare_run_dir(tmp_path, config, [*tasks, fake_task("d")], limits=later)  # a task added since is no change
    assert read_manifest(tmp_path).limits == later
    changed = [
        fake_task("a"),
        SimpleNamespace(task_id="b", content_hash="h-b2", leak=None),
        SimpleNamespace(task_id="c", content_hash="x", leak=None),
    ]
    with pytest.raises(ValueError) as err:
        prepare_run_dir(tmp_path, config, changed)
    assert str(err.value) == f"{tmp_path}: tasks changed since the run started: b, c"


def test_a_resumed_run_grows_its_selection_only_when_asked_and_nothing_else_may_differ(tmp_path: Path) -> None:
    """An optimizer's candidate run adds problems to its run directory batch by batch (`grow`)."""
    a, b = fake_task("a"), fake_task("b")
    prepare_run_dir(tmp_path, RunConfig(model=MODEL, agent="loop", tasks="a"), [a])
    started = read_manifest(tmp_path).config
    grown = RunConfig(model=MODEL, agent="loop", tasks="a,b")
    refused = f"{tmp_path} holds a different run (config {started}); choose another --out"
    with pytest.raises(ValueError) as err:
        prepare_run_dir(tmp_path, grown, [a, b])  # not asked to grow
    assert str(err.value) == refused
    with pytest.raises(ValueError) as err:
        prepare_run_dir(tmp_path, RunConfig(model=MODEL, agent="loop", tasks="a,b", repeats=2), [a, b], grow=True)
    assert str(err.value) == refused
    prepare_run_dir(tmp_path, grown, [a, b], grow=True)
    manifest = read_manifest(tmp_path)
    assert (manifest.config, manifest.task_hashes) == (grown.identity(), {"a": "h-a", "b": "h-b"})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"track": "pde"}, "track must be one of code, tests, numpy-scipy, scikit-fem, dolfinx, ngsolve, got 'pde'"),
        ({"repeats": 0}, "repeats must be >= 1, got 0"),
        ({"concurrency": 0}, "concurrency must be >= 1, got 0"),
        ({"model_concurrency": 0}, "model concurrency must be >= 1, got 0"),
    ],
)
def test_a_run_config_names_what_is_wrong_with_it(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as err:
        RunConfig(model=MODEL, agent="loop", **fields)
    assert str(err.value) == message
    assert RunConfig(model=MODEL, agent="loop", repeats=1, concurrency=1, model_concurrency=1).model_calls_at_once == 1


def test_the_manifest_names_the_task_modules_the_latest_session_went_on_without(tmp_path: Path) -> None:
    broken = SkippedTask(name="t_broken", path="/suite/t_broken.py", reason="SyntaxError: invalid syntax (line 3)")
    record_skipped_tasks(tmp_path / "never", [broken])  # no run there: nothing is written
    assert not (tmp_path / "never").exists()
    prepare_run_dir(tmp_path, RunConfig(model=MODEL, agent="loop"), [fake_task("a")])
    record_skipped_tasks(tmp_path, [broken])
    assert read_manifest(tmp_path).skipped_tasks == [
        {"name": "t_broken", "path": "/suite/t_broken.py", "reason": "SyntaxError: invalid syntax (line 3)"}
    ]
    record_skipped_tasks(tmp_path, [])  # fixed since
    assert read_manifest(tmp_path).skipped_tasks == []


def test_attempts_get_the_given_feedback_or_else_the_templates(tmp_path: Path) -> None:
    def custom(outcome: Any) -> Feedback:
        return Feedback(score=0.25, text=f"custom: {outcome.failed_stage}")

    config = RunConfig(model=MODEL, agent="loop", repeats=1, concurrency=1)
    evaluator = QueuedEvaluator([WRONG, WRONG])
    asyncio.run(
        execute_run(
            config, [fake_task("a")], tmp_path / "given", QueuedModel([response()]), evaluator, OneShot(), custom
        )
    )
    asyncio.run(
        execute_run(config, [fake_task("a")], tmp_path / "default", QueuedModel([response()]), evaluator, OneShot())
    )

    def feedback_of(run: str) -> Feedback | None:
        [attempt] = [r for r in read_log(tmp_path / run) if isinstance(r, AttemptRecord)]
        return attempt.feedback

    assert feedback_of("given") == Feedback(score=0.25, text=f"custom: {WRONG.failed_stage}")
    assert feedback_of("default") == TemplateFeedback()(WRONG)


def test_a_run_stops_after_alike_permanent_failures_unless_told_never_to(tmp_path: Path) -> None:
    def refusals() -> list[Any]:
        return [
            ModelCallError(
                MODEL, CallContext(task_id="a"), "h", 0, f"AuthenticationError: bad key req_{i}", "authentication"
            )
            for i in range(5)
        ]

    class Refusing(QueuedModel):
        async def complete(self, *args: Any) -> ModelResponse:
            await asyncio.sleep(0.01)  # as a provider would: the stop reaches the run before the next call ends
            return await super().complete(*args)

    config = RunConfig(model=MODEL, agent="loop", repeats=5, concurrency=1)
    with pytest.raises(RunStopped) as info:
        asyncio.run(
            execute_run(
                config,
                [fake_task("a")],
                tmp_path / "stops",
                Refusing(refusals()),
                QueuedEvaluator([]),
                OneShot(),
                stop_after=2,
            )
        )
    stop = info.value
    assert (stop.kind, stop.message, stop.failed, stop.not_run) == (
        "authentication",
        "AuthenticationError: bad key req_1",  # the provider's words of the failure that stopped the run
        2,
        3,
    )
    records = asyncio.run(
        execute_run(
            config,
            [fake_task("a")],
            tmp_path / "never",
            QueuedModel(refusals()),
            QueuedEvaluator([]),
            OneShot(),
            stop_after=None,
        )
    )
    assert [(r.repeat, r.status, r.error_kind) for r in records] == [(i, "error", "authentication") for i in range(5)]
    # a model that answers without waiting: every episode ends before the stop reaches the run,
    # and the stop counts what was left when it did (nothing)
    with pytest.raises(RunStopped) as info:
        asyncio.run(
            execute_run(
                config,
                [fake_task("a")],
                tmp_path / "instant",
                QueuedModel(refusals()),
                QueuedEvaluator([]),
                OneShot(),
                stop_after=2,
            )
        )
    assert (info.value.failed, info.value.not_run) == (2, 0)
    assert len([r for r in read_log(tmp_path / "instant") if isinstance(r, EpisodeRecord)]) == 5


def ended_in_error(message: str | None, kind: str | None = "authentication") -> EpisodeRecord:
    error = (
        message and f"ModelCallError: model call failed (model 'm', task 't', attempt 'a') after 2 retries: {message}"
    )
    return episode("t", "error", False, 0.0).model_copy(update={"error": error, "error_kind": kind})


@pytest.mark.parametrize("retries", [0, 1, 4, 12])
def test_provider_message_strips_the_task_and_attempt_of_a_recorded_model_error(retries: int) -> None:
    exc = ModelCallError(
        "m/x",
        CallContext(task_id="T (big)", attempt="single-shot repeat 0 attempt 0"),
        "h",
        retries,
        "AuthenticationError: bad key (code 401)",
    )
    assert provider_message(f"{type(exc).__name__}: {exc}") == "AuthenticationError: bad key (code 401)"


def test_a_provider_message_keeps_its_first_line_and_at_most_300_characters() -> None:
    long = "BadRequestError: " + "a" * 283 + "b" * 100 + "\nsecond line"
    assert provider_message(long) == "BadRequestError: " + "a" * 283 + "..."
    assert provider_message("E" * 300) == "E" * 300  # exactly 300: kept whole
    assert provider_message("E" * 301) == "E" * 300 + "..."
    assert provider_message("  Error: short\nmore  ") == "Error: short"
    assert (
        provider_message("\n ModelCallError: model call failed (x) after 3 retries:  Error: short ") == "Error: short"
    )
    for silent in (None, "", "  \n ", "ModelCallError: model call failed (x) after 1 retry: "):
        assert provider_message(silent) == "unknown error"


def test_error_summary_counts_and_shows_the_first_distinct_messages() -> None:
    records = [
        ended_in_error("A: one"),
        episode("t", "done", True, 1.0),
        ended_in_error("B: two"),
        ended_in_error("A: one"),
        ended_in_error("C: three"),
        ended_in_error(None, kind=None),  # an error no one classified still ended the episode
        ended_in_error("D: four"),
    ]
    assert error_summary(records) == [
        "6 episodes ended in a model error:",
        "  A: one (2 episodes)",
        "  B: two (1 episode)",
        "  C: three (1 episode)",
        "  ... and 2 other errors (see log.jsonl of the run)",
    ]
    assert error_summary(records[:3], shown=2) == [  # as many distinct errors as are shown: none left over
        "2 episodes ended in a model error:",
        "  A: one (1 episode)",
        "  B: two (1 episode)",
    ]
    assert error_summary(records[4:6], shown=2) == [
        "2 episodes ended in a model error:",
        "  C: three (1 episode)",
        "  unknown error (1 episode)",
    ]
    assert error_summary(records[:1]) == ["1 episode ended in a model error:", "  A: one (1 episode)"]
    assert error_summary([episode("t", "done", False, 0.0)]) == []


def test_failures_are_alike_when_they_differ_only_in_words_with_digits() -> None:
    def stops(*messages: str | None, kind: str | None = "authentication") -> int | None:
        """After how many of these episodes a streak of 2 stops the run (None: it does not)."""
        streak = FailureStreak(2)
        for n, message in enumerate(messages, 1):
            try:
                streak.observe(ended_in_error(message, kind), 0)
            except RunStopped:
                return n
        return None

    assert stops("bad key req_1 at 10:02", "bad key req_22 at 10:03") == 2
    assert stops("bad key sk-1ab for org-9x", "bad key sk-2cd for org-7yz") == 2  # the whole word, letters too
    assert stops("bad key req_1", "bad key #") is None  # a word without a digit is the provider's own
    assert stops("bad key 1", "bad key") is None
    assert stops("quota 1 of 5", "quota 2 5") is None  # words with digits are left out where they stand
    assert stops(None, "") == 2  # nothing said, twice
    assert stops("bad key", "bad key", kind=None) is None  # retrying could fix it: no streak
    assert stops("bad key", "other", "bad key", "bad key") == 4
    assert stops("bad key", "no quota") is None  # words without digits are compared, as many as there are
    assert stops("retry in 1 s", "retry in 2 s") == 2  # a number standing alone is such a word
    assert stops("bad key-1", "bad id-2") == 2  # the word's letters before its digit go with it
    # the provider's words alone: not the task and attempt the call was for, nor the lines after the first
    said = "ModelCallError: model call failed (model 'm', task '{}', attempt 'a') after 2 retries: bad key\n  at {}"
    streak = FailureStreak(2)
    first, second = (
        episode(task, "error", False, 0.0).model_copy(update={"error": said.format(task, at), "error_kind": "quota"})
        for task, at in (("alpha", "frame a"), ("beta", "frame b"))
    )
    streak.observe(first, 0)
    with pytest.raises(RunStopped) as info:
        streak.observe(second, 0)
    assert (info.value.kind, info.value.message, info.value.failed) == ("quota", "bad key", 2)


@pytest.mark.parametrize(
    ("not_run", "words"), [(0, "0 episodes not run"), (1, "1 episode not run"), (2, "2 episodes not run")]
)
def test_a_stopped_run_says_how_many_episodes_were_not_run(not_run: int, words: str) -> None:
    stop = RunStopped("authentication", "bad key", 3, not_run)
    assert str(stop) == f"run stopped early: 3 episodes in a row failed with the same authentication error; {words}"
    streak = FailureStreak(1)
    with pytest.raises(RunStopped) as info:
        streak.observe(ended_in_error(None), not_run)
    assert (info.value.message, info.value.not_run, info.value.failed) == ("unknown error", not_run, 1)


# ----------------------------------------------------------------- model calls in the log


def test_every_model_call_is_logged_with_its_attempt_request_and_outcome(tmp_path: Path) -> None:
    long = "x" * 3000
    s, log = session(tmp_path, [WRONG], [response(), RuntimeError(long)])
    run_attempts(s, 2)
    log.close()
    calls = [r for r in read_log(tmp_path) if isinstance(r, ModelCallRecord)]
    # each attempt is its own sample: the same prompt, two requests with two hashes
    first, second = (
        ModelRequest(model=MODEL, messages=tuple(PROMPT), params=ModelParams(), sample=f"{s.episode} attempt {i}")
        for i in (0, 1)
    )
    assert [(c.attempt_index, c.request, c.request_hash, c.error is None) for c in calls] == [
        (0, first, first.request_hash(), True),
        (1, second, second.request_hash(), False),
    ]
    assert first.request_hash() != second.request_hash()
    recorded = "RuntimeError: " + "x" * 972 + " … [1041 characters cut] … " + "x" * 987  # 2000: both ends kept
    assert calls[1].error == recorded
    assert calls[0].response is not None and calls[0].response.usage.prompt_tokens == 10
    # a run read back gives them apart from the attempts
    write_manifest(tmp_path, RunManifest(run_id="r", config={}, task_hashes={}, versions={}))
    run = open_run(tmp_path)
    attempts = [r for r in read_log(tmp_path) if isinstance(r, AttemptRecord)]
    assert (run.model_calls(), run.attempts()) == (calls, attempts) and len(attempts) == 2
    attempts = [r for r in read_log(tmp_path) if isinstance(r, AttemptRecord)]
    assert [(a.attempt_index, a.model_error) for a in attempts] == [(0, None), (1, recorded)]
    assert [a.episode for a in attempts] == [episode_key(MODEL, "loop", "code", "T", 0)] * 2
    assert (attempts[0].agent, attempts[0].model, attempts[0].repeat, attempts[0].track) == ("loop", MODEL, 0, "code")
    assert attempts[0].messages == tuple(PROMPT)


def test_a_replayed_failure_is_logged_with_its_recorded_text(tmp_path: Path) -> None:
    failure = RuntimeError("ignored")
    failure.recorded = "ModelCallError: recorded text"  # type: ignore[attr-defined]
    s, log = session(tmp_path, [], [failure])
    assert run_attempts(s, 1) == "ModelCallError: recorded text"
    log.close()
    [call] = [r for r in read_log(tmp_path) if isinstance(r, ModelCallRecord)]
    assert call.error == "ModelCallError: recorded text"


def test_a_replay_that_diverges_stops_the_episode(tmp_path: Path) -> None:
    from fembench_agents.models.errors import UnrecordedRequestError

    diverged = UnrecordedRequestError(MODEL, CallContext(task_id="T"), "ab" * 32)
    s, log = session(tmp_path, [], [diverged])
    with pytest.raises(UnrecordedRequestError):
        run_attempts(s, 1)
    log.close()
    assert read_log(tmp_path) == []


def test_the_request_hash_of_a_response_is_kept(tmp_path: Path) -> None:
    answer = response().model_copy(update={"request_hash": "cafe"})
    s, log = session(tmp_path, [WRONG], [answer])
    run_attempts(s, 1)
    log.close()
    [call] = [r for r in read_log(tmp_path) if isinstance(r, ModelCallRecord)]
    [attempt] = [r for r in read_log(tmp_path) if isinstance(r, AttemptRecord)]
    assert (call.request_hash, attempt.request_hash) == ("cafe", "cafe")


def test_the_model_is_asked_with_the_messages_context_and_params(tmp_path: Path) -> None:
    params = ModelParams(temperature=0.5, seed=7)
    s, log = session(tmp_path, [WRONG, WRONG], [response(), response()], params=params)
    run_attempts(s, 2)
    log.close()
    model = s.model
    assert isinstance(model, QueuedModel)
    assert [(m, c.task_id, c.episode, c.attempt_index, c.attempt, c.sample, p) for m, c, p in model.calls] == [
        (PROMPT, "T", s.episode, 0, "loop repeat 0 attempt 0", f"{s.episode} attempt 0", params),
        (PROMPT, "T", s.episode, 1, "loop repeat 0 attempt 1", f"{s.episode} attempt 1", params),
    ]
    calls = [r for r in read_log(tmp_path) if isinstance(r, ModelCallRecord)]
    assert calls[0].request == ModelRequest(
        model=MODEL, messages=tuple(PROMPT), params=params, sample=f"{s.episode} attempt 0"
    )


@pytest.mark.parametrize(("track", "method"), [("code", "function"), ("tests", "tests")])
def test_the_reply_is_scored_on_the_episodes_track(tmp_path: Path, track: str, method: str) -> None:
    s, log = session(tmp_path, [WRONG], track=track)
    run_attempts(s, 1)
    log.close()
    evaluator = s.evaluator
    assert isinstance(evaluator, QueuedEvaluator)
    assert evaluator.asked == [(method, "T", response().text)]


def test_the_last_reply_is_the_latest_attempts(tmp_path: Path) -> None:
    s, log = session(
        tmp_path,
        [WRONG, WRONG, WRONG],
        [response().model_copy(update={"text": t}) for t in ("first", "second", "third")],
    )
    assert s.last_reply() == ""
    run_attempts(s, 3)
    assert s.last_reply() == "third"
    log.close()


def test_a_failed_call_records_an_empty_reply(tmp_path: Path) -> None:
    s, log = session(tmp_path, [], [RuntimeError("x")])
    run_attempts(s, 1)
    log.close()
    [attempt] = [r for r in read_log(tmp_path) if isinstance(r, AttemptRecord)]
    assert (attempt.reply, attempt.outcome, attempt.feedback, attempt.response) == ("", None, None, None)


def test_unknown_token_counts_count_as_none(tmp_path: Path) -> None:
    unknown = ModelResponse(text="x", usage=Usage(), cost_usd=0.0)
    s, log = session(tmp_path, [WRONG, WRONG], [unknown, response(7, 3)])
    run_attempts(s, 2)
    record = s.summary(0.0)
    assert (record.prompt_tokens, record.completion_tokens) == (7, 3)
    log.close()


def test_the_episode_time_runs_from_its_start(tmp_path: Path) -> None:
    import time

    s, log = session(tmp_path, [])
    seconds = s.summary(time.perf_counter() - 100.0).seconds
    assert 100.0 <= seconds < 1000.0
    log.close()


def test_a_log_in_a_new_nested_directory(tmp_path: Path) -> None:
    with RunLog(tmp_path / "a" / "b") as log:
        log.append(episode("a", "done", True, 1.0))
    assert [r.task_id for r in read_log(tmp_path / "a" / "b")] == ["a"]


def test_a_one_byte_torn_line_is_cut(tmp_path: Path) -> None:
    (tmp_path / "log.jsonl").write_text("{")
    with RunLog(tmp_path) as log:
        log.append(episode("a", "done", True, 1.0))
    assert [r.task_id for r in read_log(tmp_path)] == ["a"]


def test_blank_lines_in_the_log_are_skipped(tmp_path: Path) -> None:
    with RunLog(tmp_path) as log:
        log.append(episode("a", "done", True, 1.0))
    with open(tmp_path / "log.jsonl", "a") as fh:
        fh.write("\n   \n")
    with RunLog(tmp_path) as log:
        log.append(episode("b", "done", True, 1.0))
    assert [r.task_id for r in read_log(tmp_path)] == ["a", "b"]


# ----------------------------------------------------------------- task selection and repeats


def test_task_selection_by_ids_and_patterns() -> None:
    tasks = [fake_task(t) for t in ("b_2", "a_1", "c_3", "a_2")]

    def ids(selector: str) -> list[str]:
        return [t.task_id for t in select_tasks(tasks, selector)]

    assert ids("all") == ids("*") == ids(" ") == ["b_2", "a_1", "c_3", "a_2"]  # everything, in the given order
    assert ids("a_*") == ["a_1", "a_2"]
    assert ids("c_3, a_*,a_1,") == ["a_1", "a_2", "c_3"]  # sorted, each once
    with pytest.raises(ValueError) as err:
        select_tasks(tasks, "a_*,z*")
    assert str(err.value) == "task selector 'z*' matches no task"
    with pytest.raises(ValueError) as err:
        select_tasks(tasks, "a_1,fresh:poisson,heat:seed=7")  # a made item no kind made (a dry run)
    assert str(err.value) == (
        "task selector 'fresh:poisson,heat:seed=7' matches no task (an item a kind makes, such as fresh PDE "
        "instances, is made by run, compare and optimize)"
    )


def test_a_selection_splits_at_commas_except_inside_a_made_item() -> None:
    assert selector_items("a, b_*,fresh:poisson,heat/l_shape:seed=7:count=3,c") == [
        "a",
        "b_*",
        "fresh:poisson,heat/l_shape:seed=7:count=3",
        "c",
    ]
    assert selector_items("fresh:poisson:seed=1,fresh:heat:seed=2") == ["fresh:poisson:seed=1", "fresh:heat:seed=2"]
    assert selector_items("x,,y,") == ["x", "y"]
    assert selector_items("fresh:poisson,heat") == ["fresh:poisson,heat"]  # no options: runs to the end
    made = {"fresh:poisson,heat:seed=7": "fresh_v1_heat_s7_00,fresh_v1_poisson_s7_00"}
    assert resolve_selection("a,fresh:poisson,heat:seed=7,b", made) == "a,fresh_v1_heat_s7_00,fresh_v1_poisson_s7_00,b"
    assert resolve_selection("a,b", {}) == "a,b"


def test_cases_marked_as_leaking_are_selected_by_their_own_id_only() -> None:
    @dataclass(frozen=True)
    class Case:
        task_id: str
        leak: str | None = None

    cases = [
        Case("p_b", "the boundary data is the solution"),
        Case("p_a"),
        Case("q_c"),
        Case("q_d", "forcing"),
        Case("q_d2", "forcing"),
    ]

    def ids(selector: str) -> list[str]:
        return [c.task_id for c in select_tasks(cases, selector)]

    assert ids("all") == ["p_a", "q_c"]
    assert ids("p_*") == ["p_a"] and ids("*_*") == ["p_a", "q_c"]
    assert ids("p_b") == ["p_b"] and ids("q_d,p_*") == ["p_a", "q_d"]
    with pytest.raises(ValueError) as err:
        select_tasks(cases, "p_*,q_d*")
    assert str(err.value) == (
        "task selector 'q_d*' matches no task but cases marked as leaking (q_d, q_d2: name them by id)"
    )


def test_each_repeat_is_its_own_seeded_episode_and_reported_as_it_ends(tmp_path: Path) -> None:
    config = RunConfig(
        model=MODEL, agent="loop", tasks="a", repeats=3, concurrency=1, params=ModelParams(temperature=0.7)
    )
    model = QueuedModel([response(), response(), response()])
    seen: list[tuple[str, int, bool]] = []
    records = asyncio.run(
        execute_run(
            config,
            [fake_task("a")],
            tmp_path,
            model,
            QueuedEvaluator([PASS, WRONG, PASS]),
            agent=OneShot(),
            on_episode=lambda r: seen.append((r.task_id, r.repeat, r.passed)),
        )
    )
    assert [(p.seed, p.temperature) for _, _, p in model.calls] == [(0, 0.7), (1, 0.7), (2, 0.7)]
    assert [(r.task_id, r.repeat, r.passed, r.episode) for r in records] == [
        ("a", i, ok, episode_key(MODEL, "loop", "code", "a", i)) for i, ok in enumerate((True, False, True))
    ]
    assert sorted(seen) == [("a", 0, True), ("a", 1, False), ("a", 2, True)]
    assert [r.repeat for r in read_log(tmp_path) if isinstance(r, EpisodeRecord)] == [0, 1, 2]


def test_the_agent_named_in_the_config_runs_when_none_is_given(tmp_path: Path, scale_task: Any, evaluator: Any) -> None:
    from conftest import CORRECT_SCALE

    config = RunConfig(model=MODEL, agent="single-shot", tasks="all", repeats=1, concurrency=1)
    model = QueuedModel([response().model_copy(update={"text": f"```python\n{CORRECT_SCALE}```"})])
    [record] = asyncio.run(execute_run(config, [scale_task], tmp_path, model, evaluator))
    assert (record.agent, record.passed, record.attempts, record.error) == ("single-shot", True, 1, None)


def test_a_run_is_resumed_under_what_decides_its_answers_not_how_fast_or_where_they_are_asked(tmp_path: Path) -> None:
    params = ModelParams(
        temperature=0.5, max_tokens=100, reasoning_effort="low", seed=3, timeout=9.0, api_base="http://a"
    )
    config = RunConfig(model=MODEL, agent="loop", tasks="FEM_*", track="tests", repeats=2, concurrency=4, params=params)
    assert config.identity() == {
        "model": MODEL, "agent": "loop", "tasks": "FEM_*", "track": "tests", "repeats": 2,
        "params": {"temperature": 0.5, "max_tokens": 100, "reasoning_effort": "low", "seed": 3},
    }  # fmt: skip
    tasks = [fake_task("a")]
    prepare_run_dir(tmp_path, config, tasks)
    elsewhere = ModelParams(temperature=0.5, max_tokens=100, reasoning_effort="low", seed=3, api_base="http://b")
    prepare_run_dir(tmp_path, RunConfig(**{**vars(config), "params": elsewhere, "model_concurrency": 1}), tasks)
    for changed in ({"seed": 4}, {"max_tokens": 101}, {"reasoning_effort": "high"}, {"temperature": 0.0}):
        other = RunConfig(**{**vars(config), "params": params.model_copy(update=changed)})
        with pytest.raises(ValueError, match=f"^{tmp_path} holds a different run"):
            prepare_run_dir(tmp_path, other, tasks)

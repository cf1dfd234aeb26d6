"""The report's tables from run directories, with inputs rich enough to tell a
right rule from a wrong one: tasks with different numbers of repeats (means
over tasks, not episodes), a strict majority, records of one episode written
several times (the latest finished one wins), failures counted by stage and
reason, the paired test on tasks, and the report settings honoured."""

from __future__ import annotations

from pathlib import Path

import pytest

from fembench_agents.messages import Message, ModelRequest
from fembench_agents.report import ReportSettings, build_report
from fembench_agents.report.stats import bootstrap_ci, pass_at_k
from fembench_agents.report.tables import (
    collect_episodes,
    failure_stage,
    paired_test,
    summarize_group,
    task_table,
)
from fembench_agents.runs.log import (
    EpisodeRecord,
    ModelCallRecord,
    RunLog,
    RunManifest,
    episode_key,
    read_manifest,
    write_manifest,
)
from fembench_agents.scoring.sandbox import IsolationReport

MODEL = "mock/model"


def ep(
    task: str,
    repeat: int,
    passed: bool,
    *,
    agent: str = "a",
    track: str = "code",
    score: float | None = None,
    stage: str | None = None,
    reason: str | None = None,
    status: str = "done",
    cost: float | None = 0.25,
    tokens: tuple[int, int] = (10, 5),
    seconds: float = 2.0,
    model: str = MODEL,
) -> EpisodeRecord:
    return EpisodeRecord(
        episode=episode_key(model, agent, track, task, repeat),
        task_id=task,
        track=track,  # type: ignore[arg-type]
        agent=agent,
        model=model,
        repeat=repeat,
        status=status,
        passed=passed,  # type: ignore[arg-type]
        score=float(passed) if score is None else score,
        attempts=1,
        failed_stage=stage,
        reason=reason,
        prompt_tokens=tokens[0],
        completion_tokens=tokens[1],
        cost_usd=cost,
        model_seconds=seconds / 2,
        seconds=seconds,
    )


def run_dir(path: Path, run_id: str, records: list[EpisodeRecord | ModelCallRecord], commit: str | None = None) -> Path:
    path.mkdir(parents=True)
    write_manifest(path, RunManifest(run_id=run_id, config={}, task_hashes={}, versions={}, git_commit=commit))
    with RunLog(path) as log:
        for r in records:
            log.append(r)
    return path


SETTINGS = ReportSettings(resamples=500, confidence=0.8, seed=3)

# t1: 2 of 3 passed; t2: 0 of 1; t3: 1 of 2 (its failure a model error recorded as an error)
GROUP = [
    ep("t1", 0, True, tokens=(100, 10), seconds=1.0),
    ep("t1", 1, True, tokens=(200, 20), seconds=2.0),
    ep("t1", 2, False, stage="correct", reason="wrong_output", seconds=4.0),
    ep("t2", 0, False, stage="parse", reason="syntax_error"),
    ep("t3", 0, True),
    ep("t3", 1, False, reason="model_error", status="error", cost=None),
]


# ----------------------------------------------------------------- one group


def test_a_group_is_summarised_over_tasks_not_episodes() -> None:
    g = summarize_group((MODEL, "a", "code"), GROUP, ["r1"], SETTINGS)
    assert (g.tasks, g.repeats_min, g.repeats_max, g.episodes, g.passed, g.errors) == (3, 1, 3, 6, 3, 1)
    assert g.tasks_solved == 1  # 2/3 is a majority; 0/1 and 1/2 are not
    shares = [2 / 3, 0.0, 1 / 2]
    assert g.correct.value == pytest.approx(sum(shares) / 3)
    assert (g.correct.low, g.correct.high) == bootstrap_ci(shares, resamples=500, confidence=0.8, seed=3)
    assert g.pass_at_k == {1: pytest.approx(sum(shares) / 3)}
    assert g.k_of_n == {1: 2, 2: 1, 3: 0}
    assert g.joint_tests is None


def test_a_groups_interval_does_not_depend_on_the_order_of_the_log() -> None:
    """Tasks are taken in id order, so the bootstrap draws the same whatever order the episodes came in."""
    passes = {"t1": (0, 4), "t2": (1, 4), "t3": (2, 4), "t4": (3, 4), "t5": (4, 4), "t6": (1, 3), "t7": (2, 3)}
    eps = [ep(t, r, r < n) for t, (n, repeats) in passes.items() for r in range(repeats)]
    in_order = summarize_group((MODEL, "a", "code"), eps, ["r1"], SETTINGS)
    shares = [n / repeats for n, repeats in passes.values()]
    assert (in_order.correct.low, in_order.correct.high) == bootstrap_ci(shares, resamples=500, confidence=0.8, seed=3)
    backwards = summarize_group((MODEL, "a", "code"), eps[::-1], ["r1"], SETTINGS)
    assert backwards == in_order
    # taken as they came, the same shares would give another interval
    assert bootstrap_ci(shares[::-1], resamples=500, confidence=0.8, seed=3) != (
        in_order.correct.low,
        in_order.correct.high,
    )


def test_failures_are_counted_by_stage_and_reason() -> None:
    g = summarize_group((MODEL, "a", "code"), GROUP, ["r1"], SETTINGS)
    assert g.stage_failures == {"correct": 1, "model_error": 1, "parse": 1}
    assert g.failure_reasons == {"correct/wrong_output": 1, "model_error": 1, "parse/syntax_error": 1}


def test_tokens_time_and_cost_are_summed_and_an_unknown_cost_is_unknown() -> None:
    g = summarize_group((MODEL, "a", "code"), GROUP, ["r1"], SETTINGS)
    assert (g.prompt_tokens, g.completion_tokens) == (100 + 200 + 10 * 4, 10 + 20 + 5 * 4)
    assert (g.seconds, g.model_seconds) == (1.0 + 2.0 + 4.0 + 2.0 * 3, (1.0 + 2.0 + 4.0 + 2.0 * 3) / 2)
    assert g.cost_usd is None
    known = summarize_group((MODEL, "a", "code"), GROUP[:5], ["r1"], SETTINGS)
    assert known.cost_usd == pytest.approx(5 * 0.25)
    calls = [e.model_copy(update={"model_calls": 3 + i, "reused_calls": i % 2}) for i, e in enumerate(GROUP)]
    g = summarize_group((MODEL, "a", "code"), calls, ["r1"], SETTINGS)
    assert (g.model_calls, g.reused_calls) == (3 + 4 + 5 + 6 + 7 + 8, 3)


def test_an_episode_logged_without_its_cost_has_an_unknown_cost_not_a_free_one() -> None:
    line = ep("t1", 0, True).model_dump(mode="json")
    del line["cost_usd"]  # a log written before costs were kept
    old = EpisodeRecord.model_validate(line)
    assert old.cost_usd is None
    assert summarize_group((MODEL, "a", "code"), [old, ep("t2", 0, True)], ["r1"], SETTINGS).cost_usd is None


def test_pass_at_k_runs_up_to_the_fewest_repeats() -> None:
    eps = [ep("t1", r, r < 2) for r in range(4)] + [ep("t2", r, r == 0) for r in range(3)]
    g = summarize_group((MODEL, "a", "code"), eps, ["r1"], SETTINGS)
    assert (g.repeats_min, g.repeats_max) == (3, 4)
    assert g.pass_at_k == {k: pytest.approx((pass_at_k(4, 2, k) + pass_at_k(3, 1, k)) / 2) for k in (1, 2, 3)}
    assert g.k_of_n == {1: 2, 2: 1, 3: 0, 4: 0}
    assert g.tasks_solved == 0  # 2 of 4 is no majority


def test_the_joint_test_score_is_a_mean_over_tasks() -> None:
    eps = [
        ep("t1", 0, False, track="tests", score=0.5, stage="tests", reason="failure_not_detected"),
        ep("t1", 1, True, track="tests", score=1.0),
        ep("t2", 0, False, track="tests", score=0.0, stage="tests", reason="missing_test"),
    ]
    g = summarize_group((MODEL, "a", "tests"), eps, ["r1"], SETTINGS)
    assert g.joint_tests is not None
    assert g.joint_tests.value == pytest.approx((0.75 + 0.0) / 2)
    assert (g.joint_tests.low, g.joint_tests.high) == bootstrap_ci([0.75, 0.0], resamples=500, confidence=0.8, seed=3)
    assert g.failure_reasons == {"tests/failure_not_detected": 1, "tests/missing_test": 1}


@pytest.mark.parametrize(
    ("record", "stage"),
    [
        (ep("t", 0, True, stage="correct"), None),
        (ep("t", 0, False, stage="execute", reason="timeout"), "execute"),
        (ep("t", 0, False, stage="model", reason="model_error", status="error"), "model_error"),
        (ep("t", 0, False, reason="model_error", status="error"), "model_error"),
        (ep("t", 0, False, reason="model_error"), "model_error"),
        (ep("t", 0, False, status="error"), "error"),
        (ep("t", 0, False), "unknown"),
    ],
)
def test_the_stage_a_failure_is_counted_under(record: EpisodeRecord, stage: str | None) -> None:
    assert failure_stage(record) == stage


# ----------------------------------------------------------------- tables and paired tests


def two_agents() -> list[EpisodeRecord]:
    out = []
    for task in ("t1", "t2", "t3", "t4", "t5"):  # a solves 2 of 3, b 1 of 3
        out += [ep(task, r, r < 2, agent="a") for r in range(3)] + [ep(task, r, r < 1, agent="b") for r in range(3)]
    out += [ep("t6", r, r < 1, agent="a") for r in range(2)] + [ep("t6", r, True, agent="b") for r in range(2)]
    out += [ep("t7", 0, True, agent="a")]  # b did not run t7
    return out


def test_the_task_table_has_one_cell_per_agent_that_ran_the_task() -> None:
    eps = two_agents()
    table = task_table(
        MODEL, "code", {"b": [e for e in eps if e.agent == "b"], "a": [e for e in eps if e.agent == "a"]}
    )
    assert table.agents == ["a", "b"]
    assert [r.task_id for r in table.rows] == ["t1", "t2", "t3", "t4", "t5", "t6", "t7"]
    t6 = table.rows[5].cells
    assert (t6["a"].passes, t6["a"].repeats, t6["a"].score) == (1, 2, 0.5)
    assert (t6["b"].passes, t6["b"].repeats, t6["b"].score) == (2, 2, 1.0)
    assert set(table.rows[6].cells) == {"a"}


def test_the_task_table_lists_tasks_by_id_whatever_order_they_ran_in() -> None:
    eps = [ep("t3", 0, True), ep("t10", 0, False), ep("t1", 0, True), ep("t2", 0, True, agent="b")]
    table = task_table(MODEL, "code", {"a": [e for e in eps if e.agent == "a"], "b": eps[3:]})
    assert [r.task_id for r in table.rows] == ["t1", "t10", "t2", "t3"]


def test_the_paired_test_pairs_tasks_solved_by_a_majority() -> None:
    eps = two_agents()
    table = task_table(
        MODEL, "code", {"a": [e for e in eps if e.agent == "a"], "b": [e for e in eps if e.agent == "b"]}
    )
    result = paired_test(table, "a", "b")
    # six shared tasks: a alone solves t1..t5, b alone t6: p = 2 P[X <= 1], X ~ Bin(6, 1/2) = 2 * 7/64
    assert (result.tasks, result.both, result.a_only, result.b_only, result.neither) == (6, 0, 5, 1, 0)
    assert result.p_value == pytest.approx(14 / 64)
    assert (result.agent_a, result.agent_b, result.model, result.track) == ("a", "b", MODEL, "code")


# ----------------------------------------------------------------- reading runs


def test_the_latest_finished_record_of_an_episode_wins(tmp_path: Path) -> None:
    call = ModelCallRecord(
        episode=episode_key(MODEL, "a", "code", "t1", 0),
        task_id="t1",
        attempt_index=0,
        request=ModelRequest(model=MODEL, messages=(Message(role="user", content="q"),)),
        request_hash="h",
        error="down",
    )
    run = run_dir(
        tmp_path / "r1",
        "r1",
        [
            call,  # the log holds model calls and attempts too
            ep("t1", 0, False, status="error", reason="model_error"),
            ep("t1", 0, True),  # resumed: the done record after the error wins
            ep("t2", 0, True),  # (a record after a done one is a damaged log: tests/test_log_faults.py)
            ep("t3", 0, False, status="error", reason="crashed"),
            ep("t3", 0, False, status="error", reason="model_error"),  # of errors, the last
            ep("t4", 0, False, status="error"),
            ep("t4", 0, False, stage="correct", reason="wrong_output"),  # resumed and finished
        ],
    )
    runs, episodes = collect_episodes([run])
    got = {e.task_id: (e.status, e.passed, e.reason) for _, e in episodes}
    assert got == {
        "t1": ("done", True, None),
        "t2": ("done", True, None),
        "t3": ("error", False, "model_error"),
        "t4": ("done", False, "wrong_output"),
    }
    assert [(r.run_id, r.episodes, r.isolation) for r in runs] == [("r1", 4, None)]
    assert {run_id for run_id, _ in episodes} == {"r1"}
    weak = IsolationReport(level="basic", detail="no user namespaces")
    manifest = read_manifest(run)
    write_manifest(run, manifest.model_copy(update={"isolation": weak}))
    assert [r.isolation for r in collect_episodes([run])[0]] == [weak]  # the report warns of it


def test_an_episode_in_two_runs_is_refused(tmp_path: Path) -> None:
    first = run_dir(tmp_path / "r1", "r1", [ep("t1", 0, True)])
    second = run_dir(tmp_path / "r2", "r2", [ep("t2", 0, True), ep("t1", 0, False)])
    with pytest.raises(ValueError) as err:
        collect_episodes([first, second])
    assert str(err.value) == (
        f"episode {episode_key(MODEL, 'a', 'code', 't1', 0)} appears in run r1 and in run r2 "
        f"({second}); report each episode once"
    )


def test_a_report_groups_by_model_agent_and_track_and_honours_its_settings(tmp_path: Path) -> None:
    eps = two_agents()
    tests = [ep("t1", 0, False, agent="a", track="tests", score=0.5, stage="tests", reason="failure_not_detected")]
    other = [ep("t1", 0, True, agent="a", model="other/model")]
    r1 = run_dir(tmp_path / "r1", "r1", [e for e in eps if e.agent == "a"] + tests)
    r2 = run_dir(tmp_path / "r2", "r2", [e for e in eps if e.agent == "b"] + other)
    report = build_report([r1, r2], SETTINGS)
    assert report.settings == SETTINGS
    assert [(g.model, g.track, g.agent, g.runs) for g in report.groups] == [
        (MODEL, "code", "a", ["r1"]),
        (MODEL, "code", "b", ["r2"]),
        (MODEL, "tests", "a", ["r1"]),
        ("other/model", "code", "a", ["r2"]),
    ]
    a = report.groups[0]
    shares = [2 / 3] * 5 + [1 / 2, 1.0]
    assert (a.correct.low, a.correct.high) == bootstrap_ci(shares, resamples=500, confidence=0.8, seed=3)
    assert [(t.model, t.track, t.agents) for t in report.task_tables] == [
        (MODEL, "code", ["a", "b"]),
        (MODEL, "tests", ["a"]),
        ("other/model", "code", ["a"]),
    ]
    assert [(p.agent_a, p.agent_b, p.tasks, p.a_only, p.b_only) for p in report.paired] == [("a", "b", 6, 5, 1)]
    assert [(r.run_id, r.episodes) for r in report.runs] == [("r1", 18 + 1), ("r2", 17 + 1)]


def test_every_two_agents_of_a_model_and_track_are_paired(tmp_path: Path) -> None:
    solved = {"a": (True, True, False), "b": (True, False, False), "c": (False, False, True)}
    eps = [ep(f"t{i}", 0, passed, agent=agent) for agent, row in solved.items() for i, passed in enumerate(row)]
    report = build_report([run_dir(tmp_path / "r", "r", eps)], SETTINGS)
    assert [(p.agent_a, p.agent_b, p.tasks, p.both, p.a_only, p.b_only) for p in report.paired] == [
        ("a", "b", 3, 1, 1, 0),
        ("a", "c", 3, 0, 2, 1),
        ("b", "c", 3, 0, 1, 1),
    ]


def test_runs_are_described_and_groups_ordered_whatever_the_run_order(tmp_path: Path) -> None:
    eps = two_agents()
    r1 = run_dir(tmp_path / "r1", "r1", [e for e in eps if e.agent == "a"], commit="abc123")
    r2 = run_dir(tmp_path / "r2", "r2", [e for e in eps if e.agent == "b"])
    report = build_report([r2, r1], SETTINGS)  # agent b is read first
    assert [(g.agent, g.runs) for g in report.groups] == [("a", ["r1"]), ("b", ["r2"])]
    assert [(r.run_id, r.path, r.git_commit, r.episodes) for r in report.runs] == [
        ("r2", str(r2), None, 17),
        ("r1", str(r1), "abc123", 18),
    ]

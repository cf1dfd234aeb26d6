"""A kind is one package and one registry entry (issue 40, point 8): the sums kind
of tests/third_kind.py, registered here, goes through run, resume, report,
replay, view, `score DIR`, validate and optimize on the scripted model, with no
change to the package."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_optimize import KEYWORD, proposals
from third_kind import REFERENCE, TRACK, SumKind, SumOutcome, write_source

import fembench_agents as fb
from fembench_agents.kinds import kind_for, register_kind, tracks, unregister_kind
from fembench_agents.kinds.review import ValidationOptions
from fembench_agents.messages import Message, ModelParams
from fembench_agents.models import make_client, register_script, unregister_script
from fembench_agents.optimize import Models, OptimizeSettings, optimize_prompt
from fembench_agents.report.export import write_report
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, read_log
from fembench_agents.runs.problems import load_problems
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.viewer.site import write_site

PROBLEMS = {"sum_a": [1.0, 2.0, 3.0], "sum_b": [0.5, 2.5], "sum_c": [4.125, 5.5]}  # sum_c: 9.625, four digits
RIGHT = f"```python\n{REFERENCE}```"
WRONG = "```python\ndef solve(spec):\n    return {'total': 0.0}\n```"
BROKEN = "```python\ndef solve(spec) return 1\n```"


@pytest.fixture(scope="module")
def sums() -> Iterator[SumKind]:
    kind = register_kind(SumKind())
    yield kind  # type: ignore[misc]
    unregister_kind(TRACK)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_source(tmp_path_factory.mktemp("sums"), PROBLEMS)


def replies(messages: list[Message]) -> str:
    """sum_a right at once, sum_b right once repaired, sum_c never parses."""
    prompt = messages[-1].content
    repairing = "Your previous" in prompt
    if "Task sum_a" in prompt:
        return RIGHT
    if "Task sum_b" in prompt:
        return RIGHT if repairing else WRONG
    return BROKEN


@pytest.fixture
def model() -> Iterator[str]:
    name = f"sums-{uuid.uuid4().hex[:8]}"
    register_script(name, replies)
    yield f"scripted/{name}"
    unregister_script(name)


def episodes(run_dir: Path) -> dict[str, EpisodeRecord]:
    return {e.task_id: e for e in fb.open_run(run_dir).episodes()}


def test_the_kind_is_registered_beside_the_built_in_ones(sums: SumKind) -> None:
    assert tracks() == ("code", "tests", "numpy-scipy", "scikit-fem", "dolfinx", "ngsolve", TRACK)
    assert kind_for(TRACK) is sums


def test_run_resume_report_replay_and_view(sums: SumKind, source: Path, model: str, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    fb.run(model, "feedback-loop:2", track=TRACK, paths={"sums": source}, out=run_dir)
    found = episodes(run_dir)
    assert {k: (e.passed, e.attempts, e.first_pass_attempt, e.failed_stage, e.reason) for k, e in found.items()} == {
        "sum_a": (True, 1, 0, None, None),
        "sum_b": (True, 2, 1, None, None),
        "sum_c": (False, 2, None, "parse", "syntax_error"),
    }
    attempts = [r for r in read_log(run_dir) if isinstance(r, AttemptRecord)]
    assert all(type(a.outcome) is SumOutcome for a in attempts)  # read back as the kind's own model
    wrong = next(a for a in attempts if a.task_id == "sum_b" and a.attempt_index == 0)
    assert wrong.outcome is not None and wrong.outcome.total == 0.0  # type: ignore[attr-defined]
    assert wrong.feedback is not None and wrong.feedback.text == (
        "Your previous solve(spec) failed at the correct stage.\nIt returned a total, but not the sum of the numbers."
    )
    assert wrong.feedback.score == 0.5

    # resume: an episode whose record was lost is run again, and only that one
    lines = (run_dir / "log.jsonl").read_text().splitlines(keepends=True)
    last_c = max(i for i, line in enumerate(lines) if '"type":"episode"' in line and '"sum_c"' in line)
    (run_dir / "log.jsonl").write_text("".join(lines[:last_c] + lines[last_c + 1 :]))
    calls_before = sum(1 for r in read_log(run_dir) if type(r).__name__ == "ModelCallRecord")
    fb.run(model, "feedback-loop:2", track=TRACK, paths={"sums": source}, out=run_dir)
    calls_after = sum(1 for r in read_log(run_dir) if type(r).__name__ == "ModelCallRecord")
    assert calls_after - calls_before == 2  # sum_c's two attempts, nothing else
    assert sorted(episodes(run_dir)) == ["sum_a", "sum_b", "sum_c"]

    # report: the kind's group with the generic rows
    report = fb.build_report([run_dir])
    (group,) = report.groups
    assert (group.track, group.episodes, group.passed, group.tasks_solved) == (TRACK, 3, 2, 2)
    assert group.stage_failures == {"parse": 1} and group.failure_reasons == {"parse/syntax_error": 1}
    write_report(report, tmp_path / "report")
    assert f"| {model} | feedback-loop:2 | {TRACK} |" in (tmp_path / "report" / "report.md").read_text()

    # replay: re-scored with the current evaluator, and re-run from the log with no model
    assert fb.replay(run_dir, rescore=True, paths={"sums": source}) == []
    assert fb.replay(run_dir, paths={"sums": source}) == []
    replayed = {e.task_id: (e.passed, e.attempts) for e in episodes(run_dir / "replay").values()}
    assert replayed == {"sum_a": (True, 1), "sum_b": (True, 2), "sum_c": (False, 2)}

    # view: one page per episode, the kind's feedback on the attempt that failed
    index = write_site([run_dir], tmp_path / "site")
    pages = sorted((index.parent / "data" / "episodes").glob("*.js"))
    assert len(pages) == 3
    assert any("failed at the correct stage" in p.read_text() for p in pages)


def test_score_dir_and_validate_ask_the_kind(sums: SumKind, source: Path, tmp_path: Path) -> None:
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "sum_a_mine.py").write_text(REFERENCE)
    (folder / "sum_b_mine.py").write_text("def solve(spec):\n    return {'total': -1.0}\n")
    (folder / "stray.py").write_text("")
    summary = fb.score_folder(folder, track=TRACK, paths={"sums": source})
    assert json.loads(summary.model_dump_json())["labels"] == {"mine": 1}
    assert summary.unmatched_files == ["stray.py"]

    class Progress:
        def __init__(self) -> None:
            self.seen: list[Any] = []

        def start(self, total: int) -> None:
            self.seen.append(("start", total))

        def advance(self) -> None:
            self.seen.append("advance")

        def note(self, line: str) -> None:
            self.seen.append(line)

    progress = Progress()
    checked = kind_for(TRACK).validator.validate(str(source), ValidationOptions(), progress)
    assert (checked.valid, checked.problems, checked.summary) == (sorted(PROBLEMS), [], "all 3 sums are consistent")
    assert progress.seen == [("start", 3), "advance", "advance", "advance"]


def test_optimize_on_the_third_kind(sums: SumKind, source: Path, tmp_path: Path) -> None:
    """GEPA on the sums track: the reflection proposes the prompt that makes the
    task model right; the leak guard asks the kind what stays hidden."""
    name = uuid.uuid4().hex[:8]

    def task(messages: list[Message]) -> str:
        right = messages[0].role == "system" and KEYWORD in messages[0].content
        return RIGHT if right else WRONG

    settings = OptimizeSettings(
        name="sums",
        model=f"scripted/sumtask{name}",
        reflection_model=f"scripted/sumreflect{name}",
        track=TRACK,
        heldout="sum_c",
        budget="6",
        val_fraction=0.5,
        reflection_minibatch_size=1,
        include_reference=False,
        concurrency=2,
        params=ModelParams(max_tokens=900),
        reflection_params=ModelParams(max_tokens=512),
    )
    register_script(f"sumtask{name}", task)
    register_script(f"sumreflect{name}", proposals(f"Write clean code and {KEYWORD}."))
    try:
        with Sandbox() as sandbox:
            sets = load_problems([TRACK], sandbox, {"sums": str(source)})
            models = Models(
                make_client(settings.model, settings.params),
                make_client(settings.reflection_model, settings.reflection_params),
            )
            result = optimize_prompt(settings, sets.by_track[TRACK], sets.evaluator, tmp_path / "out", models)
    finally:
        unregister_script(f"sumtask{name}")
        unregister_script(f"sumreflect{name}")
    assert result.complete and KEYWORD in result.system_prompt and result.scores.val == 1.0
    assert (result.split.heldout, result.split.train, result.split.val) == (("sum_c",), ("sum_b",), ("sum_a",))
    assert not result.leak.leaked
    # sum_c's hidden total is the one number the guard looked for (the kind's material)
    assert result.leak.summary() == "no leak (0 held-out lines, 1 held-out numbers checked)"

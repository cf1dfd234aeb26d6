"""The kind parts `score DIR` and `validate` ask, and the one run grid: a third
kind defined here (not in the package) is read, scored and summed up through
its own parts; the validate commands print what the kind's validator found;
the grid names run directories and reads each default from one place."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

import fembench_agents.api as api
from fembench_agents.cli import app
from fembench_agents.cli import runs as cli_runs
from fembench_agents.cli import tasks as cli_tasks
from fembench_agents.kinds import register_kind, unregister_kind
from fembench_agents.kinds import tracks as kinds_tracks
from fembench_agents.kinds.contract import LoadedProblems, ScoringOptions, SkippedTask
from fembench_agents.kinds.review import (
    FolderTable,
    SavedAttempt,
    SavedAttempts,
    Validation,
    ValidationOptions,
    ValidationProblem,
    ValidationProgress,
)
from fembench_agents.messages import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, ModelParams
from fembench_agents.runs.defaults import DEFAULT_CONCURRENCY, DEFAULT_REPEATS, DEFAULT_SELECTION, DEFAULT_TRACK
from fembench_agents.runs.experiments import Experiment
from fembench_agents.runs.grid import experiment_runs, library_list, problem_selection, single_run
from fembench_agents.runs.run import RunConfig
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.folder import score_saved
from fembench_agents.scoring.sandbox import IsolationReport

runner = CliRunner()
ISOLATION = IsolationReport(level="namespaced", detail="root")


@dataclass(frozen=True)
class Word:
    """The third kind's problem: write `task_id` backwards."""

    task_id: str
    main_name: str = "answer"
    content_hash: str = "0"
    hidden_dir: Path = Path("/nonexistent")
    leak: str | None = None


class WordScorer:
    calibration_id = None

    def score(self, problem: Any, track: str, text: str) -> Any:
        return SimpleNamespace(task_id=problem.task_id, passed=text.strip() == problem.task_id[::-1])

    def close(self) -> None:
        pass


@dataclass
class WordFolder:
    """`{task_id}-{label}.txt.py`; every call recorded."""

    calls: list[str] = field(default_factory=list)

    def tracks(self, folder: Path, path: str) -> list[str]:
        self.calls.append("tracks")
        return ["words"]

    def find(self, folder: Path, path: str, by_track: dict[str, list[Any]]) -> SavedAttempts:
        self.calls.append("find")
        words = by_track["words"]
        found, unmatched = [], []
        for file in sorted(folder.glob("*.py")):
            task_id, _, label = file.stem.partition("-")
            if any(w.task_id == task_id for w in words) and label:
                found.append(SavedAttempt(task_id, "words", label, file))
            else:
                unmatched.append(file.name)
        return SavedAttempts(words, found, unmatched)

    def summary(
        self,
        found: SavedAttempts,
        scored: list[tuple[SavedAttempt, Any]],
        isolation: IsolationReport,
        skipped: list[SkippedTask],
        options: Any,
    ) -> Any:
        self.calls.append("summary")
        return SimpleNamespace(
            passed=[(a.task_id, a.label, o.passed) for a, o in scored],
            unmatched_files=found.unmatched,
            isolation=isolation,
            skipped=skipped,
        )

    def table(self, summary: Any, found: SavedAttempts) -> FolderTable:
        return FolderTable(noun="words", columns=("label",), rows=[("x",)], unmatched="word")


@dataclass(frozen=True)
class WordKind:
    track: str = "words"
    label: str = "words backwards"
    default_path: str = "words"
    preload: tuple[str, ...] = ()
    outcome_type: type[Any] = SimpleNamespace
    scorer_key: str = "words"
    feedback: Any = None
    folder: WordFolder = field(default_factory=WordFolder)
    validator: Any = None

    def load(self, path: str, sandbox: Any, options: ScoringOptions, tracks: Sequence[str]) -> LoadedProblems:
        return LoadedProblems({"words": [Word("abc"), Word("ab")]}, WordScorer())

    def scorer(self, sandbox: Any, options: ScoringOptions) -> WordScorer:
        return WordScorer()


@pytest.fixture
def words() -> Iterator[WordKind]:
    kind = WordKind()
    register_kind(kind)
    yield kind
    unregister_kind(kind.track)


def test_a_folder_of_a_third_kind_is_read_scored_and_summed_up_by_its_own_parts(
    words: WordKind, tmp_path: Path
) -> None:
    for name, text in (("abc-right.py", "cba"), ("ab-right.py", "ab"), ("abc-wrong.py", "abc"), ("notes.py", "")):
        (tmp_path / name).write_text(text)
    sandbox: Any = SimpleNamespace(size=2, isolation=lambda: ISOLATION)
    evaluator = Evaluator(sandbox)
    by_track = {"words": words.load("words", sandbox, ScoringOptions(), ["words"]).by_track["words"]}
    found = words.folder.find(tmp_path, "words", by_track)
    seen: list[str] = []

    summary: Any = score_saved(found, words.folder, evaluator, lambda a: seen.append(a.path.name), [])

    assert words.folder.calls == ["find", "summary"]
    # in the files' order, whatever order the sandbox finished them in
    assert summary.passed == [("ab", "right", False), ("abc", "right", True), ("abc", "wrong", False)]
    assert sorted(seen) == ["ab-right.py", "abc-right.py", "abc-wrong.py"]
    assert (summary.unmatched_files, summary.isolation, summary.skipped) == (["notes.py"], ISOLATION, [])


class FoundProblems:
    def __init__(self, found: Validation) -> None:
        self.found = found
        self.asked: list[tuple[str, ValidationOptions]] = []

    def validate(self, path: str, options: ValidationOptions, progress: ValidationProgress) -> Validation:
        self.asked.append((path, options))
        progress.start(2)
        progress.note("skipped task broken: no task_info")
        progress.advance()
        progress.advance()
        return self.found


def test_tasks_validate_prints_and_writes_what_the_kinds_validator_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    problem = ValidationProblem(task_id="t1", check="tests", message="t1 lists no expected failures")
    skipped = SkippedTask(name="broken", path="suite/broken.py", reason="no task_info")
    validator = FoundProblems(Validation(valid=["t2"], problems=[problem], skipped=[skipped], summary="2 tasks valid"))
    monkeypatch.setattr(cli_tasks, "kind_for", lambda track: SimpleNamespace(validator=validator))
    out = tmp_path / "v.json"

    res = runner.invoke(app, ["tasks", "validate", "suite", "--json", str(out)])

    assert res.exit_code == 1
    assert validator.asked == [("suite", ValidationOptions())]
    assert "t1 lists no expected failures" in res.output and "skipped task broken: no task_info" in res.output
    assert json.loads(out.read_text()) == {
        "valid": ["t2"],
        "problems": [{"task_id": "t1", "check": "tests", "message": "t1 lists no expected failures"}],
        "skipped": [{"name": "broken", "path": "suite/broken.py", "reason": "no task_info"}],
    }
    clean = FoundProblems(Validation(valid=["t2"], summary="1 tasks valid"))
    monkeypatch.setattr(cli_tasks, "kind_for", lambda track: SimpleNamespace(validator=clean))
    res = runner.invoke(app, ["tasks", "validate", "suite"])
    assert (res.exit_code, res.output.splitlines()[-1]) == (0, "1 tasks valid")


def test_cases_validate_passes_its_options_and_prints_each_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    from fembench_agents.cli import cases as cli_cases

    found = Validation(problems=[ValidationProblem(task_id=None, check="records", message="c1: leaks")], summary="-")
    validator = FoundProblems(found)
    monkeypatch.setattr(cli_cases, "kind_for", lambda track: SimpleNamespace(validator=validator))

    res = runner.invoke(app, ["cases", "validate", "--cases", "somewhere", "--no-rebuild", "--no-calibration"])

    assert res.exit_code == 1
    assert validator.asked == [("somewhere", ValidationOptions(rebuild=False, calibration=False))]
    assert "problem: c1: leaks" in res.output


def test_a_comparison_names_each_run_directory_by_model_agent_and_track() -> None:
    pde = Experiment(
        name="e", models=["openai/gpt-4o"], agents=["feedback-loop:3"], libraries=["numpy-scipy", "dolfinx"]
    )
    assert [(r.config.track, r.out.as_posix()) for r in experiment_runs(pde, Path("out"))] == [
        ("numpy-scipy", "out/openai-gpt-4o__feedback-loop-3__numpy-scipy"),
        ("dolfinx", "out/openai-gpt-4o__feedback-loop-3__dolfinx"),
    ]
    one = Experiment(name="e", models=["m"], agents=["a", "b"])
    assert [(r.config.track, r.out.as_posix()) for r in experiment_runs(one, Path("o"))] == [
        ("code", "o/m__a"),
        ("code", "o/m__b"),
    ]
    both = Experiment(name="e", models=["m"], agents=["a"], tracks=["code", "tests"])
    assert [r.out.name for r in experiment_runs(both, Path("o"))] == ["m__a__code", "m__a__tests"]
    kinds = Experiment(name="e", models=["m"], agents=["a"], tracks=["code"], libraries=["numpy-scipy"], tasks="t1")
    assert [(r.config.track, r.config.tasks, r.out.name) for r in experiment_runs(kinds, Path("o"))] == [
        ("numpy-scipy", "all", "m__a__numpy-scipy"),  # its cases (all, unless `cases` says)
        ("code", "t1", "m__a__code"),  # and its tasks
    ]
    assert single_run(RunConfig(model="x/y", agent="prompt:p/q.txt")).out == Path("runs/x-y__prompt-p-q.txt__code")
    assert problem_selection("t*", "tests", None, None) == ("t*", "tests")
    assert problem_selection("t*", "tests", "poisson_*", None) == ("poisson_*", "numpy-scipy")
    assert problem_selection("t*", "tests", None, "dolfinx") == ("all", "dolfinx")
    assert (library_list(None, None), library_list(None, "c*"), library_list("a,b", None)) == (
        [],
        ["numpy-scipy"],
        ["a", "b"],
    )


def _default(fn: Any, name: str) -> Any:
    default = inspect.signature(fn).parameters[name].default
    return getattr(default, "default", default)  # a typer option keeps its default on the Annotated value


def test_each_run_default_is_the_one_in_runs_defaults() -> None:
    config, exp = RunConfig(model="m", agent="a"), Experiment(name="e", models=["m"], agents=["a"])
    for fn in (cli_runs.run, cli_runs.compare, api.run, api.compare):
        assert _default(fn, "concurrency") == DEFAULT_CONCURRENCY == config.concurrency == exp.concurrency == 2
        assert _default(fn, "repeats") == DEFAULT_REPEATS == config.repeats == exp.repeats == 1
        assert _default(fn, "tasks") == DEFAULT_SELECTION == config.tasks == exp.tasks == "all"
        assert _default(fn, "track") == DEFAULT_TRACK == config.track == exp.track == "code"
    for fn in (cli_runs.run, cli_runs.compare):
        assert _default(fn, "temperature") == DEFAULT_TEMPERATURE == ModelParams().temperature == 0.0
        assert _default(fn, "max_tokens") == DEFAULT_MAX_TOKENS == ModelParams().max_tokens == 2048


def test_the_built_in_tracks_come_first_in_one_order_whichever_kind_was_imported_first(words: WordKind) -> None:
    import subprocess
    import sys

    assert kinds_tracks()[-1] == "words"
    code = "import fembench_agents.cases.kind\nfrom fembench_agents.kinds import tracks\nprint(','.join(tracks()))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "code,tests,numpy-scipy,scikit-fem,dolfinx,ngsolve", done.stderr

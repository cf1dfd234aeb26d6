"""The isolation a run was scored under travels with it: recorded in the
manifest (the weakest of its sessions), shown in every report built from it."""

from __future__ import annotations

from pathlib import Path

from fembench_agents.messages import ModelParams
from fembench_agents.report import build_report, isolation_warnings, render_markdown
from fembench_agents.runs.log import RunManifest, read_manifest, write_manifest
from fembench_agents.runs.run import RunConfig, prepare_run_dir
from fembench_agents.scoring.sandbox import IsolationReport

CONFIG = RunConfig(
    model="scripted/echo",
    agent="single-shot",
    tasks="all",
    track="code",
    repeats=1,
    concurrency=1,
    params=ModelParams(),
)
CONFINED = IsolationReport(level="namespaced", detail="user namespace")
WEAK = IsolationReport(
    level="basic", detail="creating a user namespace failed: EPERM (Operation not permitted)", accepted_weak=True
)


def test_the_manifest_keeps_the_weakest_isolation_of_every_session(tmp_path: Path) -> None:
    run = tmp_path / "run"
    prepare_run_dir(run, CONFIG, [], CONFINED)
    assert read_manifest(run).isolation == CONFINED
    prepare_run_dir(run, CONFIG, [], WEAK)  # resumed on a machine without namespaces
    assert read_manifest(run).isolation == WEAK
    prepare_run_dir(run, CONFIG, [], CONFINED)  # confined again: the earlier episodes were not
    assert read_manifest(run).isolation == WEAK


def test_reports_show_the_isolation_of_each_run(tmp_path: Path) -> None:
    runs = []
    unaccepted = IsolationReport(level="basic", detail="no user namespace")  # a run made before the option
    for run_id, isolation in (("confined", CONFINED), ("weak", WEAK), ("old", None), ("unaccepted", unaccepted)):
        directory = tmp_path / run_id
        directory.mkdir()
        write_manifest(
            directory, RunManifest(run_id=run_id, config={}, task_hashes={}, versions={}, isolation=isolation)
        )
        runs.append(directory)
    report = build_report(runs)
    assert isolation_warnings(report) == [
        "run weak: isolation: basic; accepted with --allow-weak-isolation: generated code ran with this "
        "user's files, network and processes (creating a user namespace failed: EPERM (Operation not permitted))",
        "run unaccepted: isolation: basic: generated code ran with this user's files, network and processes "
        "(no user namespace)",
    ]
    markdown = render_markdown(report)
    assert "| confined | " + str(runs[0]) + " | 0 | - | namespaced |" in markdown
    assert "| weak | " + str(runs[1]) + " | 0 | - | basic (accepted) |" in markdown
    assert "| old | " + str(runs[2]) + " | 0 | - | not recorded |" in markdown
    assert "| unaccepted | " + str(runs[3]) + " | 0 | - | basic |" in markdown
    assert "**Warning**: run weak: isolation: basic; accepted with --allow-weak-isolation" in markdown
    assert report.model_validate_json(report.model_dump_json()).runs[1].isolation == WEAK


def test_a_manifest_written_before_isolation_was_kept_still_reads(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(
        '{"schema_version": 1, "run_id": "r", "created": "2026-01-01T00:00:00+00:00", "config": {}, '
        '"task_hashes": {}, "versions": {}, "git_commit": null}'
    )
    assert read_manifest(tmp_path).isolation is None

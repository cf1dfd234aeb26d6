"""Bad input on the command line is answered in one line with exit 2 and no
traceback, wherever a command finds it: a damaged run directory, a file that
is missing, a directory, not UTF-8 or not TOML, an --out under a file, an
option value out of range. A bug keeps its traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import Called, cli
from run_builders import TASK_1D, attempt, episode, function_outcome, make_run

from fembench_agents.errors import BadInput
from fembench_agents.runs.log import LOG_NAME, MANIFEST_NAME
from fembench_agents.runs.replay import replay_run

SKIP_HINT = "hint: pass --skip-bad-lines to read the rest of the log (the bad lines are left out and counted)"


def one_line(called: Called) -> str:
    """The one error line of a command that refused its input."""
    assert called.code == 2, called.text
    assert "Traceback" not in called.text, called.text
    errors = [line for line in called.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, called.err
    return errors[0]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    ep = episode("single", TASK_1D, 0, True)
    return make_run(tmp_path / "run", "run", [attempt(ep, 0, function_outcome(TASK_1D, [("match", None)], True)), ep])


def test_the_script_answers_a_damaged_log_with_the_line_and_the_hint(run: Path) -> None:
    with open(run / LOG_NAME, "ab") as fh:
        fh.write(b'{"type": "episode"\n')
    script = Path(sys.executable).with_name("fembench-agents")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "80", "NO_COLOR": "1"}
    done = subprocess.run([script, "report", run], env=env, capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"error: {run / LOG_NAME}:3: not JSON (Expecting ',' delimiter, column 19)",
        SKIP_HINT,
    ]


def test_skipping_bad_lines_says_how_many_and_the_first(run: Path) -> None:
    with open(run / LOG_NAME, "ab") as fh:
        fh.write(b"[]\n\xff\n")
    called = cli("report", run, "--skip-bad-lines")
    assert called.code == 0, called.text
    assert (
        f"skipped 2 bad lines (first: {run / LOG_NAME}:3: a JSON array, not a log record "
        "(a JSON object of type model_call, attempt, episode))"
    ) in called.err.splitlines()
    assert "1/1" in called.out  # the episode before the bad lines is reported
    assert called.err.splitlines()[-1].startswith(f"`fembench-agents report {run} --out DIR` writes report.md")


def test_a_damaged_manifest_is_one_line(run: Path) -> None:
    (run / MANIFEST_NAME).write_text('{"run_id": ')
    for command in (["report"], ["view", "--out", run.parent / "site"], ["replay", "--show", TASK_1D]):
        assert one_line(cli(command[0], run, *command[1:])) == (
            f"error: {run / MANIFEST_NAME}:1: not JSON (Expecting value, column 12)"
        )


def test_a_log_that_is_a_directory_is_one_line(run: Path) -> None:
    (run / LOG_NAME).unlink()
    (run / LOG_NAME).mkdir()
    assert one_line(cli("report", run)) == f"error: {run / LOG_NAME} is a directory, not a run log"


def test_an_out_directory_under_a_file_is_one_line(run: Path, tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("")
    assert one_line(cli("report", run, "--out", tmp_path / "a_file" / "out")).startswith(
        f"error: {tmp_path / 'a_file' / 'out'}"
    )
    assert one_line(cli("view", run, "--out", tmp_path / "a_file" / "site")).startswith(
        f"error: {tmp_path / 'a_file' / 'site'}"
    )


def test_a_damaged_heldout_judgement_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "heldout.json").write_text('{"kind": 1}')
    line = one_line(cli("report", tmp_path))
    assert line.startswith(f"error: {tmp_path / 'heldout.json'}: not a held-out judgement: field ")


@pytest.mark.parametrize(
    "content, fault",
    [
        (None, "experiment file {path} does not exist"),
        ("dir", "experiment file {path} is a directory, not a file"),
        (b"\xff\xfe name", "experiment file {path} is not UTF-8 text (byte 1: invalid start byte)"),
        (b'name = "x\n', "{path}: not valid TOML: Illegal character '\\n' (at line 1, column 10)"),
    ],
)
def test_an_experiment_file_that_cannot_be_read_is_one_line(
    content: bytes | str | None, fault: str, tmp_path: Path
) -> None:
    path = tmp_path / "grid.toml"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    for command in ("compare", "optimize"):
        assert one_line(cli(command, "--experiment", path)) == "error: " + fault.format(path=path)


def test_a_prompt_file_that_is_a_directory_and_a_bad_option_value_are_one_line(tmp_path: Path) -> None:
    out = ["--model", "scripted/none", "--out", tmp_path / "run"]
    assert one_line(cli("run", "--agent", f"prompt:{tmp_path}", *out)) == (
        f"error: agent 'prompt:{tmp_path}': system prompt file '{tmp_path}' is a directory, not a file"
    )
    assert one_line(cli("run", "--reasoning-effort", "lots", *out)) == (
        "error: bad model parameters: field reasoning_effort: Input should be 'low', 'medium' or 'high'"
    )
    assert not (tmp_path / "run").exists()


def test_a_run_that_is_not_replayable_is_bad_input(tmp_path: Path, run: Path) -> None:
    with pytest.raises(BadInput, match=r"manifest.json: config is not a run this build can replay \(KeyError"):
        replay_run(run, [], evaluator=None)  # type: ignore[arg-type]  # refused before anything is scored


def test_a_bug_keeps_its_traceback(run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the report")

    monkeypatch.setattr("fembench_agents.cli.report.show_report", broken)
    with pytest.raises(RuntimeError, match="a bug in the report"):
        cli("report", run)

    def lost(*args: object, **kwargs: object) -> None:
        raise OSError("an OSError about no file the user named")

    monkeypatch.setattr("fembench_agents.cli.report.show_report", lost)
    with pytest.raises(OSError, match="no file the user named"):
        cli("report", run)


def test_a_port_out_of_range_is_one_line(run: Path, tmp_path: Path) -> None:
    called = cli("view", run, "--out", tmp_path / "site", "--serve", "--port", "99999")
    assert one_line(called) == "error: cannot serve on 127.0.0.1:99999: bind(): port must be 0-65535."


def test_sensitivity_reads_every_line_and_says_it_cannot_skip(run: Path) -> None:
    with open(run / LOG_NAME, "ab") as fh:
        fh.write(b"[]\n")
    assert one_line(cli("report", run, "--sensitivity", "--skip-bad-lines")) == (
        "error: --sensitivity reads every line of a log and cannot skip bad ones; without it, report can"
    )

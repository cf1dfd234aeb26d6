"""The run log reader's faults, word for word: every line that is not a record
is named by file, line and fault; what the writer does (a resume that starts
an unfinished episode over, an episode that ended in an error and is redone)
is no fault; `open_run` refuses a damaged log or, asked to, skips its bad lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_builders import TASK_1D, TASK_2D, attempt, episode, function_outcome, make_run

from fembench_agents.errors import BadInput
from fembench_agents.runs.log import LOG_NAME, MANIFEST_NAME, DamagedLog, LogFault, read_log, read_manifest, scan_log
from fembench_agents.runs.reader import open_run

RIGHT = function_outcome(TASK_1D, [("match", None)], True)
WRONG = function_outcome(TASK_1D, [("mismatch", 0.5)], False)


def lines_of(directory: Path) -> list[str]:
    return (directory / LOG_NAME).read_text(encoding="utf-8").splitlines()


def write_lines(directory: Path, lines: list[str | bytes]) -> None:
    data = b"".join((line.encode() if isinstance(line, str) else line) + b"\n" for line in lines)
    (directory / LOG_NAME).write_bytes(data)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """Two episodes: a loop of two attempts (wrong, then right) and one of a single attempt."""
    loop = episode("loop", TASK_1D, 0, True, attempts=2)
    single = episode("single", TASK_2D, 0, False)
    records = [attempt(loop, 0, WRONG), attempt(loop, 1, RIGHT), loop, attempt(single, 0, WRONG), single]
    return make_run(tmp_path / "run", "run", records)


def faults_after(run: Path, lines: list[str | bytes]) -> list[str]:
    write_lines(run, lines)
    return [f"{f.line}: {f.fault}" for f in scan_log(run).faults]


def test_each_kind_of_bad_line_is_named_with_its_line_and_fault(run: Path) -> None:
    good = lines_of(run)
    record = json.loads(good[0])
    assert faults_after(
        run,
        [
            good[0],
            b'{"schema_version":1,\xff}',
            '{"schema_version":1,"type":"attempt"',
            "[1, 2]",
            "42",
            '"text"',
            "null",
            '{"hello": "world"}',
            '{"type": "verdict"}',
            json.dumps({**record, "schema_version": 2}),
            json.dumps({**record, "schema_version": "1"}),
            json.dumps({**record, "attempt_index": "first"}),
            good[0],
            *good[1:],
        ],
    ) == [
        "2: not UTF-8 text (byte 21 of the line: invalid start byte)",
        "3: not JSON (Expecting ',' delimiter, column 37)",
        "4: a JSON array, not a log record (a JSON object of type model_call, attempt, episode)",
        "5: a JSON number, not a log record (a JSON object of type model_call, attempt, episode)",
        "6: a JSON string, not a log record (a JSON object of type model_call, attempt, episode)",
        "7: a JSON null, not a log record (a JSON object of type model_call, attempt, episode)",
        "8: a JSON object with no type, not a log record (type model_call, attempt, episode)",
        "9: a JSON object with type 'verdict', not a log record (type model_call, attempt, episode)",
        "10: schema_version 2; this build reads log schema 1 (written by a newer fembench-agents)",
        "11: schema_version '1'; this build reads log schema 1",
        "12: attempt record: field attempt_index: Input should be a valid integer, unable to parse string as an integer",
        "13: a copy of line 1 (the log never holds a record twice)",
    ]


def test_records_out_of_the_writers_order_are_faults(run: Path) -> None:
    loop_a0, loop_a1, loop_end, single_a0, single_end = lines_of(run)
    assert faults_after(run, [loop_a0, loop_end, loop_a1, single_a0, single_end, single_end]) == [
        "3: out of order: attempt record of episode mock/model|loop|code|FEM_1D_bar_CC0_H0_T0|0 after its end at "
        "line 2 (a finished episode is never resumed)",
        "6: a copy of line 5 (the log never holds a record twice)",
    ]
    again = json.dumps({**json.loads(single_end), "score": 1.0, "passed": True})  # a second verdict, not a copy
    # attempt 0 after 1: a resume started the episode over, and its new attempt 1 follows
    assert (
        faults_after(run, [loop_a1, loop_a0, loop_a1.replace('"attempt_index":1', '"attempt_index":1 '), again]) == []
    )
    assert faults_after(run, [loop_a0, loop_a1, loop_a1.replace("attempt 1", "attempt one"), single_end, again]) == [
        "3: out of order: attempt 1 of episode mock/model|loop|code|FEM_1D_bar_CC0_H0_T0|0 after its attempt 1 "
        "(attempts count up, or start over at 0 when an episode is resumed)",
        "5: out of order: episode record of episode mock/model|single|code|FEM_2D_quad_CC0_H1_T3|0 after its end "
        "at line 4 (a finished episode is never resumed)",
    ]


def test_what_the_writer_does_on_resume_is_no_fault(tmp_path: Path) -> None:
    failed = episode("loop", TASK_1D, 0, False).model_copy(update={"status": "error"})
    done = episode("loop", TASK_1D, 0, True, attempts=2)
    records = [
        attempt(done, 0, WRONG),  # killed here, mid-episode
        attempt(done, 0, WRONG),  # resumed: the episode starts over
        attempt(done, 1, None),  # the model call failed: the episode ends in an error
        failed,
        attempt(done, 0, WRONG),  # the next resume redoes it
        attempt(done, 1, RIGHT),
        done,
    ]
    # each session writes at its own time (the builder would stamp them all in one millisecond)
    stamped = [
        r.model_copy(update={"timestamp": f"2026-01-0{i + 1}T00:00:00.000+00:00"}) for i, r in enumerate(records)
    ]
    run = make_run(tmp_path / "r", "r", stamped)
    with open(run / LOG_NAME, "a", encoding="utf-8") as fh:
        fh.write("\n  \n")  # empty lines are passed over
        fh.write(lines_of(run)[0][:40])  # a torn last line: a killed writer, no newline yet
    reading = scan_log(run)
    assert (len(reading.records), reading.faults, reading.torn_line) == (7, (), 10)
    assert [r.status for r in open_run(run).episodes()] == ["done"]


def test_a_record_holding_a_unicode_line_separator_is_one_line(tmp_path: Path) -> None:
    ep = episode("single", TASK_1D, 0, False)
    text = attempt(ep, 0, WRONG).model_copy(update={"reply": "a\u2028b\x85c\u2029d"})
    run = make_run(tmp_path / "r", "r", [text, ep])
    assert [r.reply for r in read_log(run) if r.type == "attempt"] == ["a\u2028b\x85c\u2029d"]  # type: ignore[union-attr]


def test_a_damaged_log_is_refused_whole_or_read_past_when_asked(run: Path) -> None:
    good = lines_of(run)
    write_lines(run, [good[0], "{", *good[1:3], "[]", *good[3:]])
    log = run / LOG_NAME
    with pytest.raises(DamagedLog) as refused:
        read_log(run)
    assert (
        str(refused.value)
        == f"{log}:2: not JSON (Expecting property name enclosed in double quotes, column 2) (and 1 more bad line)"
    )
    assert isinstance(refused.value, BadInput) and isinstance(refused.value, ValueError)
    with pytest.raises(DamagedLog):
        open_run(run)
    skipped = open_run(run, skip_bad_lines=True)
    assert [f.line for f in skipped.skipped] == [2, 5]
    assert skipped.skipped[1] == LogFault(
        log, 5, "a JSON array, not a log record (a JSON object of type model_call, attempt, episode)"
    )
    assert [(e.agent, e.passed) for e in skipped.episodes()] == [("loop", True), ("single", False)]
    assert len(skipped.attempts()) == 3


@pytest.mark.parametrize(
    "text, fault",
    [
        ("{", ":1: not JSON (Expecting property name enclosed in double quotes, column 2)"),
        ("[]", ": a JSON array, not a run manifest (a JSON object)"),
        ('{"schema_version": 3}', ": schema_version 3; this build reads run manifests of schema 1"),
        ('{"run_id": 7}', ": not a run manifest: field run_id: Input should be a valid string (and 3 more)"),
    ],
)
def test_a_damaged_manifest_is_named_in_one_line(text: str, fault: str, tmp_path: Path) -> None:
    (tmp_path / MANIFEST_NAME).write_text(text)
    with pytest.raises(BadInput) as bad:
        read_manifest(tmp_path)
    assert str(bad.value) == f"{tmp_path / MANIFEST_NAME}{fault}"


def test_a_log_that_cannot_be_read_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / LOG_NAME).mkdir()
    with pytest.raises(BadInput, match=rf"^{tmp_path / LOG_NAME} is a directory, not a run log$"):
        scan_log(tmp_path)


def test_json_past_what_the_reader_takes_is_a_fault_not_a_crash(run: Path) -> None:
    good = lines_of(run)
    assert faults_after(run, [*good, "7" * 5000, "[" * 100_000]) == [
        "6: not JSON this reader takes (Exceeds the limit (4300 digits) for integer string conversion: value has "
        "5000 digits; use sys.set_int_max_str_digits() to increase the limit)",
        "7: not JSON this reader takes (maximum recursion depth exceeded while decoding a JSON array from a unicode "
        "string)",
    ]

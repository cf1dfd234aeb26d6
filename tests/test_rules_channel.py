"""The sandbox's result channel as the parent decodes it: what a child (or an
attempt writing to the child's result pipe) sends is kept only when every field
the parent reads has its type; isolation is taken from the first report only;
how the job ended is carried over as sent."""

from __future__ import annotations

import json
from typing import Any

from fembench_agents.scoring.sandbox.pool import JobResult, _decode


def reply(*lines: str | dict[str, Any], **fields: Any) -> dict[str, Any]:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    return {"frames_text": text, **fields}


GOOD = {"event": "input", "index": 0, "status": "ok", "seconds": 0.5, "value": [1.0, {"__float__": "nan"}]}


def test_well_formed_frames_are_kept_in_order() -> None:
    frames = [
        GOOD,
        {
            "event": "input",
            "index": 1,
            "status": "error",
            "error_type": "ValueError",
            "message": "m",
            "error_mro": ["ValueError", "Exception"],
            "traceback": ["<attempt>, line 1"],
            "seconds": 1,
        },
        {"event": "test", "status": "passed", "seconds": 0.1, "side": "test"},
        {"event": "invalid", "key": None, "error_type": "KeyError"},
        {"event": "task", "task": {"task_id": "x"}},
        {"event": "done"},
    ]
    result = _decode(reply(*frames))
    assert result.frames == frames
    assert result.malformed_frames == 0
    assert result.events("input") == frames[:2]
    assert result.events("done") == [{"event": "done"}]
    assert result.events("verdict") == []


def test_frames_with_fields_of_the_wrong_type_are_dropped_and_counted() -> None:
    forged = [
        "not json at all",
        "[1, 2]",
        "7",
        {"index": 0, "status": "ok"},  # no event
        {"event": 5},
        {"event": "input", "index": "0", "status": "ok"},
        {"event": "input", "index": 0.0, "status": "ok"},
        {"event": "input", "index": 0, "status": 1},
        {"event": "input", "index": 0, "status": "error", "error_type": {"a": 1}},
        {"event": "input", "index": 0, "status": "error", "message": ["m"]},
        {"event": "input", "index": 0, "status": "ok", "seconds": "fast"},
        {"event": "input", "index": 0, "status": "error", "error_mro": "ValueError"},
        {"event": "input", "index": 0, "status": "error", "error_mro": ["ValueError", 5]},
        {"event": "input", "index": 0, "status": "error", "traceback": [{"b": 2}]},
        {"event": "test", "status": "passed", "side": 1},
        {"event": "isolation", "level": 3},
        {"event": "invalid", "key": 5},
        {"event": "task", "task": [1]},
        '{"event": ' + '{"x": ' * 50000 + "1" + "}" * 50000 + "}",  # deeper than the decoder allows
    ]
    result = _decode(reply(*forged, GOOD))
    assert result.frames == [GOOD]
    assert result.malformed_frames == len(forged)
    assert result.isolation == "unknown"


def test_the_first_isolation_report_wins_and_is_not_a_frame() -> None:
    result = _decode(
        reply({"event": "isolation", "level": "namespaces"}, GOOD, {"event": "isolation", "level": "none"})
    )
    assert result.isolation == "namespaces"
    assert result.frames == [GOOD]
    assert _decode(reply(GOOD)).isolation == "unknown"


def test_how_the_job_ended_is_carried_over() -> None:
    result = _decode(
        reply(GOOD, timed_out=1, truncated=0, exit_code=3, signal=None, stderr="x" * 9000 + "END", wall_seconds=2)
    )
    assert (result.timed_out, result.truncated, result.exit_code, result.signal) == (True, False, 3, None)
    assert result.stderr == ("x" * 9000 + "END")[-8192:] and len(result.stderr) == 8192
    assert result.wall_seconds == 2.0 and isinstance(result.wall_seconds, float)
    killed = _decode(reply(truncated=True, signal=9))
    assert (killed.timed_out, killed.truncated, killed.exit_code, killed.signal) == (False, True, None, 9)
    assert killed.frames == [] and killed.malformed_frames == 0


def test_an_empty_reply_is_an_empty_result() -> None:
    assert _decode({}) == JobResult()
    assert _decode({"frames_text": "\n\n"}).malformed_frames == 2


# ----- a tests job: one frame per pair, each holding that pair's own frames ------------------------------------------

TEST_FRAME = {"event": "test", "status": "passed", "seconds": 0.1, "side": "test"}


def pair_frame(index: int, *frames: dict[str, Any], **fields: Any) -> dict[str, Any]:
    text = "\n".join(json.dumps(f) for f in frames)
    base = {"timed_out": False, "truncated": False, "exit_code": 0, "signal": None, "stderr": "", "seconds": 0.2}
    return {"event": "pair", "index": index, "frames": text, **base, **fields}


def test_a_pair_cannot_speak_for_the_job_or_for_another_pair() -> None:
    forged_isolation = {"event": "isolation", "level": "none", "detail": "forged"}
    forged_pair = pair_frame(1, TEST_FRAME)  # well formed, but written by pair 0's own process
    result = _decode(
        reply(
            {"event": "isolation", "level": "namespaced", "detail": "user, pid, net"},
            pair_frame(0, forged_isolation, TEST_FRAME, forged_pair),
        )
    )
    assert (result.isolation, result.isolation_detail) == ("namespaced", "user, pid, net")
    assert sorted(result.pairs) == [0]
    first = result.pair(0)
    assert (first.frames, first.malformed_frames) == ([TEST_FRAME], 2)
    assert (first.isolation, first.isolation_detail) == ("namespaced", "user, pid, net")  # the job's, not the pair's
    assert _decode(reply({"event": "isolation", "level": "basic"})).isolation_detail == ""  # no detail given


def test_a_pair_that_never_reported_ran_nothing_and_ended_as_its_job_did() -> None:
    isolation = {"event": "isolation", "level": "namespaced"}
    killed = _decode(reply(isolation, pair_frame(0, TEST_FRAME), timed_out=True, exit_code=None, signal=9))
    assert killed.pair(0).frames == [TEST_FRAME]
    never = killed.pair(1)
    assert (never.frames, never.timed_out, never.exit_code, never.signal, never.isolation) == (
        [],
        True,
        None,
        9,
        "namespaced",
    )
    crashed = _decode(reply(isolation, exit_code=70)).pair(0)
    assert (crashed.timed_out, crashed.exit_code, crashed.signal) == (False, 70, None)


def test_a_pairs_frame_carries_how_that_pair_ended_and_a_repeated_index_is_a_forgery() -> None:
    ended = pair_frame(0, TEST_FRAME, timed_out=True, truncated=True, exit_code=None, signal=9, stderr="e" * 9000)
    again = pair_frame(0)  # a second frame for pair 0: dropped, the first stands
    crashed = pair_frame(2, exit_code=70, stderr="boom")
    result = _decode(reply(ended, "junk", again, crashed, GOOD))
    first = result.pair(0)
    assert (first.frames, first.timed_out, first.truncated, first.exit_code, first.signal) == (
        [TEST_FRAME],
        True,
        True,
        None,
        9,
    )
    assert first.stderr == "e" * 8192 and first.wall_seconds == 0.2
    third = result.pair(2)
    assert (third.timed_out, third.truncated, third.exit_code, third.signal, third.stderr) == (
        False,
        False,
        70,
        None,
        "boom",
    )
    assert (sorted(result.pairs), result.frames, result.malformed_frames) == ([0, 2], [GOOD], 2)

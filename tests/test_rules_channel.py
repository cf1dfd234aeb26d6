"""The sandbox's result channel as the parent decodes it: what a child (or an
attempt writing to the child's result pipe) sends is kept only when every field
the parent reads has its type; isolation is taken from the first report only;
how the job ended is carried over as sent. And the values inside frames, as
`codec` writes them in the child and reads them in the parent: every kind it
supports comes back with its exact type and value, the rest is named as
unsupported, and whatever else a frame holds is refused with ValueError."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from fembench_agents.scoring import codec
from fembench_agents.scoring.codec import Unsupported
from fembench_agents.scoring.sandbox import IsolationReport, Sandbox, SandboxPolicy, WeakIsolationRefused
from fembench_agents.scoring.sandbox.callbacks import CALLBACK, decode_arguments, encode_arguments
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
    ended = pair_frame(
        0, TEST_FRAME, timed_out=True, truncated=True, exit_code=None, signal=9, stderr="s" * 808 + "e" * 8192
    )
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


# ----- values in frames: codec --------------------------------------------------------------------------------------


def crossed(value: Any) -> Any:
    """The value as the parent gets it: encoded in the child, sent as strict JSON, decoded."""
    return codec.loads(json.loads(json.dumps(codec.dumps(value))))


def test_plain_values_come_back_with_their_exact_types() -> None:
    sent = [None, True, False, 0, 1, -7, 2**63 - 1, -(2**63) + 1, 2**63, -(2**63), 10**30, 1.5, -0.0, "s", ""]
    back = crossed(sent)
    assert back == sent
    assert [type(v) for v in back] == [type(v) for v in sent]
    assert math.copysign(1.0, back[12]) == -1.0
    # ints beyond int64 travel as text, so nothing reading the JSON as int64 can round them
    assert codec.to_data([2**63 - 1, 2**63, -(2**63) + 1, -(2**63)]) == [
        2**63 - 1, {"__bigint__": "9223372036854775808"}, -(2**63) + 1, {"__bigint__": "-9223372036854775808"}
    ]  # fmt: skip


def test_non_finite_floats_and_complex_numbers_cross_strict_json() -> None:
    sent = [math.inf, -math.inf, complex(1.5, -2.0), complex(math.inf, 0.5), complex(0.0, -math.inf)]
    text = codec.dumps(sent)
    assert "Infinity" not in text and "NaN" not in text
    assert crossed(sent) == sent
    assert codec.to_data([math.inf, -math.inf, math.nan]) == [
        {"__float__": "inf"}, {"__float__": "-inf"}, {"__float__": "nan"}
    ]  # fmt: skip
    nan, nan_part = crossed([math.nan, complex(math.nan, 2.0)])
    assert type(nan) is float and math.isnan(nan)
    assert math.isnan(nan_part.real) and nan_part.imag == 2.0


def test_containers_come_back_as_the_same_containers() -> None:
    edges = {frozenset({0, 1}): "left", frozenset({1, 2}): "right"}
    sent = ([1, (2.0, "a")], {"k": [1], 2: (3,), (4, 5): None}, {1, 2}, frozenset({3}), (), set(edges), edges)
    listed, keyed, a_set, frozen, empty, edge_set, keyed_by_edges = crossed(sent)
    assert (type(listed), type(listed[1]), listed) == (list, tuple, [1, (2.0, "a")])
    assert type(keyed) is dict and keyed == {"k": [1], 2: (3,), (4, 5): None}
    assert list(keyed) == ["k", 2, (4, 5)]  # in their order
    assert (type(a_set), a_set) == (set, {1, 2})
    assert (type(frozen), frozen) == (frozenset, frozenset({3}))
    assert (type(empty), empty) == (tuple, ())
    assert (type(edge_set), edge_set) == (set, set(edges))  # frozensets inside a set, and as keys
    assert [type(e) for e in edge_set] == [frozenset, frozenset]
    assert keyed_by_edges == edges and [type(e) for e in keyed_by_edges] == [frozenset, frozenset]


@pytest.mark.parametrize("dtype", sorted(codec._DTYPES))
def test_arrays_come_back_with_their_dtype_shape_and_values(dtype: str) -> None:
    values = np.arange(6).reshape(2, 3).astype(dtype)
    back = crossed(values.T)  # not contiguous: the values are read in the array's own order
    assert (type(back), back.dtype.name, back.shape) == (np.ndarray, dtype, (3, 2))
    assert back.tolist() == values.T.tolist()
    assert back.flags.writeable  # a copy of the data, not a view of the decoded bytes


def test_arrays_of_no_element_or_no_dimension_and_numpy_scalars() -> None:
    empty, zero_d, f32, i64, flag, c128 = crossed(
        [np.zeros((0, 3)), np.array(2.5), np.float32(1.25), np.int64(-3), np.bool_(True), np.complex128(1 - 2j)]
    )
    assert (empty.shape, empty.dtype.name) == ((0, 3), "float64")
    assert (type(zero_d), zero_d.shape, float(zero_d)) == (np.ndarray, (), 2.5)
    assert [(type(v), v) for v in (f32, i64, flag, c128)] == [
        (np.float32, 1.25), (np.int64, -3), (np.bool_, True), (np.complex128, 1 - 2j)
    ]  # fmt: skip


class Tagged(np.ndarray):
    def tobytes(self, order: Any = "C") -> bytes:  # never called: the base array is what is sent
        raise RuntimeError("not this")


class Listish(list[int]):
    pass


class Mapping(dict[str, int]):
    pass


def test_an_array_subclass_is_sent_as_its_base_array_and_other_subclasses_are_unsupported() -> None:
    tagged = np.array([1.0, 2.0]).view(Tagged)
    back = crossed(tagged)
    assert (type(back), back.tolist()) == (np.ndarray, [1.0, 2.0])
    here = __name__
    # len, not print: ray.init replaces builtins.print in the process that calls it (tests/test_ray.py)
    assert crossed([Listish([1]), Mapping(a=1), (x for x in ()), len]) == [
        Unsupported(f"{here}.Listish"), Unsupported(f"{here}.Mapping"), Unsupported("builtins.generator"),
        Unsupported("builtins.builtin_function_or_method"),
    ]  # fmt: skip
    assert crossed([np.array([None], dtype=object), np.array(["a"])]) == [
        Unsupported("ndarray of dtype object"), Unsupported("ndarray of dtype str32")
    ]  # fmt: skip
    assert crossed(np.datetime64("2026-01-01")) == Unsupported("numpy scalar of dtype datetime64[D]")
    long_name = type("L" * 300, (), {})()
    assert codec.to_data(long_name) == {"__unsupported__": f"{here}.{'L' * 300}"[:200]}  # what the child writes


def test_unsupported_values_compare_by_what_they_name() -> None:
    a = Unsupported("x.Y")
    assert a == Unsupported("x.Y") and hash(a) == hash(Unsupported("x.Y"))
    assert a != Unsupported("x.Z") and a != "x.Y"
    assert repr(a) == "<unsupported x.Y>"


def nested(levels: int, inner: Any) -> Any:
    for _ in range(levels):
        inner = [inner]
    return inner


def innermost(value: Any) -> Any:
    while type(value) is list:
        value = value[0]
    return value


def test_nesting_is_sent_to_64_levels_and_read_to_66() -> None:
    assert innermost(crossed(nested(64, 1))) == 1
    assert innermost(crossed(nested(65, 1))) == Unsupported("too deeply nested")
    assert innermost(codec.from_data(nested(66, 1))) == 1  # what a child may send: deeper than it writes
    with pytest.raises(ValueError, match="^encoded value nested too deeply$"):
        codec.from_data(nested(67, 1))
    # a tag's elements are one level below it, as to_data writes them
    assert innermost(codec.from_data({"__tuple__": [nested(65, 1)]})[0]) == 1
    with pytest.raises(ValueError, match="^encoded value nested too deeply$"):
        codec.from_data({"__tuple__": [nested(66, 1)]})


def in_tuples(levels: int, inner: Any) -> Any:
    for _ in range(levels):
        inner = (inner,)
    return inner


def test_every_container_counts_one_level_when_sent() -> None:
    """The 64 levels hold whatever the containers are: the innermost value of 64 is sent, of 65 is not."""
    for levels, sent in ((64, 1), (65, Unsupported("too deeply nested"))):
        inner = in_tuples(levels - 1, 1)  # a tuple of levels - 1 inside the container below
        assert crossed((inner,)) == (in_tuples(levels - 1, sent),)
        assert crossed({"k": inner}) == {"k": in_tuples(levels - 1, sent)}
        assert crossed({inner: "v"}) == {in_tuples(levels - 1, sent): "v"}
        assert crossed({inner}) == {in_tuples(levels - 1, sent)}
        assert crossed(frozenset({inner})) == frozenset({in_tuples(levels - 1, sent)})
    # a numpy scalar is a value, not a level: at the 64th level it is sent
    assert innermost(crossed(nested(64, np.float32(0.5)))) == np.float32(0.5)
    assert type(innermost(crossed(nested(64, np.float32(0.5))))) is np.float32


def test_every_tag_counts_one_level_when_read() -> None:
    """What a frame may hold: 66 levels below the top, whatever holds them."""
    scalar = codec.to_data(np.float64(2.0))
    for levels, fits in ((65, True), (66, False)):
        for data in (
            {"__tuple__": [nested(levels, 1)]},
            {"__set__": [nested(levels, 1)]},
            {"__frozenset__": [nested(levels, 1)]},
            {"__dict__": [["k", nested(levels, 1)]]},
            {"__dict__": [[nested(levels, 1), "v"]]},
            nested(levels, scalar),
        ):
            if fits:
                codec.from_data(data)
            else:
                with pytest.raises(ValueError, match="^encoded value nested too deeply$"):
                    codec.from_data(data)


def test_keys_that_decode_unhashable_become_hashable() -> None:
    keys = {"__dict__": [[[1, [2, 3]], "a"], [{"__ndarray__": codec.to_data(np.ones(2))["__ndarray__"]}, "b"]]}
    assert codec.from_data(keys) == {(1, (2, 3)): "a", Unsupported("ndarray as key"): "b"}
    assert codec.from_data({"__set__": [[1, 2], 3]}) == {(1, 2), 3}
    assert codec.from_data({"__frozenset__": [[1, [2]], 3]}) == frozenset({(1, (2,)), 3})


ARRAY = codec.to_data(np.arange(3.0))["__ndarray__"]


def body_of(tag: str) -> str:
    return f"malformed encoded value: a {tag!r} body that to_data does not write"


SHAPELESS = "malformed encoded value: expected a single-key tagged object"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, SHAPELESS),
        ({"__float__": "nan", "x": 1}, SHAPELESS),
        ((1, 2), SHAPELESS),
        ({"__pickle__": "gASV"}, "malformed encoded value: unknown tag '__pickle__'"),
        ({"__" + "t" * 100: 1}, "malformed encoded value: unknown tag '__" + "t" * 38 + "'"),
        ({"__ndarray__": {**ARRAY, "dtype": "object"}}, "malformed ndarray: unknown dtype"),
        ({"__ndarray__": [1.0]}, "malformed ndarray: unknown dtype"),
        ({"__ndarray__": {**ARRAY, "shape": [4]}}, "malformed ndarray: size does not match shape"),
        ({"__ndarray__": {**ARRAY, "shape": [-1, -3]}}, "malformed ndarray: a negative dimension"),
        ({"__ndarray__": {"dtype": "float64", "data": ARRAY["data"]}}, body_of("__ndarray__")),
        ({"__ndarray__": {**ARRAY, "data": "not base64!"}}, "Only base64 data is allowed"),
        ({"__npscalar__": {"__ndarray__": ARRAY}}, "malformed numpy scalar"),
        ({"__npscalar__": 1.0}, "malformed numpy scalar"),
        ({"__float__": "NaN"}, body_of("__float__")),
        ({"__float__": ["nan"]}, body_of("__float__")),
        ({"__bigint__": "12x"}, "invalid literal for int() with base 10: '12x'"),
        ({"__complex__": [1.0]}, body_of("__complex__")),
        ({"__complex__": [[1.0], 2.0]}, body_of("__complex__")),
        ({"__tuple__": 3}, body_of("__tuple__")),
        ({"__dict__": [[1]]}, body_of("__dict__")),
        ({"__dict__": [[{"__set__": []}, 1]]}, body_of("__dict__")),
        ({"__set__": [{"__dict__": []}]}, body_of("__set__")),
        ({"__set__": [{"__set__": []}]}, body_of("__set__")),
        ({"__frozenset__": [{"__set__": []}]}, body_of("__frozenset__")),
        ({"__frozenset__": 3}, body_of("__frozenset__")),
    ],
)
def test_anything_else_in_a_frame_is_refused_with_what_is_wrong(data: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        codec.from_data(data)
    assert str(raised.value) == message


def test_an_unsupported_marker_is_read_as_what_it_names_cut_to_200_characters() -> None:
    assert codec.from_data({"__unsupported__": "m" * 500}) == Unsupported("m" * 200)
    assert codec.from_data({"__unsupported__": 7}) == Unsupported("7")


# ----- what a test passes to fcn: plain data and functions (sandbox/callbacks.py) ----------------------------------


def passed(value: Any) -> tuple[Any, list[Any]]:
    """What the implementation's process gets for an argument (each function a stub naming its index), and
    the functions the test's process keeps."""
    functions: list[Any] = []
    data = json.loads(json.dumps(encode_arguments(value, functions), allow_nan=False))
    return decode_arguments(data, lambda k: ("stub", k)), functions


def test_functions_anywhere_in_lists_tuples_and_dict_values_cross_as_their_index() -> None:
    def f(x: float) -> float:
        return x

    def h() -> int:
        return 0

    got, functions = passed(([f, 1.5], {"k": (np.cos, "s"), 2: [h]}, np.arange(2.0), {f: 1}, [int]))
    listed, keyed, array, function_key, a_class = got
    assert listed == [("stub", 0), 1.5]
    assert keyed == {"k": (("stub", 1), "s"), 2: [("stub", 2)]}
    assert (type(array), array.tolist()) == (np.ndarray, [0.0, 1.0])
    assert function_key == {Unsupported("builtins.function"): 1}  # a key is data: a function is not sent there
    assert a_class == [Unsupported("builtins.type")]  # a class is not a function
    assert functions == [f, np.cos, h]


def test_arguments_are_sent_to_64_levels_whatever_holds_them() -> None:
    def f() -> int:
        return 0

    for levels, sent in ((64, ("stub", 0)), (65, Unsupported("too deeply nested"))):
        for wrap, unwrap in (
            (lambda v: [v], lambda v: v[0]),
            (lambda v: (v,), lambda v: v[0]),
            (lambda v: {"k": v}, lambda v: next(iter(v.values()))),  # at 65 the innermost key is too deep too
        ):
            value: Any = f
            for _ in range(levels):
                value = wrap(value)
            got, functions = passed(value)
            for _ in range(levels):
                got = unwrap(got)
            assert (got, len(functions)) == (sent, 1 if levels == 64 else 0), (levels, wrap)
        inner = in_tuples(levels - 1, 1)  # as a key: the key's own levels count below the dict's
        assert passed({inner: "v"})[0] == {in_tuples(levels - 1, 1 if levels == 64 else sent): "v"}
        assert passed(nested(levels, 1))[0] == nested(levels, 1 if levels == 64 else sent)
        # what is neither a function nor a list, tuple or dict counts its levels from where it is
        assert passed(nested(levels - 1, {1}))[0] == nested(levels - 1, {1 if levels == 64 else sent})


def test_arguments_are_read_to_66_levels_and_a_malformed_callback_is_refused() -> None:
    def stub(k: int) -> tuple[str, int]:
        return ("stub", k)

    def tuple_tags(levels: int) -> Any:
        data: Any = 1
        for _ in range(levels):
            data = {"__tuple__": [data]}
        return data

    callback = encode_arguments(lambda: 0, [])
    for levels, fits in ((66, True), (67, False)):
        for data in (
            nested(levels, callback),
            {"__tuple__": [nested(levels - 1, callback)]},
            {"__dict__": [["k", nested(levels - 1, callback)]]},
            {"__dict__": [[tuple_tags(levels - 1), "v"]]},  # a key's levels count below its dict too
            nested(levels - 1, {"__set__": [1]}),  # as do those of what the codec reads
            nested(levels, 1),
        ):
            if fits:
                decode_arguments(data, stub)
            else:
                with pytest.raises(ValueError) as raised:
                    decode_arguments(data, stub)
                assert str(raised.value) == "encoded value nested too deeply"
    assert innermost(decode_arguments(nested(66, callback), stub)) == ("stub", 0)
    for body in (-1, True, 1.0, "0"):
        with pytest.raises(ValueError) as raised:
            decode_arguments({CALLBACK: body}, stub)
        assert str(raised.value) == "malformed encoded value: unknown tag '__callback__'"


class _CrashingWorkers:
    """An executor whose jobs die before confining themselves: the worker's reply, and nothing on the channel."""

    size = 1

    def __init__(self, stderr: str) -> None:
        self.stderr = stderr

    def execute(self, request: object) -> dict[str, Any]:
        return reply(exit_code=70, stderr=self.stderr)

    def close(self) -> None:
        pass


def test_a_sandbox_whose_probe_job_dies_reports_no_isolation_with_the_last_line_it_wrote() -> None:
    stderr = "Traceback (most recent call last):\n  ...\nsandbox child error: OSError: unshare failed\n\n"
    report = Sandbox(executor=_CrashingWorkers(stderr)).isolation()
    assert report == IsolationReport(level="none", detail="sandbox child error: OSError: unshare failed")
    accepted = Sandbox(executor=_CrashingWorkers(""), allow_weak_isolation=True).isolation()
    assert accepted == IsolationReport(level="none", detail="the probe job failed", accepted_weak=True)
    with pytest.raises(WeakIsolationRefused, match=r"only 'none' isolation \(sandbox child error: OSError: unshare"):
        Sandbox(executor=_CrashingWorkers(stderr)).require_isolation()


class _ConfinedOnceWorkers:
    """An executor whose probe job is confined and whose next job is not (its confinement failed this time)."""

    size = 1

    def __init__(self) -> None:
        self.jobs = 0

    def execute(self, request: object) -> dict[str, Any]:
        self.jobs += 1
        if self.jobs == 1:
            return reply({"event": "isolation", "level": "namespaced", "detail": "user namespace"}, exit_code=0)
        refused = {"event": "isolation", "level": "none", "detail": "unshare(CLONE_NEWNET): Operation not permitted"}
        return reply(refused, exit_code=3, stderr="the job was not run\n")

    def close(self) -> None:
        pass


def test_a_job_whose_confinement_fails_this_time_is_refused_with_the_childs_reason() -> None:
    sandbox = Sandbox(executor=_ConfinedOnceWorkers())
    with pytest.raises(WeakIsolationRefused) as refused:
        sandbox.run({"kind": "probe"}, SandboxPolicy(wall_seconds=5.0))
    assert refused.value.report == IsolationReport(
        level="none", detail="unshare(CLONE_NEWNET): Operation not permitted"
    )
    assert str(refused.value).startswith(
        "refusing to run generated code: this machine gives it only 'none' isolation "
        "(unshare(CLONE_NEWNET): Operation not permitted), so it would run with "
    )

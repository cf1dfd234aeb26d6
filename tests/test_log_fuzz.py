"""Damaged run logs through the real command line (issue #43, item 5): from a
real run recorded offline, seeded variants of its log (truncated, reordered,
duplicated and garbage lines, bytes that are not UTF-8, empty lines, other
schema versions, foreign JSON, a record of the wrong type) go to `report`,
`view`, `replay` and a resume (`run` again into the same --out). None answers
with a traceback; each exits 0 or 2, and 2 names the file and the line; with
--skip-bad-lines every episode whose record is intact is still there."""

from __future__ import annotations

import json
import random
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_in_process import Called, cli
from conftest import CORRECT_SCALE, eigen_source, scale_source, write_module
from viewer_runs import read_js_call

from fembench_agents.messages import Message
from fembench_agents.models import register_script, unregister_script
from fembench_agents.runs.grid import run_dir_name
from fembench_agents.runs.log import LOG_NAME, EpisodeRecord, read_log

SCALE = "scale_vector_CC0_H0_T0"
MODE = "mode_plain_CC1_H0_T0"
WRONG_SCALE = CORRECT_SCALE.replace("return factor * np.asarray(x, dtype=float)", "return factor + np.asarray(x)")
CORRECT_MODE = (
    "import numpy as np\n\ndef smallest_mode(K):\n    w, v = np.linalg.eigh(K)\n    return float(w[0]), v[:, 0]\n"
)
SEED = 43  # the number: every variant is the same on every run of the suite
EXIT_BAD_INPUT = 2


def reply(messages: list[Message]) -> str:
    """Scale: wrong until shown feedback (a loop of two attempts); mode: right at once."""
    prompt = messages[-1].content
    if "smallest_mode" in prompt:
        return f"```python\n{CORRECT_MODE}```\n"
    return f"```python\n{CORRECT_SCALE if 'returned wrong results' in prompt else WRONG_SCALE}```\n"


@dataclass(frozen=True)
class Recorded:
    run: Path
    tasks: Path
    script: str
    cache: Path

    def run_args(self, out: Path) -> list[str | Path]:
        """The command that recorded the run: given again, it resumes `out`."""
        return [
            "run", "--model", f"scripted/{self.script}", "--agent", "feedback-loop:3", "--tasks", f"{SCALE},{MODE}",
            "--tasks-path", self.tasks, "--repeats", "2", "--out", out, "--cache", self.cache, "--concurrency", "1",
        ]  # fmt: skip


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """Four episodes (two tasks x two repeats) of a feedback loop, recorded by `run` with a scripted model."""
    base = tmp_path_factory.mktemp("fuzz")
    tasks = base / "tasks"
    write_module(tasks, f"{SCALE}.py", scale_source())
    write_module(tasks, f"{MODE}.py", eigen_source(MODE, None))
    name = f"fuzz{uuid.uuid4().hex[:8]}"
    register_script(name, reply)
    rec = Recorded(base / "run", tasks, name, base / "cache")
    done = cli(*rec.run_args(rec.run))
    assert done.code == 0, done.text
    yield rec
    unregister_script(name)


@dataclass(frozen=True)
class Variant:
    name: str
    data: bytes
    bad_line: int | None  # the first line the reader must name; None: a log it reads whole
    certain: bool = True  # False: lines moved in ways the writer's order may allow (0 or 2, both right)
    ordered: bool = True  # False: lines moved, so an intact attempt may stand out of order


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")[:-1]


def _join(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def variants(log: bytes, seed: int = SEED) -> list[Variant]:
    """Every kind of damage, each at a seeded place in the log."""
    rnd = random.Random(seed)
    lines = _lines(log)
    n = len(lines)
    mid = rnd.randrange(1, n - 1)  # 0-based index of a line inside the log
    first = json.loads(lines[0])
    episode_at = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "episode")

    def at(i: int, *new: bytes) -> list[bytes]:
        return [*lines[:i], *new, *lines[i + 1 :]]

    def insert(i: int, *new: bytes) -> list[bytes]:
        return [*lines[:i], *new, *lines[i:]]

    garbage = bytes(rnd.choice(b'{}[]",:abc019 \t\\') for _ in range(40))
    shuffled = lines[:]
    rnd.shuffle(shuffled)
    swap = sorted(rnd.sample(range(n), 2))
    swapped = at(swap[0], lines[swap[1]])
    swapped[swap[1]] = lines[swap[0]]
    wrong_type = json.loads(lines[episode_at])
    wrong_type["type"] = "attempt"  # an episode record filed as an attempt
    manifest = json.dumps({"schema_version": 1, "run_id": "r", "config": {}, "task_hashes": {}, "versions": {}})
    out = [
        Variant("clean", log, None),
        Variant("torn_tail", log[: len(log) - len(lines[-1]) // 2 - 1], None),  # a killed writer: no newline
        Variant("empty_lines", _join(insert(mid, b"", b"   ", b"\t")), None),
        Variant("crlf", _join([line + b"\r" for line in lines]), None),
        Variant("truncated_last_line", _join(at(n - 1, lines[-1][: len(lines[-1]) // 2])), n),
        Variant("truncated_middle_line", _join(at(mid, lines[mid][: rnd.randrange(1, len(lines[mid]) - 1)])), mid + 1),
        Variant("duplicated_line", _join(insert(mid + 1, lines[mid])), mid + 2),
        Variant("duplicated_episode", _join([*lines, lines[episode_at]]), n + 1),
        Variant("garbage_line", _join(insert(mid, garbage)), mid + 1),
        Variant("garbage_in_a_line", _join(at(mid, lines[mid][:10] + garbage + lines[mid][10:])), mid + 1),
        Variant("not_utf8", _join(at(mid, lines[mid][:30] + b"\xff\xfe\xc3" + lines[mid][30:])), mid + 1),
        Variant("binary_zeros", _join(insert(mid, b"\x00" * 16)), mid + 1),
        Variant("schema_version_2", _join(at(mid, lines[mid].replace(b'"schema_version":1', b'"schema_version":2', 1))), mid + 1),
        Variant("schema_version_0_first", _join(at(0, json.dumps({**first, "schema_version": 0}).encode())), 1),
        Variant("foreign_object", _join(insert(mid, b'{"hello": "world"}')), mid + 1),
        Variant("foreign_array", _join(insert(mid, b"[1, 2, 3]")), mid + 1),
        Variant("foreign_scalars", _join([*lines, b"42", b'"text"', b"null", b"true", b"7" * 5000]), n + 1),
        Variant("nested_too_deep", _join(insert(mid, b"[" * 100_000)), mid + 1),
        Variant("a_manifest_as_a_line", _join(insert(mid, manifest.encode())), mid + 1),
        Variant("wrong_record_type", _join(at(episode_at, json.dumps(wrong_type).encode())), episode_at + 1),
        Variant("reversed", _join(lines[::-1]), 2, ordered=False),  # an episode's end, then its attempts
        Variant("shuffled", _join(shuffled), None, certain=False, ordered=False),
        Variant("two_lines_swapped", _join(swapped), None, certain=False, ordered=False),
    ]  # fmt: skip
    return out


def damaged_copy(recorded: Recorded, variant: Variant, root: Path) -> Path:
    target = root / variant.name
    shutil.copytree(recorded.run, target, ignore=shutil.ignore_patterns("report", "replay"))
    (target / LOG_NAME).write_bytes(variant.data)
    return target


def intact_episodes(original: bytes, damaged: bytes) -> set[str]:
    """Episodes whose record stands whole, on a line of its own, in the damaged log."""
    kept = {line.rstrip(b"\r") for line in damaged.split(b"\n")[:-1]}
    return {json.loads(line)["episode"] for line in _lines(original) if b'"type":"episode"' in line and line in kept}


def no_traceback(called: Called) -> None:
    assert "Traceback" not in called.text and 'File "' not in called.text, called.text


def assert_answered(called: Called, log: Path, variant: Variant) -> None:
    """No traceback; 0 for a log read whole; 2 naming the file, the first bad
    line (when known) and what the user can do otherwise."""
    no_traceback(called)
    if variant.bad_line is None and (variant.certain or called.code == 0):
        assert called.code == 0, called.text
        return
    assert called.code == EXIT_BAD_INPUT, called.text
    (error,) = [line for line in called.err.splitlines() if line.startswith("error: ")]
    where = f"{log}:{variant.bad_line}: " if variant.bad_line else f"{log}:"
    assert error.startswith(f"error: {where}"), error
    assert any(line.startswith("hint: ") for line in called.err.splitlines()), called.err


def viewed_episodes(site: Path) -> set[str]:
    (index,) = read_js_call(site / "data" / "index.js", "fembenchIndex")
    fields = index["fields"]
    rows = [dict(zip(fields, row, strict=True)) for row in index["episodes"]]
    return {f"{r['model']}|{r['agent']}|{r['track']}|{r['task']}|{r['repeat']}" for r in rows}


def shown_episodes(called: Called) -> int:
    return sum(line.startswith("episode: ") for line in called.out.splitlines())


def whole_episodes(original: bytes, damaged: bytes) -> set[str]:
    """Episodes every line of which stands whole in the damaged log."""
    kept = {line.rstrip(b"\r") for line in damaged.split(b"\n")[:-1]}
    lines = [(json.loads(line)["episode"], line) for line in _lines(original)]
    return {ep for ep, _ in lines} - {ep for ep, line in lines if line not in kept}


@pytest.fixture(scope="module")
def cases(recorded: Recorded) -> dict[str, Variant]:
    return {v.name: v for v in variants((recorded.run / LOG_NAME).read_bytes())}


NAMES = [v.name for v in variants(b"".join(b'{"type":"episode","n":%d}\n' % i for i in range(12)))]


def test_the_run_the_variants_start_from_reads_whole(recorded: Recorded) -> None:
    records = read_log(recorded.run)
    episodes = [r for r in records if isinstance(r, EpisodeRecord)]
    assert len(episodes) == 4 and all(e.status == "done" and e.passed for e in episodes)
    assert sorted(e.attempts for e in episodes) == [1, 1, 2, 2]  # scale: wrong, then right after feedback


@pytest.mark.parametrize("name", NAMES)
def test_report_view_and_replay_answer_a_damaged_log_in_one_line(
    name: str, recorded: Recorded, cases: dict[str, Variant], tmp_path: Path
) -> None:
    variant = cases[name]
    run = damaged_copy(recorded, variant, tmp_path)
    log = run / LOG_NAME
    original = (recorded.run / LOG_NAME).read_bytes()
    everything = intact_episodes(original, original)
    intact = intact_episodes(original, variant.data)

    assert_answered(cli("report", run), log, variant)
    assert_answered(cli("view", run, "--out", tmp_path / "site"), log, variant)
    assert_answered(cli("replay", run, "--show", SCALE), log, variant)

    report = cli("report", run, "--skip-bad-lines")
    no_traceback(report)
    assert report.code == 0, report.text
    skipped = [line for line in report.err.splitlines() if line.startswith("skipped ")]
    if variant.bad_line is not None:
        (said,) = skipped
        assert said.startswith("skipped ") and f" (first: {log}:{variant.bad_line}: " in said, said
    elif variant.certain:
        assert skipped == []
    torn = [line for line in report.err.splitlines() if line.startswith("note: ")]
    if name == "torn_tail":
        assert torn == [
            f"note: {log}:{len(_lines(variant.data)) + 1}: incomplete last line (a writer stopped mid-record) "
            "left out; a resume redoes its episode"
        ]
    else:
        assert torn == []
    view = cli("view", run, "--out", tmp_path / "skipped", "--skip-bad-lines")
    no_traceback(view)
    assert view.code == 0, view.text
    seen = viewed_episodes(tmp_path / "skipped")
    assert intact <= seen <= everything  # no lost episode, and none made up
    assert f"{len(seen)}/" in report.out or not seen  # the report's summary counts the same episodes

    show = cli("replay", run, "--show", SCALE, "--skip-bad-lines")
    no_traceback(show)
    if variant.ordered:
        whole_scale = {e for e in whole_episodes(original, variant.data) if f"|{SCALE}|" in e}
        assert show.code == (0 if whole_scale else show.code)
        assert shown_episodes(show) >= len(whole_scale)
    assert show.code in (0, EXIT_BAD_INPUT)


@pytest.mark.parametrize("name", NAMES)
def test_a_resume_refuses_a_damaged_log_and_appends_nothing(
    name: str, recorded: Recorded, cases: dict[str, Variant], tmp_path: Path
) -> None:
    variant = cases[name]
    run = damaged_copy(recorded, variant, tmp_path)
    log = run / LOG_NAME
    resumed = cli(*recorded.run_args(run))
    assert_answered(resumed, log, variant)
    after = log.read_bytes()
    if resumed.code == EXIT_BAD_INPUT:
        assert after == variant.data  # not even a torn tail cut
        assert "resumes only from a log it can read entirely" in resumed.err
        return
    # read whole: resumed; what was finished stays as it was and is not done again
    original = (recorded.run / LOG_NAME).read_bytes()
    whole = variant.data[: variant.data.rfind(b"\n") + 1]  # a resume cuts a torn last line, nothing else
    assert after.startswith(whole)
    everything = intact_episodes(original, original)
    finished = [r.episode for r in read_log(run) if isinstance(r, EpisodeRecord)]  # the resumed log reads whole
    assert sorted(finished) == sorted(everything)  # each episode finished once
    appended = [json.loads(line) for line in _lines(after[len(whole) :])]
    redone = {r["episode"] for r in appended if r["type"] == "episode"}
    assert redone == everything - intact_episodes(original, variant.data)


def test_compare_refuses_to_resume_a_grid_holding_a_damaged_run(
    recorded: Recorded, cases: dict[str, Variant], tmp_path: Path
) -> None:
    variant = cases["garbage_line"]
    grid = tmp_path / "grid"
    grid.mkdir()
    run = damaged_copy(recorded, variant, tmp_path)
    run.rename(grid / run_dir_name(f"scripted/{recorded.script}", "feedback-loop:3"))
    log = grid / run_dir_name(f"scripted/{recorded.script}", "feedback-loop:3") / LOG_NAME
    again = cli(
        "compare", "--models", f"scripted/{recorded.script}", "--agents", "feedback-loop:3", "--tasks", f"{SCALE},{MODE}",
        "--tasks-path", recorded.tasks, "--repeats", "2", "--out", grid, "--cache", recorded.cache,
    )  # fmt: skip
    assert_answered(again, log, variant)
    assert log.read_bytes() == variant.data

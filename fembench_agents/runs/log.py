"""The run log: a versioned, append-only JSONL file of typed records, flushed
as written, plus a manifest. A run can be resumed (finished episodes are
skipped), re-scored and replayed from it."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
)

from fembench_agents.contracts import Feedback, Track
from fembench_agents.errors import BadInput, first_error, read_text_file
from fembench_agents.kinds import outcome_types
from fembench_agents.messages import Message, ModelRequest, ModelResponse
from fembench_agents.scoring.outcomes import OutcomeBase
from fembench_agents.scoring.sandbox.isolation import IsolationReport
from fembench_agents.vocabulary import EpisodeStatus, FailureReason, Stage

LOG_SCHEMA_VERSION = 1
LOG_NAME = "log.jsonl"
MANIFEST_NAME = "manifest.json"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def episode_key(model: str, agent: str, track: str, task_id: str, repeat: int) -> str:
    return f"{model}|{agent}|{track}|{task_id}|{repeat}"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)
    schema_version: int = LOG_SCHEMA_VERSION
    timestamp: str = Field(default_factory=now)
    episode: str  # episode_key(...)
    task_id: str


class ModelCallRecord(_Record):
    type: Literal["model_call"] = "model_call"
    attempt_index: int
    request: ModelRequest
    request_hash: str
    response: ModelResponse | None = None
    error: str | None = None


class AttemptRecord(_Record):
    type: Literal["attempt"] = "attempt"
    track: Track
    agent: str
    model: str
    repeat: int
    attempt_index: int
    messages: tuple[Message, ...]  # the rendered prompt, exactly as sent
    reply: str
    request_hash: str | None = None
    response: ModelResponse | None = None
    model_error: str | None = None
    outcome: SerializeAsAny[OutcomeBase] | None = None  # the model its kind registered, by its `kind` tag
    feedback: Feedback | None = None

    @field_validator("outcome", mode="before")
    @classmethod
    def _outcome_of_its_kind(cls, value: object) -> object:
        if not isinstance(value, dict):
            return value
        types = outcome_types()
        tag = value.get("kind")
        if tag not in types:
            raise ValueError(f"outcome kind {tag!r} is not registered; known: {', '.join(types)}")
        return types[tag].model_validate(value)


class EpisodeRecord(_Record):
    """One (model, agent, track, task, repeat) finished: the unit of resume and report."""

    type: Literal["episode"] = "episode"
    track: Track
    agent: str
    model: str
    repeat: int
    status: EpisodeStatus
    passed: bool
    score: float  # 1/0 for functions, joint score for test suites
    attempts: int
    first_pass_attempt: int | None = None
    failed_stage: Stage | None = None
    reason: FailureReason | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None  # None when any call's price was unknown
    model_seconds: float = 0.0
    seconds: float = 0.0
    error: str | None = None
    model_calls: int = 0  # answered calls, one per sample
    reused_calls: int = 0  # of those, served by the response cache or a recording, not asked this time
    error_kind: str | None = None  # the kind of an error retrying cannot fix ("authentication", ...)
    # best-of-N: whether any of its samples passes the hidden verdict, which chose none of them
    # (the oracle choice, an upper bound on the scaffold's); absent for every other agent
    oracle_passed: bool | None = None
    budget_stop: str | None = None  # the episode budget's cap that ended it (calls, tokens, usd, seconds)

    @model_serializer(mode="wrap")
    def _optional_only_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """An episode without an oracle choice or a budget stop reads as before those fields existed."""
        data: dict[str, Any] = handler(self)
        for name in ("oracle_passed", "budget_stop"):
            if data.get(name) is None:
                data.pop(name, None)
        return data

    @field_validator("failed_stage", mode="before")
    @classmethod
    def _old_stage_names(cls, value: object) -> object:
        # Logs before the vocabulary was fixed wrote "model" for a failed model call.
        return "model_error" if value == "model" else value


LogRecord = ModelCallRecord | AttemptRecord | EpisodeRecord


class RunManifest(BaseModel):
    schema_version: int = LOG_SCHEMA_VERSION
    run_id: str
    created: str = Field(default_factory=now)
    config: dict[str, Any]
    task_hashes: dict[str, str]
    versions: dict[str, str]
    git_commit: str | None = None
    # The weakest isolation any session of this run scored under; None in
    # runs recorded before it was kept.
    isolation: IsolationReport | None = None
    # episodes, model_calls (per provider) and sandbox_workers at once, in the latest session
    limits: dict[str, int] | None = None
    # PDE cases: the machine calibration (its id) the fast gate used, per session that scored
    calibrations: list[str] = []
    # task modules of the suite that did not load in the latest session: name, path, reason
    skipped_tasks: list[dict[str, str]] = []


class RunLog:
    """Appends records to `<dir>/log.jsonl`, one JSON object per line, flushed
    and fsynced per record so that kill -9 loses at most the line being written."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / LOG_NAME
        self._lock = threading.Lock()
        _drop_torn_tail(self.path)
        self._fh = open(self.path, "a", encoding="utf-8")

    def append(self, record: ModelCallRecord | AttemptRecord | EpisodeRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self._lock:
            self._fh.write(line)
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            self._fh.close()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _complete_lines(data: bytes) -> bytes:
    """The log's bytes up to its last newline: each record is written with its newline in one
    write, so what follows the last newline is the torn line of a killed writer (possibly cut
    inside a character)."""
    return data[: data.rfind(b"\n") + 1]


def _drop_torn_tail(path: Path) -> None:
    """Cut a torn last line, so that the next record starts on a line of its own."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as fh:
        data = fh.read()
        fh.truncate(len(_complete_lines(data)))


RECORD_TYPES: dict[str, type[LogRecord]] = {
    "model_call": ModelCallRecord,
    "attempt": AttemptRecord,
    "episode": EpisodeRecord,
}


@dataclass(frozen=True)
class LogFault:
    """A line of a run log that is not a record this build reads, and why."""

    path: Path
    line: int
    fault: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.fault}"


class DamagedLog(BadInput):
    """A run log holding lines that are not records: the first named in the
    message, every one in `faults` (in line order)."""

    def __init__(self, faults: Sequence[LogFault], hint: str | None = None) -> None:
        more = len(faults) - 1
        more_text = f" (and {more} more bad line{'s' if more > 1 else ''})" if more else ""
        super().__init__(f"{faults[0]}{more_text}", hint)
        self.faults = tuple(faults)


@dataclass(frozen=True)
class LogReading:
    """A run log as read: its records, and the lines left out as faults."""

    records: list[LogRecord]
    faults: tuple[LogFault, ...] = ()
    torn_line: int | None = None  # the number of an incomplete last line (no newline yet), left out


class _Fault(Exception):
    """Why one line is not a record (internal to the reader)."""


def _json_kind(value: object) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(value), "number")


def _parse_line(raw: bytes) -> LogRecord:
    """One line to its record; _Fault says what the line is instead."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Fault(f"not UTF-8 text (byte {exc.start + 1} of the line: {exc.reason})") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Fault(f"not JSON ({exc.msg}, column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # a number of more digits than int() takes, nesting too deep
        raise _Fault(f"not JSON this reader takes ({exc})") from None
    known = ", ".join(RECORD_TYPES)
    if not isinstance(value, dict):
        raise _Fault(f"a JSON {_json_kind(value)}, not a log record (a JSON object of type {known})")
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in RECORD_TYPES:
        what = "no type" if "type" not in value else f"type {kind!r}"
        raise _Fault(f"a JSON object with {what}, not a log record (type {known})")
    version = value.get("schema_version", LOG_SCHEMA_VERSION)
    if version != LOG_SCHEMA_VERSION or isinstance(version, bool):
        newer = (
            " (written by a newer fembench-agents)" if isinstance(version, int) and version > LOG_SCHEMA_VERSION else ""
        )
        raise _Fault(f"schema_version {version!r}; this build reads log schema {LOG_SCHEMA_VERSION}{newer}")
    try:
        return RECORD_TYPES[kind].model_validate(value)
    except ValidationError as exc:
        raise _Fault(f"{kind} record: {first_error(exc)}") from None


class _WriteOrder:
    """What the writer's order allows. It appends each record once, stamped to
    the millisecond, so a line identical to an earlier one is a copy; it never
    resumes a finished ("done") episode, so nothing of that episode follows its
    record; within a session an episode's attempts count up from 0, and a
    resumed episode starts over at 0."""

    def __init__(self) -> None:
        self.seen: dict[bytes, int] = {}  # digest of a line -> its number
        self.ended: dict[str, int] = {}  # episode -> line of its "done" record
        self.last_attempt: dict[str, int] = {}  # episode -> its latest attempt index since its last episode record

    def admit(self, raw: bytes, n: int, record: LogRecord) -> None:
        """Take the record at line `n`, or raise _Fault where the writer could not have put it there."""
        digest = hashlib.blake2b(raw.strip(), digest_size=16).digest()
        if digest in self.seen:
            raise _Fault(f"a copy of line {self.seen[digest]} (the log never holds a record twice)")
        ep = record.episode
        if ep in self.ended:
            raise _Fault(
                f"out of order: {record.type} record of episode {ep} after its end at line {self.ended[ep]}"
                " (a finished episode is never resumed)"
            )
        last = self.last_attempt.get(ep, -1)
        if isinstance(record, AttemptRecord) and 0 < record.attempt_index <= last:
            raise _Fault(
                f"out of order: attempt {record.attempt_index} of episode {ep} after its attempt {last}"
                " (attempts count up, or start over at 0 when an episode is resumed)"
            )
        self.seen[digest] = n
        if isinstance(record, AttemptRecord):
            self.last_attempt[ep] = record.attempt_index
        elif isinstance(record, EpisodeRecord):
            self.last_attempt.pop(ep, None)
            if record.status == "done":
                self.ended[ep] = n


def _log_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise BadInput(f"{path} is a directory, not a run log") from None
    except PermissionError:
        raise BadInput(f"{path} cannot be read (permission denied)") from None


def scan_log(directory: str | os.PathLike[str]) -> LogReading:
    """Every complete record of the log in `directory`, and each complete line
    that is not one, as a fault naming its line. Empty lines are passed over;
    a torn last line (a killed writer: no newline yet) is no fault, as a resume
    cuts it."""
    path = Path(directory) / LOG_NAME
    if not path.exists():
        return LogReading([])
    order = _WriteOrder()
    records: list[LogRecord] = []
    faults: list[LogFault] = []
    # split on the newline byte only: a record's text may hold U+2028 and the like, which
    # str.splitlines would take for line ends
    data = _log_bytes(path)
    complete = _complete_lines(data)
    lines = complete.split(b"\n")[:-1]
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = _parse_line(raw)
            order.admit(raw, n, record)
        except _Fault as fault:
            faults.append(LogFault(path, n, str(fault)))
            continue
        records.append(record)
    torn = len(lines) + 1 if data[len(complete) :].strip() else None
    return LogReading(records, tuple(faults), torn)


def read_log(directory: str | os.PathLike[str]) -> list[LogRecord]:
    """Every complete record (see `scan_log`); DamagedLog when any complete
    line is not a record, naming the first."""
    reading = scan_log(directory)
    if reading.faults:
        raise DamagedLog(reading.faults)
    return reading.records


def write_manifest(directory: str | os.PathLike[str], manifest: RunManifest) -> None:
    path = Path(directory) / MANIFEST_NAME
    tmp = path.with_suffix(".tmp")
    tmp.write_text(manifest.model_dump_json(indent=1))
    os.replace(tmp, path)


def read_manifest(directory: str | os.PathLike[str]) -> RunManifest:
    path = Path(directory) / MANIFEST_NAME
    if not path.exists():
        raise FileNotFoundError(f"{directory} is not a run directory (no {MANIFEST_NAME})")
    try:
        value = json.loads(read_text_file(str(path), "the run manifest"))
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}:{exc.lineno}: not JSON ({exc.msg}, column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:
        raise BadInput(f"{path}: not JSON this reader takes ({exc})") from None
    if not isinstance(value, dict):
        raise BadInput(f"{path}: a JSON {_json_kind(value)}, not a run manifest (a JSON object)")
    version = value.get("schema_version", LOG_SCHEMA_VERSION)
    if version != LOG_SCHEMA_VERSION or isinstance(version, bool):
        raise BadInput(
            f"{path}: schema_version {version!r}; this build reads run manifests of schema {LOG_SCHEMA_VERSION}"
        )
    try:
        return RunManifest.model_validate(value)
    except ValidationError as exc:
        raise BadInput(f"{path}: not a run manifest: {first_error(exc)}") from None

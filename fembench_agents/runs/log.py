"""The run log: a versioned, append-only JSONL file of typed records, flushed
as written, plus a manifest. A run can be resumed (finished episodes are
skipped), re-scored and replayed from it."""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
)

from fembench_agents.contracts import Feedback, Track
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


LogRecord = Annotated[ModelCallRecord | AttemptRecord | EpisodeRecord, Field(discriminator="type")]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(LogRecord)


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


def read_log(directory: str | os.PathLike[str]) -> list[ModelCallRecord | AttemptRecord | EpisodeRecord]:
    """Every complete record; a torn last line (a killed writer: no newline yet) is skipped, as a
    resume cuts it; any complete line that is not a record is an error naming the line."""
    path = Path(directory) / LOG_NAME
    if not path.exists():
        return []
    records = []
    for n, line in enumerate(_complete_lines(path.read_bytes()).decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(_ADAPTER.validate_json(line))
        except ValidationError as exc:
            raise ValueError(f"{path}:{n}: not a valid log record: {exc.errors()[0]['msg']}") from None
    return records


def write_manifest(directory: str | os.PathLike[str], manifest: RunManifest) -> None:
    path = Path(directory) / MANIFEST_NAME
    tmp = path.with_suffix(".tmp")
    tmp.write_text(manifest.model_dump_json(indent=1))
    os.replace(tmp, path)


def read_manifest(directory: str | os.PathLike[str]) -> RunManifest:
    path = Path(directory) / MANIFEST_NAME
    if not path.exists():
        raise FileNotFoundError(f"{directory} is not a run directory (no {MANIFEST_NAME})")
    return RunManifest.model_validate(json.loads(path.read_text()))

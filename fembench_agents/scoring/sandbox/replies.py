"""What a sandboxed job reported, as the parent reads it: the reply of a
worker decoded into a `JobResult`. Frames come from processes that ran
untrusted code; they stay JSON and tagged data, and a frame whose fields do
not have the types the parent reads is counted as malformed, never seen."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class JobResult:
    """What a sandboxed job produced, as seen by the parent."""

    frames: list[dict[str, Any]] = field(default_factory=list)
    malformed_frames: int = 0
    timed_out: bool = False
    truncated: bool = False
    exit_code: int | None = None
    signal: int | None = None
    stderr: str = ""
    wall_seconds: float = 0.0
    isolation: str = "unknown"
    isolation_detail: str = ""
    pairs: dict[int, JobResult] = field(default_factory=dict)  # a tests job: each pair's own result

    def events(self, name: str) -> list[dict[str, Any]]:
        return [f for f in self.frames if f.get("event") == name]

    def pair(self, index: int) -> JobResult:
        """The result of pair `index` of a tests job; one that never reported
        (the job died first) ran nothing."""
        return self.pairs.get(index) or JobResult(
            timed_out=self.timed_out, exit_code=self.exit_code, signal=self.signal, isolation=self.isolation
        )


def _decode(reply: dict[str, Any]) -> JobResult:
    result = JobResult(
        timed_out=bool(reply.get("timed_out")),
        truncated=bool(reply.get("truncated")),
        exit_code=reply.get("exit_code"),
        signal=reply.get("signal"),
        stderr=str(reply.get("stderr", ""))[-8192:],
        wall_seconds=float(reply.get("wall_seconds", 0.0)),
    )
    _read_frames(result, str(reply.get("frames_text", "")), job_level=True)
    for pair in result.pairs.values():
        pair.isolation, pair.isolation_detail = result.isolation, result.isolation_detail
    return result


def _read_frames(result: JobResult, text: str, job_level: bool) -> None:
    """Frames of a job, or of one pair of a tests job (written by the pair's
    own process: isolation and pair frames there are forgeries)."""
    for line in text.splitlines():
        try:
            frame = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the decoder allows
            result.malformed_frames += 1
            continue
        if not _well_formed(frame) or (not job_level and frame["event"] in ("isolation", "pair")):
            result.malformed_frames += 1
            continue
        if frame["event"] == "isolation":
            if result.isolation == "unknown":
                result.isolation = str(frame.get("level"))
                result.isolation_detail = str(frame.get("detail", ""))
            continue
        if frame["event"] == "pair":
            if not _well_formed_pair(frame) or frame["index"] in result.pairs:
                result.malformed_frames += 1
                continue
            pair = JobResult(
                timed_out=frame["timed_out"],
                truncated=frame["truncated"],
                exit_code=frame["exit_code"],
                signal=frame["signal"],
                stderr=frame["stderr"][-8192:],
                wall_seconds=float(frame["seconds"]),
            )
            _read_frames(pair, frame["frames"], job_level=False)
            result.pairs[frame["index"]] = pair
            continue
        result.frames.append(frame)


_PAIR_FIELDS: dict[str, type | tuple[type, ...]] = {
    "index": int,
    "frames": str,
    "stderr": str,
    "timed_out": bool,
    "truncated": bool,
    "exit_code": (int, type(None)),
    "signal": (int, type(None)),
    "seconds": (int, float),
}


def _well_formed_pair(frame: dict[str, Any]) -> bool:
    return all(isinstance(frame.get(k, ...), t) for k, t in _PAIR_FIELDS.items())


# Types of the frame fields the parent reads. Frames come from a process that
# ran untrusted code, which can write to the result pipe too: a frame whose
# fields do not have these types is dropped as malformed, so no consumer ever
# sees one. `value` and `task` stay tagged data, decoded by their consumers.
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "event": str,
    "index": int,
    "status": str,
    "error_type": str,
    "message": str,
    "side": str,
    "seconds": (int, float),
    "level": str,
    "detail": str,
    "key": (str, type(None)),
    "task": dict,
}
_STRING_LISTS = ("error_mro", "traceback")


def _well_formed(frame: Any) -> bool:
    if not isinstance(frame, dict) or not isinstance(frame.get("event"), str):
        return False
    if any(k in frame and not isinstance(frame[k], t) for k, t in _FIELD_TYPES.items()):
        return False
    return all(
        isinstance(frame[k], list) and all(isinstance(x, str) for x in frame[k]) for k in _STRING_LISTS if k in frame
    )

"""What passes between the parent and a warm worker for one job.

The parent sends the job's terms (its wall clock and output limit: fixed
binary numbers of its policy, which the worker reads) and then the request
(one JSON line, which the worker never reads: the job's own process does,
`zygote`). The worker answers with records, each one tag byte and an 8-byte
length, then that many bytes:

- `F`: frames the job wrote on its result channel, at most the limit in all;
- `E`: the tail of the job's stderr, once, at the end;
- `R`: the worker's end-of-job record (JSON: how the job ended), last.

The worker holds no byte a job wrote either: it moves them from the job's
pipes with splice(2), into this stream or, for stderr, into a ring in a
memory file of the job's, counting them, never reading them. A job writes
only into pipes whose bytes the worker frames itself, so it cannot write a
record, end its job early or late in the parent's eyes, or speak for another
job.
"""

from __future__ import annotations

import array
import fcntl
import json
import os
import select
import signal
import struct
import time
from dataclasses import dataclass
from typing import IO, Any

TERMS = struct.Struct("!dQI")  # wall seconds, output limit in bytes, length of the hidden paths' JSON
HEAD = struct.Struct("!cQ")  # tag, length
FRAMES, STDERR, END = b"F", b"E", b"R"
STDERR_TAIL = 8192
_FIONREAD = 0x541B


# ----- in the parent ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JobTerms:
    """What the worker knows of a job: the scorer's limits and the paths it
    hides from every job (`mount_layouts`), nothing the job brings."""

    wall_seconds: float
    output_cap: int
    hidden: list[str]


def encode_terms(terms: JobTerms) -> bytes:
    hidden = json.dumps(terms.hidden).encode()
    return TERMS.pack(float(terms.wall_seconds), int(terms.output_cap), len(hidden)) + hidden


def read_reply(stream: IO[bytes], output_cap: int) -> dict[str, Any]:
    """The records of one job, as the reply `replies._decode` reads."""
    frames, err = bytearray(), bytearray()
    while True:
        tag, body = _record(stream, max(output_cap, 1 << 20))
        if tag == FRAMES:
            frames += body
        elif tag == STDERR:
            err += body
        elif tag == END:
            return {
                **json.loads(body),
                "frames_text": frames.decode("utf-8", "replace"),
                "stderr": err[-STDERR_TAIL:].decode("utf-8", "replace"),
            }
        else:
            raise RuntimeError(f"the sandbox worker sent a record tagged {tag!r}; expected F, E or R")


def _record(stream: IO[bytes], limit: int) -> tuple[bytes, bytes]:
    head = stream.read(HEAD.size)
    if len(head) < HEAD.size:
        raise RuntimeError("sandbox worker exited unexpectedly")
    tag, size = HEAD.unpack(head)
    if size > limit:
        raise RuntimeError(f"the sandbox worker sent a record of {size} bytes; expected at most {limit}")
    body = stream.read(size)
    if len(body) < size:
        raise RuntimeError("sandbox worker exited unexpectedly")
    return tag, body


# ----- in the worker ---------------------------------------------------------------------------------------------
def read_terms(fd: int) -> JobTerms | None:
    """The next job's terms, or None at the end of input."""
    head = _read_exactly(fd, TERMS.size)
    if head is None:
        return None
    wall_seconds, cap, size = TERMS.unpack(head)
    hidden = _read_exactly(fd, size)
    if hidden is None:
        return None
    return JobTerms(wall_seconds, cap, [str(path) for path in json.loads(hidden)])


def _read_exactly(fd: int, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _pending(fd: int) -> int:
    count = array.array("i", [0])
    fcntl.ioctl(fd, _FIONREAD, count, True)
    return count[0]


def _splice_all(src: int, dst: int, count: int, offset: int | None = None) -> None:
    while count > 0:
        moved = os.splice(src, dst, count, offset_src=offset)
        if moved <= 0:
            raise OSError(f"splice moved nothing with {count} bytes to go")
        count -= moved
        offset = None if offset is None else offset + moved


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Tail:
    """The last `STDERR_TAIL` bytes of a job's stderr, in a ring in a memory
    file that only this worker holds (for this job only)."""

    def __init__(self) -> None:
        self.fd = os.memfd_create("stderr-tail", os.MFD_CLOEXEC)
        self.total = 0

    def take(self, src: int, count: int) -> None:
        while count > 0:
            position = self.total % STDERR_TAIL
            moved = os.splice(src, self.fd, min(count, STDERR_TAIL - position), offset_dst=position)
            if moved <= 0:
                return
            self.total += moved
            count -= moved

    def send(self, out: int) -> None:
        size = min(self.total, STDERR_TAIL)
        _write_all(out, HEAD.pack(STDERR, size))
        if self.total <= STDERR_TAIL:
            _splice_all(self.fd, out, size, offset=0)
        else:
            position = self.total % STDERR_TAIL
            _splice_all(self.fd, out, STDERR_TAIL - position, offset=position)
            _splice_all(self.fd, out, position, offset=0)
        os.close(self.fd)


def relay(pid: int, pipes: tuple[int, int], start: float, terms: JobTerms, out: int) -> None:
    """The job's limits, from its start: B (`pid`) is killed at its wall clock
    and its result channel cut past the output limit; what is left in the
    pipes once B has ended is moved for a second more. Ends what is left of
    the job, then sends the stderr tail and the end-of-job record on `out`."""
    result_r, err_r = pipes
    cap, deadline = terms.output_cap, start + terms.wall_seconds
    pidfd = os.pidfd_open(pid)
    tail = _Tail()
    sent = 0
    open_fds = {result_r, err_r}
    timed_out = truncated = exited = False
    drain_until: float | None = None
    while open_fds and not truncated:
        now = time.perf_counter()
        if not exited and now >= deadline:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            exited, drain_until = True, now + 1.0
        if drain_until is not None and now >= drain_until:
            break
        until = drain_until if drain_until is not None else deadline
        ready, _, _ = select.select([*open_fds, *(() if exited else (pidfd,))], [], [], max(0.0, until - now))
        if pidfd in ready:
            # B has ended (and with it, namespaced, every process of the job): the pipes hold what is left.
            exited, drain_until = True, time.perf_counter() + 1.0
        for fd in ready:
            if fd == pidfd:
                continue
            count = _pending(fd)
            if not count:  # readable with nothing in it: every writer is gone
                open_fds.discard(fd)
            elif fd == err_r:
                tail.take(fd, count)
            else:
                room = min(count, cap - sent)
                if room:
                    _write_all(out, HEAD.pack(FRAMES, room))
                    _splice_all(fd, out, room)
                    sent += room
                truncated = count > room
    try:  # whatever is left of the job's process group (basic isolation has no PID namespace)
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    _, status = os.waitpid(pid, 0)
    os.close(pidfd)
    for fd in pipes:
        os.close(fd)
    tail.send(out)
    end = {
        "truncated": truncated,
        "timed_out": timed_out,
        "exit_code": os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "wall_seconds": time.perf_counter() - start,
    }
    body = json.dumps(end).encode()
    _write_all(out, HEAD.pack(END, len(body)) + body)

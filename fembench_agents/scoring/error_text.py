"""Cutting a long error text to a budget without losing its cause.

An error's first line names it (`error code 56`, `Traceback (most recent call
last):`) and its last lines hold the cause (PETSc ends its stack with what went
wrong; Python ends a traceback with the exception). Everything that cuts an
error or traceback text for a record, a detail or feedback cuts it here, so
both ends survive and the cut is marked with how much was dropped.

Imported by the sandbox's job processes too: standard library only.
"""

from __future__ import annotations

MESSAGE_LIMIT = 600  # an exception's message, in a frame, a record or feedback
TRACEBACK_LINE_LIMIT = 300  # one line of a traceback

# The marker between the kept ends of a cut text, on a line of its own when the
# text has lines, inside the line otherwise.
_MARK = "… [{} characters cut] …"


def _marker(count: int, multiline: bool) -> str:
    mark = _MARK.format(count)
    return f"\n{mark}\n" if multiline else f" {mark} "


def shortened(text: str, limit: int) -> str:
    """`text` whole when it has at most `limit` characters; otherwise its first
    line (its first half of the budget at most) and as many of its last lines
    as fit, or the end of its last line when not even that fits, around a
    marker naming how many characters were cut. Never longer than `limit`."""
    if limit < 0:
        raise ValueError(f"a text budget must be a number of characters >= 0, got {limit}")
    if len(text) <= limit:
        return text
    first, newline, rest = text.partition("\n")
    multiline = bool(newline)
    room = limit - len(_marker(len(text), multiline))  # the widest marker this text can need
    if room < 2:
        return text[:limit]  # no room for both ends and a marker: the start alone
    head = first[: room // 2] if multiline else text[: room // 2]
    tail_room = room - len(head)
    tail = ""
    if multiline:
        kept: list[str] = []
        for line in reversed(rest.split("\n")):
            if len("\n".join([line, *kept])) > tail_room:
                break
            kept.insert(0, line)
        tail = "\n".join(kept)
    if not tail:
        tail = text[len(text) - tail_room :]
    return head + _marker(len(text) - len(head) - len(tail), multiline) + tail

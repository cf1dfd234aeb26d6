"""What of an attempt's exception may reach its author (function and test tracks).

The child that reports an exception ran the attempt, so every field of its
frame is the attempt's to choose: a class named after a reference output
(`V_1p8e03`), a message holding the verification inputs (`ValueError(repr(args))`),
a test failing on the reference with `assert False, repr(fcn(x))`, traceback
lines made up. The attempt saw the verification inputs and, in the test
track, the reference's outputs, so anything it chooses can carry them. What
is shown is therefore rebuilt here from what the evaluator knows:
- the class name when it is a builtin or numpy exception, otherwise only the
  nearest such base ("a custom exception derived from ValueError");
- the message of a builtin or numpy exception with every number in it
  replaced by `#` (its words stay: they are what makes it useful); a custom
  exception's message is withheld;
- traceback lines whose file, line number, function name and line text agree
  with the attempt's own code, rebuilt from that code.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from fembench_agents.scoring.error_text import shortened
from fembench_agents.scoring.outcomes import ErrorInfo

MESSAGE_SHOWN = 600
LINE_SHOWN = 300
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf|NaN|Inf)\b")
_LINE = re.compile(r"^(?P<file><\w+>), line (?P<line>\d+), in (?P<name>[\w<>]+): (?P<text>.*)$")
_FRAMES_WITHOUT_DEF = frozenset({"<module>", "<lambda>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})


def _known_exceptions() -> frozenset[str]:
    names = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    names |= {n for n in dir(np.exceptions) if isinstance(getattr(np.exceptions, n), type)}
    return frozenset(names | {"LinAlgError"})


# UnserializableOutput: the sandbox's name for an output it could not encode.
KNOWN_EXCEPTIONS = _known_exceptions() | {"UnserializableOutput"}


def shown_type(error_type: Any, mro: Any) -> str:
    name = str(error_type)
    if name in KNOWN_EXCEPTIONS:
        return name
    bases = [str(b) for b in mro[1:]] if isinstance(mro, list) else []
    base = next((b for b in bases if b in KNOWN_EXCEPTIONS and b not in ("Exception", "BaseException")), None)
    return f"a custom exception derived from {base}" if base else "a custom exception"


def shown_message(message: Any) -> str:
    # Cut first: the cut's marker counts characters, a number the attempt chose like any other.
    return _NUMBER.sub("#", shortened(str(message), MESSAGE_SHOWN))


@dataclass(frozen=True)
class OwnCode:
    """The code a frame's traceback may point into: `files` maps a file name the
    sandbox gives code (`<attempt>`, `<test>`, `<given>`) to its sources."""

    files: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def of(cls, **files: str | list[str] | tuple[str, ...]) -> OwnCode:
        return cls(tuple((f"<{k}>", (v,) if isinstance(v, str) else tuple(v)) for k, v in files.items()))


NO_CODE = OwnCode(())  # a task's own implementation: its traceback is not shown to anyone


@functools.lru_cache(maxsize=512)
def _defined_names(source: str) -> frozenset[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    return frozenset(
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    )


def _shown_line(line: Any, own: OwnCode) -> str | None:
    m = _LINE.match(str(line))
    if m is None:
        return None
    sources = dict(own.files).get(m["file"], ())
    number, name, text = int(m["line"]), m["name"], m["text"]
    for source in sources:
        lines = source.splitlines()
        if not 1 <= number <= len(lines) or lines[number - 1].strip() != text:
            continue
        if name in _FRAMES_WITHOUT_DEF or name in _defined_names(source):
            return shortened(f"{m['file']}, line {number}, in {name}: {text}", LINE_SHOWN)
    return None


def disclosed_error(frame: dict[str, Any], own: OwnCode, *, with_message: bool = True) -> ErrorInfo:
    """The attempt's exception as its author may see it (module docstring)."""
    name = shown_type(frame.get("error_type", "Error"), frame.get("error_mro"))
    custom = name not in KNOWN_EXCEPTIONS
    message = frame.get("message", "")
    if name == "UnserializableOutput":  # its message is the name of what encoding raised
        message = shown_type(message, [])
    raw = frame.get("traceback")
    lines: list[Any] = raw if isinstance(raw, list) else []
    shown = [s for s in (_shown_line(x, own) for x in lines[-8:]) if s is not None]
    return ErrorInfo(
        type=name,
        message=shown_message(message) if with_message and not custom else "",
        traceback=tuple(shown),
    )

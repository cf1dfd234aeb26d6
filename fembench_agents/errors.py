"""Errors in what the user gave a command (a file, a run directory, an option
value), as opposed to faults in this program. The command line answers one
with its message in one line and exit status 2, and a bug with a traceback,
so that neither passes for the other."""

from __future__ import annotations

from pydantic import ValidationError


class BadInput(ValueError):
    """Input this build cannot use. The message names the input (a file, and a
    line where there is one) and the fault, in one line; `hint`, where there is
    one, says what the user can do about it."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def read_text_file(path: str, what: str) -> str:
    """The UTF-8 text of a file the user named; BadInput naming `what` and the
    path when it is missing, not a file, unreadable or not UTF-8 text."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise BadInput(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise BadInput(f"{what} {path} is a directory, not a file") from None
    except PermissionError:
        raise BadInput(f"{what} {path} cannot be read (permission denied)") from None
    except UnicodeDecodeError as exc:
        raise BadInput(f"{what} {path} is not UTF-8 text (byte {exc.start + 1}: {exc.reason})") from None


def first_error(exc: ValidationError) -> str:
    """A validation error in one line: the first field that failed and why, and how many more did."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(the whole)"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"field {field}: {first['msg']}{more}"

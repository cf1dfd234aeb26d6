"""API keys: read from the environment (or a .env file), never written out."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from dotenv import find_dotenv, load_dotenv

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
_MIN_LEN = 8  # shorter values would redact ordinary words
REDACTED = "[redacted]"


def load_env(dotenv_path: str | os.PathLike[str] | None = None) -> bool:
    """Load a .env file (the given one, else the nearest from the working
    directory up) without overriding variables already set."""
    path = Path(dotenv_path) if dotenv_path is not None else find_dotenv(usecwd=True)
    return bool(path) and load_dotenv(path, override=False)


def secret_values(extra: Iterable[str | None] = ()) -> list[str]:
    """Values of environment variables whose names look secret, plus `extra`."""
    values = [v for k, v in os.environ.items() if _SECRET_NAME.search(k)]
    values += [v for v in extra if v]
    return sorted({v for v in values if len(v) >= _MIN_LEN}, key=len, reverse=True)


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    for value in secret_values(extra):
        text = text.replace(value, REDACTED)
    return text


def secret_free_env() -> dict[str, str]:
    """The environment minus secret-looking variables, for child processes."""
    return {k: v for k, v in os.environ.items() if not _SECRET_NAME.search(k)}

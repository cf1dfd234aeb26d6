"""Our response cache: one JSON file per request hash under a directory.
Writes are atomic (temp file + rename), so concurrent writers, even in other
processes, never leave a torn entry; identical in-flight requests in one event
loop wait on a per-hash lock, so the second is served from the first."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from pydantic import ValidationError

from fembench_agents.messages import ModelRequest, ModelResponse

CACHE_SCHEMA_VERSION = 1
log = logging.getLogger(__name__)


class ResponseCache:
    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    def path(self, request_hash: str) -> Path:
        return self.dir / request_hash[:2] / f"{request_hash}.json"

    def get(self, request_hash: str) -> ModelResponse | None:
        """The stored response as first recorded, or None. An unreadable entry
        is a miss (and is overwritten by the next put)."""
        path = self.path(request_hash)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry.get("schema_version") != CACHE_SCHEMA_VERSION:
                return None
            return ModelResponse.model_validate(entry["response"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, ValidationError) as exc:
            log.warning("ignoring unreadable cache entry %s: %s", path, exc)
            return None

    def put(self, request: ModelRequest, response: ModelResponse) -> None:
        request_hash = request.request_hash()
        path = self.path(request_hash)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "schema_version": CACHE_SCHEMA_VERSION,
            "request": request.model_dump(mode="json"),
            "response": response.model_dump(mode="json"),
        }
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(entry, fh)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @asynccontextmanager
    async def lock(self, request_hash: str) -> AsyncIterator[None]:
        """Held while one request is looked up and, on a miss, answered."""
        lock, users = self._locks.get(request_hash) or (asyncio.Lock(), 0)
        self._locks[request_hash] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[request_hash]
            if users == 1:
                del self._locks[request_hash]
            else:
                self._locks[request_hash] = (lock, users - 1)

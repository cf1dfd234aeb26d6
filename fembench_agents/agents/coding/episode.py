"""What a coding agent's episode needs besides its workspace and terminal:
a worker thread for the agent's blocking loop, the trace of each attempt,
and the paths its terminal must not see."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fembench_agents.contracts import Problem, SolveSession


@dataclass
class AttemptTrace:
    stop_reason: str
    detail: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    passed: bool


async def in_thread[T](fn: Callable[[], T], timeout: float | None = None) -> T:
    """Run `fn` in a daemon thread (one the interpreter need not wait for)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def target() -> None:
        try:
            result = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=target, daemon=True, name="fembench-coding-agent").start()
    return await asyncio.wait_for(asyncio.shield(future), timeout)


def episode_hidden(problem: Problem, session: SolveSession, extra: tuple[str, ...] = ()) -> list[str]:
    """Episode-specific hidden paths, on top of terminal.ALWAYS_HIDDEN and the
    repository: the problem's evaluator-only data and the run directory."""
    hidden = [str(problem.hidden_dir.resolve()), *extra]
    run_log = getattr(session, "log", None)
    if run_log is not None and getattr(run_log, "dir", None) is not None:
        hidden.append(str(Path(run_log.dir).resolve()))
    return hidden

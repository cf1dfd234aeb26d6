"""Building imported cases in worker processes (`cases import --workers N`).

Each record is built by one worker (`published_import.build`); the results come back in any
order and are returned in the records' order, so the folder and the report do not depend on
which worker built what. A worker is a spawned interpreter (never a fork of a process that has
loaded MPI and PETSc); it is replaced once its resident memory passes `RECYCLE_MB` after a
record (what a large reference's solves leave behind is returned to the system, where a
long-lived process keeps it), and a worker that dies (a crash in a solver library) costs only
its record, excluded with the exit code. The solves of all workers share one memory budget
(reference_memory.py), so running records side by side never stacks two large references.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from fembench_agents.cases.builder import Built
from fembench_agents.cases.published import ImportReport
from fembench_agents.cases.published_domains import Excluded
from fembench_agents.cases.reference_memory import UNLIMITED, BudgetShare, MemoryBudget

RECYCLE_MB = 450.0  # a worker holding more than this after a record is replaced
# What the solves of all workers may hold at once, beside the workers' own interpreters (about
# 250 MB each with DOLFINx loaded) and the parent's: within the import's 2 GB.
SOLVE_BUDGET_MB = 1300.0
JIT_TIMEOUT_S = 600  # a worker waits this long for another compiling the same form (DOLFINx: 10 s)


@dataclass
class RecordResult:
    """One record's build: the case and its published view, or why it is excluded; what it
    added to the report's decisions; what it cost its worker."""

    built: Built | None = None
    view: dict[str, Any] | None = None
    excluded: str | None = None
    report: ImportReport = field(default_factory=ImportReport)
    cpu_seconds: float = 0.0
    rss_mb: float = 0.0  # the worker's resident memory after the record


def merge(into: ImportReport, part: ImportReport) -> None:
    """Add what one record's build put in its own report (decisions, numerical estimates)."""
    for f in dataclasses.fields(ImportReport):
        mine, theirs = getattr(into, f.name), getattr(part, f.name)
        if isinstance(mine, list):
            mine.extend(theirs)
        elif isinstance(mine, dict):
            mine.update(theirs)
        else:
            setattr(into, f.name, mine + theirs)


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


# published_import.build: (record, report, budget=) -> (case, published view), or raises Excluded
Build = Callable[..., tuple[Built, dict[str, Any]]]


def build_one(build: Build, record: dict[str, Any], budget: Any = UNLIMITED) -> RecordResult:
    start = _cpu()
    result = RecordResult()
    try:
        result.built, result.view = build(record, result.report, budget=budget)
    except Excluded as exc:
        result.excluded = str(exc)
    result.cpu_seconds, result.rss_mb = _cpu() - start, _rss_mb()
    return result


def _serve(conn: Connection, build: Build, budget: BudgetShare) -> None:
    from mpi4py import MPI  # noqa: F401  # isort: skip  # first: it loads the MPI library dolfinx links to
    import dolfinx.jit

    from fembench_agents.cases import dolfinx_env

    dolfinx_env.forget_mpi_segment()  # a worker over its memory is killed, and never finalises MPI

    _, doc = dolfinx.jit.DOLFINX_DEFAULT_JIT_OPTIONS["timeout"]
    dolfinx.jit.DOLFINX_DEFAULT_JIT_OPTIONS["timeout"] = (JIT_TIMEOUT_S, doc)
    while (task := conn.recv()) is not None:
        conn.send(build_one(build, task, budget))
    conn.close()


@dataclass
class _Worker:
    process: Any
    conn: Connection
    share: BudgetShare
    index: int = -1  # the record it is building


def build_all(
    build: Build,
    records: list[dict[str, Any]],
    workers: int = 0,
    on_result: Callable[[int, RecordResult], None] | None = None,
    cost: Callable[[dict[str, Any]], float] | None = None,
) -> list[RecordResult]:
    """Every record built by `build` (a module-level function: workers import it by name), in
    the records' order: in this process (workers 0) or in `workers` worker processes, which
    take the records of the largest `cost` first (a long record last would run alone at the
    end while the other workers wait: the import's wall-clock tail)."""
    results: list[RecordResult | None] = [None] * len(records)

    def done(index: int, result: RecordResult) -> None:
        results[index] = result
        if on_result:
            on_result(index, result)

    if workers <= 0:
        for i, record in enumerate(records):
            done(i, build_one(build, record))
        return [r for r in results if r is not None]
    ctx = multiprocessing.get_context("spawn")
    budget = MemoryBudget(SOLVE_BUDGET_MB, ctx)

    def start() -> _Worker:
        parent, child = ctx.Pipe()
        share = budget.share()
        process = ctx.Process(target=_serve, args=(child, build, share), daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent, share)

    order = sorted(range(len(records)), key=lambda i: -cost(records[i])) if cost else list(range(len(records)))
    pending = order[::-1]  # popped from the end
    running: list[_Worker] = []

    def feed(worker: _Worker) -> None:
        worker.index = pending.pop()
        worker.conn.send(records[worker.index])
        running.append(worker)

    def stop(worker: _Worker) -> None:
        try:
            worker.conn.send(None)
        except OSError:
            pass
        worker.process.join()
        worker.conn.close()

    try:
        for _ in range(min(workers, len(pending))):
            feed(start())
        while running:
            for conn in wait([w.conn for w in running]):
                worker = next(w for w in running if w.conn is conn)
                running.remove(worker)
                index, fresh = worker.index, None
                try:
                    result = worker.conn.recv()
                except EOFError:  # the worker died in the record's build
                    worker.process.join()
                    worker.conn.close()
                    budget.reclaim(worker.share)
                    code = worker.process.exitcode
                    result = RecordResult(excluded=f"calibration solver failed: its process ended with code {code}")
                else:
                    fresh = worker if result.rss_mb <= RECYCLE_MB or not pending else None
                    if fresh is None:
                        stop(worker)
                done(index, result)
                if pending:
                    feed(fresh or start())
                elif fresh is not None:
                    stop(fresh)
    finally:
        for worker in running:
            worker.process.kill()
            worker.process.join()
    return [r for r in results if r is not None]

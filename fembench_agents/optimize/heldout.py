"""The leak guard. Three checks, each reported, none silent:

1. Held-out tasks are never evaluated while optimizing: the split is checked
   disjoint before the run starts, `PromptEvaluations` refuses held-out tasks,
   and after the run every record of every candidate's run log, and every
   reflection request, is searched for a held-out task id (`logged_heldout`).
2. The optimized prompt holds no held-out reference source: each line of the
   held-out reference and its helpers is normalized (comments dropped,
   lower-cased, split into identifier, number and punctuation tokens); a line
   of at least `MIN_TOKENS` tokens (`MIN_WORDS` of them identifiers or
   numbers) found inside the normalized prompt is a hit.
3. The optimized prompt holds no number from the held-out reference outputs
   (the evaluator's `reference_outputs`): every distinctive output value
   (>= 4 significant digits) is compared with every number written in the
   prompt, whatever its format (plain, scientific, with thousands separators,
   `a x 10^k`), at the precision the prompt wrote it, when that is >= 4 digits.

A hit whose line (anywhere in a line) or number also appears in a training or
validation task's source is an *overlap*: material the optimizer was allowed to see (tasks share
helpers; with `include_reference` the reflection step sees training
references), reported but not counted as a leak. Anything else is a *leak*.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
from pydantic import BaseModel, ConfigDict

from fembench_agents.runs.log import AttemptRecord, ModelCallRecord, read_log
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite.model import Task
from fembench_agents.suite.scoring import FunctionScorer, ReferenceFailure, ReferenceOutput

MIN_TOKENS = 6  # a held-out line shorter than this is too generic to mean anything
MIN_WORDS = 4  # ... and so is one made mostly of punctuation
MIN_DIGITS = 4
NOISE_FLOOR = 1e-10  # output values smaller than this are round-off, not constants

_TOKEN = re.compile(r"[a-z_][a-z0-9_]*|\d+(?:\.\d+)?(?:e[+-]?\d+)?|[^\sa-z0-9_]")
_TIMES_TEN = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:x|×|\*|\\times)\s*10\s*(?:\^|\*\*)\s*\{?\s*([+\-−]?\d+)(?:\s*\})?"
)
_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d*\.\d+(?:[eE][+\-]?\d+)?|\d+(?:[eE][+\-]?\d+)?)(?![\w])"
)


class LeakHit(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["evaluated", "reflection_prompt", "source_line", "number"]
    task_id: str  # the held-out task the material belongs to
    text: str  # what was found
    detail: str
    also_in: tuple[str, ...] = ()  # training/validation tasks holding the same material


class LeakReport(BaseModel):
    leaked: bool
    hits: list[LeakHit]  # held-out material or held-out use: a leak
    overlaps: list[LeakHit]  # held-out material that training/validation tasks hold too
    lines_checked: int = 0
    numbers_checked: int = 0
    notes: list[str] = []

    def summary(self) -> str:
        if self.leaked:
            kinds = sorted({h.kind for h in self.hits})
            return f"LEAK: {len(self.hits)} hits ({', '.join(kinds)})"
        tail = f"; {len(self.overlaps)} overlaps with training/validation material" if self.overlaps else ""
        return f"no leak ({self.lines_checked} held-out lines, {self.numbers_checked} held-out numbers checked{tail})"


# ----------------------------------------------------------------- run logs


def logged_heldout(out: Path, heldout: Iterable[str]) -> list[LeakHit]:
    """Every use of a held-out task recorded under an optimization's out directory."""
    held = set(heldout)
    hits: list[LeakHit] = []
    for log_dir in sorted(p.parent for p in (out / "evals").glob("*/log.jsonl")):
        for r in read_log(log_dir):
            if r.task_id in held:
                hits.append(
                    LeakHit(
                        kind="evaluated",
                        task_id=r.task_id,
                        text=r.episode,
                        detail=f"{type(r).__name__} in {log_dir / 'log.jsonl'}",
                    )
                )
    reflection = out / "reflection"
    if (reflection / "log.jsonl").exists():
        for r in read_log(reflection):
            if not isinstance(r, ModelCallRecord):
                continue
            text = "\n".join(m.content for m in r.request.messages)
            hits += [
                LeakHit(
                    kind="reflection_prompt",
                    task_id=t,
                    text=t,
                    detail=f"reflection call {r.attempt_index} names a held-out task",
                )
                for t in sorted(held)
                if t in text
            ]
    return hits


def evaluated_tasks(out: Path) -> set[str]:
    """Task ids attempted anywhere in an optimization's run logs."""
    return {
        r.task_id
        for p in (out / "evals").glob("*/log.jsonl")
        for r in read_log(p.parent)
        if isinstance(r, AttemptRecord)
    }


# ----------------------------------------------------------------- source lines


def _drop_comment(line: str) -> str:
    quote: str | None = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i]
    return line


def normalize(line: str) -> str:
    return " ".join(_TOKEN.findall(_drop_comment(line).lower()))


def reference_material(task: Task) -> str:
    """The held-out task's reference and every helper it relies on, given or not."""
    skip = {"task_info", *task.test_names, *task.expected_failure_names}
    parts = [task.main_source, *(s for n, s in task.module_functions.items() if n not in skip and n != task.main_name)]
    return "\n".join(parts)


def _distinctive(line: str) -> bool:
    tokens = line.split()
    return len(tokens) >= MIN_TOKENS and sum(t[0].isalnum() or t[0] == "_" for t in tokens) >= MIN_WORDS


def _lines(text: str) -> set[str]:
    return {n for n in (normalize(x) for x in text.splitlines()) if _distinctive(n)}


def normalized_text(text: str) -> str:
    """Normalized lines, padded so that `f" {line} " in normalized_text(...)` matches whole tokens only."""
    return " " + " \n ".join(normalize(x) for x in text.splitlines()) + " "


def source_hits(prompt: str, heldout: list[Task], seen: list[Task]) -> tuple[list[LeakHit], int]:
    text = normalized_text(prompt)
    seen_texts = {t.task_id: normalized_text(t.module_source) for t in seen}
    hits, checked = [], 0
    for task in heldout:
        for line in sorted(_lines(reference_material(task))):
            checked += 1
            if f" {line} " in text:
                also = tuple(sorted(tid for tid, src in seen_texts.items() if f" {line} " in src))
                hits.append(
                    LeakHit(
                        kind="source_line",
                        task_id=task.task_id,
                        text=line,
                        also_in=also,
                        detail="a line of the held-out reference or its helpers",
                    )
                )
    return hits, checked


# ----------------------------------------------------------------- numbers


def _walk(value: Any) -> Iterator[float]:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, (int, float, np.integer, np.floating)):
        yield float(value)
    elif isinstance(value, np.ndarray):
        if np.issubdtype(value.dtype, np.number) and not np.iscomplexobj(value):
            yield from (float(x) for x in value.ravel())
    elif isinstance(value, dict):
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _walk(v)


def significant_digits(x: float) -> int:
    mantissa = f"{abs(x):.11e}".split("e")[0].replace(".", "").rstrip("0")
    return len(mantissa)


def distinctive_values(outputs: Iterable[ReferenceOutput]) -> list[float]:
    values = {
        round(abs(x), 12 - int(math.floor(math.log10(abs(x)))))
        for o in outputs
        if o.raises is None
        for x in _walk(o.value)
        if math.isfinite(x) and abs(x) >= NOISE_FLOOR
    }
    return sorted(v for v in values if significant_digits(v) >= MIN_DIGITS)


class Written(BaseModel):
    """A number as written in a text: its value, and half a unit of its last written digit."""

    text: str
    value: float
    tolerance: float
    digits: int


def written_numbers(text: str) -> list[Written]:
    found: list[Written] = []

    def add(raw: str, mantissa: str, exponent: int) -> None:
        mantissa = mantissa.replace(",", "")
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        digits = len(mantissa.replace(".", "").lstrip("0").rstrip("0"))
        try:
            value = float(mantissa) * 10.0**exponent
        except (OverflowError, ValueError):
            return
        found.append(Written(text=raw, value=abs(value), tolerance=0.5 * 10.0 ** (exponent - decimals), digits=digits))

    masked = text
    for m in _TIMES_TEN.finditer(text):
        add(m.group(0), m.group(1), int(m.group(2).replace("−", "-")))
        masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
    for m in _NUMBER.finditer(masked):
        raw = m.group(1)
        mantissa, _, exp = raw.lower().partition("e")
        add(raw, mantissa, int(exp) if exp else 0)
    return found


def _matches(w: Written, values: list[float]) -> float | None:
    slack = w.tolerance * (1 + 1e-9) + 1e-15 * w.value
    i = bisect.bisect_left(values, w.value - slack)
    return values[i] if i < len(values) and values[i] <= w.value + slack else None


def number_hits(prompt: str, heldout_values: dict[str, list[float]], seen: list[Task]) -> tuple[list[LeakHit], int]:
    written = [w for w in written_numbers(prompt) if w.digits >= MIN_DIGITS]
    seen_numbers = {t.task_id: sorted({x.value for x in written_numbers(t.module_source)}) for t in seen}
    hits = []
    for task_id, values in heldout_values.items():
        for w in written:
            value = _matches(w, values)
            if value is None:
                continue
            also = tuple(sorted(tid for tid, nums in seen_numbers.items() if _matches(w, nums) is not None))
            hits.append(
                LeakHit(
                    kind="number",
                    task_id=task_id,
                    text=w.text,
                    also_in=also,
                    detail=f"matches the held-out reference output value {value!r}",
                )
            )
    return hits, sum(len(v) for v in heldout_values.values())


def heldout_values(heldout: list[Task], evaluator: Evaluator) -> tuple[dict[str, list[float]], list[str]]:
    values, notes = {}, []
    references = cast(FunctionScorer, evaluator.scorer_for("code"))  # the optimizer tunes the code track
    for task in heldout:
        try:
            values[task.task_id] = distinctive_values(references.reference_outputs(task))
        except ReferenceFailure as exc:
            notes.append(f"no reference outputs for {task.task_id}: {exc}")
    return values, notes


# ----------------------------------------------------------------- the report


def scan_prompt(
    prompt: str,
    heldout: list[Task],
    seen: list[Task],
    values: dict[str, list[float]],
    logged: list[LeakHit] | None = None,
    notes: list[str] | None = None,
) -> LeakReport:
    lines, n_lines = source_hits(prompt, heldout, seen)
    numbers, n_numbers = number_hits(prompt, values, seen)
    found = [*(logged or []), *lines, *numbers]
    hits = [h for h in found if not h.also_in]
    return LeakReport(
        leaked=bool(hits),
        hits=hits,
        overlaps=[h for h in found if h.also_in],
        lines_checked=n_lines,
        numbers_checked=n_numbers,
        notes=list(notes or []),
    )

"""The leak guard. Four checks, each reported, none silent:

1. Held-out problems are never evaluated while optimizing: the split is checked
   disjoint before the run starts, `PromptEvaluations` refuses held-out problems,
   and after the run every record of every candidate's run log, and every
   reflection request, is searched for a held-out problem id (`logged_heldout`).
2. The optimized prompt holds no held-out hidden source (a function task's
   reference and its helpers, a PDE case's manufactured solution): each line is
   normalized (comments dropped, lower-cased, split into identifier, number and
   punctuation tokens); a line of at least `MIN_TOKENS` tokens (`MIN_WORDS` of
   them identifiers or numbers) found inside the normalized prompt is a hit.
3. The optimized prompt holds no hidden number of a held-out problem (a function
   task's reference outputs; a PDE case's reference values, thresholds and
   calibration figures): every distinctive value (>= 4 significant digits, or
   more where the kind asks) is compared with every number written in the
   prompt, whatever its format (plain, scientific, with thousands separators,
   `a x 10^k`), at the precision the prompt wrote it.
4. The optimized prompt names no hidden name of a held-out problem (a function
   task's expected failures), as a whole identifier.

What is hidden comes from the problems' kind (`TaskKind.hidden`). A hit that
also appears in a training or validation problem's visible text (a line:
anywhere in a line) is an *overlap*: material the optimizer was allowed to see
(function tasks share helpers; with `include_reference` the reflection step
sees training references), reported but not counted as a leak. Anything else
is a *leak*.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from fembench_agents.contracts import Problem
from fembench_agents.kinds.contract import AttemptScorer, HiddenNumbers, KindHidden
from fembench_agents.runs.log import AttemptRecord, ModelCallRecord, read_log

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
    kind: Literal["evaluated", "reflection_prompt", "source_line", "number", "name"]
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


def _distinctive(line: str) -> bool:
    tokens = line.split()
    return len(tokens) >= MIN_TOKENS and sum(t[0].isalnum() or t[0] == "_" for t in tokens) >= MIN_WORDS


def _lines(text: str) -> set[str]:
    return {n for n in (normalize(x) for x in text.splitlines()) if _distinctive(n)}


def normalized_text(text: str) -> str:
    """Normalized lines, padded so that `f" {line} " in normalized_text(...)` matches whole tokens only."""
    return " " + " \n ".join(normalize(x) for x in text.splitlines()) + " "


def source_hits(prompt: str, heldout: Sequence[Guarded], seen: Mapping[str, str]) -> tuple[list[LeakHit], int]:
    text = normalized_text(prompt)
    seen_texts = {task_id: normalized_text(visible) for task_id, visible in seen.items()}
    hits, checked = [], 0
    for guarded in heldout:
        for line in sorted(_lines(guarded.source)):
            checked += 1
            if f" {line} " in text:
                also = tuple(sorted(tid for tid, src in seen_texts.items() if f" {line} " in src))
                hits.append(
                    LeakHit(
                        kind="source_line",
                        task_id=guarded.task_id,
                        text=line,
                        also_in=also,
                        detail=f"a line of the held-out {guarded.source_label}",
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


def distinctive_values(values: Any) -> list[float]:
    """The absolute values (to 13 significant digits) worth looking for: finite, above round-off,
    with 4 or more significant digits."""
    found = {
        round(abs(x), 12 - int(math.floor(math.log10(abs(x)))))
        for x in _walk(values)
        if math.isfinite(x) and abs(x) >= NOISE_FLOOR
    }
    return sorted(v for v in found if significant_digits(v) >= MIN_DIGITS)


@dataclass(frozen=True)
class HiddenValue:
    """One distinctive hidden number, what it is, and the digits a written number needs to match it."""

    value: float
    what: str
    min_digits: int


@dataclass(frozen=True)
class Guarded:
    """What the guard looks for of one held-out problem, from its kind's hidden material."""

    task_id: str
    source: str = ""
    source_label: str = "reference"
    values: tuple[HiddenValue, ...] = ()  # sorted by value
    names: tuple[str, ...] = ()


def guarded(heldout: Sequence[Problem], hidden: KindHidden, scorer: AttemptScorer) -> tuple[list[Guarded], list[str]]:
    """Each held-out problem's hidden material as the guard looks for it, and the notes
    on what could not be gathered."""
    found: list[Guarded] = []
    notes: list[str] = []
    for problem in heldout:
        material = hidden.material(problem, scorer)
        notes += material.notes
        found.append(
            Guarded(
                task_id=problem.task_id,
                source=material.source,
                source_label=material.source_label,
                values=_hidden_values(material.numbers),
                names=tuple(dict.fromkeys(material.names)),
            )
        )
    return found, notes


def _hidden_values(numbers: Iterable[HiddenNumbers]) -> tuple[HiddenValue, ...]:
    by_value: dict[float, HiddenValue] = {}
    for group in numbers:
        for v in distinctive_values(group.values):
            known = by_value.get(v)
            if known is None or group.min_digits < known.min_digits:  # the group that asks least decides
                by_value[v] = HiddenValue(v, group.what, group.min_digits)
    return tuple(sorted(by_value.values(), key=lambda h: h.value))


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


def _matching(w: Written, hidden: tuple[HiddenValue, ...]) -> HiddenValue | None:
    """The first hidden value `w` writes, at no fewer digits than that value asks."""
    slack = w.tolerance * (1 + 1e-9) + 1e-15 * w.value
    i = bisect.bisect_left([h.value for h in hidden], w.value - slack)
    while i < len(hidden) and hidden[i].value <= w.value + slack:
        if w.digits >= hidden[i].min_digits:
            return hidden[i]
        i += 1
    return None


def number_hits(prompt: str, heldout: Sequence[Guarded], seen: Mapping[str, str]) -> tuple[list[LeakHit], int]:
    written = [w for w in written_numbers(prompt) if w.digits >= MIN_DIGITS]
    seen_numbers = {tid: sorted({x.value for x in written_numbers(text)}) for tid, text in seen.items()}
    hits = []
    for guarded in heldout:
        for w in written:
            hidden = _matching(w, guarded.values)
            if hidden is None:
                continue
            also = tuple(sorted(tid for tid, nums in seen_numbers.items() if _matches(w, nums) is not None))
            hits.append(
                LeakHit(
                    kind="number",
                    task_id=guarded.task_id,
                    text=w.text,
                    also_in=also,
                    detail=f"matches the held-out {hidden.what} value {hidden.value!r}",
                )
            )
    return hits, sum(len(g.values) for g in heldout)


def name_hits(prompt: str, heldout: Sequence[Guarded], seen: Mapping[str, str]) -> list[LeakHit]:
    """Hidden names written in the prompt as whole identifiers."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", prompt))
    seen_words = {tid: set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) for tid, text in seen.items()}
    return [
        LeakHit(
            kind="name",
            task_id=guarded.task_id,
            text=name,
            also_in=tuple(sorted(tid for tid, found in seen_words.items() if name in found)),
            detail="a name the held-out problem hides from attempts",
        )
        for guarded in heldout
        for name in guarded.names
        if name in words
    ]


# ----------------------------------------------------------------- the report


def scan_prompt(
    prompt: str,
    heldout: Sequence[Guarded],
    seen: Mapping[str, str],
    logged: list[LeakHit] | None = None,
    notes: list[str] | None = None,
) -> LeakReport:
    """`seen`: each training and validation problem's visible text, by id."""
    lines, n_lines = source_hits(prompt, heldout, seen)
    numbers, n_numbers = number_hits(prompt, heldout, seen)
    found = [*(logged or []), *lines, *numbers, *name_hits(prompt, heldout, seen)]
    hits = [h for h in found if not h.also_in]
    return LeakReport(
        leaked=bool(hits),
        hits=hits,
        overlaps=[h for h in found if h.also_in],
        lines_checked=n_lines,
        numbers_checked=n_numbers,
        notes=list(notes or []),
    )

"""Compatibility options for re-scoring programs written for another install of
a track's library or another contract. Off by default; a scorer applies only
the ones it was configured with, and the outcome records each substitution
made, so a verdict reached with one is never mistaken for a plain one.

Two sorts: a rewrite changes the program's code before it runs (`REWRITES`),
a reading changes how its output is read before any gate sees it (`READINGS`).

- `hypre-as-gamg` (rewrite): this PETSc build has no hypre, which programs
  written for the published DOLFINx track request about one time in four.
  Every string literal naming hypre as a preconditioner (`"hypre"`,
  `"-pc_type hypre"`, `pc_type=hypre`) and `PETSc.PC.Type.HYPRE` become gamg,
  PETSc's algebraic multigrid. Options of hypre itself (`pc_hypre_type`) are
  left: gamg ignores them.
- `published-v1` (reading): the published benchmark's first contract
  (benchmark_v1, the one its published solver programs were written for) asked
  for `u` of shape (nx, ny), indexed u[ix, iy]: its prompt said "numpy array
  with shape (nx, ny)", its oracle sampled the grid with
  `meshgrid(x, y, indexing="ij")` and its runner reshaped a flat array to
  (nx, ny) and refused any other shape. Ours (and its second contract) is
  (ny, nx), rows y. Each 2D grid field of the output is read that way and
  transposed to ours: an array of shape (nx, ny), or a flat one of nx * ny
  values (reshaped to (nx, ny) first, as that runner did). Any other shape is
  not the first contract's and fails the executes gate saying so, even when it
  is ours on a non-square grid: the option says the program was written for the
  first contract, and under it such an array was refused too. A field the
  first contract had no layout for (a 3D grid, a vector's components) is read
  as ours, with a note saying so.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fembench_agents.cases.case_spec import OutputContract
from fembench_agents.cases.model import GridSpec

_HYPRE_VALUE = re.compile(r"^[rRbBuU]{0,2}(['\"]{1,3})hypre\1$")
_HYPRE_OPTION = re.compile(r"(pc_type\s*[= ]\s*)hypre\b")


def hypre_as_gamg(code: str) -> tuple[str, list[str]]:
    """Returns the rewritten code and one note per substitution."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code, []
    notes: list[str] = []
    out = []
    for i, tok in enumerate(tokens):
        text = tok.string
        if tok.type == tokenize.STRING:
            if _HYPRE_VALUE.match(text):
                text = text.replace("hypre", "gamg")
            else:
                text = _HYPRE_OPTION.sub(r"\1gamg", text)
        elif tok.type == tokenize.NAME and text == "HYPRE" and i > 0 and tokens[i - 1].string == ".":
            text = "GAMG"
        if text != tok.string:
            notes.append(f"line {tok.start[0]}: {tok.string} -> {text}")
        out.append(tok._replace(string=text))
    if not notes:
        return code, []
    return tokenize.untokenize(out), notes


@dataclass(frozen=True)
class Reading:
    """An output as a reading left it: the output the gates judge, one note per
    substitution, and why the output is not in the layout read (the executes
    gate then fails with it as a wrong shape)."""

    output: Any
    notes: tuple[str, ...] = ()
    refused: str | None = None


def published_v1(output: Any, contract: OutputContract, grid: GridSpec) -> Reading:
    """The first published contract's layout, u[ix, iy] of shape (nx, ny), transposed to ours."""
    if not isinstance(output, Mapping):
        return Reading(output)  # not a dict: the executes gate says so
    first = (grid.nx, grid.ny)
    out = dict(output)
    notes: list[str] = []
    for name, field in contract.fields.items():
        value = out.get(name)
        if not isinstance(value, np.ndarray):
            continue  # missing or not an array: the executes gate says so
        if grid.dim != 2 or tuple(field.shape) != grid.shape:
            what = "a 3D grid" if grid.dim != 2 else f"a field of shape {tuple(field.shape)}"
            notes.append(f"output[{name!r}] read as ours: the first contract has no layout for {what}")
            continue
        if value.ndim == 1 and value.size == grid.nx * grid.ny:
            value = value.reshape(first)
            how = f"a flat array of {value.size} values, reshaped to (nx, ny) = {first}"
        elif value.shape == first:
            how = f"shape (nx, ny) = {first}"
        else:
            return Reading(
                output,
                refused=f"output[{name!r}] has shape {value.shape}, expected (nx, ny) = {first}: the first "
                "published contract's layout, u[ix, iy] (compatibility option published-v1)",
            )
        out[name] = np.ascontiguousarray(value.T)
        notes.append(f"output[{name!r}] read as u[ix, iy], {how}, transposed to (ny, nx)")
    return Reading(out, tuple(notes))


REWRITES: dict[str, Callable[[str], tuple[str, list[str]]]] = {"hypre-as-gamg": hypre_as_gamg}
READINGS: dict[str, Callable[[Any, OutputContract, GridSpec], Reading]] = {"published-v1": published_v1}
KNOWN = sorted([*REWRITES, *READINGS])


def check(names: tuple[str, ...]) -> None:
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise ValueError(f"unknown compatibility rewrite(s) {unknown}; known: {KNOWN}")


def apply(names: tuple[str, ...], code: str) -> tuple[str, tuple[str, ...]]:
    """Applies the named rewrites in order (readings apply to the output: `read`);
    returns the code and `name: note` per substitution."""
    check(names)
    made: list[str] = []
    for name in (n for n in names if n in REWRITES):
        code, notes = REWRITES[name](code)
        made += [f"{name}: {n}" for n in notes]
    return code, tuple(made)


def read(names: tuple[str, ...], output: Any, contract: OutputContract, grid: GridSpec) -> Reading:
    """Applies the named readings in order to a program's output; the notes say `name: note`.
    The first refusal stops: the output is judged as it came back."""
    check(names)
    notes: list[str] = []
    for name in (n for n in names if n in READINGS):
        reading = READINGS[name](output, contract, grid)
        notes += [f"{name}: {n}" for n in reading.notes]
        if reading.refused is not None:
            return Reading(output, tuple(notes), reading.refused)
        output = reading.output
    return Reading(output, tuple(notes))

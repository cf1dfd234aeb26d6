"""Compatibility rewrites for re-scoring programs written for another
install of a track's library. Off by default; a scorer applies only the ones
it was configured with, and the outcome records each substitution made, so a
verdict reached with one is never mistaken for a plain one.

- `hypre-as-gamg`: this PETSc build has no hypre, which programs written for
  the published DOLFINx track request about one time in four. Every string
  literal naming hypre as a preconditioner (`"hypre"`, `"-pc_type hypre"`,
  `pc_type=hypre`) and `PETSc.PC.Type.HYPRE` become gamg, PETSc's algebraic
  multigrid. Options of hypre itself (`pc_hypre_type`) are left: gamg ignores
  them.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable

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


REWRITES: dict[str, Callable[[str], tuple[str, list[str]]]] = {"hypre-as-gamg": hypre_as_gamg}


def apply(names: tuple[str, ...], code: str) -> tuple[str, tuple[str, ...]]:
    """Applies the named rewrites in order; returns the code and `name: note` per substitution."""
    unknown = [n for n in names if n not in REWRITES]
    if unknown:
        raise ValueError(f"unknown compatibility rewrite(s) {unknown}; known: {sorted(REWRITES)}")
    made: list[str] = []
    for name in names:
        code, notes = REWRITES[name](code)
        made += [f"{name}: {n}" for n in notes]
    return code, tuple(made)

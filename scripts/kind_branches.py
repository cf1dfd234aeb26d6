"""Counts the places outside the kinds' own packages that ask which task kind
or track they hold (issue: every task kind a plug-in), and names each one.

A site is:
- `isinstance(x, C)` where C is a problem or outcome type of a kind (a class
  defined in a kind's package, or an outcome model);
- a comparison (`==`, `!=`, `in`, `not in`) with a registered track's name, an
  outcome's `kind` tag, or a tuple of track names (`FUNCTION_TRACKS`, ...);
- a `match` on such a name.

The kinds' packages, the registry and the sandbox are exempt: a kind knows
itself, and the sandbox runs jobs, not kinds. Prints one line per site and
the count last; exits 0 (the count is the answer, not a verdict).

    python scripts/kind_branches.py [--quiet]
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fembench_agents import kinds  # noqa: E402
from fembench_agents.scoring.outcomes import OutcomeBase  # noqa: E402

PACKAGE = ROOT / "fembench_agents"
EXEMPT = ("suite/", "cases/", "scoring/sandbox/", "kinds/")
TRACK_TUPLES = {"FUNCTION_TRACKS", "LIBRARY_TRACKS", "TRACKS"}


def kind_classes() -> set[str]:
    """Names of the classes a kind defines, and of every outcome model."""
    names = {cls.__name__ for cls in _subclasses(OutcomeBase)}
    for folder in ("suite", "cases"):
        for path in (PACKAGE / folder).rglob("*.py"):
            tree = ast.parse(path.read_text())
            names |= {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    return names


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def kind_words() -> set[str]:
    """Every registered track's name and every outcome's `kind` tag."""
    return set(kinds.tracks()) | set(kinds.outcome_types())


def _names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Tuple):
        return [n for elt in node.elts for n in _names(elt)]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    return []


def _words(node: ast.expr, words: set[str]) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in words:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [w for elt in node.elts for w in _words(elt, words)]
    if isinstance(node, ast.Name) and node.id in TRACK_TUPLES:
        return [node.id]
    return []


def sites(path: Path, classes: set[str], words: set[str]) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            hit = [n for n in _names(node.args[1]) if n in classes] if len(node.args) == 2 else []
            if hit:
                found.append((node.lineno, f"isinstance on {', '.join(hit)}"))
        elif isinstance(node, ast.Compare) and any(
            isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops
        ):
            hit = [w for side in (node.left, *node.comparators) for w in _words(side, words)]
            if hit:
                found.append((node.lineno, f"compares with {', '.join(hit)}"))
        elif isinstance(node, ast.match_case):
            hit = [w for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue) for w in _words(p.value, words)]
            if hit:
                found.append((node.lineno, f"matches {', '.join(hit)}"))
    return sorted(found)


def main() -> int:
    quiet = "--quiet" in sys.argv[1:]
    words = kind_words()  # loads the built-in kinds, so their outcome models are subclasses by now
    classes = kind_classes()
    total, modules = 0, 0
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(EXEMPT):
            continue
        found = sites(path, classes, words)
        if found:
            modules += 1
        total += len(found)
        if not quiet:
            for line, what in found:
                print(f"fembench_agents/{rel}:{line}: {what}")
    print(f"{total} site(s) in {modules} module(s) branch on kind or track outside the kinds' packages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

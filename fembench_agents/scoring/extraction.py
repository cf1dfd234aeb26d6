"""The parse and imports stages: from raw model text to checked code.

Parse keeps what a module of functions needs (imports, function and class
definitions, constant assignments) and drops the rest (demo calls, prints,
`if __name__ == "__main__":` blocks). Imports are checked statically against
the task's allowed imports; dynamic imports (`__import__`, `importlib`) count
as disallowed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from fembench_agents.vocabulary import FailureReason

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)


@dataclass(frozen=True)
class ParsedCode:
    code: str
    functions: tuple[str, ...]
    error: str | None = None
    reason: FailureReason | None = None
    line: int | None = None


@dataclass(frozen=True)
class ImportCheck:
    disallowed: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.disallowed


def python_fences(text: str) -> list[re.Match[str]]:
    """Fenced blocks labelled python (or unlabelled), in order, as matches
    (group 2 is the body): the viewer marks these spans of a reply."""
    return [m for m in _FENCE.finditer(text) if m.group(1).lower() in ("", "python", "py", "python3")]


def code_blocks(text: str) -> list[str]:
    """Fenced blocks labelled python (or unlabelled), in order."""
    return [m.group(2) for m in python_fences(text)]


def _select_source(text: str, wanted: tuple[str, ...]) -> str:
    blocks = code_blocks(text)
    if not blocks:
        return text

    def score(block: str) -> int:
        return sum(bool(re.search(rf"^\s*(async\s+)?def\s+{re.escape(w)}\s*\(", block, re.M)) for w in wanted)

    best = max(range(len(blocks)), key=lambda i: (score(blocks[i]), i))
    if score(blocks[best]) == 0 and not wanted:
        return "\n\n".join(blocks)
    return blocks[best] if score(blocks[best]) else "\n\n".join(blocks)


def parse_code(text: str, required: tuple[str, ...], prefix: str | None = None) -> ParsedCode:
    """Extract code defining `required` functions (or, with `prefix`, any
    function starting with it) from fenced or bare model text."""
    if not text or not text.strip():
        return ParsedCode("", (), "the reply contains no code", "empty_reply")
    source = _select_source(text, required)
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return ParsedCode(source, (), f"SyntaxError: {exc.msg} (line {exc.lineno})", "syntax_error", exc.lineno)
    kept: list[ast.stmt] = [node for node in tree.body if isinstance(node, _KEEP)]
    module = ast.Module(body=kept, type_ignores=[])
    names = tuple(n.name for n in kept if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    missing = [r for r in required if r not in names]
    if missing:
        return ParsedCode(
            ast.unparse(module), names, f"no function named {missing[0]!r} is defined", "missing_function"
        )
    if prefix and not any(n.startswith(prefix) for n in names):
        return ParsedCode(
            ast.unparse(module), names, f"no function whose name starts with {prefix!r}", "missing_function"
        )
    return ParsedCode(ast.unparse(module), names)


def allowed_modules(required_imports: tuple[str, ...] | list[str]) -> set[str]:
    """Top-level module names the task's import lines bring in."""
    allowed = {"__future__"}
    for line in required_imports:
        try:
            tree = ast.parse(line)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                allowed |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                allowed.add(node.module.split(".")[0])
    return allowed


def check_imports(code: str, required_imports: tuple[str, ...] | list[str]) -> ImportCheck:
    allowed = allowed_modules(required_imports)
    bad: list[str] = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            bad += [f"import {a.name}" for a in node.names if a.name.split(".")[0] not in allowed]
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level or mod.split(".")[0] not in allowed:
                bad.append(f"from {'.' * node.level}{mod} import ...")
        elif isinstance(node, ast.Name) and node.id in ("__import__", "importlib"):
            bad.append(f"dynamic import via {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in ("__import__", "import_module"):
            bad.append(f"dynamic import via .{node.attr}")
    return ImportCheck(tuple(dict.fromkeys(bad)))

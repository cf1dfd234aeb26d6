"""Mutants of a task's reference by AST rewriting (the four operators are
described in `suite.mutation`): one mutation per mutant, each the full module
source with one function replaced by its mutated text."""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from fembench_agents.suite.model import Task

Operator = Literal["constant", "operator", "index", "transpose"]
OPERATORS: tuple[Operator, ...] = ("constant", "operator", "index", "transpose")


@dataclass(frozen=True)
class Mutant:
    """One mutated module. `line` is the mutated node's line in the original module."""

    function: str
    operator: Operator
    description: str
    line: int
    source: str


_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
}
_SYMBOL: dict[type[ast.operator], str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _perturbed(value: int | float) -> int | float:
    if value == 0:
        return 1 if isinstance(value, int) else 1.0
    return value + 1 if isinstance(value, int) else value * 1.5


def _int_index(node: ast.expr) -> int | None:
    """The value of a constant integer index (`3` or `-1`), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int)
        and not isinstance(node.operand.value, bool)
    ):
        return -node.operand.value
    return None


def _index_node(value: int, like: ast.expr) -> ast.expr:
    node: ast.expr = ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.copy_location(node, like)


def _short(node: ast.AST, limit: int = 60) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Mutator(ast.NodeTransformer):
    """Walks a function and applies the mutation at site number `target`
    (every site is counted in the same order on every walk)."""

    def __init__(self, target: int, numpy_names: frozenset[str]) -> None:
        self.target = target
        self.numpy_names = numpy_names
        self.count = 0
        self.applied: tuple[Operator, str, int] | None = None

    def _hit(self, operator: Operator, description: Callable[[], str], node: ast.AST) -> bool:
        hit = self.count == self.target
        self.count += 1
        if hit:
            self.applied = (operator, description(), getattr(node, "lineno", 0))
        return hit

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            new = _perturbed(value)
            if self._hit("constant", lambda: f"constant {value!r} -> {new!r} (column {node.col_offset + 1})", node):
                return ast.copy_location(ast.Constant(new), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        op = type(node.op)
        if op in _SWAP and self._hit(
            "operator", lambda: f"operator {_SYMBOL[op]} -> {_SYMBOL[_SWAP[op]]} in {_short(node)}", node
        ):
            return ast.copy_location(ast.BinOp(node.left, _SWAP[op](), node.right), node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        op = type(node.op)
        if op in _SWAP and self._hit(
            "operator", lambda: f"operator {_SYMBOL[op]}= -> {_SYMBOL[_SWAP[op]]}= in {_short(node)}", node
        ):
            return ast.copy_location(ast.AugAssign(node.target, _SWAP[op](), node.value), node)
        return node

    def _shift(self, element: ast.expr, where: ast.Subscript, position: int | None) -> ast.expr:
        k = _int_index(element)
        assert k is not None

        def describe() -> str:
            shifted = copy.deepcopy(where)
            if position is None:
                shifted.slice = _index_node(k + 1, element)
            else:
                assert isinstance(shifted.slice, ast.Tuple)
                shifted.slice.elts[position] = _index_node(k + 1, element)
            return f"index {_short(where)} -> {_short(shifted)}"

        if self._hit("index", describe, where):
            return _index_node(k + 1, element)
        return element

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        original = copy.copy(node)
        node.value = self.visit(node.value)
        s = node.slice
        if _int_index(s) is not None:
            node.slice = self._shift(s, original, None)
        elif isinstance(s, ast.Tuple):
            s.elts = [
                self._shift(e, original, i) if _int_index(e) is not None else self.visit(e)
                for i, e in enumerate(s.elts)
            ]
        else:
            node.slice = self.visit(s)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if (
            node.attr == "T"
            and isinstance(node.ctx, ast.Load)
            and self._hit(
                "transpose", lambda: f"transpose dropped: {ast.unparse(node)} -> {ast.unparse(node.value)}", node
            )
        ):
            return node.value
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr == "transpose") or node.keywords:
            return node
        if isinstance(f.value, ast.Name) and f.value.id in self.numpy_names:
            if (
                len(node.args) == 1
                and not isinstance(node.args[0], ast.Starred)
                and self._hit(
                    "transpose", lambda: f"transpose dropped: {ast.unparse(node)} -> {ast.unparse(node.args[0])}", node
                )
            ):
                return node.args[0]
        elif not node.args and self._hit(
            "transpose", lambda: f"transpose dropped: {ast.unparse(node)} -> {ast.unparse(f.value)}", node
        ):
            return f.value
        return node


def _numpy_names(tree: ast.Module) -> frozenset[str]:
    names = {"np", "numpy"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.asname or a.name for a in node.names if a.name == "numpy")
    return frozenset(names)


def _module_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    functions: dict[str, ast.FunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node  # a later definition wins, as when the module runs
    return functions


def mutated_functions(module_source: str, main_name: str, exclude: tuple[str, ...] | set[str] = ()) -> list[str]:
    """The main function and the module-level functions it uses, directly or
    through each other, in module order; `exclude` (tests, expected failures,
    task_info) are never included."""
    tree = ast.parse(module_source)
    functions = _module_functions(tree)
    if main_name not in functions:
        raise ValueError(f"no module-level function named {main_name!r}")
    skip = set(exclude) | {"task_info"}
    used, todo = {main_name}, [main_name]
    while todo:
        for node in ast.walk(functions[todo.pop()]):
            if isinstance(node, ast.Name) and node.id in functions and node.id not in used and node.id not in skip:
                used.add(node.id)
                todo.append(node.id)
    return [name for name in functions if name in used]


def generate_mutants(module_source: str, main_name: str, exclude: tuple[str, ...] | set[str] = ()) -> list[Mutant]:
    """Every single-site mutant of the main function and of the helpers it uses.
    Mutants whose function text is unchanged or repeats another's are dropped."""
    tree = ast.parse(module_source)
    functions = _module_functions(tree)
    numpy_names = _numpy_names(tree)
    lines = module_source.splitlines(keepends=True)
    mutants: list[Mutant] = []
    for name in mutated_functions(module_source, main_name, exclude):
        fdef = functions[name]
        start = min([fdef.lineno, *(d.lineno for d in fdef.decorator_list)])
        end = fdef.end_lineno or fdef.lineno
        before, after = "".join(lines[: start - 1]), "".join(lines[end:])
        seen = {ast.unparse(fdef)}
        k = 0
        while True:
            m = _Mutator(k, numpy_names)
            new = m.visit(copy.deepcopy(fdef))
            k += 1
            if m.applied is None:
                break
            text = ast.unparse(ast.fix_missing_locations(new))
            if text in seen:
                continue
            seen.add(text)
            source = before + text + "\n" + after
            compile(source, "<mutant>", "exec", dont_inherit=True)  # a generated mutant is always valid Python
            operator, description, line = m.applied
            mutants.append(Mutant(function=name, operator=operator, description=description, line=line, source=source))
    return mutants


def task_mutants(task: Task) -> list[Mutant]:
    return generate_mutants(task.module_source, task.main_name, _excluded(task))


def _excluded(task: Task) -> tuple[str, ...]:
    return (*task.test_names, *task.expected_failure_names, "task_info")

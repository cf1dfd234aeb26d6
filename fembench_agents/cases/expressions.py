"""The expression language of a case_spec: Python syntax over the names
x, y (z on the unit cube), t (and u in a reaction term), the constants pi and E, and the functions
sin, cos, tan, exp, log, sqrt, sinh, cosh, tanh, atan, step (Heaviside). A solver evaluates one
with numpy, for example `eval(expr, {"sin": np.sin, ..., "x": X, "y": Y})`;
`compile_expr` does exactly that after checking the syntax tree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

FUNCTIONS: dict[str, Any] = {
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "atan": np.arctan,
    "step": lambda s: np.heaviside(s, 0.5),  # a discontinuous coefficient's switch
}
CONSTANTS: dict[str, float] = {"pi": float(np.pi), "E": float(np.e)}
VARIABLES = ("x", "y", "z", "t", "u")
_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Call,
    ast.Name,
    ast.Constant,
    ast.Load,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.Pow,
    ast.USub,
    ast.UAdd,
)


class ExpressionError(ValueError):
    pass


def check_expr(text: str) -> ast.Expression:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"not an expression: {text!r} ({exc.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise ExpressionError(f"{type(node).__name__} not allowed in expression {text!r}")
        if isinstance(node, ast.Name) and node.id not in (*FUNCTIONS, *CONSTANTS, *VARIABLES):
            raise ExpressionError(f"unknown name {node.id!r} in expression {text!r}")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            raise ExpressionError(f"only the listed functions may be called in {text!r}")
        if isinstance(node, ast.Constant) and not isinstance(node.value, int | float):
            raise ExpressionError(f"only numeric constants allowed in {text!r}")
    return tree


def compile_expr(text: str | float) -> Callable[..., np.ndarray]:
    """A numpy function of keyword arrays (x=, y=, t=, u=), broadcast to the
    shape of x (constant expressions give a full array too)."""
    code = compile(check_expr(str(text)), "<case expression>", "eval")

    def f(**vars_: Any) -> np.ndarray:
        env: dict[str, Any] = {"__builtins__": {}, **FUNCTIONS, **CONSTANTS, **vars_}
        # Off its domain an expression may be NaN (a boundary trace at an arc's centre, a root of a
        # negative number): callers mask those points or check finiteness; a warning only clutters
        # an import's or a validation's output with hundreds of lines.
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            value = eval(code, env)  # noqa: S307 - syntax tree checked above
        like: Any = vars_.get("x", vars_.get("u", 0.0))
        return np.broadcast_to(np.asarray(value, dtype=float), np.shape(like)).copy()

    return f


def evaluate(text: str | float, **vars_: Any) -> np.ndarray:
    return compile_expr(text)(**vars_)

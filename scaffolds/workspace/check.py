"""Public checks of your solution: it parses, uses only allowed imports,
imports, and defines what the task asks with the right signature (and, when
the docstring shows examples, runs them). Passing these checks does NOT mean
the solution is correct: the hidden evaluation runs it on other inputs."""

import ast
import doctest
import inspect
import json
import sys
import traceback

SPEC = json.loads("""__SPEC__""")


__CHECKS__


def fail(message):
    print("CHECK FAILED: " + message)
    sys.exit(1)


def save_outputs(fields):
    """With `--save-outputs PATH`, the arrays the solution returned go to PATH (.npz)."""
    if "--save-outputs" in sys.argv[1:-1]:
        import numpy as np

        np.savez(sys.argv[sys.argv.index("--save-outputs") + 1], **fields)


def main():
    path = SPEC["solution"]
    try:
        source = open(path, encoding="utf-8").read()
    except OSError as exc:
        fail(f"cannot read {path}: {exc}")
    try:
        tree = ast.parse(source, path)
    except SyntaxError as exc:
        fail(f"{path} does not parse: {exc.msg} (line {exc.lineno})")
    allowed = set(SPEC["allowed_modules"])
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["." if node.level else (node.module or "")]
        for name in names:
            if name.split(".")[0] not in allowed:
                fail(f"import of {name!r} is not allowed; allowed modules: {sorted(allowed)}")
    namespace = {"__name__": "solution"}
    try:
        exec(compile(source, path, "exec"), namespace)
    except Exception:
        fail(f"{path} raised while being imported:\n" + traceback.format_exc(limit=3))
    check(namespace, tree, path)
    print("CHECK PASSED (public checks only: import, signature" +
          (", docstring examples" if SPEC.get("has_examples") else "") + ")")


main()

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


def fail(message):
    print("CHECK FAILED: " + message)
    sys.exit(1)


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
    if SPEC["track"] == "code":
        fn = namespace.get(SPEC["function"])
        if not callable(fn):
            fail(f"{path} defines no function named {SPEC['function']!r}")
        got = [[p.name, p.kind.name] for p in inspect.signature(fn).parameters.values()]
        if got != SPEC["parameters"]:
            fail(f"signature of {SPEC['function']} is {got}, expected {SPEC['parameters']}")
        if SPEC["has_examples"]:
            finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
            for test in finder.find(fn, SPEC["function"], globs=dict(namespace)):
                runner.run(test)
            if runner.failures:
                fail(f"{runner.failures} docstring example(s) failed (see above)")
        try:
            body = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == SPEC["function"]][0].body
            stub = all(isinstance(n, (ast.Expr, ast.Raise, ast.Pass)) for n in body)
        except IndexError:
            stub = False
        if stub:
            fail(f"{SPEC['function']} is still a stub: implement it")
    elif SPEC["track"] == "case":
        fn = namespace.get("solve")
        if not callable(fn):
            fail(f"{path} defines no function named 'solve'")
        import numpy as np

        with open(SPEC["case_spec"], encoding="utf-8") as fh:
            out = fn(json.load(fh))
        if not isinstance(out, dict):
            fail(f"solve returned {type(out).__name__}, expected a dict")
        for name, shape in SPEC["fields"].items():
            arr = out.get(name)
            if not isinstance(arr, np.ndarray) or list(arr.shape) != shape:
                fail(f"output[{name!r}] must be a numpy array of shape {tuple(shape)}")
    else:
        for name in SPEC["tests"]:
            fn = namespace.get(name)
            if not callable(fn):
                fail(f"{path} defines no test function named {name!r}")
            if len(inspect.signature(fn).parameters) != 1:
                fail(f"{name} must take exactly one argument, fcn")
    print("CHECK PASSED (public checks only: import, signature" +
          (", docstring examples" if SPEC.get("has_examples") else "") + ")")


main()

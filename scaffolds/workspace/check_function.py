def check(namespace, tree, path):
    """What the task asks on its track: the function and its signature, or the test functions."""
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
    else:
        for name in SPEC["tests"]:
            fn = namespace.get(name)
            if not callable(fn):
                fail(f"{path} defines no test function named {name!r}")
            if len(inspect.signature(fn).parameters) != 1:
                fail(f"{name} must take exactly one argument, fcn")

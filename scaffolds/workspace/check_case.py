def check(namespace, tree, path):
    """solve(case_spec) runs on the case_spec and returns the output fields in their shapes."""
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
    save_outputs({name: out[name] for name in SPEC["fields"]})

"""Template-guided skeleton for the numpy-scipy PDE track. It runs and returns
output of the right shape; the discretisation and solve are yours to write."""

import numpy as np
import scipy.sparse as sps  # noqa: F401
import scipy.sparse.linalg as spla  # noqa: F401

_FUNCS = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
          "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "atan": np.arctan, "pi": np.pi, "E": np.e,
          "step": lambda s: np.heaviside(s, 0.5)}


def expr(text, **variables):
    """Evaluate a case_spec expression with numpy (x, y, t, u as arrays or floats)."""
    value = eval(str(text), {"__builtins__": {}, **_FUNCS}, variables)
    return np.broadcast_to(np.asarray(value, dtype=float), np.shape(variables.get("x", 0.0))).copy()


def on_segment(x, y, a, b, tol=1e-12):
    (ax, ay), (bx, by) = a, b
    if ax == bx:
        return (np.abs(x - ax) <= tol) & (y >= min(ay, by) - tol) & (y <= max(ay, by) + tol)
    return (np.abs(y - ay) <= tol) & (x >= min(ax, bx) - tol) & (x <= max(ax, bx) + tol)


def solve(case_spec):
    g = case_spec["grid"]
    x = np.linspace(g["bbox"][0], g["bbox"][1], g["nx"])
    y = np.linspace(g["bbox"][2], g["bbox"][3], g["ny"])
    X, Y = np.meshgrid(x, y)  # shape (ny, nx): rows are y
    # TODO: which grid points are in the domain (case_spec["domain"]: outer polygon and holes)
    inside = np.ones_like(X, dtype=bool)
    # TODO: discretise case_spec["equation"] with case_spec["coefficients"], case_spec["forcing"],
    #       Dirichlet data per piece in case_spec["boundary"] (use on_segment), and
    #       case_spec["initial"] / case_spec["time"] for time-dependent families.
    shape = tuple(case_spec["output"]["fields"]["u"]["shape"])
    u = np.zeros(shape)
    u[..., ~inside] = np.nan
    return {"u": u, "solver_info": {"mesh_resolution": g["nx"] - 1, "element_degree": 1, "dofs": int(inside.sum())}}

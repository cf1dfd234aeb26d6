"""Hand-written solver attempts for the PDE case `poisson_square_oscillating`
(-div(k grad u) = f on the unit square, Dirichlet data per boundary piece), as
a model would write them: source text, scored through the real sandbox.

`finite_difference(refine, ...)` is a 5-point finite-difference solver with
the coefficient at cell faces, solved on a grid `refine` times finer than the
evaluation grid and sampled back onto it."""

from __future__ import annotations

CASE = "poisson_square_oscillating"

_TEMPLATE = """
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

_F = {{"sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
      "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "atan": np.arctan, "pi": np.pi, "E": np.e}}


def ev(text, x, y):
    value = eval(str(text), {{"__builtins__": {{}}, **_F}}, {{"x": x, "y": y}})
    return np.broadcast_to(np.asarray(value, dtype=float), np.shape(x)).copy()


def solve(case_spec):
    g = case_spec["grid"]
    n = (g["nx"] - 1) * {refine} + 1
    h = 1.0 / (n - 1)
    x = np.linspace(0.0, 1.0, n)
    X, Y = np.meshgrid(x, x)  # rows are y
    u = np.zeros((n, n))
    edge = np.zeros((n, n), dtype=bool)
    for piece in case_spec["boundary"]:
        (ax, ay), (bx, by) = piece["segment"]
        on = (np.abs((bx - ax) * (Y - ay) - (by - ay) * (X - ax)) < 1e-12) & (
            np.minimum(ax, bx) - 1e-12 <= X) & (X <= np.maximum(ax, bx) + 1e-12) & (
            np.minimum(ay, by) - 1e-12 <= Y) & (Y <= np.maximum(ay, by) + 1e-12)
        u[on] = {sign} * ev(piece["value"], X[on], Y[on])
        edge |= on
    k = case_spec["coefficients"]["k"]
    f = ev(case_spec["forcing"], X, Y)
    inner = np.flatnonzero(~edge.ravel())
    index = -np.ones(n * n, dtype=int)
    index[inner] = np.arange(inner.size)
    rows, cols, vals = [], [], []
    rhs = f.ravel()[inner] * h * h
    j, i = np.divmod(inner, n)
    diag = np.zeros(inner.size)
    for dj, di in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        kf = ev(k, x[i] + 0.5 * di * h, x[j] + 0.5 * dj * h)
        diag += kf
        nb = (j + dj) * n + (i + di)
        inside = index[nb] >= 0
        rows.append(np.arange(inner.size)[inside])
        cols.append(index[nb][inside])
        vals.append(-kf[inside])
        rhs[~inside] += kf[~inside] * u.ravel()[nb[~inside]]
    A = sp.csr_matrix((np.concatenate([diag, *vals]),
                       (np.concatenate([np.arange(inner.size), *rows]), np.concatenate([np.arange(inner.size), *cols]))),
                      shape=(inner.size, inner.size))
    flat = u.ravel()
    flat[inner] = spla.spsolve(A.tocsc(), rhs)
    out = flat.reshape(n, n)[::{refine}, ::{refine}].copy()
    {after}
    return {{"u": out, "solver_info": {{"mesh_resolution": n - 1, "element_degree": 1, "dofs": int(inner.size),
                                        "method": "fd5"}}}}
"""


def finite_difference(refine: int = 2, sign: str = "1.0", after: str = "pass") -> str:
    return _TEMPLATE.format(refine=refine, sign=sign, after=after)


CORRECT = finite_difference(2)
WRONG_BOUNDARY = finite_difference(2, sign="-1.0")  # the boundary data with the wrong sign
NAN_INSIDE = finite_difference(2, after="out[20, 20] = np.nan")  # (x, y) = (20/48, 20/48): inside
SLOW = finite_difference(8)  # accurate, but 16x the unknowns of CORRECT and a far larger factorisation
RAISES = finite_difference(2, after="raise ValueError('the mesh is too coarse: ' + str(out.shape))")
TRANSPOSED_SHAPE = finite_difference(2, after="out = out[:, :-1]")

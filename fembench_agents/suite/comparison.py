"""Recursive comparison of an attempt's output with the reference output.

Scalars and arrays compare numerically with `|a - b| <= atol * scale + rtol * |b|`,
where `scale = max(1, max|b|)` over the array, so round-off zeros in a
stiffness matrix of magnitude 1e9 do not fail a correct answer. Containers
compare element by element (lists and tuples interchangeably, dicts by key).
Invariance rules let a task declare outputs defined only up to sign or scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fembench_agents.scoring.codec import Unsupported
from fembench_agents.suite.model import Comparison

Path = tuple[int | str, ...]


@dataclass(frozen=True)
class Mismatch:
    kind: str  # type_mismatch | shape_mismatch | length_mismatch | keys_mismatch | non_finite | value_mismatch | unsupported_output
    path: Path
    relative_error: float | None = None

    @property
    def where(self) -> str:
        return "output" + "".join(f"[{p!r}]" for p in self.path)


def _scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex, np.generic)) and not isinstance(x, (str, bytes))


def _numeric_array(x: Any) -> np.ndarray | None:
    if isinstance(x, np.ndarray):
        return x if x.dtype.kind in "biufc" else None
    if _scalar(x):
        arr = np.asarray(x)  # an int beyond 64 bits becomes an object array: not numeric
        return arr if arr.dtype.kind in "biufc" else None
    if isinstance(x, (list, tuple)) and all(_scalar(v) for v in x):
        arr = np.asarray(x)
        return arr if arr.dtype.kind in "biufc" else None
    return None


def _aligned(a: np.ndarray, b: np.ndarray, invariance: str) -> np.ndarray:
    """`a` multiplied per vector (columns of a 2-D array) by the sign or scale
    that best matches `b`."""
    a2 = a.reshape(a.shape[0], -1) if a.ndim > 1 else a.reshape(-1, 1)
    b2 = b.reshape(a2.shape)
    out = np.empty_like(a2, dtype=np.result_type(a2, b2, float))
    for j in range(a2.shape[1]):
        u, v = a2[:, j], b2[:, j]
        denom = np.vdot(u, u)
        factor = np.vdot(u, v) / denom if denom > 0 else 0.0
        if invariance == "sign":
            factor = 1.0 if np.real(factor) >= 0 else -1.0
        out[:, j] = factor * u
    return out.reshape(a.shape)


def _compare_arrays(
    a: np.ndarray, b: np.ndarray, path: Path, cmp: Comparison, invariance: str | None
) -> Mismatch | None:
    if a.shape != b.shape:
        return Mismatch("shape_mismatch", path)
    if b.dtype.kind == "b" or a.dtype.kind == "b":
        return (
            None
            if np.array_equal(a.astype(bool) if a.dtype.kind == "b" else a, b)
            else Mismatch("value_mismatch", path)
        )
    # non-finite entries must sit where the reference has them, with the same value (NaN matches NaN)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)) or not np.array_equal(
        a[~np.isfinite(a)], b[~np.isfinite(b)], equal_nan=True
    ):
        return Mismatch("non_finite", path)
    finite = np.isfinite(b)
    a_f, b_f = a[finite], b[finite]
    if invariance and a.size:
        a_f = _aligned(np.where(np.isfinite(a), a, 0), np.where(finite, b, 0), invariance)[finite]
    scale = max(1.0, float(np.max(np.abs(b_f)))) if b_f.size else 1.0
    diff = np.abs(a_f - b_f)
    if np.all(diff <= cmp.atol * scale + cmp.rtol * np.abs(b_f)):
        return None
    return Mismatch("value_mismatch", path, float(np.max(diff) / scale))


def compare_outputs(candidate: Any, reference: Any, cmp: Comparison, path: Path = ()) -> Mismatch | None:
    """None when `candidate` matches `reference`; otherwise the first mismatch."""
    if isinstance(candidate, Unsupported):
        return Mismatch("unsupported_output", path)
    invariance = next((r.invariance for r in cmp.rules if tuple(r.path) == path), None)
    ref_arr = _numeric_array(reference)
    if ref_arr is not None:
        cand_arr = _numeric_array(candidate)
        if cand_arr is None:
            return Mismatch("type_mismatch", path)
        return _compare_arrays(cand_arr, ref_arr, path, cmp, invariance)
    if reference is None or isinstance(reference, str):
        return (
            None
            if type(candidate) is type(reference) and candidate == reference
            else Mismatch("type_mismatch" if type(candidate) is not type(reference) else "value_mismatch", path)
        )
    if isinstance(reference, dict):
        if not isinstance(candidate, dict):
            return Mismatch("type_mismatch", path)
        if set(candidate) != set(reference):
            return Mismatch("keys_mismatch", path)
        for key in sorted(reference, key=repr):
            found = compare_outputs(candidate[key], reference[key], cmp, path + (key,))
            if found:
                return found
        return None
    if isinstance(reference, (list, tuple)):
        if not isinstance(candidate, (list, tuple)):
            return Mismatch("type_mismatch", path)
        if len(candidate) != len(reference):
            return Mismatch("length_mismatch", path)
        for i, (c, r) in enumerate(zip(candidate, reference, strict=True)):
            found = compare_outputs(c, r, cmp, path + (i,))
            if found:
                return found
        return None
    if isinstance(reference, (set, frozenset)):
        same = isinstance(candidate, (set, frozenset)) and candidate == reference
        return None if same else Mismatch("value_mismatch", path)
    return Mismatch("unsupported_output", path)

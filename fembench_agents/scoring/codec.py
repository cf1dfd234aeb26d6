"""Plain-data encoding for values that cross a process boundary.

Values returned by untrusted code are never unpickled: the child encodes them
as tagged JSON and the parent decodes that JSON into plain numpy arrays,
scalars and containers only. Whatever a child sends, the parent gets data.
"""

from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

# dtype kinds the parent accepts; everything else is reported as unsupported.
_DTYPES = {
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "complex64": np.complex64,
    "complex128": np.complex128,
}
MAX_DEPTH = 64
# A verification input that holds callables or objects of the task module's own
# (FEM-Bench passes body forces as lambdas): it cannot cross as data, so the
# task carries `{TASK_INPUT: index}` and the sandbox child builds that entry of
# `reference_verification_inputs` from the task module itself.
TASK_INPUT = "__task_input__"


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A value the encoder could not represent as data (callable, custom object...)."""

    type_name: str

    def __repr__(self) -> str:
        return f"<unsupported {self.type_name}>"


def _float(x: float) -> Any:
    if math.isfinite(x):
        return x
    return {"__float__": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def to_data(value: Any, depth: int = 0) -> Any:
    """Encode a value as JSON-compatible tagged data. Containers of exact types
    only: a subclass of list, tuple, dict or set is unsupported (iterating it
    would run its methods); an ndarray subclass is encoded as its base array."""
    if depth > MAX_DEPTH:
        return {"__unsupported__": "too deeply nested"}
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        return value if abs(value) < 2**63 else {"__bigint__": str(value)}
    if t is float:
        return _float(value)
    if t is complex:
        return {"__complex__": [_float(value.real), _float(value.imag)]}
    if isinstance(value, np.ndarray):
        return _array(np.asarray(value).view(np.ndarray), "ndarray")
    if isinstance(value, np.generic):
        encoded = _array(np.asarray(value), "numpy scalar")
        return {"__npscalar__": encoded} if "__ndarray__" in encoded else encoded
    if t is list:
        return [to_data(v, depth + 1) for v in value]
    if t is tuple:
        return {"__tuple__": [to_data(v, depth + 1) for v in value]}
    if t is dict:
        return {"__dict__": [[to_data(k, depth + 1), to_data(v, depth + 1)] for k, v in value.items()]}
    if t is set:
        return {"__set__": [to_data(v, depth + 1) for v in value]}
    if t is frozenset:  # hashable: a dict key or a set's element (a mesh's edges)
        return {"__frozenset__": [to_data(v, depth + 1) for v in value]}
    return {"__unsupported__": f"{t.__module__}.{t.__qualname__}"[:200]}


def _array(arr: np.ndarray, kind: str) -> dict[str, Any]:
    name = arr.dtype.name
    if name not in _DTYPES:
        return {"__unsupported__": f"{kind} of dtype {name}"}
    data = np.ascontiguousarray(arr).tobytes()
    return {"__ndarray__": {"dtype": name, "shape": list(arr.shape), "data": base64.b64encode(data).decode("ascii")}}


def _hashable(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_hashable(v) for v in x)
    if isinstance(x, np.ndarray):
        return Unsupported("ndarray as key")
    return x


def from_data(data: Any, depth: int = 0) -> Any:
    """Decode `to_data` output into plain values; malformed input raises ValueError."""
    if depth > MAX_DEPTH + 2:
        raise ValueError("encoded value nested too deeply")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [from_data(v, depth + 1) for v in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise ValueError("malformed encoded value: expected a single-key tagged object")
    ((tag, body),) = data.items()
    try:
        return _tagged(tag, body, depth)
    except (KeyError, TypeError, IndexError, AttributeError):  # a known tag, its body misshapen (an unknown tag raised)
        raise ValueError(f"malformed encoded value: a {tag!r} body that to_data does not write") from None


def _tagged(tag: Any, body: Any, depth: int) -> Any:
    if tag == "__ndarray__":
        dtype = _DTYPES.get(str(body.get("dtype"))) if isinstance(body, dict) else None
        if dtype is None:
            raise ValueError("malformed ndarray: unknown dtype")
        shape = tuple(int(s) for s in body["shape"])
        if any(s < 0 for s in shape):
            raise ValueError("malformed ndarray: a negative dimension")
        raw = base64.b64decode(body["data"], validate=True)
        arr: np.ndarray = np.frombuffer(raw, dtype=dtype)
        if arr.size != math.prod(shape):
            raise ValueError("malformed ndarray: size does not match shape")
        return arr.reshape(shape).copy()
    if tag == "__npscalar__":
        arr = from_data(body, depth + 1)
        if not isinstance(arr, np.ndarray) or arr.shape != ():
            raise ValueError("malformed numpy scalar")
        return arr[()]
    if tag == "__float__":
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[body]
    if tag == "__bigint__":
        return int(body)
    if tag == "__complex__":
        return complex(from_data(body[0]), from_data(body[1]))  # floats: nothing nested to count
    if tag == "__tuple__":
        return tuple(from_data(v, depth + 1) for v in body)
    if tag == "__dict__":
        if not all(isinstance(pair, list) and len(pair) == 2 for pair in body):
            raise TypeError  # from_data reports the body as misshapen, naming its tag
        return {_hashable(from_data(k, depth + 1)): from_data(v, depth + 1) for k, v in body}
    if tag == "__set__":
        return {_hashable(from_data(v, depth + 1)) for v in body}
    if tag == "__frozenset__":
        return frozenset(_hashable(from_data(v, depth + 1)) for v in body)
    if tag == "__unsupported__":
        return Unsupported(str(body)[:200])
    raise ValueError(f"malformed encoded value: unknown tag {str(tag)[:40]!r}")


def dumps(value: Any) -> str:
    return json.dumps(to_data(value), allow_nan=False)


def loads(text: str) -> Any:
    return from_data(json.loads(text))

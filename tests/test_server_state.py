"""The fingerprint an implementation server compares after each pair
(`sandbox/server_state.py`): whatever a call leaves that a later call could
see changes it; a call that leaves nothing does not."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from fembench_agents.scoring.sandbox.implementation import build_implementation
from fembench_agents.scoring.sandbox.server_state import _ADDRESS_SPACE_SLACK, fingerprint, unchanged

PURE = """
import numpy as np

TABLE = np.array([1.0, 2.0])
WEIGHTS = {"a": [1, 2]}

def _helper(x):
    return np.asarray(x, dtype=float) * TABLE[0]

def scale_vector(x, factor):
    return factor * _helper(x) + WEIGHTS["a"][0] - 1
"""

# Each keeps something of its arguments where a later call could find it.
STATEFUL = {
    "module list": "KEPT = []\ndef scale_vector(x, factor):\n    KEPT.append(factor)\n    return x",
    "module dict": "SEEN = {}\ndef scale_vector(x, factor):\n    SEEN[str(factor)] = x\n    return x",
    "rebound global": "LAST = None\ndef scale_vector(x, factor):\n    global LAST\n    LAST = factor\n    return x",
    "mutable default": "def scale_vector(x, factor, _memo=[]):\n    _memo.append(factor)\n    return x",
    "function attribute": "def scale_vector(x, factor):\n    scale_vector.calls = factor\n    return x",
    "array in place": "import numpy as np\nT = np.zeros(3)\ndef scale_vector(x, factor):\n    T[0] = factor\n    return x",
    "class attribute": (
        "class Cache:\n    last = None\ndef scale_vector(x, factor):\n    Cache.last = factor\n    return x"
    ),
    "instance attribute": (
        "class Box:\n    pass\nBOX = Box()\ndef scale_vector(x, factor):\n    BOX.value = factor\n    return x"
    ),
    "closure": (
        "def _make():\n    seen = []\n    def keep(v):\n        seen.append(v)\n    return keep\nKEEP = _make()\n"
        "def scale_vector(x, factor):\n    KEEP(factor)\n    return x"
    ),
    "lru_cache": (
        "import functools\n@functools.lru_cache\ndef _cached(f):\n    return f\n"
        "def scale_vector(x, factor):\n    return _cached(factor)"
    ),
    "random generator": (
        "import numpy as np\nRNG = np.random.default_rng(0)\ndef scale_vector(x, factor):\n    return RNG.random()"
    ),
    "environment": "import os\ndef scale_vector(x, factor):\n    os.environ['KEPT'] = str(factor)\n    return x",
    "numpy settings": "import numpy as np\ndef scale_vector(x, factor):\n    np.seterr(all='raise')\n    return x",
}


@pytest.fixture(autouse=True)
def _process_settings_restored() -> Iterator[None]:
    """Some implementations change what the whole process sees (its environment, numpy's error handling)."""
    environment, errors = dict(os.environ), np.geterr()
    yield
    os.environ.clear()
    os.environ.update(environment)
    np.seterr(**errors)


def _built(source: str) -> Callable[..., Any]:
    return build_implementation({"function": "scale_vector", "module_source": source})


def test_a_call_that_keeps_nothing_leaves_the_fingerprint_as_it_was() -> None:
    fn = _built(PURE)
    before = fingerprint(fn)
    for factor in (1.0, 2.0, -3.0):
        fn(np.array([1.0, 2.0]), factor)
    assert unchanged(before, fingerprint(fn))
    assert fingerprint(fn)[0] == before[0]


@pytest.mark.parametrize("kind", list(STATEFUL))
def test_a_call_that_keeps_its_arguments_changes_the_fingerprint(kind: str) -> None:
    fn = _built(STATEFUL[kind])
    before = fingerprint(fn)
    fn(np.array([1.0]), 7.0)
    assert not unchanged(before, fingerprint(fn)), kind


def test_memory_kept_past_the_slack_is_a_change() -> None:
    fn = _built("KEPT = []\ndef scale_vector(x, n):\n    return x")
    digest, size = fingerprint(fn)
    assert unchanged((digest, size), (digest, size + _ADDRESS_SPACE_SLACK))
    assert not unchanged((digest, size), (digest, size + _ADDRESS_SPACE_SLACK + 1))

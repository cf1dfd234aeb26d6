"""A job reaches of the warm worker's preloaded modules what a fresh interpreter
would give it (scoring/sandbox/fresh_view.py, fresh_probe.py): a preloaded
submodule that the attempt did not import is not an attribute of its package,
with the AttributeError text a fresh interpreter gives; importing it, in any
spelling, hands back the preloaded module and binds what a fresh import binds.

cffi stands in for a preloaded library (its `cparser` is not bound by `import
cffi`); the real DOLFINx preload of the PDE track is measured as well."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from fembench_agents.cases import dolfinx_env
from fembench_agents.scoring import codec
from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy
from fembench_agents.scoring.sandbox.fresh_probe import fresh_view_data
from fembench_agents.scoring.sandbox.fresh_view import FreshView
from fembench_agents.scoring.sandbox.policy import sandbox_env
from fembench_agents.scoring.sandbox.pool import _PACKAGE_PARENT as PACKAGE_PARENT

USES_CPARSER = "import cffi\n\n\ndef f(x):\n    return cffi.cparser.__name__\n"
NO_CPARSER = "module 'cffi' has no attribute 'cparser'"
MPI_FIRST = "from mpi4py import MPI\n"  # this install's dolfinx needs it loaded first (dolfinx_env)
USES_PETSC = MPI_FIRST + "from dolfinx import fem, mesh\n\n\ndef f(x):\n    return fem.petsc.LinearProblem.__name__\n"
NO_PETSC = "module 'dolfinx.fem' has no attribute 'petsc'"
ENV = tuple(sorted(sandbox_env().items()))  # the key the pool measures under


def call(sandbox: Sandbox, code: str) -> dict[str, Any]:
    job = {
        "kind": "call",
        "implementation": {"code": code, "function": "f", "preamble": []},
        "inputs": [codec.to_data([2.0])],
    }
    result = sandbox.run(job, SandboxPolicy(wall_seconds=60))  # type: ignore[arg-type]
    assert result.isolation == "namespaced" and not result.events("build_error"), result.stderr
    (frame,) = result.events("input")
    return frame


def fresh(code: str) -> str:
    """What `f(2.0)` gives in a fresh interpreter: its value, or `Type: message`."""
    program = code + "\ntry:\n    print(repr(f(2.0)))\nexcept Exception as e:\n    print(f'{type(e).__name__}: {e}')\n"
    done = subprocess.run([sys.executable, "-I", "-c", program], capture_output=True, text=True, timeout=120, cwd="/")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def outcome(frame: dict[str, Any]) -> str:
    if frame["status"] == "ok":
        return repr(codec.from_data(frame["value"]))
    return f"{frame['error_type']}: {frame['message']}"


@pytest.fixture(scope="module")
def cffi_sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=1, preload=("cffi.cparser",)) as box:
        yield box


def test_a_preloaded_submodule_the_attempt_did_not_import_is_no_attribute(cffi_sandbox: Sandbox) -> None:
    assert fresh(USES_CPARSER) == outcome(call(cffi_sandbox, USES_CPARSER)) == f"AttributeError: {NO_CPARSER}"


@pytest.mark.parametrize(
    "spelling",
    [
        "import cffi.cparser\n",
        "import cffi\nfrom cffi import cparser\n",
        "import importlib\nimport cffi\nimportlib.import_module('cffi.cparser')\n",
        "import cffi\n__import__('cffi.cparser')\n",
    ],
)
def test_importing_it_in_any_spelling_makes_it_reachable(cffi_sandbox: Sandbox, spelling: str) -> None:
    code = spelling + "\n\ndef f(x):\n    return cffi.cparser.__name__\n"
    assert fresh(code) == outcome(call(cffi_sandbox, code)) == "'cffi.cparser'"


def test_it_is_not_in_sys_modules_until_imported_and_then_it_is_the_preloaded_module(cffi_sandbox: Sandbox) -> None:
    code = (
        "import sys\nimport cffi\n\nBEFORE = 'cffi.cparser' in sys.modules\n\n\n"
        "def f(x):\n    import cffi.cparser as c\n"
        "    spec = c.__spec__\n"
        "    return [BEFORE, sys.modules['cffi.cparser'] is c, spec.name, type(spec.loader).__name__,\n"
        "            spec.origin.endswith('cparser.py'), 'cffi.commontypes' in sys.modules]\n"
    )
    assert (
        fresh(code)
        == outcome(call(cffi_sandbox, code))
        == "[False, True, 'cffi.cparser', 'SourceFileLoader', True, True]"
    )


def test_a_package_s_own_lazy_attribute_still_imports_its_submodule(cffi_sandbox: Sandbox) -> None:
    # numpy loads numpy.fft and numpy.testing on first use (its __getattr__), in a fresh interpreter too.
    code = "import numpy as np\n\n\ndef f(x):\n    return [np.fft.__name__, np.testing.__name__]\n"
    assert fresh(code) == outcome(call(cffi_sandbox, code)) == "['numpy.fft', 'numpy.testing']"


def test_one_job_s_import_does_not_reach_the_next_job(cffi_sandbox: Sandbox) -> None:
    call(cffi_sandbox, "import cffi.cparser\n\n\ndef f(x):\n    return 1\n")
    assert outcome(call(cffi_sandbox, USES_CPARSER)) == f"AttributeError: {NO_CPARSER}"


def test_the_probe_measures_what_a_fresh_import_of_each_hidden_submodule_binds(cffi_sandbox: Sandbox) -> None:
    # The pool's own measurement for this preload (cached per process): cffi.cparser imports
    # cffi.commontypes; numpy loads fft, random, testing... on first use, so they are hidden too.
    view = FreshView.from_data(json.loads(fresh_view_data(("cffi.cparser",), PACKAGE_PARENT, ENV)))
    assert view.detached["cffi.cparser"] == ("cffi.commontypes", "cffi.cparser")
    assert view.detached["cffi.commontypes"] == ("cffi.commontypes",)
    assert view.detached["numpy.fft"] == (
        "numpy.fft",
        "numpy.fft._helper",
        "numpy.fft._pocketfft",
        "numpy.fft._pocketfft_umath",
    )
    assert {name.partition(".")[0] for name in view.detached} == {"cffi", "numpy"} and view.loaded == frozenset()
    assert not [name for name in view.detached if name.startswith(("numpy.linalg", "numpy._core"))]


def test_a_fresh_view_that_is_not_an_object_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"a fresh view must be an object with 'detached' and 'loaded', got '\[1\]'"):
        FreshView.from_data([1])
    view = FreshView({"a.b": ("a.b", "a.b.c")}, frozenset({"a.b"}))
    assert FreshView.from_data(json.loads(json.dumps(view.to_data()))) == view


@pytest.fixture(scope="module")
def dolfinx_sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=1, preload=dolfinx_env.PRELOAD) as box:
        yield box


def test_with_the_dolfinx_preload_fem_petsc_is_unreachable_until_imported(dolfinx_sandbox: Sandbox) -> None:
    assert fresh(USES_PETSC) == outcome(call(dolfinx_sandbox, USES_PETSC)) == f"AttributeError: {NO_PETSC}"
    imported = USES_PETSC.replace(
        "from dolfinx import fem, mesh\n", "import dolfinx.fem.petsc\nfrom dolfinx import fem\n"
    )
    assert fresh(imported) == outcome(call(dolfinx_sandbox, imported)) == "'LinearProblem'"


def test_importing_fem_petsc_binds_what_a_fresh_import_of_it_binds(dolfinx_sandbox: Sandbox) -> None:
    # dolfinx/fem/petsc.py imports dolfinx.la.petsc: fresh, `import dolfinx.fem.petsc` makes both reachable.
    code = MPI_FIRST + "import dolfinx.fem.petsc\n\n\ndef f(x):\n    return dolfinx.la.petsc.__name__\n"
    assert fresh(code) == outcome(call(dolfinx_sandbox, code)) == "'dolfinx.la.petsc'"
    alone = MPI_FIRST + "import dolfinx\n\n\ndef f(x):\n    return dolfinx.la.petsc.__name__\n"
    expected = "AttributeError: module 'dolfinx.la' has no attribute 'petsc'"
    assert fresh(alone) == outcome(call(dolfinx_sandbox, alone)) == expected

"""Loading task modules: good modules in the published format (with our
extensions), and a clear TaskFormatError naming the file and the key for each
kind of malformed module."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FEM_1D, scale_source, write_module

from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import TaskFormatError, load_task, load_tasks
from fembench_agents.suite.model import Tier

BEAM = '''
import numpy as np
from typing import Tuple


def element_length(x1: float, x2: float) -> float:
    """Length of a 1D element."""
    return abs(x2 - x1)


def bar_stiffness(E: float, A: float, L: float) -> float:
    """Axial stiffness EA/L."""
    return E * A / L


def bar_matrix(x1: float, x2: float, E: float = 1.0, A: float = 1.0) -> np.ndarray:
    """2x2 stiffness matrix of a bar between x1 and x2.

    Returns an array of shape (2, 2).
    """
    k = bar_stiffness(E, A, element_length(x1, x2))
    return k * np.array([[1.0, -1.0], [-1.0, 1.0]])


def test_symmetric(fcn):
    """The matrix is symmetric and singular."""
    K = fcn(0.0, 2.0, 3.0, 1.0)
    assert np.allclose(K, K.T)
    assert np.isclose(np.linalg.det(K), 0.0)


def fail_no_length(x1, x2, E=1.0, A=1.0):
    return E * A * np.array([[1.0, -1.0], [-1.0, 1.0]])


def fail_asymmetric(x1, x2, E=1.0, A=1.0):
    return np.array([[1.0, 0.0], [-1.0, 1.0]])


def task_info():
    return {
        "task_id": "bar_matrix_CC0_H2_T{tier}",
        "task_short_description": "bar stiffness matrix",
        "created_date": "2026-01-01",
        "created_by": "tests",
        "main_fcn": bar_matrix,
        "required_imports": ["import numpy as np", "from typing import Tuple"],
        "fcn_dependencies": {deps},
        "reference_verification_inputs": [[0.0, 2.0, 3.0, 1.0], [1.0, 1.5, 200.0, 0.01]],
        "test_cases": [{"test_code": test_symmetric, "expected_failures": [fail_no_length, fail_asymmetric]}],
        "python_version": "3.12",
        "package_versions": {"numpy": "2.x"},
    }
'''


def beam_source(tier: int) -> str:
    deps = "[element_length, bar_stiffness]" if tier == 1 else "[]"
    return BEAM.replace("{tier}", str(tier)).replace("{deps}", deps)


# ----------------------------------------------------------------- good modules


def test_t1_module_with_helpers(sandbox: Sandbox, tmp_path: Path) -> None:
    task = load_task(write_module(tmp_path, "bar.py", beam_source(1)), sandbox)
    assert task.task_id == "bar_matrix_CC0_H2_T1"
    assert task.tier == Tier(conceptual_challenge=0, helpers_used=2, help_level=1)
    assert task.helper_names == ("element_length", "bar_stiffness")
    assert task.helpers[0].source.startswith("def element_length(x1: float, x2: float) -> float:")
    assert task.unprovided_helpers() == ()
    assert task.main_name == "bar_matrix"
    assert task.main_signature == "def bar_matrix(x1: float, x2: float, E: float=1.0, A: float=1.0) -> np.ndarray:"
    # as Python's help() shows it: indentation and the closing line removed
    assert (
        task.main_docstring == "2x2 stiffness matrix of a bar between x1 and x2.\n\nReturns an array of shape (2, 2)."
    )
    assert task.test_names == ("test_symmetric",)
    assert task.tests[0].docstring == "The matrix is symmetric and singular."
    assert task.expected_failure_names == ("fail_no_length", "fail_asymmetric")
    assert [x for x in task.decoded_inputs()] == [[0.0, 2.0, 3.0, 1.0], [1.0, 1.5, 200.0, 0.01]]
    assert task.python_version == "3.12" and task.package_versions == {"numpy": "2.x"}
    assert task.path == str((tmp_path / "bar.py").resolve())


def test_t3_module_leaves_helpers_to_the_solver(sandbox: Sandbox, tmp_path: Path) -> None:
    task = load_task(write_module(tmp_path, "bar.py", beam_source(3)), sandbox)
    assert task.tier is not None and task.tier.label == "CC0/H2/T3"
    assert task.helpers == ()
    assert [h.name for h in task.unprovided_helpers()] == ["element_length", "bar_stiffness"]


def test_module_importing_pytest_typing_and_numpy_helpers(sandbox: Sandbox, tmp_path: Path) -> None:
    imports = ("from typing import Tuple, List", "from numpy.linalg import norm", "import math")
    source = scale_source(imports=imports).replace(
        "return factor * x", "return factor * x if norm(x) >= 0 and math.isfinite(factor) else x"
    )
    task = load_task(write_module(tmp_path, "scale.py", source), sandbox)
    assert task.required_imports == ("import numpy as np", "import pytest", *imports)
    assert task.comparison.rtol == 1e-6 and task.time_limit is None


def test_loads_a_single_file_and_a_directory(sandbox: Sandbox, tmp_path: Path) -> None:
    write_module(tmp_path / "suite", "b.py", scale_source("b_task_CC0_H0_T0"))
    write_module(tmp_path / "suite" / "nested", "a.py", scale_source("a_task_CC0_H0_T0"))
    write_module(tmp_path / "suite", "_private.py", "raise RuntimeError('never loaded')\n")
    tasks = load_tasks(tmp_path / "suite", sandbox)
    assert [t.task_id for t in tasks] == ["a_task_CC0_H0_T0", "b_task_CC0_H0_T0"]
    single = load_tasks(tmp_path / "suite" / "b.py", sandbox)
    assert [t.task_id for t in single] == ["b_task_CC0_H0_T0"]
    assert load_task(tmp_path / "suite" / "nested" / "a.py", sandbox).task_id == "a_task_CC0_H0_T0"


def test_real_fem_1d_tasks_load(sandbox: Sandbox) -> None:
    tasks = load_tasks(FEM_1D, sandbox)
    assert len(tasks) >= 3
    by_id = {t.task_id: t for t in tasks}
    stiffness = by_id["FEM_1D_local_elastic_stiffness_CC0_H3_T1"]
    assert stiffness.tier == Tier(conceptual_challenge=0, helpers_used=3, help_level=1)
    assert len(stiffness.helpers) == 3
    for t in tasks:
        assert t.inputs and t.tests and all(c.expected_failures for c in t.tests)


def test_missing_path_is_a_clear_error(sandbox: Sandbox, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no task file or directory"):
        load_tasks(tmp_path / "nowhere", sandbox)


@pytest.mark.parametrize(
    "task_id, tier",
    [
        ("MSA_3D_elastic_critical_load_CC1_H10_T3", (1, 10, 3)),
        ("FEM_1D_uniform_mesh_CC0_H0_T0", (0, 0, 0)),
        ("x_CC2_H4_T2", (2, 4, 2)),
    ],
)
def test_tier_parsing(task_id: str, tier: tuple[int, int, int]) -> None:
    parsed = Tier.from_task_id(task_id)
    assert parsed is not None
    assert (parsed.conceptual_challenge, parsed.helpers_used, parsed.help_level) == tier
    assert parsed.label == "CC{}/H{}/T{}".format(*tier)


@pytest.mark.parametrize("task_id", ["no_tier", "x_CC1_H2", "x_CC1_H2_T3_extra", "x_cc1_h2_t3"])
def test_ids_without_a_tier_suffix(task_id: str) -> None:
    assert Tier.from_task_id(task_id) is None


def test_comparison_and_time_limit_extensions(sandbox: Sandbox, tmp_path: Path) -> None:
    ext = {
        "comparison": '{"rtol": 1e-4, "atol": 1e-8, "rules": [{"path": [1, "modes"], "invariance": "sign"}]}',
        "time_limit": "2.5",
    }
    task = load_task(write_module(tmp_path, "ext.py", scale_source(extensions=ext)), sandbox)
    assert task.comparison.rtol == 1e-4 and task.comparison.atol == 1e-8
    assert [(r.path, r.invariance) for r in task.comparison.rules] == [((1, "modes"), "sign")]
    assert task.time_limit == 2.5


def test_loading_runs_the_module_in_the_sandbox(sandbox: Sandbox, tmp_path: Path) -> None:
    marker = tmp_path / "written_at_import.txt"
    source = scale_source().replace(
        "import pytest\n",
        f"import pytest\ntry:\n    open({str(marker)!r}, 'w').write('x')\nexcept OSError:\n    pass\n",
        1,
    )
    task = load_task(write_module(tmp_path, "writes.py", source), sandbox)
    assert task.task_id == "scale_vector_CC0_H0_T0"
    assert not marker.exists()


# ----------------------------------------------------------------- malformed modules

REQUIRED_KEYS = [
    "task_id",
    "task_short_description",
    "created_date",
    "created_by",
    "main_fcn",
    "required_imports",
    "fcn_dependencies",
    "reference_verification_inputs",
    "test_cases",
]


def with_info_patch(patch: str) -> str:
    """The scale task whose task_info() result is changed by `patch` (acting on `info`)."""
    return (
        scale_source() + f"\n\n_original_task_info = task_info\n\n\ndef task_info():\n"
        f"    info = _original_task_info()\n    {patch}\n    return info\n"
    )


def assert_format_error(sandbox: Sandbox, path: Path, key: str | None, *fragments: str) -> TaskFormatError:
    with pytest.raises(TaskFormatError) as info:
        load_task(path, sandbox)
    err = info.value
    message = str(err)
    assert path.name in message and err.path == str(path)
    assert err.key == key
    if key is not None:
        assert repr(key) in message
    for fragment in fragments:
        assert fragment in message
    return err


def test_missing_task_info(sandbox: Sandbox, tmp_path: Path) -> None:
    path = write_module(tmp_path, "no_info.py", scale_source().replace("def task_info():", "def task_information():"))
    assert_format_error(sandbox, path, "task_info", "defines no task_info() function")


def test_task_info_not_returning_a_dict(sandbox: Sandbox, tmp_path: Path) -> None:
    path = write_module(tmp_path, "list_info.py", with_info_patch("info = list(info.items())"))
    assert_format_error(sandbox, path, "task_info", "must return a dict", "list")


@pytest.mark.parametrize("key", REQUIRED_KEYS)
def test_each_missing_required_key(sandbox: Sandbox, tmp_path: Path, key: str) -> None:
    path = write_module(tmp_path, f"missing_{key}.py", with_info_patch(f"del info[{key!r}]"))
    assert_format_error(sandbox, path, key, "missing required key")


@pytest.mark.parametrize(
    "patch, key, fragment",
    [
        ("info['main_fcn'] = 'scale_vector'", "main_fcn", "expected a function object, got str"),
        ("info['main_fcn'] = lambda x, factor: x", "main_fcn", "must be defined at module level"),
        ("info['task_id'] = '   '", "task_id", "expected a non-empty string"),
        ("info['required_imports'] = 'import numpy as np'", "required_imports", "expected a list of strings"),
        ("info['fcn_dependencies'] = fail_adds", "fcn_dependencies", "expected a list of functions"),
        ("info['reference_verification_inputs'] = {'x': [1.0]}", "reference_verification_inputs", "non-empty list"),
        ("info['reference_verification_inputs'] = []", "reference_verification_inputs", "non-empty list"),
        (
            "info['reference_verification_inputs'] = [np.array([1.0])]",
            "reference_verification_inputs",
            "entry 0 is not a list of arguments",
        ),
        (
            "info['test_cases'] = [{'test_code': test_scales_values}]",
            "test_cases",
            "entry 0 needs keys 'test_code' and 'expected_failures'",
        ),
        (
            "info['test_cases'] = {'test_code': test_scales_values, 'expected_failures': []}",
            "test_cases",
            "expected a list",
        ),
        (
            "info['test_cases'][1]['expected_failures'] = fail_no_check",
            "test_cases",
            "entry 1: expected_failures must be a list of functions",
        ),
        ("info['test_cases'][0]['test_code'] = 'test_scales_values'", "test_cases", "expected a function object"),
    ],
)
def test_wrong_values(sandbox: Sandbox, tmp_path: Path, patch: str, key: str, fragment: str) -> None:
    path = write_module(tmp_path, "wrong.py", with_info_patch(patch))
    assert_format_error(sandbox, path, key, fragment)


def test_syntax_error(sandbox: Sandbox, tmp_path: Path) -> None:
    source = scale_source().replace("def fail_adds(x, factor):", "def fail_adds(x, factor)")
    line = source.splitlines().index("def fail_adds(x, factor)") + 1
    path = write_module(tmp_path, "syntax.py", source)
    assert_format_error(sandbox, path, None, "syntax error", f"line {line}")


def test_module_that_raises_at_import(sandbox: Sandbox, tmp_path: Path) -> None:
    source = scale_source().replace("import pytest\n", "import pytest\nraise RuntimeError('cannot load me')\n", 1)
    path = write_module(tmp_path, "raises.py", source)
    assert_format_error(sandbox, path, None, "RuntimeError", "cannot load me")


def test_module_importing_a_missing_package(sandbox: Sandbox, tmp_path: Path) -> None:
    path = write_module(tmp_path, "missing_pkg.py", "import no_such_package_xyz\n" + scale_source())
    assert_format_error(sandbox, path, None, "ModuleNotFoundError", "no_such_package_xyz")


def test_task_info_that_raises(sandbox: Sandbox, tmp_path: Path) -> None:
    path = write_module(tmp_path, "info_raises.py", with_info_patch("info = 1 / 0"))
    assert_format_error(sandbox, path, None, "ZeroDivisionError")


def test_duplicate_ids_in_a_directory(sandbox: Sandbox, tmp_path: Path) -> None:
    first = write_module(tmp_path / "suite", "first.py", scale_source("same_id_CC0_H0_T0"))
    second = write_module(tmp_path / "suite", "second.py", scale_source("same_id_CC0_H0_T0"))
    with pytest.raises(TaskFormatError) as info:
        load_tasks(tmp_path / "suite", sandbox)
    message = str(info.value)
    assert info.value.key == "task_id"
    assert "duplicate id 'same_id_CC0_H0_T0'" in message
    assert str(first.resolve()) in message and second.name in message


@pytest.mark.parametrize(
    "comparison, fragment",
    [
        ('{"rules": [{"path": [1], "invariance": "rotation"}]}', "rules.0.invariance"),
        ('{"rules": [{"path": [1]}]}', "rules.0.invariance"),
        ('{"rtoll": 1e-3}', "rtoll"),
        ('{"rtol": -1.0}', "rtol"),
        ('"loose"', "expected a dict"),
    ],
)
def test_bad_comparison_rule(sandbox: Sandbox, tmp_path: Path, comparison: str, fragment: str) -> None:
    path = write_module(tmp_path, "cmp.py", scale_source(extensions={"comparison": comparison}))
    assert_format_error(sandbox, path, "comparison", fragment)


@pytest.mark.parametrize("value, fragment", [("-1", "must be positive"), ('"soon"', "valid number")])
def test_bad_time_limit(sandbox: Sandbox, tmp_path: Path, value: str, fragment: str) -> None:
    path = write_module(tmp_path, "tl.py", scale_source(extensions={"time_limit": value}))
    assert_format_error(sandbox, path, "time_limit", fragment)

"""What the sandbox child reports of an attempt's failure, as the outcome
shows it: its own traceback lines only, the last eight; messages cut to 600
characters, their start and their end kept; an exception whose message cannot be printed; an output that
cannot be sent back. And what `disclosed_error` makes of a frame whatever the
child put in it: every field of the frame is the attempt's to choose."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import scale_source, write_module

import fembench_agents.scoring as scoring
from fembench_agents.scoring.codec import TASK_INPUT
from fembench_agents.scoring.disclosure import NO_CODE, OwnCode, disclosed_error
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.outcomes import ErrorInfo
from fembench_agents.scoring.sandbox import Sandbox, SandboxPolicy
from fembench_agents.suite.loader import TaskFormatError, load_task
from fembench_agents.suite.model import Task
from fembench_agents.suite.scoring import ReferenceFailure
from fembench_agents.suite.validation import ideal_answer

DEEP = """
import numpy as np

def _down(n):
    if n == 0:
        raise ValueError("bottom")
    return _down(n - 1)

def scale_vector(x, factor):
    return _down(11)
"""

LONG_AND_FOREIGN = """
import numpy as np

def scale_vector(x, factor):
    np.linalg.inv(np.zeros((2, 2)))  # raises inside numpy: those frames are not the attempt's
"""

UNPRINTABLE = """
import numpy as np

class Opaque(Exception):
    def __str__(self):
        raise RuntimeError("no message for you")

def scale_vector(x, factor):
    raise Opaque()
"""

LONG_MESSAGE = """
def scale_vector(x, factor):
    raise ValueError("m" * 1000)
"""

UNSENDABLE = """
class Sly:
    @property
    def __class__(self):
        raise RuntimeError("not telling")

def scale_vector(x, factor):
    return Sly()
"""


def first_error(evaluator: Evaluator, task: Task, code: str) -> tuple[str, str, tuple[str, ...], str | None]:
    outcome = evaluator.score(task, "code", code)
    assert not outcome.passed
    first = outcome.inputs[0]
    assert first.error is not None
    return first.error.type, first.error.message, first.error.traceback, outcome.reason


def test_the_last_eight_of_the_attempts_own_frames(evaluator: Evaluator, scale_task: Task) -> None:
    kind, message, traceback, reason = first_error(evaluator, scale_task, DEEP)
    assert (kind, message, reason) == ("ValueError", "bottom", "runtime_error")
    assert len(traceback) == 8  # 13 frames of the attempt's own
    # lines of the code as scored: parsed and unparsed (comments gone, quotes normalised)
    assert traceback[-1] == "<attempt>, line 5, in _down: raise ValueError('bottom')"
    assert traceback[0] == "<attempt>, line 6, in _down: return _down(n - 1)"


def test_frames_outside_the_attempt_are_left_out(evaluator: Evaluator, scale_task: Task) -> None:
    kind, message, traceback, _ = first_error(evaluator, scale_task, LONG_AND_FOREIGN)
    assert (kind, message) == ("LinAlgError", "Singular matrix")
    assert traceback == ("<attempt>, line 4, in scale_vector: np.linalg.inv(np.zeros((2, 2)))",)


def test_an_exception_that_cannot_say_what_it_is(evaluator: Evaluator, scale_task: Task) -> None:
    kind, message, _, reason = first_error(evaluator, scale_task, UNPRINTABLE)
    # a class of the attempt's own: named by its nearest builtin base, its message withheld
    assert (kind, message, reason) == ("a custom exception", "", "runtime_error")


def test_messages_are_cut_to_600_characters_keeping_both_ends(evaluator: Evaluator, scale_task: Task) -> None:
    _, message, _, _ = first_error(evaluator, scale_task, LONG_MESSAGE)
    # 1000 characters: the start and the end around the cut's marker (scoring/error_text.py), whose
    # count is a number and shows as # like every number of an attempt's message (disclosure).
    assert message == "m" * 286 + " … [# characters cut] … " + "m" * 287


def test_an_output_that_cannot_be_sent_back(evaluator: Evaluator, scale_task: Task) -> None:
    kind, message, traceback, reason = first_error(evaluator, scale_task, UNSENDABLE)
    assert (kind, message, traceback, reason) == ("UnserializableOutput", "RuntimeError", (), "runtime_error")
    outcome = evaluator.score(scale_task, "code", UNSENDABLE)
    assert [type(r.seconds) for r in outcome.inputs] == [float] * 3  # each call timed like any other


# ----- verification inputs the child builds from the task module --------------------------------------------------

# Input 0 is data the parent reads when it loads the module; input 1 holds a function, so the
# child builds it by running the module again; input 2 is the marker string of such an input,
# passed as a plain argument; input 3 asks the reference for the name it runs under.
LABELS = '''
import numpy as np


def label(tag, mark=None):
    """The tag, marked by `mark` when one is given; "who" asks the module's name."""
    if tag == "who":
        return __name__
    return tag if mark is None else mark(tag)


def test_unmarked(fcn):
    assert fcn("a") == "a"


def fail_marks_twice(tag, mark=None):
    return tag if mark is None else mark(mark(tag))


def test_marked_once(fcn):
    assert fcn("a", lambda s: s + "!") == "a!"


def task_info():
    return {
        "task_id": "label_CC0_H0_T0",
        "task_short_description": "a tag, marked or not",
        "created_date": "2026-01-01",
        "created_by": "tests",
        "main_fcn": label,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [[__name__], [__name__, lambda s: s + "!"], ["__task_input__"], ["who"]],
        "test_cases": [
            {"test_code": test_unmarked, "expected_failures": []},
            {"test_code": test_marked_once, "expected_failures": [fail_marks_twice]},
        ],
    }
'''


def knowing(task: Task) -> str:
    """The reference as an attempt that knows the name it runs under (a module of its own)."""
    return ideal_answer(task).replace("return __name__", "return '__task__' if __name__ == '__candidate__' else 0")


def test_the_child_builds_inputs_from_the_module_as_the_parent_read_it(evaluator: Evaluator, tmp_path: Path) -> None:
    """The module runs under one name wherever its inputs are built, and an argument that
    happens to be the marker string of a child-built input is passed as it is."""
    task = load_task(write_module(tmp_path, "label_CC0_H0_T0.py", LABELS), evaluator.sandbox)
    assert task.inputs[1] == {TASK_INPUT: 1} and task.inputs[2] == ["__task_input__"]
    references = evaluator.scorer_for("code").reference_outputs(task)
    assert [r.value for r in references] == ["__task__", "__task__!", "__task_input__", "__task__"]
    outcome = evaluator.score(task, "code", ideal_answer(task))
    assert (outcome.passed, [r.status for r in outcome.inputs]) == (False, ["match"] * 3 + ["mismatch"])
    # the attempt runs as a module of its own, named __candidate__ (never __main__)
    assert evaluator.score(task, "code", knowing(task)).passed


def test_inputs_that_need_the_reference_to_be_built_fail_the_task_with_that_reason(
    evaluator: Evaluator, tmp_path: Path
) -> None:
    """The child builds inputs with the implementations stubbed out: an input made by calling
    the reference is refused where the reference would be computed, with the reason."""
    source = LABELS.replace('[__name__, lambda s: s + "!"]', '[label("x"), lambda s: s + "!"]')
    task = load_task(write_module(tmp_path, "label_CC0_H0_T0.py", source), evaluator.sandbox)
    with pytest.raises(ReferenceFailure) as raised:
        evaluator.scorer_for("code").reference_outputs(task)
    assert str(raised.value) == (
        "label_CC0_H0_T0: the module failed to build: the task's verification inputs could not be built: RuntimeError"
    )


def test_each_input_reports_the_time_of_its_own_call(evaluator: Evaluator, tmp_path: Path) -> None:
    source = scale_source("timed_scale_CC0_H0_T0", imports=("import time",))
    task = load_task(write_module(tmp_path, "timed_scale_CC0_H0_T0.py", source), evaluator.sandbox)
    slow_second = """
import time
import numpy as np

def scale_vector(x, factor):
    if factor != 2.0:
        time.sleep(0.3)  # the second input returns after it, the third raises after it
    if factor < 0:
        raise ValueError("negative factor")
    return factor * np.asarray(x, dtype=float)
"""
    outcome = evaluator.score(task, "code", slow_second)
    assert [r.status for r in outcome.inputs] == ["match"] * 3
    seconds = [r.seconds for r in outcome.inputs]
    assert all(isinstance(s, float) for s in seconds)
    assert 0.3 <= seconds[1] < outcome.seconds and 0.3 <= seconds[2] < outcome.seconds  # type: ignore[operator]


def test_a_reference_whose_output_cannot_be_sent_back_fails_its_task(evaluator: Evaluator, tmp_path: Path) -> None:
    """Such an output has no value to compare with: it is not an exception an attempt could match."""
    source = LABELS.replace("return tag if mark is None else mark(tag)", "return Sly() if tag == 'z' else tag")
    source = source.replace("\ndef label(", UNSENDABLE.split("def scale_vector")[0] + "\ndef label(")
    source = source.replace('["who"]]', '["who"], ["z"]]')
    task = load_task(write_module(tmp_path, "label_CC0_H0_T0.py", source), evaluator.sandbox)
    with pytest.raises(ReferenceFailure) as raised:
        evaluator.scorer_for("code").reference_outputs(task)
    assert str(raised.value) == "label_CC0_H0_T0: the reference's output on input 4 cannot be sent back as data"


def test_a_task_module_that_does_not_describe_itself_is_refused_with_the_key_and_the_reason(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    wrong_key = LABELS.replace('"fcn_dependencies": [],', '"fcn_dependencies": "none",')
    path = write_module(tmp_path, "label_CC0_H0_T0.py", wrong_key)
    with pytest.raises(TaskFormatError) as raised:
        load_task(path, sandbox)
    assert (raised.value.key, str(raised.value)) == (
        "fcn_dependencies",
        f"{path}: task_info key 'fcn_dependencies': TaskKeyError: task_info['fcn_dependencies']: "
        "expected a list of functions",
    )
    failing = write_module(tmp_path, "boom_CC0_H0_T0.py", 'raise RuntimeError("boom at import")\n' + LABELS)
    with pytest.raises(TaskFormatError) as raised:
        load_task(failing, sandbox)
    assert (raised.value.key, str(raised.value)) == (None, f"{failing}: RuntimeError: boom at import")


def test_a_tracks_setup_runs_in_the_solve_jobs_process_before_the_solver() -> None:
    """dolfinx's setup points the form cache into the job's own scratch before the attempt runs
    (its workers preload the setup module, as the track's do: a job imports nothing new)."""
    reports = "import os\n\ndef solve(case_spec):\n    raise RuntimeError(os.environ.get('XDG_CACHE_HOME', 'unset'))\n"
    job: dict[str, Any] = {"kind": "solve", "spec": {}, "implementation": {"function": "solve", "code": reports}}
    with Sandbox(workers=1, preload=("fembench_agents.cases.dolfinx_env",)) as sandbox:
        plain = sandbox.run(job, SandboxPolicy())  # type: ignore[arg-type]
        prepared = sandbox.run({**job, "setup": "fembench_agents.cases.dolfinx_env"}, SandboxPolicy())  # type: ignore[arg-type]
    assert [f["message"] for f in plain.events("solve")] == ["unset"]
    (frame,) = prepared.events("solve")
    assert frame["error_type"] == "RuntimeError" and frame["message"].endswith("/.cache")
    assert frame["message"] != "/.cache"  # the job's HOME, its scratch


def test_an_attempt_is_built_as_a_module_of_its_own(evaluator: Evaluator, scale_task: Task) -> None:
    """Compiled without our modules' future flags (an annotation is evaluated when the function is
    defined), and its function looked up once the module ran."""

    def execute(code: str) -> tuple[str | None, str | None]:
        stage = evaluator.score(scale_task, "code", "import numpy as np\n" + code).stages[-1]
        return stage.reason, stage.detail

    annotated = "def scale_vector(x: NotDefinedAnywhere, factor):\n    return factor * x\n"
    assert execute(annotated) == ("load_error", "NameError: name 'NotDefinedAnywhere' is not defined")
    replaced = "def scale_vector(x, factor):\n    return factor * x\n\nscale_vector = 3\n"
    assert execute(replaced) == ("load_error", "NameError: the code does not define a function named 'scale_vector'")


def test_a_builtin_exception_whose_message_cannot_be_printed(evaluator: Evaluator, scale_task: Task) -> None:
    code = """
class Bad:
    def __str__(self):
        raise RuntimeError("no")

def scale_vector(x, factor):
    raise ValueError(Bad())
"""
    kind, message, _, reason = first_error(evaluator, scale_task, code)
    assert (kind, message, reason) == ("ValueError", "<unprintable message>", "runtime_error")


def test_random_draws_are_the_same_for_the_reference_and_the_attempt(evaluator: Evaluator, tmp_path: Path) -> None:
    """The generators are seeded before every call: the reference's draws are the attempt's."""
    drawn = LABELS.replace("import numpy as np\n", "import random\nimport numpy as np\n", 1)
    drawn = drawn.replace(
        '"import numpy as np", "import pytest"', '"import random", "import numpy as np", "import pytest"'
    )
    drawn = drawn.replace(
        "return tag if mark is None else mark(tag)",
        "return f'{tag} {random.random():.6f} {np.random.rand():.6f} {np.random.default_rng().random():.6f} "
        "{np.random.default_rng(5).random():.6f}' if mark is None else mark(tag)",
    )
    task = load_task(write_module(tmp_path, "label_CC0_H0_T0.py", drawn), evaluator.sandbox)
    values = [r.value for r in evaluator.scorer_for("code").reference_outputs(task)]
    # as if seeded with 0: random, numpy's legacy generator, and a default_rng given no seed (a seed given is kept)
    assert (
        values[0] == values[2].replace("__task_input__", "__task__") == "__task__ 0.844422 0.548814 0.636962 0.805003"
    )
    assert evaluator.score(task, "code", knowing(task)).passed


def test_a_task_implementation_that_is_not_in_its_module_is_reported_by_name(sandbox: Sandbox) -> None:
    job = {"kind": "call", "implementation": {"function": "nope", "module_source": "X = 1\n"}, "inputs": [[1]]}
    (frame,) = sandbox.run(job, SandboxPolicy()).events("build_error")  # type: ignore[arg-type]
    assert (frame["error_type"], frame["message"]) == (
        "NameError",
        "the task module does not define a function named 'nope'",
    )


def test_a_job_that_refers_to_inputs_without_the_module_to_build_them_is_refused(sandbox: Sandbox) -> None:
    implementation = {"function": "label", "code": "def label(tag):\n    return tag\n"}
    result = sandbox.run(
        {"kind": "call", "implementation": implementation, "inputs": [{TASK_INPUT: 0}]}, SandboxPolicy()
    )
    assert (result.exit_code, result.events("input")) == (70, [])
    assert result.stderr.endswith(
        "sandbox child error: ValueError: the job brings no module to build its verification inputs\n"
    )


# ----- disclosed_error on frames as the child could write them -------------------------------------------------------

ATTEMPT = "SCALE = 1 / 0\n\ndef scale_vector(x, factor):\n    return _twice(x) * factor\n"
HELPER = "def _twice(x):\n    raise ValueError('no')\n"


def own() -> OwnCode:
    # built in each test, not at import: mutmut runs a mutant's tests in a fork of a process that
    # imported this file under the unmutated code
    return OwnCode.of(attempt=ATTEMPT, given=["import numpy as np", HELPER])  # given: the imports, then each helper


VALUE_ERROR_MRO = ["ValueError", "Exception", "BaseException", "object"]


def test_every_number_of_a_message_is_masked_nan_and_inf_too_but_not_words_containing_them() -> None:
    message = "x = 2.5e-3, y is nan, z = -inf, w: NaN, v: Inf; 1_000 steps; Infinity and information stay"
    message += "; t = +4, a 3x4 array, 2nd axis; r = .25, 1e+10 and 6.02e23. 'numpy.ndarray' stays; dt = 2.0e-3s at 0x1e; ufunc 'isnan'"
    frame = {"status": "error", "error_type": "ValueError", "error_mro": VALUE_ERROR_MRO, "message": message}
    assert disclosed_error(frame, own()).message == (
        "x = #, y is #, z = -#, w: #, v: #; # steps; Infinity and information stay; t = #, a #x# array, #nd axis; r = #, # and #. 'numpy.ndarray' stays; dt = #s at #x#e; ufunc 'isnan'"
    )


def test_a_long_message_shows_its_start_and_its_end_in_600_characters() -> None:
    """As a frame the attempt wrote itself may carry it: the child's own cut never ran. The
    marker's count is masked as every number is: a message's length is the attempt's to choose."""
    message = "operands could not be broadcast together: " + "x" * 640 + " END"
    frame = {"status": "error", "error_type": "ValueError", "error_mro": VALUE_ERROR_MRO, "message": message}
    shown = disclosed_error(frame, own()).message
    assert (
        shown
        == "operands could not be broadcast together: " + "x" * 245 + " … [# characters cut] … " + "x" * 283 + " END"
    )


def test_a_frame_without_a_message_shows_an_empty_one() -> None:
    frame = {"status": "error", "error_type": "ValueError", "error_mro": VALUE_ERROR_MRO, "traceback": []}
    assert disclosed_error(frame, own()) == ErrorInfo(type="ValueError", message="", traceback=())


def test_an_unsendable_output_names_only_a_known_class_of_what_encoding_raised() -> None:
    def shown(raised: str) -> str:
        return disclosed_error({"error_type": "UnserializableOutput", "message": raised}, own()).message

    assert shown("RuntimeError") == "RuntimeError"
    # a class of the attempt's own, named after an output: not even its digits' places (V_#) are shown
    assert shown("V_1800") == "a custom exception"


def test_traceback_lines_are_shown_only_where_they_agree_with_the_code() -> None:
    frame = {
        "error_type": "ValueError",
        "error_mro": VALUE_ERROR_MRO,
        "message": "no",
        "traceback": [
            "<attempt>, line 1, in <module>: SCALE = 1 / 0",  # the first line of the code
            "<attempt>, line 4, in scale_vector: return [1800.0]",  # a line 4 that is not the code's
            "<attempt>, line 4, in scale_vector: return _twice(x) * factor",
            "<attempt>, line 5, in scale_vector: return _twice(x) * factor",  # past the code's last line
            "<attempt>, line 0, in scale_vector: return _twice(x) * factor",
            "<given>, line 2, in _twice: raise ValueError('no')",  # the second given source's line 2
            "<given>, line 1, in <module>: import numpy as np",
            "<test>, line 1, in test_scale: import numpy as np",  # a file the attempt has no code in
        ],
    }
    assert disclosed_error(frame, own()).traceback == (
        "<attempt>, line 1, in <module>: SCALE = 1 / 0",
        "<attempt>, line 4, in scale_vector: return _twice(x) * factor",
        "<given>, line 2, in _twice: raise ValueError('no')",
        "<given>, line 1, in <module>: import numpy as np",
    )
    # a task's own implementation: none of its lines are shown
    assert disclosed_error(frame, NO_CODE).traceback == ()
    frame["traceback"] = [
        "<attempt>, line 4x, in scale_vector: return _twice(x) * factor",  # not a line number
        "<attempt>, line , in scale_vector: return _twice(x) * factor",
        "<attempt>, line 4, in scale_vector: return _twice(x) * factor\nprint(x)",  # two lines in one
    ]
    assert disclosed_error(frame, own()).traceback == ()


def test_frames_of_code_that_defines_no_name_are_shown_where_their_line_is_the_code_s() -> None:
    """A lambda, a comprehension, a generator expression or the module itself defines no name of
    its own that `def` or `class` would give: its line alone decides (Python 3.12 inlines list,
    dict and set comprehensions; a forged frame may still name them)."""
    code = "F = lambda v: [1 / x for x in v]\nS = sum(1 / x for x in (0,))"
    kinds = ("<lambda>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<module>")
    lines = [f"<attempt>, line 1, in {kind}: F = lambda v: [1 / x for x in v]" for kind in kinds]
    frame = {"error_type": "ZeroDivisionError", "message": "division by zero", "traceback": lines}
    assert disclosed_error(frame, OwnCode.of(attempt=code)).traceback == tuple(lines)
    other = [line.replace("<attempt>, line 1, in <", "<attempt>, line 1, in <other") for line in lines]
    frame["traceback"] = other
    assert disclosed_error(frame, OwnCode.of(attempt=code)).traceback == ()


def test_a_frame_in_a_class_body_is_shown_where_its_line_is_the_code_s() -> None:
    """Its frame is named after the class, which the attempt defined."""
    code = "class Beam:\n    AREA = 1 / 0"
    line = "<attempt>, line 2, in Beam: AREA = 1 / 0"
    frame = {"error_type": "ZeroDivisionError", "message": "division by zero", "traceback": [line]}
    assert disclosed_error(frame, OwnCode.of(attempt=code)).traceback == (line,)
    frame["traceback"] = [line.replace("in Beam", "in Truss")]
    assert disclosed_error(frame, OwnCode.of(attempt=code)).traceback == ()


def test_a_long_traceback_line_shows_its_start_and_its_end_in_300_characters() -> None:
    code = "def f(v):\n    return " + " + ".join(f"v[{i}]" for i in range(80))
    line = "<attempt>, line 2, in f: " + code.splitlines()[1].strip()
    frame = {"error_type": "IndexError", "message": "out of range", "traceback": [line]}
    assert len(line) == 659
    # The line is the attempt's own code: its cut's count is no number the attempt chose at run time.
    shown = line[:137] + " … [385 characters cut] … " + line[-137:]
    assert disclosed_error(frame, OwnCode.of(attempt=code)).traceback == (shown,) and len(shown) == 300


def test_a_frame_claiming_more_than_eight_lines_shows_its_last_eight() -> None:
    code = "\n".join(f"def f{i}(): return f{i + 1}()" for i in range(10))
    lines = [f"<attempt>, line {i + 1}, in f{i}: def f{i}(): return f{i + 1}()" for i in range(10)]
    frame = {"error_type": "RecursionError", "message": "deep", "traceback": lines}
    assert disclosed_error(frame, OwnCode.of(attempt=code)).traceback == tuple(lines[2:])
    # the last eight lines as the child sent them, then the attempt's own among them: not eight own lines
    foreign = [f"/usr/lib/python3/numpy/core.py, line {i}, in inner: x = y" for i in range(3)]
    frame = {"error_type": "RecursionError", "message": "deep", "traceback": lines + foreign}
    assert disclosed_error(frame, OwnCode.of(attempt=code)).traceback == tuple(lines[5:])


@pytest.fixture
def imported_afresh(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The disclosure module imported again: which exception classes it names is
    computed at import, so a fresh import shows what that computation gives (the
    module imported first stays in place for every other test)."""
    name = "fembench_agents.scoring.disclosure"
    monkeypatch.setattr(scoring, "disclosure", sys.modules[name])
    monkeypatch.delitem(sys.modules, name)
    return importlib.import_module(name)


def test_builtin_and_numpy_exceptions_are_named_others_by_their_base(imported_afresh: ModuleType) -> None:
    shown_type = imported_afresh.shown_type
    for known in ("ValueError", "ZeroDivisionError", "KeyboardInterrupt", "AxisError", "LinAlgError"):
        assert shown_type(known, [known, "Exception", "BaseException", "object"]) == known
    assert shown_type("UnserializableOutput", []) == "UnserializableOutput"
    assert shown_type("V_1800", ["V_1800", "KeyError", "LookupError", "Exception"]) == (
        "a custom exception derived from KeyError"
    )
    assert (
        shown_type("V_1800", ["V_1800", "LinAlgError", "ValueError"]) == "a custom exception derived from LinAlgError"
    )
    assert shown_type("V_1800", ["V_1800", "Exception", "BaseException", "object"]) == "a custom exception"
    assert shown_type("int", []) == "a custom exception"  # a builtin class, but not an exception

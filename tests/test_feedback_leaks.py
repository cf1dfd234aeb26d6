"""Hostile attempts that try to carry hidden data into the next prompt through
the feedback: verification inputs, reference outputs, expected-failure names.
Each pins the exact feedback text; none may hold a hidden value.

The scale task: inputs ([1, 2, 3], 2), ([[1, -1], [0.5, 4]], 0.5), ([1], -1);
the reference gives [2, 4, 6], [[0.5, -0.5], [0.25, 2]] and raises on the third;
its tests' expected failures are fail_adds and fail_no_check.
"""

from __future__ import annotations

import pytest

from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import TemplateFeedback
from fembench_agents.suite.model import Task

FEEDBACK = TemplateFeedback()
FIX = "Fix the error and return the complete corrected code."
TESTS_END = (
    "A test must pass on every correct implementation and fail on the wrong ones. "
    "Return the complete corrected test code."
)
# What no feedback may hold: expected-failure names, and the digits of inputs and outputs
# (an honest error message keeps its words; every number in it becomes #). Traceback lines
# show the attempt's own code, as the evaluator parsed it, with the attempt's own literals.
HIDDEN = ("fail_adds", "fail_no_check", "6.0", "[3. 6.]", "V_3", "0.5", "0.25", "4.0", "array([1., 2., 3.])")


def shown(text: str) -> str:
    for hidden in HIDDEN:
        assert hidden not in text, f"{hidden!r} leaked into: {text}"
    return text


def function_feedback(evaluator: Evaluator, task: Task, code: str) -> str:
    return shown(FEEDBACK(evaluator.score(task, "code", code)).text)


def suite_feedback(evaluator: Evaluator, task: Task, code: str) -> str:
    return shown(FEEDBACK(evaluator.score(task, "tests", code)).text)


def test_a_message_echoing_the_arguments_keeps_its_words_not_its_numbers(
    evaluator: Evaluator, scale_task: Task
) -> None:
    code = "import numpy as np\n\ndef scale_vector(x, factor):\n    raise ValueError(repr((x, factor)))\n"
    assert function_feedback(evaluator, scale_task, code) == (
        "Your previous function raised an exception on verification input 0:\n"
        "    ValueError: (array([#, #, #]), #)\n"
        "Traceback (your code only):\n"
        "    <attempt>, line 4, in scale_vector: raise ValueError(repr((x, factor)))\n" + FIX
    )


def test_a_class_named_after_an_input_is_shown_by_its_builtin_base(evaluator: Evaluator, scale_task: Task) -> None:
    code = (
        "import numpy as np\n\n"
        "def scale_vector(x, factor):\n"
        "    raise type('V_' + str(int(x[0] * 1000)), (KeyError,), {})('x0 = %r' % x[0])\n"
    )
    assert function_feedback(evaluator, scale_task, code) == (
        "Your previous function raised an exception on verification input 0:\n"
        "    a custom exception derived from KeyError\n"
        "Traceback (your code only):\n"
        "    <attempt>, line 4, in scale_vector: raise type('V_' + str(int(x[0] * 1000)), (KeyError,), {})"
        "('x0 = %r' % x[0])\n" + FIX
    )


def test_a_traceback_frame_renamed_after_an_input_is_dropped(evaluator: Evaluator, scale_task: Task) -> None:
    code = (
        "import numpy as np\n\n"
        "def scale_vector(x, factor):\n"
        "    def inner():\n"
        "        raise ZeroDivisionError('no')\n"
        "    inner.__code__ = inner.__code__.replace(co_name='V_%d' % int(x[-1] * 1000))\n"
        "    inner()\n"
    )
    assert function_feedback(evaluator, scale_task, code) == (
        "Your previous function raised an exception on verification input 0:\n"
        "    ZeroDivisionError: no\n"
        "Traceback (your code only):\n"
        "    <attempt>, line 8, in scale_vector: inner()\n" + FIX
    )


def test_a_test_raising_a_class_named_after_a_reference_output(evaluator: Evaluator, scale_task: Task) -> None:
    code = (
        "import numpy as np\nimport pytest\n\n"
        "def test_scales_values(fcn):\n"
        "    y = fcn(np.array([1.0, 2.0]), 3.0)\n"
        "    raise type('V_' + '_'.join(str(int(v)) for v in y), (Exception,), {})()\n\n"
        "def test_negative_factor_raises(fcn):\n"
        "    with pytest.raises(ValueError):\n"
        "        fcn(np.array([1.0]), -1.0)\n"
    )
    assert suite_feedback(evaluator, scale_task, code) == (
        "Your previous tests did not all do their job.\n"
        "- test_scales_values fails on a correct implementation (a custom exception), at: <test>, line 6, in "
        "test_scales_values: raise type('V_' + '_'.join((str(int(v)) for v in y)), (Exception,), {})().\n" + TESTS_END
    )


def test_a_test_failing_on_the_reference_with_its_output_as_message(evaluator: Evaluator, scale_task: Task) -> None:
    code = (
        "import numpy as np\nimport pytest\n\n"
        "def test_scales_values(fcn):\n"
        "    assert False, repr(fcn(np.array([1.0, 2.0]), 3.0))\n\n"
        "def test_negative_factor_raises(fcn):\n"
        "    fcn(np.array([1.0]), 1.0)\n"
    )
    assert suite_feedback(evaluator, scale_task, code) == (
        "Your previous tests did not all do their job.\n"
        "- test_scales_values fails on a correct implementation (AssertionError), at: <test>, line 5, in "
        "test_scales_values: assert False, repr(fcn(np.array([1.0, 2.0]), 3.0)).\n"
        "- test_negative_factor_raises passes on 1 of the 1 wrong implementations it should reject (number 1).\n"
        + TESTS_END
    )


@pytest.mark.parametrize("slipped", ["test_scales_values", "test_negative_factor_raises"])
def test_a_wrong_implementation_that_slips_through_is_named_by_number(
    evaluator: Evaluator, scale_task: Task, slipped: str
) -> None:
    weak = {
        "test_scales_values": "def test_scales_values(fcn):\n    fcn(np.array([1.0]), 2.0)\n",
        "test_negative_factor_raises": "def test_negative_factor_raises(fcn):\n    fcn(np.array([1.0]), 2.0)\n",
    }
    good = {
        "test_scales_values": "def test_scales_values(fcn):\n    assert fcn(np.array([1.0]), 2.0).tolist() == [2.0]\n",
        "test_negative_factor_raises": (
            "def test_negative_factor_raises(fcn):\n    with pytest.raises(ValueError):\n        fcn(np.array([1.0]), -1.0)\n"
        ),
    }
    code = "import numpy as np\nimport pytest\n\n" + "\n".join(
        weak[name] if name == slipped else good[name] for name in good
    )
    assert suite_feedback(evaluator, scale_task, code) == (
        "Your previous tests did not all do their job.\n"
        f"- {slipped} passes on 1 of the 1 wrong implementations it should reject (number 1).\n" + TESTS_END
    )

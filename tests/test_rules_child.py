"""What the sandbox child reports of an attempt's failure, as the outcome
shows it: its own traceback lines only, the last eight; messages cut at 600
characters; an exception whose message cannot be printed; an output that
cannot be sent back."""

from __future__ import annotations

from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite.model import Task

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


def test_messages_are_cut_at_600_characters(evaluator: Evaluator, scale_task: Task) -> None:
    _, message, _, _ = first_error(evaluator, scale_task, LONG_MESSAGE)
    assert message == "m" * 600


def test_an_output_that_cannot_be_sent_back(evaluator: Evaluator, scale_task: Task) -> None:
    kind, message, traceback, reason = first_error(evaluator, scale_task, UNSENDABLE)
    assert (kind, message, traceback, reason) == ("UnserializableOutput", "RuntimeError", (), "runtime_error")

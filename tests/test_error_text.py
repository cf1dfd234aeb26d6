"""Cutting a long error text keeps its first line and its last lines, marks the
cut with what it dropped, and never exceeds its budget (scoring/error_text.py)."""

from __future__ import annotations

import pytest

from fembench_agents.scoring.error_text import shortened

# petsc4py's Error as this install prints it: the code first, the stack, the cause last.
PETSC_ERROR = "\n".join(
    [
        "error code 56",
        *(
            f"[0] {name}() at /__w/dolfinx-solver/dolfinx-solver/.build-cache-real/petsc-3.25.5/src/{where}"
            for name, where in [
                ("KSPSolve", "ksp/ksp/interface/itfunc.c:1094"),
                ("KSPSolve_Private", "ksp/ksp/interface/itfunc.c:841"),
                ("KSPSetUp", "ksp/ksp/interface/itfunc.c:428"),
                ("PCSetUp", "ksp/pc/interface/precon.c:1120"),
                ("PCSetUp_LU", "ksp/pc/impls/factor/lu/lu.c:87"),
                ("MatGetFactor", "mat/interface/matrix.c:4843"),
                ("MatGetFactor_aij_petsc", "mat/impls/aij/seq/aijfact.c:27"),
                ("MatDenseGetLDA", "mat/impls/dense/seq/dense.c:2129"),
            ]
        ),
        "[0] No support for this operation for this object type",
        "[0] Cannot locate function MatDenseGetLDA_C in object",
    ]
)


def test_a_petsc_stack_keeps_its_code_and_its_cause() -> None:
    assert len(PETSC_ERROR) == 1107
    assert shortened(PETSC_ERROR, 600) == (
        "error code 56\n"
        "… [606 characters cut] …\n"
        "[0] MatGetFactor() at /__w/dolfinx-solver/dolfinx-solver/.build-cache-real/petsc-3.25.5/src/"
        "mat/interface/matrix.c:4843\n"
        "[0] MatGetFactor_aij_petsc() at /__w/dolfinx-solver/dolfinx-solver/.build-cache-real/petsc-3.25.5/src/"
        "mat/impls/aij/seq/aijfact.c:27\n"
        "[0] MatDenseGetLDA() at /__w/dolfinx-solver/dolfinx-solver/.build-cache-real/petsc-3.25.5/src/"
        "mat/impls/dense/seq/dense.c:2129\n"
        "[0] No support for this operation for this object type\n"
        "[0] Cannot locate function MatDenseGetLDA_C in object"
    )


def test_a_text_within_its_budget_is_kept_whole() -> None:
    assert shortened(PETSC_ERROR, 1107) == PETSC_ERROR
    assert shortened("", 0) == ""


def test_one_long_line_keeps_its_start_and_its_end() -> None:
    assert shortened("a" * 50 + "b" * 50, 60) == "a" * 17 + " … [66 characters cut] … " + "b" * 17


def test_a_long_first_line_keeps_half_the_budget_and_the_last_line_its_end() -> None:
    text = "F" * 100 + "\n" + "middle\n" + "L" * 100
    assert shortened(text, 80) == "F" * 27 + "\n… [154 characters cut] …\n" + "L" * 27
    assert shortened("head\nmiddle line\n" + "x" * 20 + "\nlast", 40) == "head\n… [34 characters cut] …\nlast"


def test_no_room_for_a_marker_keeps_the_start() -> None:
    assert shortened("abcdefgh", 5) == "abcde"


@pytest.mark.parametrize("limit", [0, 1, 10, 27, 28, 29, 30, 50, 100, 299, 600, 1106])
def test_a_cut_text_never_exceeds_its_budget(limit: int) -> None:
    assert len(shortened(PETSC_ERROR, limit)) <= limit
    assert len(shortened("x" * 1000, limit)) <= limit


def test_a_negative_budget_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="a text budget must be a number of characters >= 0, got -1"):
        shortened("abc", -1)

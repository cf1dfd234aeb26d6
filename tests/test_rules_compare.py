"""The output comparison's rules at their boundaries: hand-computed tolerances
on both sides, the scale an array is judged against, non-finite values,
sign and scale invariance, and which mismatch a user is told about.

Tolerance: `|a - b| <= atol * scale + rtol * |b|`, `scale = max(1, max|b|)`
over the finite entries of the reference array."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fembench_agents.scoring.codec import Unsupported
from fembench_agents.suite.comparison import Mismatch, compare_outputs
from fembench_agents.suite.model import Comparison, InvarianceRule

DEFAULT = Comparison()  # rtol 1e-6, atol 1e-9
# Powers of two, so every bound below is exact in binary floating point.
LOOSE = Comparison(rtol=0.25, atol=0.5)


def verdict(candidate: Any, reference: Any, cmp: Comparison = DEFAULT) -> tuple[str, tuple, float | None] | None:
    found = compare_outputs(candidate, reference, cmp)
    return None if found is None else (found.kind, found.path, found.relative_error)


# ----------------------------------------------------------------- tolerances


def test_absolute_and_relative_tolerance_are_not_interchangeable() -> None:
    # scale = 1e6: the absolute part allows 1e-9 * 1e6 = 1e-3, the relative part
    # 1e-6 * |1.0| on the second entry. 0.5 is far outside both.
    assert verdict([1e6, 1.5], [1e6, 1.0]) == ("value_mismatch", (), 0.5 / 1e6)
    assert verdict(np.array([1e6, 1.0 + 9e-4]), np.array([1e6, 1.0])) is None


def test_the_bound_is_inclusive_and_summed_per_entry() -> None:
    # reference [4, 0]: scale 4; bound entry 0: 0.5*4 + 0.25*4 = 3, entry 1: 0.5*4 + 0 = 2
    ref = np.array([4.0, 0.0])
    assert verdict(np.array([7.0, 0.0]), ref, LOOSE) is None
    assert verdict(np.array([1.0, 0.0]), ref, LOOSE) is None
    assert verdict(np.array([7.5, 0.0]), ref, LOOSE) == ("value_mismatch", (), 3.5 / 4)
    assert verdict(np.array([4.0, 2.0]), ref, LOOSE) is None
    assert verdict(np.array([4.0, -2.0]), ref, LOOSE) is None
    assert verdict(np.array([4.0, 2.5]), ref, LOOSE) == ("value_mismatch", (), 2.5 / 4)


def test_relative_part_scales_with_each_entry_not_the_array() -> None:
    # atol 0: only rtol * |b| per entry. Entry 1 (|b| = 1) allows 0.25, not 0.25 * 8.
    cmp = Comparison(rtol=0.25, atol=0.0)
    ref = np.array([8.0, 1.0])
    assert verdict(np.array([8.0, 1.25]), ref, cmp) is None
    assert verdict(np.array([8.0, 1.5]), ref, cmp) == ("value_mismatch", (), 0.5 / 8)
    assert verdict(np.array([10.0, 1.0]), ref, cmp) is None
    assert verdict(np.array([10.5, 1.0]), ref, cmp) == ("value_mismatch", (), 2.5 / 8)


def test_scale_is_at_least_one_and_uses_magnitudes() -> None:
    cmp = Comparison(rtol=0.0, atol=0.5)
    # max|b| = 0.5 < 1: the scale is 1, so 0.5 of absolute error is allowed
    assert verdict(np.array([0.5, 0.5]), np.array([0.5, 0.0]), cmp) is None
    assert verdict(np.array([0.5, 0.75]), np.array([0.5, 0.0]), cmp) == ("value_mismatch", (), 0.75)
    # a negative reference entry sets the scale by its magnitude: 8 -> bound 4
    assert verdict(np.array([-8.0, 4.0]), np.array([-8.0, 0.0]), cmp) is None
    assert verdict(np.array([-8.0, 4.5]), np.array([-8.0, 0.0]), cmp) == ("value_mismatch", (), 4.5 / 8)


def test_scalars_compare_with_the_same_rule() -> None:
    assert verdict(7.0, 4.0, LOOSE) is None
    assert verdict(7.25, 4.0, LOOSE) == ("value_mismatch", (), 3.25 / 4)
    assert verdict(np.float64(1.0 + 2e-6), 1.0) == ("value_mismatch", (), pytest.approx(2e-6))
    assert verdict(1 + 5e-7, 1) is None


def test_round_off_zeros_of_a_large_matrix_pass() -> None:
    K = np.array([[2e9, -1e9], [-1e9, 1e9]])
    noisy = K + np.array([[0.0, 1e-1], [1e-1, 0.0]])  # 1e-1 <= 1e-9 * 2e9 = 2
    assert verdict(noisy, K) is None
    assert verdict(K + np.array([[0.0, 0.0], [0.0, 3e3]]), K) == ("value_mismatch", (), 3e3 / 2e9)


# ----------------------------------------------------------------- non-finite values


def test_non_finite_entries_must_sit_where_the_reference_has_them() -> None:
    ref = np.array([np.inf, 2.0])
    assert verdict(np.array([np.inf, 2.0]), ref) is None
    assert verdict(np.array([-np.inf, 2.0]), ref) == ("non_finite", (), None)
    assert verdict(np.array([np.nan, 2.0]), ref) == ("non_finite", (), None)
    assert verdict(np.array([2.0, np.inf]), ref) == ("non_finite", (), None)
    # a finite number where the reference has inf is not the same answer
    assert verdict(np.array([5.0, 2.0]), ref) == ("non_finite", (), None)
    assert verdict(np.array([1.0, np.nan]), np.array([1.0, 2.0])) == ("non_finite", (), None)


def test_a_reference_nan_is_matched_by_nan_only() -> None:
    ref = np.array([np.nan, 1.0])
    assert verdict(np.array([np.nan, 1.0]), ref) is None
    assert verdict(np.array([0.0, 1.0]), ref) == ("non_finite", (), None)


def test_the_scale_ignores_non_finite_reference_entries() -> None:
    cmp = Comparison(rtol=0.0, atol=0.5)
    ref = np.array([np.inf, 2.0, 0.0])  # finite max 2: bound 1 on every finite entry
    assert verdict(np.array([np.inf, 2.0, 1.0]), ref, cmp) is None
    assert verdict(np.array([np.inf, 2.0, 1.5]), ref, cmp) == ("value_mismatch", (), 0.75)


# ----------------------------------------------------------------- invariance


def sign_rule(*path: int | str) -> Comparison:
    return Comparison(rules=(InvarianceRule(path=path, invariance="sign"),))


def scale_rule(*path: int | str) -> Comparison:
    return Comparison(rules=(InvarianceRule(path=path, invariance="scale"),))


V = np.array([0.6, -0.8, 0.0])


def test_sign_invariance_accepts_the_flipped_vector_only_where_declared() -> None:
    assert verdict((1.0, -V), (1.0, V), sign_rule(1)) is None
    assert verdict((1.0, V), (1.0, V), sign_rule(1)) is None
    assert verdict((1.0, -V), (1.0, V)) == ("value_mismatch", (1,), pytest.approx(1.6))
    assert verdict((1.0, -V), (1.0, V), sign_rule(0)) == ("value_mismatch", (1,), pytest.approx(1.6))
    # a sign rule does not forgive a scaled vector
    assert verdict((1.0, 2 * V), (1.0, V), sign_rule(1)) == ("value_mismatch", (1,), pytest.approx(0.8))
    assert verdict((1.0, -2 * V), (1.0, V), sign_rule(1)) == ("value_mismatch", (1,), pytest.approx(0.8))


def test_scale_invariance_accepts_any_nonzero_multiple() -> None:
    assert verdict({"mode": -2.5 * V}, {"mode": V}, scale_rule("mode")) is None
    assert verdict({"mode": 0.5 * V}, {"mode": V}, scale_rule("mode")) is None
    assert verdict({"mode": V + np.array([0.0, 0.0, 0.1])}, {"mode": V}, scale_rule("mode"))[0] == "value_mismatch"
    # the zero vector is no multiple of a mode
    assert verdict({"mode": 0 * V}, {"mode": V}, scale_rule("mode")) == (
        "value_mismatch",
        ("mode",),
        pytest.approx(0.8),
    )


def test_invariance_applies_per_column_of_a_matrix() -> None:
    modes = np.array([[0.6, 0.8], [-0.8, 0.6]])
    flipped = modes * np.array([1.0, -1.0])  # second column flipped only
    assert verdict(flipped, modes, sign_rule()) is None
    assert verdict(flipped, modes) == ("value_mismatch", (), pytest.approx(1.6))  # scale max(1, 0.8)
    scaled = modes * np.array([3.0, -0.5])
    assert verdict(scaled, modes, scale_rule()) is None
    assert verdict(scaled, modes, sign_rule())[0] == "value_mismatch"


def test_the_same_values_in_another_shape_are_a_shape_mismatch() -> None:
    """A row vector for a vector, a transposed matrix: as many numbers, another shape."""
    assert verdict(np.ones((1, 4)), np.ones(4)) == ("shape_mismatch", (), None)
    assert verdict(np.arange(6.0).reshape(3, 2), np.arange(6.0).reshape(2, 3)) == ("shape_mismatch", (), None)
    assert verdict(np.array([[True, False]]), np.array([True, False])) == ("shape_mismatch", (), None)


def test_invariance_does_not_hide_a_wrong_shape() -> None:
    assert verdict(np.array([0.6, -0.8]), V, sign_rule()) == ("shape_mismatch", (), None)


# ----------------------------------------------------------------- structure


def test_lists_and_tuples_compare_interchangeably_element_by_element() -> None:
    assert verdict([1.0, (2.0, 3.0)], (1.0, [2.0, 3.0])) is None
    # a sequence of numbers is an array: a different length is a different shape
    assert verdict([1.0, 2.0], (1.0, 2.0, 3.0)) == ("shape_mismatch", (), None)
    assert verdict([1.0, "a"], (1.0, "a", "b")) == ("length_mismatch", (), None)
    assert verdict([1.0, "b"], (1.0, "a")) == ("value_mismatch", (1,), None)
    assert verdict([np.zeros(2), 1.0], [np.zeros(3), 1.0]) == ("shape_mismatch", (0,), None)


def test_the_first_mismatch_in_order_is_reported_with_its_path() -> None:
    found = compare_outputs(
        [1.0, {"b": 2.0, "a": [np.zeros(1), np.array([9.0])]}, np.ones(3)],
        [1.0, {"b": 3.0, "a": [np.zeros(1), np.array([1.0])]}, np.zeros(3)],
        DEFAULT,
    )
    # a dict's keys in sorted order, whatever order the reference lists them in: "a" before "b"
    assert found == Mismatch("value_mismatch", (1, "a", 1), 8.0 / 1.0)
    assert found.where == "output[1]['a'][1]"
    assert compare_outputs(1.0, 1.0, DEFAULT) is None
    assert Mismatch("shape_mismatch", ()).where == "output"


def test_dicts_need_the_same_keys() -> None:
    assert verdict({"a": 1.0, "b": 2.0}, {"b": 2.0, "a": 1.0}) is None
    assert verdict({"a": 1.0}, {"a": 1.0, "b": 2.0}) == ("keys_mismatch", (), None)
    assert verdict({"a": 1.0, "c": 2.0}, {"a": 1.0, "b": 2.0}) == ("keys_mismatch", (), None)
    assert verdict({"a": 1.0, "b": 2.0, "c": 3.0}, {"a": 1.0, "b": 2.0}) == ("keys_mismatch", (), None)  # one more
    assert verdict([1.0], {"a": 1.0}) == ("type_mismatch", (), None)


def test_type_mismatches() -> None:
    assert verdict("1.0", 1.0) == ("type_mismatch", (), None)
    assert verdict([1.0, "x"], [1.0, 2.0]) == ("type_mismatch", (), None)
    assert verdict(None, np.zeros(2)) == ("type_mismatch", (), None)
    assert verdict({"a": 1.0}, [1.0]) == ("type_mismatch", (), None)
    assert verdict(0, None) == ("type_mismatch", (), None)
    assert verdict(None, None) is None


def test_strings_compare_exactly() -> None:
    assert verdict("clamped", "clamped") is None
    assert verdict("pinned", "clamped") == ("value_mismatch", (), None)
    assert verdict(None, "clamped") == ("type_mismatch", (), None)


def test_booleans_compare_exactly() -> None:
    ref = np.array([True, False])
    assert verdict(np.array([True, False]), ref) is None
    assert verdict([True, False], ref) is None
    assert verdict(np.array([True, True]), ref) == ("value_mismatch", (), None)
    assert verdict(True, False) == ("value_mismatch", (), None)
    assert verdict(np.array([1, 0]), ref) is None
    assert verdict(np.array([2, 0]), ref) == ("value_mismatch", (), None)


def test_sets_compare_as_sets() -> None:
    assert verdict({1, 2}, {2, 1}) is None
    assert verdict({1, 3}, {1, 2}) == ("value_mismatch", (), None)
    assert verdict([1, 2], {1, 2}) == ("value_mismatch", (), None)
    edges = {frozenset({0, 1}), frozenset({1, 2})}  # a frozenset is a set, as a tuple is a list
    assert verdict(edges, {frozenset({2, 1}), frozenset({0, 1})}) is None
    assert verdict({frozenset({0, 1}), frozenset({0, 2})}, edges) == ("value_mismatch", (), None)
    assert verdict(frozenset({1, 2}), {1, 2}) is None
    assert verdict({1, 2}, frozenset({1, 2})) is None
    assert verdict(frozenset({1}), frozenset({1, 2})) == ("value_mismatch", (), None)
    assert verdict((1, 2), frozenset({1, 2})) == ("value_mismatch", (), None)


def test_unsupported_outputs() -> None:
    assert verdict(Unsupported("function"), 1.0) == ("unsupported_output", (), None)
    assert verdict([1.0, Unsupported("object")], [1.0, "x"]) == ("unsupported_output", (1,), None)
    assert verdict([1.0, Unsupported("object")], [1.0, 2.0]) == ("type_mismatch", (), None)
    # a reference value of no known kind cannot be matched by anything
    assert verdict(object(), object()) == ("unsupported_output", (), None)


def test_an_integer_beyond_64_bits_is_not_a_number_array() -> None:
    # 2**70 becomes an object array: it cannot stand in for a numeric reference
    assert verdict(2**70, 1.0) == ("type_mismatch", (), None)
    assert verdict(np.array(["a"]), np.array([1.0])) == ("type_mismatch", (), None)


# ----------------------------------------------------------------- value kinds at the edges


def test_an_integer_multiple_of_a_mode_is_a_multiple() -> None:
    # the candidate's integer vector is 5 times the mode: scale-invariant, it matches
    assert verdict(np.array([3, -4, 0]), V, scale_rule()) is None
    assert verdict(np.array([[3, 0], [-4, 1]]), np.array([[0.6, 0.0], [-0.8, 1.0]]), scale_rule()) is None


def test_python_complex_numbers_are_numbers_alone_and_in_lists() -> None:
    assert verdict(1 + 2j, 1 + 2j) is None
    assert verdict([1 + 1j, 2.0], np.array([1 + 1j, 2.0])) is None
    assert verdict(1 + 2j, 1 - 2j)[0] == "value_mismatch"


def test_a_complex_mode_matches_a_real_multiple_up_to_a_complex_factor() -> None:
    u = np.array([1.0, -2.0, 0.5])
    assert verdict(u, 1j * u, scale_rule()) is None
    assert verdict(u, (1 + 1j) * u, scale_rule()) is None
    assert verdict(u, 1j * u)[0] == "value_mismatch"


def test_invariance_aligns_on_the_finite_entries_only() -> None:
    ref = np.array([np.inf, 0.6, -0.8])
    assert verdict(np.array([np.inf, 1.2, -1.6]), ref, scale_rule()) is None
    assert verdict(np.array([np.inf, -0.6, 0.8]), ref, sign_rule()) is None
    assert verdict(np.array([np.inf, 1.2, -1.6]), ref, sign_rule())[0] == "value_mismatch"


def test_arrays_with_no_finite_entry() -> None:
    assert verdict(np.zeros(0), np.zeros(0)) is None
    assert verdict(np.array([np.inf, -np.inf]), np.array([np.inf, -np.inf])) is None
    assert verdict(np.array([np.inf]), np.array([np.inf]), scale_rule()) is None


def test_a_boolean_answer_to_a_numeric_reference_must_be_exact() -> None:
    assert verdict(np.array([True, False]), np.array([1.0, 0.0])) is None
    assert verdict(np.array([True, False]), np.array([1.0, 1e-12])) == ("value_mismatch", (), None)


def test_a_reference_integer_beyond_64_bits_is_matched_by_nothing() -> None:
    assert verdict(2**70, 2**70) == ("unsupported_output", (), None)
    assert verdict([1.0, 2**70], [1.0, 2**70]) == ("unsupported_output", (1,), None)


def test_dict_keys_of_mixed_types_are_compared_without_error() -> None:
    assert verdict({1: 2.0, "a": 3.0}, {"a": 3.0, 1: 2.0}) is None
    assert verdict({1: 2.0, "a": 4.0}, {"a": 3.0, 1: 2.0}) == ("value_mismatch", ("a",), 1 / 3)


def test_a_non_numeric_sequence_needs_a_sequence() -> None:
    assert verdict({"a": 1}, [1.0, "x"]) == ("type_mismatch", (), None)
    assert verdict("1.0x", [1.0, "x"]) == ("type_mismatch", (), None)

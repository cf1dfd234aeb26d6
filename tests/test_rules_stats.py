"""The report's statistics at their boundaries: interval quantiles computed by
hand from the exact bootstrap distribution, p-values from the binomial, pass@k
where the shortcut starts, and the argument checks with their messages."""

from __future__ import annotations

import math

import pytest

from fembench_agents.report.stats import (
    bootstrap_ci,
    k_of_n,
    majority_passed,
    mcnemar_exact,
    mean_pass_at_k,
    pass_at_k,
)

# 40 tasks, half solved. A bootstrap resample's mean is K/40 with K ~ Binomial(40, 1/2):
#   P[K <= 13] = 0.0192, P[K <= 14] = 0.0403, P[K <= 15] = 0.0769, P[K <= 16] = 0.1341
# so the 2.5 % quantile is 14/40, the 5 % quantile 15/40 and the 10 % quantile 16/40,
# and by symmetry the upper ones 26/40, 25/40 and 24/40. With 100 000 resamples the
# sampling error of a tail share (~0.0005) is far below the gaps to those cut points.
HALF = [0.0, 1.0] * 20
MANY = 100_000


def binom_cdf(k: int, n: int) -> float:
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def test_the_hand_computed_cut_points_are_what_the_quantiles_below_rely_on() -> None:
    assert binom_cdf(13, 40) < 0.025 < binom_cdf(14, 40) < 0.05 < binom_cdf(15, 40) < 0.1 < binom_cdf(16, 40)


def test_a_95_percent_interval_puts_2_5_percent_in_each_tail() -> None:
    assert bootstrap_ci(HALF, resamples=MANY, confidence=0.95, seed=3) == (14 / 40, 26 / 40)


def test_a_90_percent_interval_puts_5_percent_in_each_tail() -> None:
    assert bootstrap_ci(HALF, resamples=MANY, confidence=0.90, seed=3) == (15 / 40, 25 / 40)
    assert bootstrap_ci(HALF, resamples=MANY, confidence=0.80, seed=3) == (16 / 40, 24 / 40)


def test_the_default_interval_is_95_percent() -> None:
    assert bootstrap_ci(HALF, resamples=MANY, seed=3) == (14 / 40, 26 / 40)


def test_every_value_can_be_drawn() -> None:
    # two tasks: resampled means 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4
    assert bootstrap_ci([0.0, 1.0], resamples=4000, seed=0) == (0.0, 1.0)
    assert bootstrap_ci([1.0, 0.0], resamples=4000, seed=0) == (0.0, 1.0)
    # 60 % of resamples have mean 1/2: a 20 % interval holds only that value
    assert bootstrap_ci([0.0, 1.0], resamples=4000, confidence=0.2, seed=0) == (0.5, 0.5)


def test_the_interval_is_of_the_mean_not_of_single_values() -> None:
    low, high = bootstrap_ci([0.0, 1.0] * 50, resamples=20_000, seed=1)
    # the mean of 100 draws lies within about 2 standard errors (0.1) of 0.5
    assert 0.38 < low < 0.42 and 0.58 < high < 0.62


def test_constant_values_give_a_point_interval() -> None:
    assert bootstrap_ci([0.25] * 7, resamples=10) == (0.25, 0.25)
    assert bootstrap_ci([0.4], resamples=1) == (0.4, 0.4)


def test_the_interval_is_reproducible_and_depends_on_the_seed() -> None:
    values = [0.0, 0.25, 0.5, 1.0, 1.0, 0.0, 0.75]
    assert bootstrap_ci(values, resamples=300, seed=11) == bootstrap_ci(values, resamples=300, seed=11)
    assert bootstrap_ci(values, resamples=300, seed=11) != bootstrap_ci(values, resamples=300, seed=12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confidence": 0.0}, "confidence must lie in (0, 1), got 0.0"),
        ({"confidence": 1.0}, "confidence must lie in (0, 1), got 1.0"),
        ({"confidence": 1.5}, "confidence must lie in (0, 1), got 1.5"),
        ({"resamples": 0}, "resamples must be >= 1, got 0"),
    ],
)
def test_bootstrap_rejects_bad_settings_naming_them(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError) as err:
        bootstrap_ci([0.0, 1.0], **kwargs)  # type: ignore[arg-type]
    assert str(err.value) == message


def test_bootstrap_needs_a_value() -> None:
    with pytest.raises(ValueError) as err:
        bootstrap_ci([])
    assert str(err.value) == "a confidence interval needs at least one value"


# ---------------------------------------------------------------- pass@k


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 3, 1 - 1 / 10),  # n - c == k: one all-failing draw of C(5,3) = 10
        (5, 2, 4, 1.0),  # n - c < k
        (10, 3, 2, 1 - 21 / 45),  # 1 - C(7,2)/C(10,2)
        (10, 3, 1, 0.3),
        (6, 1, 3, 1 - 10 / 20),  # 1 - C(5,3)/C(6,3)
        (4, 0, 4, 0.0),
        (4, 4, 4, 1.0),
        (3, 0, 1, 0.0),
    ],
)
def test_pass_at_k_hand_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (0, 0, 1, "pass@k needs n >= 1 and 0 <= c <= n, got n=0, c=0"),
        (3, -1, 1, "pass@k needs n >= 1 and 0 <= c <= n, got n=3, c=-1"),
        (3, 4, 1, "pass@k needs n >= 1 and 0 <= c <= n, got n=3, c=4"),
        (3, 1, 0, "pass@k needs 1 <= k <= n, got k=0, n=3"),
        (3, 1, 4, "pass@k needs 1 <= k <= n, got k=4, n=3"),
    ],
)
def test_pass_at_k_rejects_bad_arguments_naming_them(n: int, c: int, k: int, message: str) -> None:
    with pytest.raises(ValueError) as err:
        pass_at_k(n, c, k)
    assert str(err.value) == message


def test_pass_at_k_accepts_the_edges_of_its_ranges() -> None:
    assert pass_at_k(1, 0, 1) == 0.0
    assert pass_at_k(3, 3, 3) == 1.0
    assert pass_at_k(3, 0, 3) == 0.0


def test_mean_pass_at_k_averages_over_tasks() -> None:
    counts = [(4, 1), (4, 3), (2, 0)]
    assert mean_pass_at_k(counts, 1) == pytest.approx((0.25 + 0.75 + 0.0) / 3)
    assert mean_pass_at_k(counts, 2) == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    with pytest.raises(ValueError) as err:
        mean_pass_at_k([], 1)
    assert str(err.value) == "pass@k over no tasks"


def test_k_of_n_counts_tasks_passed_at_least_k_times_up_to_the_largest_n() -> None:
    assert k_of_n([(3, 0), (3, 1), (3, 3), (2, 2), (4, 1)]) == {1: 4, 2: 2, 3: 1, 4: 0}
    assert k_of_n([(2, 0)]) == {1: 0, 2: 0}


@pytest.mark.parametrize(
    ("n", "c", "solved"),
    [
        (1, 1, True),
        (1, 0, False),
        (2, 1, False),
        (2, 2, True),
        (3, 2, True),
        (3, 1, False),
        (4, 2, False),
        (4, 3, True),
        (5, 3, True),
    ],
)
def test_majority_is_strict(n: int, c: int, solved: bool) -> None:
    assert majority_passed(n, c) is solved


# ---------------------------------------------------------------- McNemar


def pairs(both: int, a_only: int, b_only: int, neither: int) -> tuple[list[bool], list[bool]]:
    a = [True] * both + [True] * a_only + [False] * b_only + [False] * neither
    b = [True] * both + [False] * a_only + [True] * b_only + [False] * neither
    return a, b


@pytest.mark.parametrize(
    ("counts", "p"),
    [
        ((2, 1, 4, 3), 2 * (1 + 5) / 32),  # 2 P[X <= 1], X ~ Bin(5, 1/2) = 0.375
        ((0, 4, 1, 0), 2 * (1 + 5) / 32),  # the same, A ahead
        ((1, 0, 5, 1), 2 / 32),
        ((0, 0, 7, 0), 2 / 128),
        ((3, 2, 6, 0), 2 * (1 + 8 + 28) / 256),  # 2 P[X <= 2], X ~ Bin(8, 1/2)
        ((0, 3, 3, 0), 1.0),  # 2 P[X <= 3] = 1.3125, capped
        ((0, 2, 3, 0), 1.0),  # 2 P[X <= 2] = 2 * 16/32 = 1.0
        ((4, 0, 0, 2), 1.0),  # no discordant pair
    ],
)
def test_mcnemar_p_values(counts: tuple[int, int, int, int], p: float) -> None:
    a, b = pairs(*counts)
    result = mcnemar_exact(a, b)
    assert result.p_value == pytest.approx(p, abs=1e-12)
    assert (result.pairs, result.both, result.a_only, result.b_only, result.neither) == (sum(counts), *counts)


def test_mcnemar_needs_paired_outcomes() -> None:
    with pytest.raises(ValueError) as err:
        mcnemar_exact([True, False], [True])
    assert str(err.value) == "paired outcomes differ in length: 2 vs 1"


def test_the_default_interval_draws_2000_resamples_with_seed_0() -> None:
    values = [0.013, 0.27, 0.41, 0.55, 0.61, 0.79, 0.83, 0.97, 0.111, 0.333, 0.5719]
    assert bootstrap_ci(values) == bootstrap_ci(values, resamples=2000, confidence=0.95, seed=0)
    assert bootstrap_ci(values) != bootstrap_ci(values, resamples=2001, seed=0)
    assert bootstrap_ci(values) != bootstrap_ci(values, resamples=2000, seed=1)


def test_k_of_n_over_no_tasks_is_empty() -> None:
    assert k_of_n([]) == {}

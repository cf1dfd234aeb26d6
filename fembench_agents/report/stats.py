"""The statistics a comparison report rests on: pass@k, k-of-n counts,
bootstrap confidence intervals over tasks, and an exact paired test.

Pure functions of their inputs. Every random draw comes from a numpy
Generator seeded by the caller, so a report does not change between runs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy.stats import binom


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from `n` samples of which `c` passed
    (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), computed as a product so it
    neither overflows nor loses precision for large `n`."""
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"pass@k needs n >= 1 and 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0  # every draw of k samples contains a passing one
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def mean_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> float:
    """pass@k averaged over tasks, given each task's (samples, passes)."""
    if not counts:
        raise ValueError("pass@k over no tasks")
    return float(np.mean([pass_at_k(n, c, k) for n, c in counts]))


def k_of_n(counts: Sequence[tuple[int, int]]) -> dict[int, int]:
    """For k = 1 .. max n: how many tasks passed in at least k of their samples.
    k = 1 is "solved at least once"; k = n is "solved every time"."""
    top = max((n for n, _ in counts), default=0)
    return {k: sum(c >= k for _, c in counts) for k in range(1, top + 1)}


def majority_passed(n: int, c: int) -> bool:
    """A task counts as solved when strictly more than half its samples passed
    (so 1 of 2 is not solved)."""
    return 2 * c > n


def bootstrap_ci(
    values: Iterable[float], *, resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of `values` (one value per
    task: tasks are the resampled unit)."""
    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        raise ValueError("a confidence interval needs at least one value")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 1_000_000 // x.size)  # bound memory for large task sets
    for start in range(0, resamples, chunk):
        stop = min(start + chunk, resamples)
        means[start:stop] = x[rng.integers(0, x.size, size=(stop - start, x.size))].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


class McNemarResult(BaseModel):
    """Exact McNemar test on paired binary outcomes of agents A and B."""

    model_config = ConfigDict(frozen=True)
    pairs: int
    both: int
    a_only: int  # discordant: A right, B wrong
    b_only: int  # discordant: B right, A wrong
    neither: int
    p_value: float  # two-sided


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """Two-sided exact McNemar test: under H0 each discordant pair favours A
    or B with probability 1/2, so p = min(1, 2 P[X <= min(a_only, b_only)]),
    X ~ Binomial(a_only + b_only, 1/2); p = 1 with no discordant pairs."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes differ in length: {len(a)} vs {len(b)}")
    both = sum(x and y for x, y in zip(a, b, strict=True))
    a_only = sum(x and not y for x, y in zip(a, b, strict=True))
    b_only = sum(y and not x for x, y in zip(a, b, strict=True))
    discordant = a_only + b_only
    p = min(1.0, 2.0 * float(binom.cdf(min(a_only, b_only), discordant, 0.5))) if discordant else 1.0
    return McNemarResult(
        pairs=len(a), both=both, a_only=a_only, b_only=b_only, neither=len(a) - both - discordant, p_value=p
    )

import numpy as np
import pytest
from typing import Tuple


def quad_gauss_legendre_quadrature(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """
    Tensor-product Gauss-Legendre quadrature on the reference square [-1, 1] x [-1, 1].

    The rule with num_pts = m * m points is the product of the m-point 1D Gauss-Legendre
    rule with itself (m = 1, 2, 3). It integrates exactly every polynomial
    xi^a * eta^b with a <= 2m - 1 and b <= 2m - 1.

    1D rules (points in increasing order, matching weights):
        m = 1: points [0],                         weights [2]
        m = 2: points [-1/sqrt(3), +1/sqrt(3)],    weights [1, 1]
        m = 3: points [-sqrt(3/5), 0, +sqrt(3/5)], weights [5/9, 8/9, 5/9]

    Point ordering: with 1D points g_0 < ... < g_{m-1} and weights w_0 .. w_{m-1},
    the 2D point with index k = i + m * j (i, j = 0 .. m-1) is (xi, eta) = (g_i, g_j)
    with weight w_i * w_j; i.e. xi varies fastest and eta slowest. For example,
    num_pts = 4 gives (-a, -a), (+a, -a), (-a, +a), (+a, +a) with a = 1/sqrt(3).

    Parameters
    ----------
    num_pts : int
        Total number of points: 1, 4 or 9.

    Returns
    -------
    points : np.ndarray of float, shape (num_pts, 2)
        Row k is (xi_k, eta_k).
    weights : np.ndarray of float, shape (num_pts,)
        Weights; they sum to 4 (the area of the square).

    Raises
    ------
    ValueError
        If num_pts is not 1, 4 or 9.
    """
    points_per_direction = {1: 1, 4: 2, 9: 3}
    if num_pts not in points_per_direction:
        raise ValueError("num_pts must be 1, 4 or 9")
    m = points_per_direction[num_pts]
    g, w = np.polynomial.legendre.leggauss(m)
    # meshgrid with "xy" indexing puts g along columns, so ravel() (row-major) makes xi
    # vary fastest, as documented.
    XI, ETA = np.meshgrid(g, g, indexing="xy")
    W_XI, W_ETA = np.meshgrid(w, w, indexing="xy")
    points = np.column_stack((XI.ravel(), ETA.ravel()))
    weights = (W_XI * W_ETA).ravel()
    return points, weights


# ----------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------

def test_polynomial_exactness(fcn):
    """For each rule (1, 4, 9 points) check the output shapes, that all points lie
    strictly inside the square, that the weights are positive and sum to 4, and that the
    rule integrates xi^a * eta^b exactly over [-1, 1]^2 for all a, b <= 2m - 1
    (m = sqrt(num_pts)); also check that the 4- and 9-point rules are NOT exact for
    xi^(2m) (so that a higher-order rule than requested is detected)."""
    def exact_1d(p):
        return 0.0 if p % 2 else 2.0 / (p + 1)

    for num_pts, m in ((1, 1), (4, 2), (9, 3)):
        pts, wts = fcn(num_pts)
        pts = np.asarray(pts)
        wts = np.asarray(wts)
        assert pts.shape == (num_pts, 2)
        assert wts.shape == (num_pts,)
        assert np.all(np.abs(pts) < 1.0)
        assert np.all(wts > 0)
        assert np.isclose(wts.sum(), 4.0)
        for a in range(2 * m):
            for b in range(2 * m):
                approx = np.sum(wts * pts[:, 0] ** a * pts[:, 1] ** b)
                assert np.isclose(approx, exact_1d(a) * exact_1d(b), atol=1e-12)
        if m > 1:
            approx = np.sum(wts * pts[:, 0] ** (2 * m))
            assert not np.isclose(approx, exact_1d(2 * m) * 2.0, atol=1e-8)


def test_point_ordering(fcn):
    """Check the documented ordering: for the 4-point rule, with a = 1/sqrt(3), the points
    are (-a,-a), (a,-a), (-a,a), (a,a) with unit weights; for the 9-point rule, xi varies
    fastest over (-sqrt(0.6), 0, sqrt(0.6)) and eta slowest, with weights w_i * w_j from
    (5/9, 8/9, 5/9); the 1-point rule is the origin with weight 4."""
    pts, wts = fcn(1)
    assert np.allclose(np.asarray(pts), [[0.0, 0.0]])
    assert np.allclose(np.asarray(wts), [4.0])
    a = 1.0 / np.sqrt(3.0)
    pts, wts = fcn(4)
    assert np.allclose(np.asarray(pts), [[-a, -a], [a, -a], [-a, a], [a, a]])
    assert np.allclose(np.asarray(wts), np.ones(4))
    g = np.array([-np.sqrt(0.6), 0.0, np.sqrt(0.6)])
    w = np.array([5.0, 8.0, 5.0]) / 9.0
    pts, wts = fcn(9)
    expected_pts = np.array([[g[i], g[j]] for j in range(3) for i in range(3)])
    expected_wts = np.array([w[i] * w[j] for j in range(3) for i in range(3)])
    assert np.allclose(np.asarray(pts), expected_pts)
    assert np.allclose(np.asarray(wts), expected_wts)


def test_unsupported_point_count_raises(fcn):
    """Check that a ValueError is raised for point counts that are not 1, 4 or 9
    (0, 2, 3, 16)."""
    for bad in (0, 2, 3, 16):
        with pytest.raises(ValueError):
            fcn(bad)


# ----------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ----------------------------------------------------------------------------

def fail_eta_fastest(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Orders the points with eta varying fastest (ij indexing)."""
    if num_pts not in (1, 4, 9):
        raise ValueError("num_pts must be 1, 4 or 9")
    m = int(round(np.sqrt(num_pts)))
    g, w = np.polynomial.legendre.leggauss(m)
    pts = np.array([[g[i], g[j]] for i in range(m) for j in range(m)])
    wts = np.array([w[i] * w[j] for i in range(m) for j in range(m)])
    return pts, wts


def fail_weights_not_multiplied(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Takes the weight of a 2D point as the mean of its two 1D weights instead of their
    product."""
    if num_pts not in (1, 4, 9):
        raise ValueError("num_pts must be 1, 4 or 9")
    m = int(round(np.sqrt(num_pts)))
    g, w = np.polynomial.legendre.leggauss(m)
    pts = np.array([[g[i], g[j]] for j in range(m) for i in range(m)])
    wts = np.array([(w[i] + w[j]) / 2 for j in range(m) for i in range(m)])
    return pts, wts


def fail_points_one_third(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Uses +-1/3 instead of +-1/sqrt(3) for the 2-point rule and +-0.6 instead of
    +-sqrt(0.6) for the 3-point rule."""
    table = {1: ([0.0], [2.0]), 4: ([-1 / 3, 1 / 3], [1.0, 1.0]),
             9: ([-0.6, 0.0, 0.6], [5 / 9, 8 / 9, 5 / 9])}
    if num_pts not in table:
        raise ValueError("num_pts must be 1, 4 or 9")
    g, w = (np.array(v) for v in table[num_pts])
    m = len(g)
    pts = np.array([[g[i], g[j]] for j in range(m) for i in range(m)])
    wts = np.array([w[i] * w[j] for j in range(m) for i in range(m)])
    return pts, wts


def fail_num_pts_per_direction(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Interprets num_pts as the number of points per direction (returns num_pts^2 points
    for 1, 4, 9) and accepts any positive count."""
    if num_pts < 1:
        raise ValueError("num_pts must be positive")
    g, w = np.polynomial.legendre.leggauss(num_pts)
    pts = np.array([[g[i], g[j]] for j in range(num_pts) for i in range(num_pts)])
    wts = np.array([w[i] * w[j] for j in range(num_pts) for i in range(num_pts)])
    return pts, wts


def fail_rounds_to_nearest_rule(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Never raises: rounds sqrt(num_pts) to the nearest supported m in {1, 2, 3}."""
    m = int(min(max(round(np.sqrt(max(num_pts, 1))), 1), 3))
    g, w = np.polynomial.legendre.leggauss(m)
    pts = np.array([[g[i], g[j]] for j in range(m) for i in range(m)])
    wts = np.array([w[i] * w[j] for j in range(m) for i in range(m)])
    return pts, wts


def task_info():
    return {
        "task_id": "FEM_2D_quad_quadrature_CC0_H0_T0",
        "task_short_description": "tensor-product Gauss-Legendre points and weights on [-1,1]^2 for 1, 4 or 9 points",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": quad_gauss_legendre_quadrature,
        "required_imports": ["import numpy as np", "import pytest", "from typing import Tuple"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [[1], [4], [9], [3], [16]],
        "test_cases": [
            {
                "test_code": test_polynomial_exactness,
                "expected_failures": [fail_weights_not_multiplied, fail_points_one_third,
                                      fail_num_pts_per_direction],
            },
            {
                "test_code": test_point_ordering,
                "expected_failures": [fail_eta_fastest, fail_points_one_third,
                                      fail_weights_not_multiplied, fail_num_pts_per_direction],
            },
            {
                "test_code": test_unsupported_point_count_raises,
                "expected_failures": [fail_num_pts_per_direction, fail_rounds_to_nearest_rule],
            },
        ],
        "fresh_inputs": {
            "only_fixed": "its one argument is the rule size, which the docstring limits to 1, 4 or 9; the published inputs hold each",
        },
    }

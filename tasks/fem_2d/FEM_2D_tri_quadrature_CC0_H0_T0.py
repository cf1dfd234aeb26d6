import numpy as np
import pytest
from typing import Tuple


def triangle_quadrature(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """
    Quadrature rules on the reference triangle with vertices (0, 0), (1, 0), (0, 1),
    in the coordinates (xi, eta). The weights sum to 1/2, the area of the triangle, so
    that sum_k w_k * g(xi_k, eta_k) approximates the integral of g over the triangle.

    Rules (rows of `points` in exactly this order):

    num_pts = 1 (exact for polynomials of degree 1):
        (1/3, 1/3)                                   weight 1/2
    num_pts = 3 (degree 2, interior points):
        (1/6, 1/6), (2/3, 1/6), (1/6, 2/3)           weight 1/6 each
    num_pts = 4 (degree 3, negative centroid weight):
        (1/3, 1/3)                                   weight -27/96
        (1/5, 1/5), (3/5, 1/5), (1/5, 3/5)           weight 25/96 each

    Parameters
    ----------
    num_pts : int
        Number of points: 1, 3 or 4.

    Returns
    -------
    points : np.ndarray of float, shape (num_pts, 2)
        Row k is (xi_k, eta_k).
    weights : np.ndarray of float, shape (num_pts,)

    Raises
    ------
    ValueError
        If num_pts is not 1, 3 or 4.
    """
    if num_pts == 1:
        points = np.array([[1.0 / 3.0, 1.0 / 3.0]])
        weights = np.array([0.5])
    elif num_pts == 3:
        a, b = 1.0 / 6.0, 2.0 / 3.0
        points = np.array([[a, a], [b, a], [a, b]])
        weights = np.full(3, 1.0 / 6.0)
    elif num_pts == 4:
        c, a, b = 1.0 / 3.0, 0.2, 0.6
        points = np.array([[c, c], [a, a], [b, a], [a, b]])
        weights = np.array([-27.0, 25.0, 25.0, 25.0]) / 96.0
    else:
        raise ValueError("num_pts must be 1, 3 or 4")
    return points, weights


# ----------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------

def test_triangle_polynomial_exactness(fcn):
    """For the 1-, 3- and 4-point rules (degree 1, 2, 3) check the output shapes, that the
    weights sum to 1/2 and that every monomial xi^a * eta^b with a + b <= degree is
    integrated exactly (exact value a! b! / (a + b + 2)!); also check that each rule is
    not exact for xi^(degree+1), i.e. the rule has the documented degree."""
    def factorial(n):
        return float(np.prod(np.arange(1, n + 1)))

    def exact(a, b):
        return factorial(a) * factorial(b) / factorial(a + b + 2)

    for num_pts, degree in ((1, 1), (3, 2), (4, 3)):
        pts, wts = fcn(num_pts)
        pts = np.asarray(pts)
        wts = np.asarray(wts)
        assert pts.shape == (num_pts, 2)
        assert wts.shape == (num_pts,)
        assert np.isclose(wts.sum(), 0.5)
        for a in range(degree + 1):
            for b in range(degree + 1 - a):
                approx = np.sum(wts * pts[:, 0] ** a * pts[:, 1] ** b)
                assert np.isclose(approx, exact(a, b), rtol=1e-12, atol=1e-14)
        approx = np.sum(wts * pts[:, 0] ** (degree + 1))
        assert not np.isclose(approx, exact(degree + 1, 0), rtol=1e-8, atol=0.0)


def test_triangle_points_and_order(fcn):
    """Check the exact documented points, weights and ordering: centroid with weight 1/2;
    (1/6,1/6), (2/3,1/6), (1/6,2/3) with weight 1/6; centroid with weight -27/96 followed
    by (1/5,1/5), (3/5,1/5), (1/5,3/5) with weight 25/96. Also check that every point
    lies inside the triangle."""
    expected = {
        1: ([[1 / 3, 1 / 3]], [0.5]),
        3: ([[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3]], [1 / 6] * 3),
        4: ([[1 / 3, 1 / 3], [0.2, 0.2], [0.6, 0.2], [0.2, 0.6]], [-27 / 96, 25 / 96, 25 / 96, 25 / 96]),
    }
    for num_pts, (p_exp, w_exp) in expected.items():
        pts, wts = fcn(num_pts)
        pts = np.asarray(pts)
        assert np.allclose(pts, p_exp, rtol=1e-12, atol=1e-14)
        assert np.allclose(np.asarray(wts), w_exp, rtol=1e-12, atol=1e-14)
        assert np.all(pts > 0) and np.all(pts.sum(axis=1) < 1)


def test_triangle_unsupported_count_raises(fcn):
    """Check that a ValueError is raised for point counts other than 1, 3 or 4
    (0, 2, 6, 7)."""
    for bad in (0, 2, 6, 7):
        with pytest.raises(ValueError):
            fcn(bad)


# ----------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ----------------------------------------------------------------------------

def fail_weights_sum_to_one(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Normalises the weights to sum to 1 (barycentric averaging) instead of the area 1/2."""
    table = {
        1: ([[1 / 3, 1 / 3]], [1.0]),
        3: ([[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3]], [1 / 3] * 3),
        4: ([[1 / 3, 1 / 3], [0.2, 0.2], [0.6, 0.2], [0.2, 0.6]], [-27 / 48, 25 / 48, 25 / 48, 25 / 48]),
    }
    if num_pts not in table:
        raise ValueError("num_pts must be 1, 3 or 4")
    p, w = table[num_pts]
    return np.array(p), np.array(w)


def fail_edge_midpoint_rule(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Uses the (also degree-2) edge-midpoint rule for 3 points instead of the documented
    interior-point rule."""
    table = {
        1: ([[1 / 3, 1 / 3]], [0.5]),
        3: ([[0.5, 0.0], [0.5, 0.5], [0.0, 0.5]], [1 / 6] * 3),
        4: ([[1 / 3, 1 / 3], [0.2, 0.2], [0.6, 0.2], [0.2, 0.6]], [-27 / 96, 25 / 96, 25 / 96, 25 / 96]),
    }
    if num_pts not in table:
        raise ValueError("num_pts must be 1, 3 or 4")
    p, w = table[num_pts]
    return np.array(p), np.array(w)


def fail_positive_centroid_weight(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Drops the sign of the negative centroid weight of the 4-point rule and renormalises
    the other weights so the total is still 1/2."""
    table = {
        1: ([[1 / 3, 1 / 3]], [0.5]),
        3: ([[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3]], [1 / 6] * 3),
        4: ([[1 / 3, 1 / 3], [0.2, 0.2], [0.6, 0.2], [0.2, 0.6]],
            [27 / 96, (48 - 27) / 288, (48 - 27) / 288, (48 - 27) / 288]),
    }
    if num_pts not in table:
        raise ValueError("num_pts must be 1, 3 or 4")
    p, w = table[num_pts]
    return np.array(p), np.array(w)


def fail_centroid_last(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Lists the centroid of the 4-point rule last and the 3-point rule starting from the
    vertex nearest (0, 1): the rules are correct but the documented order is not kept."""
    table = {
        1: ([[1 / 3, 1 / 3]], [0.5]),
        3: ([[1 / 6, 2 / 3], [1 / 6, 1 / 6], [2 / 3, 1 / 6]], [1 / 6] * 3),
        4: ([[0.2, 0.2], [0.6, 0.2], [0.2, 0.6], [1 / 3, 1 / 3]], [25 / 96, 25 / 96, 25 / 96, -27 / 96]),
    }
    if num_pts not in table:
        raise ValueError("num_pts must be 1, 3 or 4")
    p, w = table[num_pts]
    return np.array(p), np.array(w)


def fail_falls_back_to_centroid(num_pts: int) -> Tuple[np.ndarray, np.ndarray]:
    """Never raises: any unsupported count silently gets the 1-point centroid rule."""
    if num_pts == 3:
        return np.array([[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3]]), np.full(3, 1 / 6)
    if num_pts == 4:
        return (np.array([[1 / 3, 1 / 3], [0.2, 0.2], [0.6, 0.2], [0.2, 0.6]]),
                np.array([-27.0, 25.0, 25.0, 25.0]) / 96.0)
    return np.array([[1 / 3, 1 / 3]]), np.array([0.5])


def task_info():
    return {
        "task_id": "FEM_2D_tri_quadrature_CC0_H0_T0",
        "task_short_description": "quadrature points and weights on the reference triangle for 1, 3 or 4 points",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": triangle_quadrature,
        "required_imports": ["import numpy as np", "import pytest", "from typing import Tuple"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [[1], [3], [4], [2], [6]],
        "test_cases": [
            {
                "test_code": test_triangle_polynomial_exactness,
                "expected_failures": [fail_weights_sum_to_one, fail_positive_centroid_weight],
            },
            {
                "test_code": test_triangle_points_and_order,
                "expected_failures": [fail_edge_midpoint_rule, fail_centroid_last,
                                      fail_weights_sum_to_one, fail_positive_centroid_weight],
            },
            {
                "test_code": test_triangle_unsupported_count_raises,
                "expected_failures": [fail_falls_back_to_centroid],
            },
        ],
        "fresh_inputs": {
            "only_fixed": "its one argument is the rule size, which the docstring limits to a few values; the published inputs hold each",
        },
    }

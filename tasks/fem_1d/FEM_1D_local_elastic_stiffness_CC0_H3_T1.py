import numpy as np
import pytest
from typing import Tuple


def linear_shape_function_derivatives_1d() -> np.ndarray:
    """
    Derivatives of the 2-node linear shape functions with respect to the natural
    coordinate xi in [-1, 1].

    The shape functions are N1(xi) = (1 - xi) / 2 and N2(xi) = (1 + xi) / 2, so their
    derivatives are constant.

    Returns
    -------
    np.ndarray of float, shape (2,)
        [dN1/dxi, dN2/dxi] = [-0.5, 0.5].
    """
    return np.array([-0.5, 0.5])


def jacobian_1d(dN_dxi: np.ndarray, x_elem: np.ndarray) -> float:
    """
    Jacobian dx/dxi of the isoparametric map x(xi) = sum_a N_a(xi) * x_a.

    Parameters
    ----------
    dN_dxi : np.ndarray, shape (2,)
        Shape function derivatives with respect to xi, [dN1/dxi, dN2/dxi].
    x_elem : np.ndarray, shape (2,)
        Element node coordinates [x1, x2].

    Returns
    -------
    float
        J = dN1/dxi * x1 + dN2/dxi * x2 (equal to (x2 - x1) / 2 for a linear element).
    """
    return float(np.dot(dN_dxi, x_elem))


def gauss_legendre_1d(n_gauss: int) -> Tuple[np.ndarray, np.ndarray]:
    """
    Gauss-Legendre quadrature points and weights on [-1, 1].

    Parameters
    ----------
    n_gauss : int
        Number of points, 1, 2 or 3 (exact for polynomials of degree 1, 3, 5).

    Returns
    -------
    points : np.ndarray of float, shape (n_gauss,)
        Quadrature points in increasing order: [0]; [-1/sqrt(3), 1/sqrt(3)];
        [-sqrt(3/5), 0, sqrt(3/5)].
    weights : np.ndarray of float, shape (n_gauss,)
        Matching weights: [2]; [1, 1]; [5/9, 8/9, 5/9].

    Raises
    ------
    ValueError
        If n_gauss is not 1, 2 or 3.
    """
    if n_gauss not in (1, 2, 3):
        raise ValueError("n_gauss must be 1, 2 or 3")
    points, weights = np.polynomial.legendre.leggauss(n_gauss)
    return points, weights


def linear_bar_element_stiffness(x_elem: np.ndarray, E: float, A: float, n_gauss: int) -> np.ndarray:
    """
    Stiffness matrix of a 2-node linear (isoparametric) bar element for 1D linear
    elasticity, computed by Gauss-Legendre quadrature.

    The element maps the natural coordinate xi in [-1, 1] to x through the linear shape
    functions N1 = (1 - xi) / 2, N2 = (1 + xi) / 2. With J = dx/dxi and
    dN/dx = (dN/dxi) / J, the stiffness is

        K[a, b] = sum_g w_g * E * A * dN_a/dx * dN_b/dx * J   (evaluated at each point xi_g),

    where (xi_g, w_g) is the n_gauss-point Gauss-Legendre rule on [-1, 1]. E and A are
    constant over the element. Units: E in force/length^2, A in length^2, coordinates in
    length; K in force/length.

    Parameters
    ----------
    x_elem : np.ndarray, shape (2,)
        Node coordinates [x1, x2] of the element, local node 1 first. Must satisfy
        x2 > x1.
    E : float
        Young's modulus.
    A : float
        Cross-sectional area.
    n_gauss : int
        Number of Gauss points: 1, 2 or 3.

    Returns
    -------
    np.ndarray of float, shape (2, 2)
        Element stiffness matrix; row/column 0 is local node 1 (x1), 1 is local node 2 (x2).

    Raises
    ------
    ValueError
        If n_gauss is not 1, 2 or 3, or if the element length x2 - x1 is not positive
        (i.e. the Jacobian is <= 0).
    """
    x_elem = np.asarray(x_elem, dtype=float)
    points, weights = gauss_legendre_1d(n_gauss)
    dN_dxi = linear_shape_function_derivatives_1d()
    J = jacobian_1d(dN_dxi, x_elem)
    if J <= 0:
        raise ValueError("element must have positive length (x2 > x1)")
    K = np.zeros((2, 2))
    for xi, w in zip(points, weights):
        # For linear elements dN/dxi and J do not depend on xi; the loop still mirrors
        # the general quadrature so that every rule gives the same exact result.
        dN_dx = dN_dxi / J
        K += w * E * A * np.outer(dN_dx, dN_dx) * J
    return K


# ----------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------

def test_stiffness_matches_closed_form(fcn):
    """For several elements (different lengths, not starting at zero) and all three
    quadrature orders, check that the matrix equals (E*A/L) * [[1, -1], [-1, 1]] with
    L = x2 - x1, is symmetric, and maps a rigid-body translation [1, 1] to zero force."""
    cases = [
        (np.array([0.0, 1.0]), 210.0, 3.0),
        (np.array([0.4, 0.65]), 70.0e3, 1.2e-2),
        (np.array([-2.0, 1.5]), 3.3, 0.7),
    ]
    for x_elem, E, A in cases:
        L = x_elem[1] - x_elem[0]
        expected = E * A / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
        for n_gauss in (1, 2, 3):
            K = np.asarray(fcn(x_elem, E, A, n_gauss))
            assert K.shape == (2, 2)
            assert np.allclose(K, expected, rtol=1e-10, atol=0.0)
            assert np.allclose(K, K.T)
            assert np.allclose(K @ np.ones(2), 0.0, atol=1e-10 * np.abs(expected).max())


def test_invalid_element_input_raises(fcn):
    """Check that a ValueError is raised for an unsupported number of Gauss points
    (0 and 4), for a zero-length element, and for an element whose second node lies
    to the left of its first node."""
    with pytest.raises(ValueError):
        fcn(np.array([0.0, 1.0]), 100.0, 1.0, 4)
    with pytest.raises(ValueError):
        fcn(np.array([0.0, 1.0]), 100.0, 1.0, 0)
    with pytest.raises(ValueError):
        fcn(np.array([0.5, 0.5]), 100.0, 1.0, 2)
    with pytest.raises(ValueError):
        fcn(np.array([1.0, 0.2]), 100.0, 1.0, 2)


# ----------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ----------------------------------------------------------------------------

def fail_missing_jacobian_in_measure(x_elem: np.ndarray, E: float, A: float, n_gauss: int) -> np.ndarray:
    """Forgets the dx = J dxi factor in the integral."""
    if n_gauss not in (1, 2, 3):
        raise ValueError("n_gauss must be 1, 2 or 3")
    x_elem = np.asarray(x_elem, dtype=float)
    if x_elem[1] - x_elem[0] <= 0:
        raise ValueError("element must have positive length")
    pts, wts = np.polynomial.legendre.leggauss(n_gauss)
    J = (x_elem[1] - x_elem[0]) / 2.0
    dN_dx = np.array([-0.5, 0.5]) / J
    K = np.zeros((2, 2))
    for w in wts:
        K += w * E * A * np.outer(dN_dx, dN_dx)
    return K


def fail_natural_derivatives(x_elem: np.ndarray, E: float, A: float, n_gauss: int) -> np.ndarray:
    """Uses dN/dxi instead of dN/dx (no chain rule)."""
    if n_gauss not in (1, 2, 3):
        raise ValueError("n_gauss must be 1, 2 or 3")
    x_elem = np.asarray(x_elem, dtype=float)
    if x_elem[1] - x_elem[0] <= 0:
        raise ValueError("element must have positive length")
    pts, wts = np.polynomial.legendre.leggauss(n_gauss)
    J = (x_elem[1] - x_elem[0]) / 2.0
    dN = np.array([-0.5, 0.5])
    K = np.zeros((2, 2))
    for w in wts:
        K += w * E * A * np.outer(dN, dN) * J
    return K


def fail_full_length_jacobian(x_elem: np.ndarray, E: float, A: float, n_gauss: int) -> np.ndarray:
    """Takes J = L instead of L/2 (confuses [-1, 1] with [0, 1])."""
    if n_gauss not in (1, 2, 3):
        raise ValueError("n_gauss must be 1, 2 or 3")
    x_elem = np.asarray(x_elem, dtype=float)
    if x_elem[1] - x_elem[0] <= 0:
        raise ValueError("element must have positive length")
    pts, wts = np.polynomial.legendre.leggauss(n_gauss)
    J = x_elem[1] - x_elem[0]
    dN_dx = np.array([-0.5, 0.5]) / J
    K = np.zeros((2, 2))
    for w in wts:
        K += w * E * A * np.outer(dN_dx, dN_dx) * J
    return K


def fail_accepts_bad_input(x_elem: np.ndarray, E: float, A: float, n_gauss: int) -> np.ndarray:
    """Closed-form answer without any validation (silently accepts any n_gauss and a
    reversed element, and divides by zero for a zero-length one)."""
    x_elem = np.asarray(x_elem, dtype=float)
    L = abs(x_elem[1] - x_elem[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        return E * A / L * np.array([[1.0, -1.0], [-1.0, 1.0]])


def task_info():
    return {
        "task_id": "FEM_1D_local_elastic_stiffness_CC0_H3_T1",
        "task_short_description": "2-node linear bar element stiffness matrix by Gauss quadrature",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": linear_bar_element_stiffness,
        "required_imports": ["import numpy as np", "import pytest", "from typing import Tuple"],
        "fcn_dependencies": [linear_shape_function_derivatives_1d, jacobian_1d, gauss_legendre_1d],
        "reference_verification_inputs": [
            [np.array([0.35, 1.12]), 205.0e3, 3.7e-3, 1],
            [np.array([-1.4, 2.9]), 71.5, 0.83, 2],
            [np.array([2.25, 3.86]), 1.9e4, 2.6e-2, 3],
            [np.array([0.8, 0.8]), 100.0, 1.0, 2],
            [np.array([0.0, 1.5]), 100.0, 1.0, 4],
        ],
        "test_cases": [
            {
                "test_code": test_stiffness_matches_closed_form,
                "expected_failures": [
                    fail_missing_jacobian_in_measure,
                    fail_natural_derivatives,
                    fail_full_length_jacobian,
                ],
            },
            {
                "test_code": test_invalid_element_input_raises,
                "expected_failures": [fail_accepts_bad_input],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["x_elem"], "draw": "affine", "dimensions": 1, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["E", "A"], "draw": "scale", "low": 0.5, "high": 2.0},
            ],
            "fixed": {"n_gauss": "the docstring supports 1, 2 or 3 points; the published inputs use each, and 4 for the error"},
        },
    }

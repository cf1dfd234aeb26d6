import numpy as np
import pytest


def tri6_shape_functions_and_derivatives(xi):
    """
    Evaluate the 6-node quadratic triangle (T6) shape functions and their first
    derivatives with respect to the natural coordinates at a batch of points.

    Reference element: the triangle with vertices (0, 0), (1, 0), (0, 1) in natural
    coordinates (xi, eta). Node ordering (local node index: natural coordinates):
        0: (0,   0)     corner 1
        1: (1,   0)     corner 2
        2: (0,   1)     corner 3
        3: (1/2, 0)     midside of edge 1-2 (nodes 0 and 1)
        4: (1/2, 1/2)   midside of edge 2-3 (nodes 1 and 2)
        5: (0,   1/2)   midside of edge 3-1 (nodes 2 and 0)
    i.e. the three corners counter-clockwise, then the midside nodes of edges
    1-2, 2-3, 3-1.

    With the area (barycentric) coordinates L1 = 1 - xi - eta, L2 = xi, L3 = eta:
        N_0 = L1 (2 L1 - 1),  N_1 = L2 (2 L2 - 1),  N_2 = L3 (2 L3 - 1),
        N_3 = 4 L1 L2,        N_4 = 4 L2 L3,        N_5 = 4 L3 L1.
    The functions are polynomials and are evaluated as such: points outside the
    reference triangle are accepted and not checked.

    Parameters
    ----------
    xi : array-like of float, shape (2,) or (n, 2)
        Natural coordinates of the evaluation point(s); column 0 is xi, column 1
        is eta. A single point of shape (2,) is treated as a batch with n = 1.

    Returns
    -------
    N : np.ndarray of float, shape (n, 6, 1)
        N[p, i, 0] is the value of shape function i at point p.
    dN_dxi : np.ndarray of float, shape (n, 6, 2)
        dN_dxi[p, i, 0] = dN_i/dxi and dN_dxi[p, i, 1] = dN_i/deta at point p
        (derivatives with respect to xi and eta, not to the area coordinates).
    The two arrays are returned as a tuple (N, dN_dxi).

    Raises
    ------
    ValueError
        If xi does not have shape (2,) or (n, 2), or contains non-finite values
        (NaN or +/-inf).
    """
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError("xi must have shape (2,) or (n, 2)")
    if not np.all(np.isfinite(pts)):
        raise ValueError("xi must contain only finite values")

    L2 = pts[:, 0]
    L3 = pts[:, 1]
    L1 = 1.0 - L2 - L3
    n = pts.shape[0]
    N = np.zeros((n, 6))
    dN = np.zeros((n, 6, 2))

    # Corner nodes: N = L (2L - 1), dN = (4L - 1) grad L with grad L1 = (-1, -1),
    # grad L2 = (1, 0), grad L3 = (0, 1).
    N[:, 0] = L1 * (2.0 * L1 - 1.0)
    dN[:, 0, 0] = -(4.0 * L1 - 1.0)
    dN[:, 0, 1] = -(4.0 * L1 - 1.0)

    N[:, 1] = L2 * (2.0 * L2 - 1.0)
    dN[:, 1, 0] = 4.0 * L2 - 1.0

    N[:, 2] = L3 * (2.0 * L3 - 1.0)
    dN[:, 2, 1] = 4.0 * L3 - 1.0

    # Midside nodes: N = 4 La Lb, dN = 4 (Lb grad La + La grad Lb).
    N[:, 3] = 4.0 * L1 * L2
    dN[:, 3, 0] = 4.0 * (L1 - L2)
    dN[:, 3, 1] = -4.0 * L2

    N[:, 4] = 4.0 * L2 * L3
    dN[:, 4, 0] = 4.0 * L3
    dN[:, 4, 1] = 4.0 * L2

    N[:, 5] = 4.0 * L3 * L1
    dN[:, 5, 0] = -4.0 * L3
    dN[:, 5, 1] = 4.0 * (L1 - L3)

    return N[:, :, None], dN


# --------------------------------------------------------------------------- tests

def test_partition_of_unity_and_derivative_sums(fcn):
    """At random points of the reference triangle the outputs have shapes (n,6,1) and
    (n,6,2), the six shape functions sum to one (partition of unity), and for each
    natural coordinate the derivatives of the shape functions sum to zero."""
    rng = np.random.default_rng(7)
    pts = rng.uniform(0.0, 1.0, size=(20, 2))
    outside = pts.sum(axis=1) > 1.0
    pts[outside] = 1.0 - pts[outside]  # reflect into the reference triangle
    N, dN = fcn(pts)
    assert N.shape == (20, 6, 1)
    assert dN.shape == (20, 6, 2)
    assert np.allclose(N.sum(axis=1), 1.0, atol=1e-12)
    assert np.allclose(dN.sum(axis=1), 0.0, atol=1e-12)


def test_kronecker_delta_at_nodes_and_input_validation(fcn):
    """Evaluated at the six nodes in the documented order ((0,0), (1,0), (0,1), then the
    midsides of edges 1-2, 2-3, 3-1) the shape-function matrix is the 6x6 identity; a
    single point of shape (2,) gives a batch of one; inputs of the wrong shape or with
    NaN/inf raise ValueError."""
    nodes = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.5, 0.0], [0.5, 0.5], [0.0, 0.5]])
    N, dN = fcn(nodes)
    assert N.shape == (6, 6, 1)
    assert np.allclose(N[:, :, 0], np.eye(6), atol=1e-12)

    N1, dN1 = fcn(np.array([0.21, 0.35]))
    assert N1.shape == (1, 6, 1) and dN1.shape == (1, 6, 2)
    assert np.isclose(N1.sum(), 1.0)

    for bad in (np.array([0.1, 0.2, 0.3]), np.zeros((3, 1)), np.zeros((2, 2, 2)),
                np.array([[0.1, np.nan]]), np.array([[0.2, 0.1], [-np.inf, 0.0]])):
        with pytest.raises(ValueError):
            fcn(bad)


def test_completeness_quadratic_fields(fcn):
    """Interpolating nodal values of each quadratic monomial (1, xi, eta, xi^2, xi*eta,
    eta^2) reproduces the monomial and its gradient exactly at arbitrary points, which
    checks both the values and the derivatives with respect to (xi, eta)."""
    rng = np.random.default_rng(3)
    pts = rng.uniform(0.0, 1.0, size=(12, 2))
    outside = pts.sum(axis=1) > 1.0
    pts[outside] = 1.0 - pts[outside]  # reflect into the reference triangle
    N, dN = fcn(pts)
    nodes = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.5, 0.0], [0.5, 0.5], [0.0, 0.5]])
    X, Y = nodes[:, 0], nodes[:, 1]
    x, y = pts[:, 0], pts[:, 1]
    one = np.ones_like(x)
    zero = np.zeros_like(x)
    fields = [
        (lambda a, b: np.ones_like(a), one, zero, zero),
        (lambda a, b: a, x, one, zero),
        (lambda a, b: b, y, zero, one),
        (lambda a, b: a * a, x * x, 2 * x, zero),
        (lambda a, b: a * b, x * y, y, x),
        (lambda a, b: b * b, y * y, zero, 2 * y),
    ]
    for f, val, gx, gy in fields:
        nodal = f(X, Y)
        assert np.allclose(N[:, :, 0] @ nodal, val, atol=1e-12)
        assert np.allclose(dN[:, :, 0] @ nodal, gx, atol=1e-12)
        assert np.allclose(dN[:, :, 1] @ nodal, gy, atol=1e-12)


# --------------------------------------------------------------- expected failures

def fail_linear_corner_functions(xi):
    """Corner functions taken as the linear area coordinates L_i instead of L_i(2L_i-1)."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    s, t = pts[:, 0], pts[:, 1]
    r = 1 - s - t
    N = np.stack([r, s, t, 4 * r * s, 4 * s * t, 4 * t * r], axis=1)
    dxi = np.stack([-np.ones_like(s), np.ones_like(s), 0 * s, 4 * (r - s), 4 * t, -4 * t], axis=1)
    deta = np.stack([-np.ones_like(s), 0 * s, np.ones_like(s), -4 * s, 4 * s, 4 * (r - t)], axis=1)
    return N[:, :, None], np.stack([dxi, deta], axis=2)


def fail_midsides_in_wrong_order(xi):
    """Midside nodes ordered edge 3-1, 1-2, 2-3 instead of 1-2, 2-3, 3-1."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    s, t = pts[:, 0], pts[:, 1]
    r = 1 - s - t
    N = np.stack([r * (2 * r - 1), s * (2 * s - 1), t * (2 * t - 1), 4 * t * r, 4 * r * s, 4 * s * t], axis=1)
    dxi = np.stack([-(4 * r - 1), 4 * s - 1, 0 * s, -4 * t, 4 * (r - s), 4 * t], axis=1)
    deta = np.stack([-(4 * r - 1), 0 * s, 4 * t - 1, 4 * (r - t), -4 * s, 4 * s], axis=1)
    return N[:, :, None], np.stack([dxi, deta], axis=2)


def fail_swapped_derivative_columns(xi):
    """Correct values, but column 0 holds dN/deta and column 1 holds dN/dxi."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    s, t = pts[:, 0], pts[:, 1]
    r = 1 - s - t
    N = np.stack([r * (2 * r - 1), s * (2 * s - 1), t * (2 * t - 1), 4 * r * s, 4 * s * t, 4 * t * r], axis=1)
    dxi = np.stack([-(4 * r - 1), 4 * s - 1, 0 * s, 4 * (r - s), 4 * t, -4 * t], axis=1)
    deta = np.stack([-(4 * r - 1), 0 * s, 4 * t - 1, -4 * s, 4 * s, 4 * (r - t)], axis=1)
    return N[:, :, None], np.stack([deta, dxi], axis=2)


def fail_midside_derivative_missing_product_term(xi):
    """Derivative of N_3 = 4 L1 L2 taken as 4 L2 grad(L1) only (product rule incomplete)."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    s, t = pts[:, 0], pts[:, 1]
    r = 1 - s - t
    N = np.stack([r * (2 * r - 1), s * (2 * s - 1), t * (2 * t - 1), 4 * r * s, 4 * s * t, 4 * t * r], axis=1)
    dxi = np.stack([-(4 * r - 1), 4 * s - 1, 0 * s, -4 * s, 4 * t, -4 * t], axis=1)
    deta = np.stack([-(4 * r - 1), 0 * s, 4 * t - 1, -4 * s, 4 * s, 4 * (r - t)], axis=1)
    return N[:, :, None], np.stack([dxi, deta], axis=2)


def fail_values_without_trailing_axis(xi):
    """Correct numbers, but N returned with shape (n, 6) instead of (n, 6, 1)."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    s, t = pts[:, 0], pts[:, 1]
    r = 1 - s - t
    N = np.stack([r * (2 * r - 1), s * (2 * s - 1), t * (2 * t - 1), 4 * r * s, 4 * s * t, 4 * t * r], axis=1)
    dxi = np.stack([-(4 * r - 1), 4 * s - 1, 0 * s, 4 * (r - s), 4 * t, -4 * t], axis=1)
    deta = np.stack([-(4 * r - 1), 0 * s, 4 * t - 1, -4 * s, 4 * s, 4 * (r - t)], axis=1)
    return N, np.stack([dxi, deta], axis=2)


def fail_no_finite_check(xi):
    """Shape is validated but NaN/inf coordinates are silently propagated."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError("bad xi")
    s, t = pts[:, 0], pts[:, 1]
    r = 1 - s - t
    N = np.stack([r * (2 * r - 1), s * (2 * s - 1), t * (2 * t - 1), 4 * r * s, 4 * s * t, 4 * t * r], axis=1)
    dxi = np.stack([-(4 * r - 1), 4 * s - 1, 0 * s, 4 * (r - s), 4 * t, -4 * t], axis=1)
    deta = np.stack([-(4 * r - 1), 0 * s, 4 * t - 1, -4 * s, 4 * s, 4 * (r - t)], axis=1)
    return N[:, :, None], np.stack([dxi, deta], axis=2)


def task_info():
    return {
        "task_id": "FEM_2D_tri6_shape_fcns_and_derivatives_CC0_H0_T0",
        "task_short_description": "T6 quadratic triangle shape functions and natural-coordinate derivatives at a batch of points",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": tri6_shape_functions_and_derivatives,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            # interior points, nodes and one point outside the triangle
            [np.array([[0.137, 0.482], [0.611, 0.204], [0.083, 0.071], [0.29, 0.63],
                       [0.5, 0.0], [0.0, 1.0], [0.0, 0.5], [0.93, -0.21]])],
            # single point given as shape (2,)
            [np.array([0.318, 0.447])],
            # points on the three edges
            [np.array([[0.27, 0.0], [0.64, 0.36], [0.0, 0.81], [0.153, 0.0], [0.0, 0.119]])],
            # wrong trailing dimension -> ValueError
            [np.array([[0.2, 0.3, 0.4]])],
        ],
        "test_cases": [
            {"test_code": test_partition_of_unity_and_derivative_sums,
             "expected_failures": [fail_linear_corner_functions,
                                   fail_midside_derivative_missing_product_term,
                                   fail_values_without_trailing_axis]},
            {"test_code": test_kronecker_delta_at_nodes_and_input_validation,
             "expected_failures": [fail_midsides_in_wrong_order,
                                   fail_linear_corner_functions,
                                   fail_no_finite_check]},
            {"test_code": test_completeness_quadratic_fields,
             "expected_failures": [fail_swapped_derivative_columns,
                                   fail_midside_derivative_missing_product_term,
                                   fail_midsides_in_wrong_order]},
        ],
        "fresh_inputs": {
            "draws": [{"arguments": ["xi"], "draw": "uniform", "low": -0.2, "high": 1.2}],
        },
    }

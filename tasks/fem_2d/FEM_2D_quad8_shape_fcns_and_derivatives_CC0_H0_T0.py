import numpy as np
import pytest


def quad8_shape_functions_and_derivatives(xi):
    """
    Evaluate the 8-node serendipity quadrilateral (Q8) shape functions and their
    first derivatives with respect to the natural coordinates at a batch of points.

    Reference element: the square [-1, 1] x [-1, 1] in natural coordinates (xi, eta).
    Node ordering (local node index: natural coordinates):
        0: (-1, -1)   corner, bottom-left
        1: ( 1, -1)   corner, bottom-right
        2: ( 1,  1)   corner, top-right
        3: (-1,  1)   corner, top-left
        4: ( 0, -1)   midside of the bottom edge (between nodes 0 and 1)
        5: ( 1,  0)   midside of the right edge  (between nodes 1 and 2)
        6: ( 0,  1)   midside of the top edge    (between nodes 2 and 3)
        7: (-1,  0)   midside of the left edge   (between nodes 3 and 0)
    i.e. corners counter-clockwise starting at (-1, -1), then the midside nodes
    counter-clockwise starting with the bottom edge.

    Shape functions (standard serendipity family; xi_i, eta_i are the natural
    coordinates of node i):
        corners  (i = 0..3): N_i = 1/4 (1 + xi xi_i)(1 + eta eta_i)(xi xi_i + eta eta_i - 1)
        midsides with xi_i = 0  (i = 4, 6): N_i = 1/2 (1 - xi^2)(1 + eta eta_i)
        midsides with eta_i = 0 (i = 5, 7): N_i = 1/2 (1 + xi xi_i)(1 - eta^2)
    The functions are polynomials and are evaluated as such: points outside the
    reference square are accepted and not checked.

    Parameters
    ----------
    xi : array-like of float, shape (2,) or (n, 2)
        Natural coordinates of the evaluation point(s); column 0 is xi, column 1
        is eta. A single point of shape (2,) is treated as a batch with n = 1.

    Returns
    -------
    N : np.ndarray of float, shape (n, 8, 1)
        N[p, i, 0] is the value of shape function i at point p.
    dN_dxi : np.ndarray of float, shape (n, 8, 2)
        dN_dxi[p, i, 0] = dN_i/dxi and dN_dxi[p, i, 1] = dN_i/deta at point p.
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

    x = pts[:, 0]
    y = pts[:, 1]
    n = pts.shape[0]
    N = np.zeros((n, 8))
    dN = np.zeros((n, 8, 2))

    # Corner nodes: bilinear term corrected so that N_i vanishes at the midside nodes.
    corners = ((-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0))
    for i, (a, b) in enumerate(corners):
        N[:, i] = 0.25 * (1.0 + a * x) * (1.0 + b * y) * (a * x + b * y - 1.0)
        dN[:, i, 0] = 0.25 * a * (1.0 + b * y) * (2.0 * a * x + b * y)
        dN[:, i, 1] = 0.25 * b * (1.0 + a * x) * (a * x + 2.0 * b * y)

    # Midside nodes, bottom, right, top, left.
    N[:, 4] = 0.5 * (1.0 - x * x) * (1.0 - y)
    dN[:, 4, 0] = -x * (1.0 - y)
    dN[:, 4, 1] = -0.5 * (1.0 - x * x)

    N[:, 5] = 0.5 * (1.0 + x) * (1.0 - y * y)
    dN[:, 5, 0] = 0.5 * (1.0 - y * y)
    dN[:, 5, 1] = -(1.0 + x) * y

    N[:, 6] = 0.5 * (1.0 - x * x) * (1.0 + y)
    dN[:, 6, 0] = -x * (1.0 + y)
    dN[:, 6, 1] = 0.5 * (1.0 - x * x)

    N[:, 7] = 0.5 * (1.0 - x) * (1.0 - y * y)
    dN[:, 7, 0] = -0.5 * (1.0 - y * y)
    dN[:, 7, 1] = -(1.0 - x) * y

    return N[:, :, None], dN


# --------------------------------------------------------------------------- tests

def test_partition_of_unity_and_derivative_sums(fcn):
    """At random points of the reference square the outputs have shapes (n,8,1) and
    (n,8,2), the eight shape functions sum to one (partition of unity), and for each
    natural coordinate the derivatives of the shape functions sum to zero."""
    rng = np.random.default_rng(11)
    pts = rng.uniform(-1.0, 1.0, size=(25, 2))
    N, dN = fcn(pts)
    assert N.shape == (25, 8, 1)
    assert dN.shape == (25, 8, 2)
    assert np.allclose(N.sum(axis=1), 1.0, atol=1e-12)
    assert np.allclose(dN.sum(axis=1), 0.0, atol=1e-12)


def test_kronecker_delta_at_nodes_and_input_validation(fcn):
    """Evaluated at the eight nodes in the documented order (corners counter-clockwise
    from (-1,-1), then midsides bottom, right, top, left) the shape-function matrix is
    the 8x8 identity; a single point of shape (2,) gives a batch of one; inputs of the
    wrong shape or with NaN/inf raise ValueError."""
    nodes = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0],
                      [0.0, -1.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    N, dN = fcn(nodes)
    assert N.shape == (8, 8, 1)
    assert np.allclose(N[:, :, 0], np.eye(8), atol=1e-12)

    N1, dN1 = fcn(np.array([0.3, -0.6]))
    assert N1.shape == (1, 8, 1) and dN1.shape == (1, 8, 2)
    assert np.isclose(N1.sum(), 1.0)

    for bad in (np.array([0.1, 0.2, 0.3]), np.zeros((4, 3)), np.zeros((2, 2, 2)),
                np.array([[0.1, np.nan]]), np.array([[np.inf, 0.0], [0.2, 0.1]])):
        with pytest.raises(ValueError):
            fcn(bad)


def test_completeness_quadratic_and_cubic_serendipity_fields(fcn):
    """Interpolating nodal values of each monomial in the Q8 space (1, xi, eta, xi^2,
    xi*eta, eta^2, xi^2*eta, xi*eta^2) reproduces the monomial and its gradient exactly
    at arbitrary points, which checks both the values and the derivatives."""
    rng = np.random.default_rng(5)
    pts = rng.uniform(-1.0, 1.0, size=(15, 2))
    N, dN = fcn(pts)
    nodes = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0],
                      [0.0, -1.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
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
        (lambda a, b: a * a * b, x * x * y, 2 * x * y, x * x),
        (lambda a, b: a * b * b, x * y * y, y * y, 2 * x * y),
    ]
    for f, val, gx, gy in fields:
        nodal = f(X, Y)
        assert np.allclose(N[:, :, 0] @ nodal, val, atol=1e-12)
        assert np.allclose(dN[:, :, 0] @ nodal, gx, atol=1e-12)
        assert np.allclose(dN[:, :, 1] @ nodal, gy, atol=1e-12)


# --------------------------------------------------------------- expected failures

def fail_bilinear_corner_functions(xi):
    """Corner functions left as plain bilinear 1/4(1+a xi)(1+b eta) (missing the
    serendipity correction factor), midside functions correct."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    x, y = pts[:, 0], pts[:, 1]
    n = pts.shape[0]
    N = np.zeros((n, 8))
    dN = np.zeros((n, 8, 2))
    for i, (a, b) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        N[:, i] = 0.25 * (1 + a * x) * (1 + b * y)
        dN[:, i, 0] = 0.25 * a * (1 + b * y)
        dN[:, i, 1] = 0.25 * b * (1 + a * x)
    N[:, 4] = 0.5 * (1 - x * x) * (1 - y); dN[:, 4] = np.c_[-x * (1 - y), -0.5 * (1 - x * x)]
    N[:, 5] = 0.5 * (1 + x) * (1 - y * y); dN[:, 5] = np.c_[0.5 * (1 - y * y), -(1 + x) * y]
    N[:, 6] = 0.5 * (1 - x * x) * (1 + y); dN[:, 6] = np.c_[-x * (1 + y), 0.5 * (1 - x * x)]
    N[:, 7] = 0.5 * (1 - x) * (1 - y * y); dN[:, 7] = np.c_[-0.5 * (1 - y * y), -(1 - x) * y]
    return N[:, :, None], dN


def fail_midsides_start_at_left_edge(xi):
    """Midside nodes ordered left, bottom, right, top instead of bottom, right, top, left."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    x, y = pts[:, 0], pts[:, 1]
    n = pts.shape[0]
    N = np.zeros((n, 8))
    dN = np.zeros((n, 8, 2))
    for i, (a, b) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        N[:, i] = 0.25 * (1 + a * x) * (1 + b * y) * (a * x + b * y - 1)
        dN[:, i, 0] = 0.25 * a * (1 + b * y) * (2 * a * x + b * y)
        dN[:, i, 1] = 0.25 * b * (1 + a * x) * (a * x + 2 * b * y)
    N[:, 4] = 0.5 * (1 - x) * (1 - y * y); dN[:, 4] = np.c_[-0.5 * (1 - y * y), -(1 - x) * y]
    N[:, 5] = 0.5 * (1 - x * x) * (1 - y); dN[:, 5] = np.c_[-x * (1 - y), -0.5 * (1 - x * x)]
    N[:, 6] = 0.5 * (1 + x) * (1 - y * y); dN[:, 6] = np.c_[0.5 * (1 - y * y), -(1 + x) * y]
    N[:, 7] = 0.5 * (1 - x * x) * (1 + y); dN[:, 7] = np.c_[-x * (1 + y), 0.5 * (1 - x * x)]
    return N[:, :, None], dN


def fail_swapped_derivative_columns(xi):
    """Correct values, but column 0 holds dN/deta and column 1 holds dN/dxi."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    x, y = pts[:, 0], pts[:, 1]
    n = pts.shape[0]
    N = np.zeros((n, 8))
    dN = np.zeros((n, 8, 2))
    for i, (a, b) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        N[:, i] = 0.25 * (1 + a * x) * (1 + b * y) * (a * x + b * y - 1)
        dN[:, i, 1] = 0.25 * a * (1 + b * y) * (2 * a * x + b * y)
        dN[:, i, 0] = 0.25 * b * (1 + a * x) * (a * x + 2 * b * y)
    N[:, 4] = 0.5 * (1 - x * x) * (1 - y); dN[:, 4] = np.c_[-0.5 * (1 - x * x), -x * (1 - y)]
    N[:, 5] = 0.5 * (1 + x) * (1 - y * y); dN[:, 5] = np.c_[-(1 + x) * y, 0.5 * (1 - y * y)]
    N[:, 6] = 0.5 * (1 - x * x) * (1 + y); dN[:, 6] = np.c_[0.5 * (1 - x * x), -x * (1 + y)]
    N[:, 7] = 0.5 * (1 - x) * (1 - y * y); dN[:, 7] = np.c_[-(1 - x) * y, -0.5 * (1 - y * y)]
    return N[:, :, None], dN


def fail_midside_derivative_sign_error(xi):
    """Sign slip in dN/deta of the bottom midside node (+1/2(1-xi^2) instead of -)."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    x, y = pts[:, 0], pts[:, 1]
    n = pts.shape[0]
    N = np.zeros((n, 8))
    dN = np.zeros((n, 8, 2))
    for i, (a, b) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        N[:, i] = 0.25 * (1 + a * x) * (1 + b * y) * (a * x + b * y - 1)
        dN[:, i, 0] = 0.25 * a * (1 + b * y) * (2 * a * x + b * y)
        dN[:, i, 1] = 0.25 * b * (1 + a * x) * (a * x + 2 * b * y)
    N[:, 4] = 0.5 * (1 - x * x) * (1 - y); dN[:, 4] = np.c_[-x * (1 - y), 0.5 * (1 - x * x)]
    N[:, 5] = 0.5 * (1 + x) * (1 - y * y); dN[:, 5] = np.c_[0.5 * (1 - y * y), -(1 + x) * y]
    N[:, 6] = 0.5 * (1 - x * x) * (1 + y); dN[:, 6] = np.c_[-x * (1 + y), 0.5 * (1 - x * x)]
    N[:, 7] = 0.5 * (1 - x) * (1 - y * y); dN[:, 7] = np.c_[-0.5 * (1 - y * y), -(1 - x) * y]
    return N[:, :, None], dN


def fail_values_without_trailing_axis(xi):
    """Correct numbers, but N returned with shape (n, 8) instead of (n, 8, 1)."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2 or not np.all(np.isfinite(pts)):
        raise ValueError("bad xi")
    x, y = pts[:, 0], pts[:, 1]
    n = pts.shape[0]
    N = np.zeros((n, 8))
    dN = np.zeros((n, 8, 2))
    for i, (a, b) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        N[:, i] = 0.25 * (1 + a * x) * (1 + b * y) * (a * x + b * y - 1)
        dN[:, i, 0] = 0.25 * a * (1 + b * y) * (2 * a * x + b * y)
        dN[:, i, 1] = 0.25 * b * (1 + a * x) * (a * x + 2 * b * y)
    N[:, 4] = 0.5 * (1 - x * x) * (1 - y); dN[:, 4] = np.c_[-x * (1 - y), -0.5 * (1 - x * x)]
    N[:, 5] = 0.5 * (1 + x) * (1 - y * y); dN[:, 5] = np.c_[0.5 * (1 - y * y), -(1 + x) * y]
    N[:, 6] = 0.5 * (1 - x * x) * (1 + y); dN[:, 6] = np.c_[-x * (1 + y), 0.5 * (1 - x * x)]
    N[:, 7] = 0.5 * (1 - x) * (1 - y * y); dN[:, 7] = np.c_[-0.5 * (1 - y * y), -(1 - x) * y]
    return N, dN


def fail_no_finite_check(xi):
    """Shape is validated but NaN/inf coordinates are silently propagated."""
    pts = np.asarray(xi, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ValueError("bad xi")
    x, y = pts[:, 0], pts[:, 1]
    n = pts.shape[0]
    N = np.zeros((n, 8))
    dN = np.zeros((n, 8, 2))
    for i, (a, b) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        N[:, i] = 0.25 * (1 + a * x) * (1 + b * y) * (a * x + b * y - 1)
        dN[:, i, 0] = 0.25 * a * (1 + b * y) * (2 * a * x + b * y)
        dN[:, i, 1] = 0.25 * b * (1 + a * x) * (a * x + 2 * b * y)
    N[:, 4] = 0.5 * (1 - x * x) * (1 - y); dN[:, 4] = np.c_[-x * (1 - y), -0.5 * (1 - x * x)]
    N[:, 5] = 0.5 * (1 + x) * (1 - y * y); dN[:, 5] = np.c_[0.5 * (1 - y * y), -(1 + x) * y]
    N[:, 6] = 0.5 * (1 - x * x) * (1 + y); dN[:, 6] = np.c_[-x * (1 + y), 0.5 * (1 - x * x)]
    N[:, 7] = 0.5 * (1 - x) * (1 - y * y); dN[:, 7] = np.c_[-0.5 * (1 - y * y), -(1 - x) * y]
    return N[:, :, None], dN


def task_info():
    return {
        "task_id": "FEM_2D_quad8_shape_fcns_and_derivatives_CC0_H0_T0",
        "task_short_description": "Q8 serendipity shape functions and natural-coordinate derivatives at a batch of points",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": quad8_shape_functions_and_derivatives,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            # generic interior and exterior points, all eight nodes mixed in
            [np.array([[0.137, -0.482], [-0.731, 0.264], [0.913, 0.577], [-0.389, -0.846],
                       [0.0, -1.0], [1.0, 1.0], [-1.0, 0.0], [1.27, -0.43]])],
            # single point given as shape (2,)
            [np.array([-0.618, 0.347])],
            # points on the edges and a strongly asymmetric point
            [np.array([[0.41, -1.0], [1.0, -0.23], [-0.77, 1.0], [-1.0, 0.66], [0.052, 0.981]])],
            # wrong trailing dimension -> ValueError
            [np.array([[0.2, 0.3, 0.4]])],
        ],
        "test_cases": [
            {"test_code": test_partition_of_unity_and_derivative_sums,
             "expected_failures": [fail_bilinear_corner_functions,
                                   fail_midside_derivative_sign_error,
                                   fail_values_without_trailing_axis]},
            {"test_code": test_kronecker_delta_at_nodes_and_input_validation,
             "expected_failures": [fail_midsides_start_at_left_edge,
                                   fail_bilinear_corner_functions,
                                   fail_no_finite_check]},
            {"test_code": test_completeness_quadratic_and_cubic_serendipity_fields,
             "expected_failures": [fail_swapped_derivative_columns,
                                   fail_midside_derivative_sign_error,
                                   fail_midsides_start_at_left_edge]},
        ],
        "fresh_inputs": {
            "draws": [{"arguments": ["xi"], "draw": "uniform", "low": -1.3, "high": 1.3}],
        },
    }

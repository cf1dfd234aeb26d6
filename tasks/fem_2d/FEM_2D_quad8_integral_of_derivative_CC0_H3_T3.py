import numpy as np
import pytest


def quad_gauss_rule_2d(num_gauss_pts):
    """
    Tensor-product Gauss-Legendre rule on the reference square [-1, 1] x [-1, 1].

    Parameters
    ----------
    num_gauss_pts : int
        Total number of points: 1 (1x1), 4 (2x2) or 9 (3x3).

    Returns
    -------
    points : np.ndarray, shape (num_gauss_pts, 2)
        Natural coordinates (xi, eta) of the points; xi varies fastest.
    weights : np.ndarray, shape (num_gauss_pts,)
        Weights (products of the 1D weights); they sum to 4, the area of the square.
        1D rules: 1 point {0} with weight 2; 2 points {-1/sqrt(3), +1/sqrt(3)} with weights
        {1, 1}; 3 points {-sqrt(3/5), 0, +sqrt(3/5)} with weights {5/9, 8/9, 5/9}.

    Raises
    ------
    ValueError
        If num_gauss_pts is not 1, 4 or 9.
    """
    if num_gauss_pts == 1:
        pts_1d = np.array([0.0])
        w_1d = np.array([2.0])
    elif num_gauss_pts == 4:
        a = 1.0 / np.sqrt(3.0)
        pts_1d = np.array([-a, a])
        w_1d = np.array([1.0, 1.0])
    elif num_gauss_pts == 9:
        a = np.sqrt(3.0 / 5.0)
        pts_1d = np.array([-a, 0.0, a])
        w_1d = np.array([5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0])
    else:
        raise ValueError("num_gauss_pts must be 1, 4 or 9")
    xi, eta = np.meshgrid(pts_1d, pts_1d, indexing="xy")  # xi varies fastest after ravel
    w_xi, w_eta = np.meshgrid(w_1d, w_1d, indexing="xy")
    points = np.column_stack([xi.ravel(), eta.ravel()])
    weights = (w_xi * w_eta).ravel()
    return points, weights


def quad8_shape_function_derivatives(xi, eta):
    """
    Derivatives, with respect to the natural coordinates, of the shape functions of the
    8-node serendipity quadrilateral (Q8), evaluated at a set of natural points.

    Reference square: -1 <= xi <= 1, -1 <= eta <= 1. Node ordering (natural coordinates):
        corners, counter-clockwise starting at (-1, -1):
            0: (-1, -1)   1: ( 1, -1)   2: ( 1,  1)   3: (-1,  1)
        midside nodes, starting with the bottom edge and going counter-clockwise:
            4: ( 0, -1)   5: ( 1,  0)   6: ( 0,  1)   7: (-1,  0)

    Shape functions being differentiated:
        corner node (xi_a, eta_a):  N_a = 1/4 (1 + xi xi_a)(1 + eta eta_a)(xi xi_a + eta eta_a - 1)
        midside node with xi_a = 0:  N_a = 1/2 (1 - xi^2)(1 + eta eta_a)
        midside node with eta_a = 0: N_a = 1/2 (1 + xi xi_a)(1 - eta^2)

    Parameters
    ----------
    xi, eta : array_like, shape (n_pts,) (scalars are treated as length-1 arrays)
        Natural coordinates of the evaluation points.

    Returns
    -------
    dN : np.ndarray, shape (n_pts, 8, 2)
        dN[p, a, 0] = dN_a/dxi and dN[p, a, 1] = dN_a/deta at point p = (xi[p], eta[p]).
    """
    xi = np.atleast_1d(np.asarray(xi, dtype=float))
    eta = np.atleast_1d(np.asarray(eta, dtype=float))
    dN = np.zeros((xi.shape[0], 8, 2))

    corners = ((-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0))
    for a, (xa, ea) in enumerate(corners):
        dN[:, a, 0] = xa * (1.0 + ea * eta) * (2.0 * (xa * xi) + ea * eta) / 4.0
        dN[:, a, 1] = ea * (1.0 + xa * xi) * (xa * xi + 2.0 * (ea * eta)) / 4.0

    # node 4: bottom edge (0, -1), N = 1/2 (1 - xi^2)(1 - eta)
    dN[:, 4, 0] = -xi * (1.0 - eta)
    dN[:, 4, 1] = -0.5 * (1.0 - xi**2)
    # node 5: right edge (1, 0), N = 1/2 (1 + xi)(1 - eta^2)
    dN[:, 5, 0] = 0.5 * (1.0 - eta**2)
    dN[:, 5, 1] = -(1.0 + xi) * eta
    # node 6: top edge (0, 1), N = 1/2 (1 - xi^2)(1 + eta)
    dN[:, 6, 0] = -xi * (1.0 + eta)
    dN[:, 6, 1] = 0.5 * (1.0 - xi**2)
    # node 7: left edge (-1, 0), N = 1/2 (1 - xi)(1 - eta^2)
    dN[:, 7, 0] = -0.5 * (1.0 - eta**2)
    dN[:, 7, 1] = -(1.0 - xi) * eta
    return dN


def quad8_gradient_and_jacobian_det(node_coords, node_values, xi, eta):
    """
    Physical gradient of a Q8-interpolated scalar field and the Jacobian determinant of the
    isoparametric map at a set of natural points.

    Node ordering as in quad8_shape_function_derivatives (corners counter-clockwise from
    (-1, -1), then midside nodes counter-clockwise starting with the bottom edge).
    Jacobian convention: J = [[dx/dxi, dy/dxi], [dx/deta, dy/deta]], so
    [du/dx, du/dy]^T = J^{-1} [du/dxi, du/deta]^T and
    det J = dx/dxi * dy/deta - dy/dxi * dx/deta.

    Parameters
    ----------
    node_coords : array_like, shape (8, 2)
        Physical node coordinates.
    node_values : array_like, shape (8,)
        Nodal values of the scalar field.
    xi, eta : array_like, shape (n_pts,)
        Natural coordinates of the points.

    Returns
    -------
    grad : np.ndarray, shape (2, n_pts)
        Row 0: du/dx, row 1: du/dy at each point.
    detJ : np.ndarray, shape (n_pts,)
        det J at each point.

    Raises
    ------
    ValueError
        If det J <= 0 at any of the points.
    """
    X = np.asarray(node_coords, dtype=float)
    u = np.asarray(node_values, dtype=float)
    dN = quad8_shape_function_derivatives(xi, eta)  # (n, 8, 2)

    # J[p, i, j] = d x_j / d xi_i  (row i: natural direction, column j: physical direction)
    J = np.einsum("pai,aj->pij", dN, X)
    detJ = J[:, 0, 0] * J[:, 1, 1] - J[:, 0, 1] * J[:, 1, 0]
    if np.any(detJ <= 0.0):
        raise ValueError("Jacobian determinant is not positive: inverted or degenerate element")

    grad_nat = np.einsum("pai,a->pi", dN, u)  # (n, 2): [du/dxi, du/deta]
    # J^{-1} = adj(J) / det J, applied point by point
    dudx = (J[:, 1, 1] * grad_nat[:, 0] - J[:, 0, 1] * grad_nat[:, 1]) / detJ
    dudy = (-J[:, 1, 0] * grad_nat[:, 0] + J[:, 0, 0] * grad_nat[:, 1]) / detJ
    return np.vstack([dudx, dudy]), detJ


def quad8_integral_of_gradient(node_coords, node_values, num_gauss_pts):
    """
    Integral over an 8-node serendipity quadrilateral (Q8) of the physical gradient of a
    scalar field interpolated from nodal values,
        I = integral over the element of grad(u) dA = [ int du/dx dA, int du/dy dA ],
    computed by tensor-product Gauss-Legendre quadrature on the reference square:
        I = sum_g w_g * grad(u)(xi_g, eta_g) * det J(xi_g, eta_g).

    Node ordering (row a of node_coords and entry a of node_values belong to node a, whose
    natural coordinates are):
        corners, counter-clockwise starting at (-1, -1):
            0: (-1, -1)   1: ( 1, -1)   2: ( 1,  1)   3: (-1,  1)
        midside nodes, starting with the bottom edge (eta = -1) and going counter-clockwise:
            4: ( 0, -1)   5: ( 1,  0)   6: ( 0,  1)   7: (-1,  0)
    Serendipity shape functions:
        corner node (xi_a, eta_a):  N_a = 1/4 (1 + xi xi_a)(1 + eta eta_a)(xi xi_a + eta eta_a - 1)
        midside node with xi_a = 0:  N_a = 1/2 (1 - xi^2)(1 + eta eta_a)
        midside node with eta_a = 0: N_a = 1/2 (1 + xi xi_a)(1 - eta^2)
    The element is isoparametric: x = sum_a N_a x_a, y = sum_a N_a y_a, u = sum_a N_a u_a.
    Midside nodes need not lie at edge midpoints, so edges may be curved.

    Jacobian convention:
        J = [[dx/dxi,  dy/dxi ],
             [dx/deta, dy/deta]],
    [du/dx, du/dy]^T = J^{-1} [du/dxi, du/deta]^T,
    det J = dx/dxi * dy/deta - dy/dxi * dx/deta (positive for a valid counter-clockwise
    element), and dA = det J dxi deta.

    Quadrature: num_gauss_pts = 1 (1x1), 4 (2x2) or 9 (3x3) tensor-product Gauss-Legendre
    points, built from the 1D rules
        1 point:  {0}, weight 2
        2 points: {-1/sqrt(3), +1/sqrt(3)}, weights {1, 1}
        3 points: {-sqrt(3/5), 0, +sqrt(3/5)}, weights {5/9, 8/9, 5/9}
    with 2D weight w_g = w_i * w_j.

    Parameters
    ----------
    node_coords : array_like, shape (8, 2)
        Physical coordinates (x, y) of the nodes in the ordering above.
    node_values : array_like, shape (8,)
        Nodal values u_a of the scalar field.
    num_gauss_pts : int
        1, 4 or 9.

    Returns
    -------
    np.ndarray, shape (2,)
        [integral of du/dx, integral of du/dy] over the element.

    Raises
    ------
    ValueError
        If num_gauss_pts is not 1, 4 or 9, or if det J <= 0 at any Gauss point (inverted,
        e.g. clockwise-numbered, or degenerate element).
    """
    points, weights = quad_gauss_rule_2d(num_gauss_pts)
    grad, detJ = quad8_gradient_and_jacobian_det(node_coords, node_values, points[:, 0], points[:, 1])
    return grad @ (weights * detJ)


# ----------------------------------------------------------------------------- tests


def test_divergence_theorem_on_curved_element(fcn):
    """For a distorted Q8 with curved (quadratic) edges and arbitrary nodal values, the
    2x2 and 3x3 rules integrate grad(u) det J exactly, so the result must equal the boundary
    integral of u times the outward normal, computed independently along the four quadratic
    edges (nodes 0-4-1, 1-5-2, 2-6-3, 3-7-0) with a high-order 1D Gauss rule."""
    X = np.array(
        [
            [0.10, -0.20],
            [1.70, 0.15],
            [1.45, 1.30],
            [-0.15, 1.05],
            [0.95, -0.12],
            [1.68, 0.70],
            [0.62, 1.27],
            [-0.11, 0.46],
        ]
    )
    u = np.array([0.3, -1.2, 2.1, 0.7, -0.45, 1.6, -0.8, 0.25])
    edges = [(0, 4, 1), (1, 5, 2), (2, 6, 3), (3, 7, 0)]
    s, w = np.polynomial.legendre.leggauss(6)
    # 1D quadratic Lagrange functions on [-1, 1] for (start, middle, end) nodes
    L = np.stack([0.5 * s * (s - 1.0), 1.0 - s**2, 0.5 * s * (s + 1.0)], axis=1)
    dL = np.stack([s - 0.5, -2.0 * s, s + 0.5], axis=1)
    boundary = np.zeros(2)
    for e in edges:
        idx = list(e)
        ue = L @ u[idx]
        dxe = dL @ X[idx]  # tangent (dx/ds, dy/ds), counter-clockwise traversal
        # outward normal times ds for counter-clockwise traversal: (dy, -dx)
        boundary[0] += np.sum(w * ue * dxe[:, 1])
        boundary[1] += np.sum(w * ue * (-dxe[:, 0]))
    for n in (4, 9):
        res = np.asarray(fcn(X, u, n), dtype=float)
        assert res.shape == (2,)
        assert np.allclose(res, boundary, rtol=1e-10, atol=1e-12)


def test_known_integrals_on_straight_sided_elements(fcn):
    """Closed-form checks on straight-sided elements (midside nodes at edge midpoints):
    for a linear field u = c + bx x + by y on a general quadrilateral the integral is
    (bx, by) times the shoelace area, for every rule (1, 4 and 9 points, since det J is then
    at most linear); for u = x^2 on a parallelogram it is (2 * x_centroid * area, 0)
    with the 4- and 9-point rules."""
    corners = np.array([[0.2, -0.1], [2.3, 0.4], [1.9, 1.7], [-0.3, 1.2]])
    mids = 0.5 * (corners + np.roll(corners, -1, axis=0))
    X = np.vstack([corners, mids])
    xc, yc = corners[:, 0], corners[:, 1]
    area = 0.5 * np.sum(xc * np.roll(yc, -1) - np.roll(xc, -1) * yc)
    bx, by = 1.75, -0.6
    u = 0.9 + bx * X[:, 0] + by * X[:, 1]
    for n in (1, 4, 9):
        assert np.allclose(fcn(X, u, n), [bx * area, by * area], rtol=1e-10, atol=1e-12)

    c = np.array([0.5, 0.25])
    e1 = np.array([1.2, 0.3])
    e2 = np.array([0.4, 0.9])
    nat = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [0, -1], [1, 0], [0, 1], [-1, 0]], dtype=float)
    P = c + nat[:, :1] * e1 + nat[:, 1:] * e2
    area_p = 4.0 * abs(e1[0] * e2[1] - e1[1] * e2[0])
    for n in (4, 9):
        assert np.allclose(fcn(P, P[:, 0] ** 2, n), [2.0 * c[0] * area_p, 0.0], rtol=1e-10, atol=1e-12)


def test_invalid_number_of_gauss_points_raises(fcn):
    """Only 1, 4 and 9 Gauss points are supported; any other count raises ValueError."""
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    X = np.vstack([corners, 0.5 * (corners + np.roll(corners, -1, axis=0))])
    u = np.arange(8.0)
    for n in (0, 2, 3, 8, 16):
        with pytest.raises(ValueError):
            fcn(X, u, n)


# ----------------------------------------------------------------------------- expected failures


def fail_missing_detJ(node_coords, node_values, num_gauss_pts):
    """Forgets the Jacobian determinant (integrates over the reference square)."""
    points, weights = quad_gauss_rule_2d(num_gauss_pts)
    grad, _ = quad8_gradient_and_jacobian_det(node_coords, node_values, points[:, 0], points[:, 1])
    return grad @ weights


def fail_transposed_jacobian(node_coords, node_values, num_gauss_pts):
    """Maps the natural gradient with J^{-T} instead of J^{-1}."""
    points, weights = quad_gauss_rule_2d(num_gauss_pts)
    X = np.asarray(node_coords, dtype=float)
    u = np.asarray(node_values, dtype=float)
    dN = quad8_shape_function_derivatives(points[:, 0], points[:, 1])
    J = np.einsum("pai,aj->pij", dN, X)
    detJ = np.linalg.det(J)
    if np.any(detJ <= 0.0):
        raise ValueError("bad Jacobian")
    grad_nat = np.einsum("pai,a->pi", dN, u)
    grad = np.linalg.solve(np.transpose(J, (0, 2, 1)), grad_nat[:, :, None])[:, :, 0]
    return (weights * detJ) @ grad


def fail_one_point_weight_one(node_coords, node_values, num_gauss_pts):
    """Uses weight 1 (instead of 4) for the single-point rule."""
    points, weights = quad_gauss_rule_2d(num_gauss_pts)
    if num_gauss_pts == 1:
        weights = np.array([1.0])
    grad, detJ = quad8_gradient_and_jacobian_det(node_coords, node_values, points[:, 0], points[:, 1])
    return grad @ (weights * detJ)


def fail_nine_point_weights_swapped(node_coords, node_values, num_gauss_pts):
    """Swaps the 3-point weights (8/9 at the end points, 5/9 at the centre)."""
    points, weights = quad_gauss_rule_2d(num_gauss_pts)
    if num_gauss_pts == 9:
        w1 = np.array([8.0 / 9.0, 5.0 / 9.0, 8.0 / 9.0])
        weights = np.outer(w1, w1).ravel()
    grad, detJ = quad8_gradient_and_jacobian_det(node_coords, node_values, points[:, 0], points[:, 1])
    return grad @ (weights * detJ)


def fail_unsupported_rule_falls_back(node_coords, node_values, num_gauss_pts):
    """Silently uses the 2x2 rule when the requested number of points is unsupported."""
    n = num_gauss_pts if num_gauss_pts in (1, 4, 9) else 4
    points, weights = quad_gauss_rule_2d(n)
    grad, detJ = quad8_gradient_and_jacobian_det(node_coords, node_values, points[:, 0], points[:, 1])
    return grad @ (weights * detJ)


def task_info():
    # distorted element with curved edges (midside nodes pushed off the chords)
    X_curved = np.array(
        [
            [0.10, -0.20],
            [1.70, 0.15],
            [1.45, 1.30],
            [-0.15, 1.05],
            [0.95, -0.12],
            [1.68, 0.70],
            [0.62, 1.27],
            [-0.11, 0.46],
        ]
    )
    X_rot = np.array(
        [
            [3.20, 1.10],
            [4.05, 2.60],
            [2.35, 3.90],
            [1.40, 2.05],
            [3.80, 1.70],
            [3.35, 3.40],
            [1.75, 3.10],
            [2.10, 1.45],
        ]
    )
    u_a = np.array([0.3, -1.2, 2.1, 0.7, -0.45, 1.6, -0.8, 0.25])
    u_b = np.array([-5.5, 2.25, 7.1, -0.35, 4.4, -3.3, 1.05, 6.2])
    X_inverted = X_curved.copy()
    X_inverted[:, 1] = -X_inverted[:, 1]
    return {
        "task_id": "FEM_2D_quad8_integral_of_derivative_CC0_H3_T3",
        "task_short_description": "integral of the physical gradient of a nodal field over a Q8 element by Gauss quadrature",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": quad8_integral_of_gradient,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            [X_curved, u_a, 1],
            [X_curved, u_a, 4],
            [X_curved, u_b, 9],
            [X_rot, u_a, 9],
            [X_rot, u_a, 3],
            [X_inverted, u_b, 4],
        ],
        "test_cases": [
            {
                "test_code": test_divergence_theorem_on_curved_element,
                "expected_failures": [fail_missing_detJ, fail_transposed_jacobian, fail_nine_point_weights_swapped],
            },
            {
                "test_code": test_known_integrals_on_straight_sided_elements,
                "expected_failures": [
                    fail_missing_detJ,
                    fail_transposed_jacobian,
                    fail_one_point_weight_one,
                    fail_nine_point_weights_swapped,
                ],
            },
            {
                "test_code": test_invalid_number_of_gauss_points_raises,
                "expected_failures": [fail_unsupported_rule_falls_back],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["node_coords"], "draw": "affine", "dimensions": 2, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["node_values"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
            ],
            "fixed": {"num_gauss_pts": "the docstring supports 1, 4 or 9 points; the published inputs use each, and 3 for the error"},
        },
    }

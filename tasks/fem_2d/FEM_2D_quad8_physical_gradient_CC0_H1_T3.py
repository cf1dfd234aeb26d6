import numpy as np
import pytest


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


def quad8_physical_gradient(node_coords, node_values, xi, eta):
    """
    Gradient, in physical (x, y) coordinates, of a scalar field interpolated from nodal
    values on an isoparametric 8-node serendipity quadrilateral (Q8), evaluated at given
    natural points.

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
    Both the geometry and the field use these shape functions (isoparametric):
        x(xi, eta) = sum_a N_a x_a,  y(xi, eta) = sum_a N_a y_a,  u(xi, eta) = sum_a N_a u_a.
    Midside nodes need not lie at edge midpoints, so edges may be curved.

    Jacobian convention:
        J = [[dx/dxi,  dy/dxi ],
             [dx/deta, dy/deta]],
    so that [du/dxi, du/deta]^T = J [du/dx, du/dy]^T and the physical gradient is
    [du/dx, du/dy]^T = J^{-1} [du/dxi, du/deta]^T.
    det J = dx/dxi * dy/deta - dy/dxi * dx/deta is positive for a valid element whose
    corner nodes are listed counter-clockwise in the x-y plane.

    Parameters
    ----------
    node_coords : array_like, shape (8, 2)
        Physical coordinates (x, y) of the 8 nodes in the ordering above.
    node_values : array_like, shape (8,)
        Nodal values u_a of the scalar field.
    xi, eta : array_like, shape (n_pts,)
        Natural coordinates of the evaluation points (point p is (xi[p], eta[p])).
        Scalars are treated as length-1 arrays.

    Returns
    -------
    np.ndarray, shape (2, n_pts)
        Row 0 holds du/dx and row 1 holds du/dy at each point; column p belongs to point p.

    Raises
    ------
    ValueError
        If det J <= 0 at any of the requested points (inverted, e.g. clockwise-numbered,
        or degenerate mapping).
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
    return np.vstack([dudx, dudy])


# ----------------------------------------------------------------------------- tests


def test_linear_field_gives_exact_constant_gradient(fcn):
    """On a distorted Q8 with curved edges, nodal values sampled from a linear field
    u = c0 + bx*x + by*y must give exactly the constant gradient (bx, by) at every natural
    point (isoparametric completeness); the result has shape (2, n_pts)."""
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
    bx, by = -2.4, 0.7
    u = 1.3 + bx * X[:, 0] + by * X[:, 1]
    xi = np.array([-0.77, 0.31, 0.9, -0.2, 0.55, 0.0, -1.0])
    eta = np.array([0.42, -0.63, 0.88, 0.05, -0.95, 0.0, 1.0])
    g = np.asarray(fcn(X, u, xi, eta))
    assert g.shape == (2, xi.size)
    assert np.allclose(g[0], bx, rtol=1e-10, atol=1e-10)
    assert np.allclose(g[1], by, rtol=1e-10, atol=1e-10)


def test_quadratic_field_on_parallelogram(fcn):
    """On a straight-sided parallelogram (midside nodes at edge midpoints) the mapping is
    affine and the serendipity space contains all quadratics, so nodal values of
    u = x^2 - 3xy + 2y^2 + x reproduce the exact gradient (2x - 3y + 1, -3x + 4y) at the
    physical image of each natural point."""
    c = np.array([0.4, -0.3])
    e1 = np.array([1.1, 0.35])  # half of the xi-direction edge vector
    e2 = np.array([0.45, 0.8])  # half of the eta-direction edge vector
    nat = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [0, -1], [1, 0], [0, 1], [-1, 0]], dtype=float)
    X = c + nat[:, :1] * e1 + nat[:, 1:] * e2

    def field(x, y):
        return x**2 - 3 * x * y + 2 * y**2 + x

    u = field(X[:, 0], X[:, 1])
    xi = np.array([-0.6, 0.25, 0.8, -0.35])
    eta = np.array([0.7, -0.45, 0.1, -0.9])
    pts = c + xi[:, None] * e1 + eta[:, None] * e2
    g = np.asarray(fcn(X, u, xi, eta))
    expected = np.vstack([2 * pts[:, 0] - 3 * pts[:, 1] + 1, -3 * pts[:, 0] + 4 * pts[:, 1]])
    assert np.allclose(g, expected, rtol=1e-10, atol=1e-10)


def test_inverted_element_raises(fcn):
    """Numbering a valid element clockwise (mirroring it, so det J < 0 everywhere) must
    raise ValueError."""
    X = np.array(
        [
            [0.0, 0.0],
            [2.0, 0.1],
            [1.8, 1.5],
            [-0.2, 1.2],
            [1.0, -0.1],
            [2.0, 0.8],
            [0.8, 1.45],
            [-0.15, 0.6],
        ]
    )
    u = np.array([0.3, -1.2, 2.1, 0.7, -0.45, 1.6, -0.8, 0.25])
    Xm = X.copy()
    Xm[:, 0] = -Xm[:, 0]  # mirror image: same numbering now runs clockwise
    fcn(X, u, [0.1], [0.2])  # valid element must work
    with pytest.raises(ValueError):
        fcn(Xm, u, [0.1, -0.3], [0.2, 0.5])


# ----------------------------------------------------------------------------- expected failures


def fail_transposed_jacobian(node_coords, node_values, xi, eta):
    """Solves with J^T instead of J (mixes up the Jacobian index convention)."""
    X = np.asarray(node_coords, dtype=float)
    u = np.asarray(node_values, dtype=float)
    dN = quad8_shape_function_derivatives(xi, eta)
    J = np.einsum("pai,aj->pij", dN, X)
    if np.any(np.linalg.det(J) <= 0.0):
        raise ValueError("bad Jacobian")
    grad_nat = np.einsum("pai,a->pi", dN, u)
    JT = np.transpose(J, (0, 2, 1))
    return np.linalg.solve(JT, grad_nat[:, :, None])[:, :, 0].T


def fail_natural_gradient(node_coords, node_values, xi, eta):
    """Returns the gradient with respect to (xi, eta) without mapping to (x, y)."""
    X = np.asarray(node_coords, dtype=float)
    u = np.asarray(node_values, dtype=float)
    dN = quad8_shape_function_derivatives(xi, eta)
    J = np.einsum("pai,aj->pij", dN, X)
    if np.any(np.linalg.det(J) <= 0.0):
        raise ValueError("bad Jacobian")
    return np.einsum("pai,a->pi", dN, u).T


def fail_midside_order_from_left_edge(node_coords, node_values, xi, eta):
    """Numbers the midside nodes starting with the left edge instead of the bottom edge."""
    X = np.asarray(node_coords, dtype=float)
    u = np.asarray(node_values, dtype=float)
    dN = quad8_shape_function_derivatives(xi, eta)
    perm = [0, 1, 2, 3, 7, 4, 5, 6]  # column a of dN now used for node perm[a]
    dN = dN[:, perm, :]
    J = np.einsum("pai,aj->pij", dN, X)
    if np.any(np.linalg.det(J) <= 0.0):
        raise ValueError("bad Jacobian")
    grad_nat = np.einsum("pai,a->pi", dN, u)
    return np.linalg.solve(J, grad_nat[:, :, None])[:, :, 0].T


def fail_bilinear_corners_only(node_coords, node_values, xi, eta):
    """Uses 4-node bilinear shape functions on the corner nodes and ignores midside nodes."""
    X = np.asarray(node_coords, dtype=float)[:4]
    u = np.asarray(node_values, dtype=float)[:4]
    xi = np.atleast_1d(np.asarray(xi, dtype=float))
    eta = np.atleast_1d(np.asarray(eta, dtype=float))
    sx = np.array([-1.0, 1.0, 1.0, -1.0])
    se = np.array([-1.0, -1.0, 1.0, 1.0])
    dN = np.empty((xi.size, 4, 2))
    dN[:, :, 0] = 0.25 * sx[None, :] * (1 + se[None, :] * eta[:, None])
    dN[:, :, 1] = 0.25 * se[None, :] * (1 + sx[None, :] * xi[:, None])
    J = np.einsum("pai,aj->pij", dN, X)
    if np.any(np.linalg.det(J) <= 0.0):
        raise ValueError("bad Jacobian")
    grad_nat = np.einsum("pai,a->pi", dN, u)
    return np.linalg.solve(J, grad_nat[:, :, None])[:, :, 0].T


def fail_no_orientation_check(node_coords, node_values, xi, eta):
    """Correct gradient but silently accepts inverted elements (no det J check)."""
    X = np.asarray(node_coords, dtype=float)
    u = np.asarray(node_values, dtype=float)
    dN = quad8_shape_function_derivatives(xi, eta)
    J = np.einsum("pai,aj->pij", dN, X)
    grad_nat = np.einsum("pai,a->pi", dN, u)
    return np.linalg.solve(J, grad_nat[:, :, None])[:, :, 0].T


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
    X_small = np.array(
        [
            [0.00, 0.00],
            [0.62, 0.05],
            [0.70, 0.48],
            [0.04, 0.41],
            [0.33, -0.04],
            [0.69, 0.25],
            [0.36, 0.47],
            [0.05, 0.20],
        ]
    )
    X_inverted = X_curved.copy()
    X_inverted[:, 1] = -X_inverted[:, 1]
    return {
        "task_id": "FEM_2D_quad8_physical_gradient_CC0_H1_T3",
        "task_short_description": "physical gradient of a nodal scalar field on a Q8 element at natural points",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": quad8_physical_gradient,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            [
                X_curved,
                np.array([0.3, -1.2, 2.1, 0.7, -0.45, 1.6, -0.8, 0.25]),
                np.array([-0.77, 0.31, 0.9, -0.2, 0.55]),
                np.array([0.42, -0.63, 0.88, 0.05, -0.95]),
            ],
            [
                X_rot,
                np.array([-5.5, 2.25, 7.1, -0.35, 4.4, -3.3, 1.05, 6.2]),
                np.array([0.15, -0.85, 0.6]),
                np.array([-0.35, 0.7, 0.95]),
            ],
            [
                X_small,
                np.array([1.7, 0.2, -0.9, 2.6, 3.1, -1.4, 0.55, -2.2]),
                np.array([-1.0, 0.0, 0.45, 1.0]),
                np.array([0.3, -1.0, 0.65, -0.15]),
            ],
            [
                X_inverted,
                np.array([0.3, -1.2, 2.1, 0.7, -0.45, 1.6, -0.8, 0.25]),
                np.array([0.2, -0.4]),
                np.array([0.1, 0.6]),
            ],
        ],
        "test_cases": [
            {
                "test_code": test_linear_field_gives_exact_constant_gradient,
                "expected_failures": [fail_transposed_jacobian, fail_natural_gradient],
            },
            {
                "test_code": test_quadratic_field_on_parallelogram,
                "expected_failures": [
                    fail_transposed_jacobian,
                    fail_midside_order_from_left_edge,
                    fail_bilinear_corners_only,
                ],
            },
            {
                "test_code": test_inverted_element_raises,
                "expected_failures": [fail_no_orientation_check],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["node_coords"], "draw": "affine", "dimensions": 2, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["node_values"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
                {"arguments": ["xi", "eta"], "draw": "uniform", "low": -1.0, "high": 1.0},
            ],
        },
    }

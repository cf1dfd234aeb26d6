import numpy as np
import pytest


def quad8_edge_uniform_traction_load(node_coords, face, traction, num_gauss_pts):
    """
    Consistent (work-equivalent) nodal load vector of an 8-node serendipity quadrilateral
    (Q8) loaded by a uniform traction on one of its four faces (edges).

    Node ordering (natural coordinates of node a):
        corners, counter-clockwise starting at (-1, -1):
            0: (-1, -1)   1: ( 1, -1)   2: ( 1,  1)   3: (-1,  1)
        midside nodes, starting with the bottom edge (eta = -1) and going counter-clockwise:
            4: ( 0, -1)   5: ( 1,  0)   6: ( 0,  1)   7: (-1,  0)

    Faces, each listed as (start corner, midside node, end corner), traversed in the
    counter-clockwise direction of the element:
        face 0 (eta = -1): nodes (0, 4, 1)
        face 1 (xi  = +1): nodes (1, 5, 2)
        face 2 (eta = +1): nodes (2, 6, 3)
        face 3 (xi  = -1): nodes (3, 7, 0)
    Along a face the edge coordinate s runs from -1 at the start corner through 0 at the
    midside node to +1 at the end corner, and the restriction of the Q8 shape functions to
    the face is the 1D quadratic Lagrange basis
        L_start = s (s - 1) / 2,   L_mid = 1 - s^2,   L_end = s (s + 1) / 2.
    The face geometry is interpolated from its three nodes with the same functions,
    x(s) = sum_k L_k(s) x_k (midside nodes off the chord give curved faces), and the
    arc-length element is ds_phys = |dx/ds| ds with |dx/ds| = sqrt((dx/ds)^2 + (dy/ds)^2).

    For each node k on the face:
        F_k = integral_{-1}^{1} L_k(s) * t * |dx/ds| ds,
    evaluated with the num_gauss_pts-point Gauss-Legendre rule on [-1, 1]:
        1 point:  {0}, weight 2
        2 points: {-1/sqrt(3), +1/sqrt(3)}, weights {1, 1}
        3 points: {-sqrt(3/5), 0, +sqrt(3/5)}, weights {5/9, 8/9, 5/9}
    (For a curved face |dx/ds| is not a polynomial, so the result depends on the rule.)
    The traversal direction does not change the result because the traction is given in
    global components and only |dx/ds| enters.

    Parameters
    ----------
    node_coords : array_like, shape (8, 2)
        Physical coordinates (x, y) of the 8 nodes in the ordering above.
    face : int
        Loaded face: 0, 1, 2 or 3 as defined above.
    traction : array_like, shape (2,)
        Uniform traction t = (tx, ty) in global x-y components, as force per unit length of
        the face (for a plate of thickness h pass h times the surface traction).
    num_gauss_pts : int
        Number of 1D Gauss points: 1, 2 or 3.

    Returns
    -------
    np.ndarray, shape (16,)
        Nodal forces in the DOF order [Fx0, Fy0, Fx1, Fy1, ..., Fx7, Fy7]; entries of the
        nodes not on the loaded face are zero.

    Raises
    ------
    ValueError
        If face is not one of 0, 1, 2, 3, or num_gauss_pts is not one of 1, 2, 3.
    """
    face_nodes = ((0, 4, 1), (1, 5, 2), (2, 6, 3), (3, 7, 0))
    if face not in (0, 1, 2, 3):
        raise ValueError("face must be 0, 1, 2 or 3")
    if num_gauss_pts == 1:
        s_pts = np.array([0.0])
        w_pts = np.array([2.0])
    elif num_gauss_pts == 2:
        a = 1.0 / np.sqrt(3.0)
        s_pts = np.array([-a, a])
        w_pts = np.array([1.0, 1.0])
    elif num_gauss_pts == 3:
        a = np.sqrt(3.0 / 5.0)
        s_pts = np.array([-a, 0.0, a])
        w_pts = np.array([5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0])
    else:
        raise ValueError("num_gauss_pts must be 1, 2 or 3")

    nodes = list(face_nodes[int(face)])
    Xf = np.asarray(node_coords, dtype=float)[nodes]  # (3, 2): start, mid, end
    t = np.asarray(traction, dtype=float)

    F = np.zeros(16)
    for s, w in zip(s_pts, w_pts):
        L = np.array([s * (s - 1.0) / 2.0, 1.0 - s * s, s * (s + 1.0) / 2.0])
        dL = np.array([s - 0.5, -2.0 * s, s + 0.5])
        tangent = dL @ Xf  # (dx/ds, dy/ds)
        jac = np.sqrt(tangent[0] ** 2 + tangent[1] ** 2)
        for k, a_node in enumerate(nodes):
            F[2 * a_node] += w * L[k] * t[0] * jac
            F[2 * a_node + 1] += w * L[k] * t[1] * jac
    return F


# ----------------------------------------------------------------------------- tests


def test_total_load_equals_traction_times_length(fcn):
    """On a distorted quadrilateral with straight faces (midside nodes at edge midpoints),
    for every face and every rule (1, 2, 3 points) the summed nodal forces equal the
    traction times the face length, and the nodes not on the face carry no load."""
    corners = np.array([[0.3, -0.2], [2.6, 0.5], [2.1, 2.2], [-0.4, 1.6]])
    X = np.vstack([corners, 0.5 * (corners + np.roll(corners, -1, axis=0))])
    faces = [(0, 4, 1), (1, 5, 2), (2, 6, 3), (3, 7, 0)]
    t = np.array([3.7, -1.9])
    for f, nodes in enumerate(faces):
        length = np.linalg.norm(X[nodes[2]] - X[nodes[0]])
        for n in (1, 2, 3):
            F = np.asarray(fcn(X, f, t, n), dtype=float)
            assert F.shape == (16,)
            assert np.allclose(F[0::2].sum(), t[0] * length, rtol=1e-10)
            assert np.allclose(F[1::2].sum(), t[1] * length, rtol=1e-10)
            off = [a for a in range(8) if a not in nodes]
            assert np.allclose(F.reshape(8, 2)[off], 0.0, atol=1e-14)


def test_straight_face_distribution_and_static_equivalence(fcn):
    """A straight face with its midside node at the midpoint receives 1/6, 4/6, 1/6 of the
    resultant at (start corner, midside, end corner) with the 2- and 3-point rules. With the
    midside node moved along the straight face away from the midpoint, the 2- and 3-point
    rules remain exact, so the nodal forces still have resultant t*L and the same moment
    about the origin as the uniform load, i.e. (x_c ty - y_c tx) L with c the face midpoint."""
    corners = np.array([[0.3, -0.2], [2.6, 0.5], [2.1, 2.2], [-0.4, 1.6]])
    X = np.vstack([corners, 0.5 * (corners + np.roll(corners, -1, axis=0))])
    faces = [(0, 4, 1), (1, 5, 2), (2, 6, 3), (3, 7, 0)]
    t = np.array([-2.2, 5.3])
    for f, (i, m, j) in enumerate(faces):
        length = np.linalg.norm(X[j] - X[i])
        for n in (2, 3):
            F = np.asarray(fcn(X, f, t, n), dtype=float).reshape(8, 2)
            assert np.allclose(F[i], t * length / 6.0, rtol=1e-10)
            assert np.allclose(F[m], 4.0 * t * length / 6.0, rtol=1e-10)
            assert np.allclose(F[j], t * length / 6.0, rtol=1e-10)

    for f, (i, m, j) in enumerate(faces):
        Xs = X.copy()
        Xs[m] = X[i] + 0.35 * (X[j] - X[i])  # still on the straight face, off-centre
        length = np.linalg.norm(X[j] - X[i])
        centre = 0.5 * (X[i] + X[j])
        for n in (2, 3):
            F = np.asarray(fcn(Xs, f, t, n), dtype=float).reshape(8, 2)
            assert np.allclose(F.sum(axis=0), t * length, rtol=1e-10)
            moment = np.sum(Xs[:, 0] * F[:, 1] - Xs[:, 1] * F[:, 0])
            assert np.isclose(moment, (centre[0] * t[1] - centre[1] * t[0]) * length, rtol=1e-10)


def test_invalid_face_or_rule_raises(fcn):
    """A face index outside 0..3 (including negative) or a number of Gauss points other than
    1, 2, 3 raises ValueError."""
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    X = np.vstack([corners, 0.5 * (corners + np.roll(corners, -1, axis=0))])
    for face in (-1, 4, 7):
        with pytest.raises(ValueError):
            fcn(X, face, [1.0, 0.0], 2)
    for n in (0, 4, 5):
        with pytest.raises(ValueError):
            fcn(X, 0, [1.0, 0.0], n)


# ----------------------------------------------------------------------------- expected failures


# 1D Gauss-Legendre rules used by the expected failures: n -> (points, weights)
_GAUSS_1D = {
    1: (np.array([0.0]), np.array([2.0])),
    2: (np.array([-1.0, 1.0]) / np.sqrt(3.0), np.array([1.0, 1.0])),
    3: (np.array([-np.sqrt(0.6), 0.0, np.sqrt(0.6)]), np.array([5.0, 8.0, 5.0]) / 9.0),
}
_FACES = [(0, 4, 1), (1, 5, 2), (2, 6, 3), (3, 7, 0)]


def fail_chord_length_as_jacobian(node_coords, face, traction, num_gauss_pts):
    """Uses the full chord length L instead of |dx/ds| (= L/2 for a straight face)."""
    if face not in (0, 1, 2, 3) or num_gauss_pts not in _GAUSS_1D:
        raise ValueError("bad face or rule")
    s_pts, w_pts = _GAUSS_1D[num_gauss_pts]
    nodes = _FACES[face]
    X = np.asarray(node_coords, dtype=float)
    L_chord = np.linalg.norm(X[nodes[2]] - X[nodes[0]])
    F = np.zeros((8, 2))
    for s, w in zip(s_pts, w_pts):
        L = np.array([0.5 * s * (s - 1), 1 - s * s, 0.5 * s * (s + 1)])
        for k, a in enumerate(nodes):
            F[a] += w * L[k] * np.asarray(traction) * L_chord
    return F.ravel()


def fail_equal_thirds(node_coords, face, traction, num_gauss_pts):
    """Lumps the resultant equally (1/3 each) onto the three face nodes."""
    if face not in (0, 1, 2, 3) or num_gauss_pts not in _GAUSS_1D:
        raise ValueError("bad face or rule")
    nodes = _FACES[face]
    X = np.asarray(node_coords, dtype=float)
    s_pts, w_pts = _GAUSS_1D[3]
    total = 0.0
    for s, w in zip(s_pts, w_pts):
        tangent = np.array([s - 0.5, -2 * s, s + 0.5]) @ X[list(nodes)]
        total += w * np.linalg.norm(tangent)
    F = np.zeros((8, 2))
    for a in nodes:
        F[a] = np.asarray(traction) * total / 3.0
    return F.ravel()


def fail_constant_jacobian(node_coords, face, traction, num_gauss_pts):
    """Assumes |dx/ds| = chord/2 everywhere, ignoring the midside node's position."""
    if face not in (0, 1, 2, 3) or num_gauss_pts not in _GAUSS_1D:
        raise ValueError("bad face or rule")
    s_pts, w_pts = _GAUSS_1D[num_gauss_pts]
    nodes = _FACES[face]
    X = np.asarray(node_coords, dtype=float)
    half = 0.5 * np.linalg.norm(X[nodes[2]] - X[nodes[0]])
    F = np.zeros((8, 2))
    for s, w in zip(s_pts, w_pts):
        L = np.array([0.5 * s * (s - 1), 1 - s * s, 0.5 * s * (s + 1)])
        for k, a in enumerate(nodes):
            F[a] += w * L[k] * np.asarray(traction) * half
    return F.ravel()


def fail_midsides_numbered_from_left_edge(node_coords, face, traction, num_gauss_pts):
    """Assigns the midside node of face k as if midside numbering started on the left edge."""
    if face not in (0, 1, 2, 3) or num_gauss_pts not in _GAUSS_1D:
        raise ValueError("bad face or rule")
    s_pts, w_pts = _GAUSS_1D[num_gauss_pts]
    nodes = [(0, 7, 1), (1, 4, 2), (2, 5, 3), (3, 6, 0)][face]
    X = np.asarray(node_coords, dtype=float)
    F = np.zeros((8, 2))
    for s, w in zip(s_pts, w_pts):
        L = np.array([0.5 * s * (s - 1), 1 - s * s, 0.5 * s * (s + 1)])
        tangent = np.array([s - 0.5, -2 * s, s + 0.5]) @ X[list(nodes)]
        for k, a in enumerate(nodes):
            F[a] += w * L[k] * np.asarray(traction) * np.linalg.norm(tangent)
    return F.ravel()


def fail_blocked_dof_order(node_coords, face, traction, num_gauss_pts):
    """Returns [Fx0..Fx7, Fy0..Fy7] instead of interleaved [Fx0, Fy0, Fx1, Fy1, ...]."""
    if face not in (0, 1, 2, 3) or num_gauss_pts not in _GAUSS_1D:
        raise ValueError("bad face or rule")
    s_pts, w_pts = _GAUSS_1D[num_gauss_pts]
    nodes = _FACES[face]
    X = np.asarray(node_coords, dtype=float)
    F = np.zeros((8, 2))
    for s, w in zip(s_pts, w_pts):
        L = np.array([0.5 * s * (s - 1), 1 - s * s, 0.5 * s * (s + 1)])
        tangent = np.array([s - 0.5, -2 * s, s + 0.5]) @ X[list(nodes)]
        for k, a in enumerate(nodes):
            F[a] += w * L[k] * np.asarray(traction) * np.linalg.norm(tangent)
    return F.T.ravel()


def fail_no_input_validation(node_coords, face, traction, num_gauss_pts):
    """Correct load for valid input but wraps the face index and defaults to 3 points."""
    n = num_gauss_pts if num_gauss_pts in (1, 2, 3) else 3
    s_pts, w_pts = _GAUSS_1D[n]
    nodes = _FACES[face % 4]
    X = np.asarray(node_coords, dtype=float)
    F = np.zeros((8, 2))
    for s, w in zip(s_pts, w_pts):
        L = np.array([0.5 * s * (s - 1), 1 - s * s, 0.5 * s * (s + 1)])
        tangent = np.array([s - 0.5, -2 * s, s + 0.5]) @ X[list(nodes)]
        for k, a in enumerate(nodes):
            F[a] += w * L[k] * np.asarray(traction) * np.linalg.norm(tangent)
    return F.ravel()


def task_info():
    # distorted element with curved faces (midside nodes pushed off the chords)
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
    return {
        "task_id": "FEM_2D_quad8_element_distributed_load_CC0_H0_T0",
        "task_short_description": "consistent nodal loads of a uniform traction on one face of a Q8 element",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": quad8_edge_uniform_traction_load,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            [X_curved, 0, np.array([2.35, -1.4]), 3],
            [X_curved, 1, np.array([-0.8, 3.15]), 2],
            [X_curved, 3, np.array([1.65, 0.45]), 1],
            [X_rot, 2, np.array([-4.2, -1.3]), 3],
            [X_rot, 3, np.array([0.7, -2.6]), 2],
            [X_rot, 4, np.array([1.0, 1.0]), 2],
        ],
        "test_cases": [
            {
                "test_code": test_total_load_equals_traction_times_length,
                "expected_failures": [fail_chord_length_as_jacobian, fail_blocked_dof_order],
            },
            {
                "test_code": test_straight_face_distribution_and_static_equivalence,
                "expected_failures": [
                    fail_equal_thirds,
                    fail_constant_jacobian,
                    fail_midsides_numbered_from_left_edge,
                    fail_blocked_dof_order,
                ],
            },
            {
                "test_code": test_invalid_face_or_rule_raises,
                "expected_failures": [fail_no_input_validation],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["node_coords"], "draw": "affine", "dimensions": 2, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["traction"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
            ],
            "fixed": {
                "face": "a face number 0..3; the published inputs use each, and 4 for the error",
                "num_gauss_pts": "the docstring supports 1, 2 or 3 points; the published inputs use each",
            },
        },
    }

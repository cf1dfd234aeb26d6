import numpy as np
import pytest
from typing import Optional, Sequence


def beam_transformation_matrix_3D(
    x1: float,
    y1: float,
    z1: float,
    x2: float,
    y2: float,
    z2: float,
    reference_vector: Optional[Sequence[float]] = None,
) -> np.ndarray:
    """
    12x12 transformation matrix Gamma of a 3D two-node beam element, mapping
    global DOFs to local DOFs: d_local = Gamma @ d_global, and hence
    K_global = Gamma.T @ K_local @ Gamma.

    Parameters
    ----------
    x1, y1, z1 : float
        Global coordinates of node 1 (node i).
    x2, y2, z2 : float
        Global coordinates of node 2 (node j).
    reference_vector : sequence of 3 floats (list, tuple or np.ndarray), optional
        Global vector fixing the orientation of the local z axis. When given it
        must have unit length (|norm - 1| <= 1e-6) and must not be parallel to
        the element axis (norm of cross(reference_vector, ex) >= 1e-8);
        otherwise ValueError is raised. It does not need to be perpendicular to
        the element axis.

    Construction of the local axes (unit vectors in global components)
    ------------------------------------------------------------------
    1. ex = (p2 - p1) / L with L = |p2 - p1|. ValueError if L < 1e-12
       (coincident nodes).
    2. Reference vector ref: reference_vector if given (validated as above).
       If None: global Z = (0, 0, 1), except when the element is vertical,
       i.e. sqrt(ex_x^2 + ex_y^2) < 1e-8, in which case global Y = (0, 1, 0).
    3. ey = cross(ref, ex) / |cross(ref, ex)|   (normalised).
    4. ez = cross(ex, ey)   (right-handed triad; ez lies in the plane of ex and
       ref, on the same side as ref).
    Examples: an element along +X with the default reference has local axes
    (X, Y, Z); an element along +Z with the default reference has local y = +X
    and local z = +Y.

    Returns
    -------
    np.ndarray of shape (12, 12)
        Block-diagonal matrix with four identical 3x3 direction-cosine blocks
        R = [[ex], [ey], [ez]] (rows are the local unit vectors in global
        components), acting on the DOF groups
        [u_x1, u_y1, u_z1], [theta_x1, theta_y1, theta_z1],
        [u_x2, u_y2, u_z2], [theta_x2, theta_y2, theta_z2].

    Raises
    ------
    ValueError
        Zero-length element; reference_vector not of unit length; reference_vector
        parallel (or anti-parallel) to the element axis.
    """
    p1 = np.array([x1, y1, z1], dtype=float)
    p2 = np.array([x2, y2, z2], dtype=float)
    axis = p2 - p1
    L = np.linalg.norm(axis)
    if L < 1e-12:
        raise ValueError("Element has zero length: nodes coincide.")
    ex = axis / L

    if reference_vector is None:
        # Global Z is a valid reference unless the element itself is vertical.
        if np.hypot(ex[0], ex[1]) < 1e-8:
            ref = np.eye(3)[1]
        else:
            ref = np.eye(3)[2]
    else:
        ref = np.asarray(reference_vector, dtype=float).reshape(3)
        if abs(np.linalg.norm(ref) - 1.0) > 1e-6:
            raise ValueError("reference_vector must have unit length.")
        if np.linalg.norm(np.cross(ref, ex)) < 1e-8:
            raise ValueError("reference_vector must not be parallel to the element axis.")

    ey = np.cross(ref, ex)
    ey = ey / np.linalg.norm(ey)
    ez = np.cross(ex, ey)

    R = np.vstack([ex, ey, ez])
    gamma = np.zeros((12, 12))
    for b in range(4):
        gamma[3 * b : 3 * b + 3, 3 * b : 3 * b + 3] = R
    return gamma


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_orthonormal_block_diagonal(fcn):
    """For a skewed element with the default reference, a vertical element with
    the default reference, and a skewed element with a given unit reference
    vector that is not perpendicular to the axis, Gamma is 12x12, orthogonal
    (Gamma @ Gamma.T = I), block diagonal with four identical 3x3 blocks
    (zero off-diagonal blocks), and each block is a proper rotation
    (determinant +1, right-handed local triad)."""
    s = 1.0 / np.sqrt(3.0)
    cases = [
        ((0.4, -1.1, 0.3, 2.7, 0.5, 1.9), None),
        ((1.2, -0.7, 0.5, 1.2, -0.7, 3.6), None),
        ((-0.6, 0.2, 1.0, 1.8, 1.3, -0.4), [s, -s, s]),
    ]
    for coords, ref in cases:
        G = np.asarray(fcn(*coords, ref), dtype=float)
        assert G.shape == (12, 12)
        assert np.all(np.isfinite(G))
        assert np.allclose(G @ G.T, np.eye(12), atol=1e-12)
        R = G[:3, :3]
        assert np.isclose(np.linalg.det(R), 1.0, atol=1e-12)
        for b in range(4):
            for c in range(4):
                block = G[3 * b : 3 * b + 3, 3 * c : 3 * c + 3]
                expected = R if b == c else np.zeros((3, 3))
                assert np.allclose(block, expected, atol=1e-14)


def test_local_axes_orientation(fcn):
    """Gamma maps the element axis (unit vector from node 1 to node 2, applied
    as a translation at either node) to the local x direction (1, 0, 0).
    With the default reference and a non-vertical element (including one in
    the global Y-Z plane), local y is horizontal and local z has a positive
    global Z component. With the default reference and a vertical element,
    local y is perpendicular to global Y and local z has a positive global Y
    component (element along +Z: local y = +X, local z = +Y). With a given
    reference vector, local y is perpendicular to it and local z has a positive
    component along it."""
    cases = [
        ((0.4, -1.1, 0.3, 2.7, 0.5, 1.9), None, np.array([0.0, 0.0, 1.0])),
        ((0.0, 0.3, -0.2, 0.0, 1.6, 1.9), None, np.array([0.0, 0.0, 1.0])),
        ((0.5, 0.5, 2.0, 0.5, 0.5, -1.0), None, np.array([0.0, 1.0, 0.0])),
        ((0.0, 0.0, 0.0, 0.0, 0.0, 2.5), None, np.array([0.0, 1.0, 0.0])),
        ((-0.6, 0.2, 1.0, 1.8, 1.3, -0.4), np.array([0.6, 0.0, 0.8]), np.array([0.6, 0.0, 0.8])),
        ((1.0, 1.0, 1.0, 1.0, 1.0, 3.0), [0.0, -0.8, 0.6], np.array([0.0, -0.8, 0.6])),
    ]
    for coords, ref, expected_ref in cases:
        G = np.asarray(fcn(*coords, ref), dtype=float)
        axis = np.array(coords[3:]) - np.array(coords[:3])
        ex = axis / np.linalg.norm(axis)
        d = np.zeros(12)
        d[0:3] = ex
        d[6:9] = ex
        local = G @ d
        assert np.allclose(local[0:3], [1.0, 0.0, 0.0], atol=1e-12)
        assert np.allclose(local[6:9], [1.0, 0.0, 0.0], atol=1e-12)
        ey = G[1, :3]
        ez = G[2, :3]
        assert abs(np.dot(ey, expected_ref)) < 1e-12
        assert np.dot(ez, expected_ref) > 1e-6
    # Closed-form case: element along +Z with default reference.
    G = np.asarray(fcn(0.0, 0.0, 0.0, 0.0, 0.0, 1.7, None), dtype=float)
    assert np.allclose(G[:3, :3], [[0, 0, 1], [1, 0, 0], [0, 1, 0]], atol=1e-12)


def test_invalid_input_raises(fcn):
    """ValueError for coincident nodes, for a reference vector that is not of
    unit length, and for a reference vector parallel or anti-parallel to the
    element axis."""
    with pytest.raises(ValueError):
        fcn(1.3, -0.4, 2.2, 1.3, -0.4, 2.2, None)
    with pytest.raises(ValueError):
        fcn(0.0, 0.0, 0.0, 2.0, 1.0, 0.5, [0.0, 0.0, 2.0])
    with pytest.raises(ValueError):
        fcn(0.0, 0.0, 0.0, 2.0, 1.0, 0.5, [0.3, 0.4, 0.5])
    u = np.array([2.0, 1.0, 0.5]) / np.linalg.norm([2.0, 1.0, 0.5])
    with pytest.raises(ValueError):
        fcn(0.0, 0.0, 0.0, 2.0, 1.0, 0.5, u)
    with pytest.raises(ValueError):
        fcn(0.0, 0.0, 0.0, 2.0, 1.0, 0.5, list(-u))


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------


def fail_transposed_rotation(x1, y1, z1, x2, y2, z2, reference_vector=None):
    """Places R.T (local axes as columns) on the diagonal instead of R."""
    p = np.array([x2 - x1, y2 - y1, z2 - z1], dtype=float)
    L = np.linalg.norm(p)
    if L < 1e-12:
        raise ValueError("zero length")
    ex = p / L
    if reference_vector is None:
        ref = np.array([0.0, 1.0, 0.0]) if np.hypot(ex[0], ex[1]) < 1e-8 else np.array([0.0, 0.0, 1.0])
    else:
        ref = np.asarray(reference_vector, dtype=float)
        if abs(np.linalg.norm(ref) - 1.0) > 1e-6 or np.linalg.norm(np.cross(ref, ex)) < 1e-8:
            raise ValueError("bad reference vector")
    ey = np.cross(ref, ex)
    ey /= np.linalg.norm(ey)
    ez = np.cross(ex, ey)
    R = np.column_stack([ex, ey, ez])
    return np.kron(np.eye(4), R)


def fail_ey_not_normalized(x1, y1, z1, x2, y2, z2, reference_vector=None):
    """Forgets to normalise cross(ref, ex), which only has unit length when ref is perpendicular to the axis."""
    p = np.array([x2 - x1, y2 - y1, z2 - z1], dtype=float)
    L = np.linalg.norm(p)
    if L < 1e-12:
        raise ValueError("zero length")
    ex = p / L
    if reference_vector is None:
        ref = np.array([0.0, 1.0, 0.0]) if np.hypot(ex[0], ex[1]) < 1e-8 else np.array([0.0, 0.0, 1.0])
    else:
        ref = np.asarray(reference_vector, dtype=float)
        if abs(np.linalg.norm(ref) - 1.0) > 1e-6 or np.linalg.norm(np.cross(ref, ex)) < 1e-8:
            raise ValueError("bad reference vector")
    ey = np.cross(ref, ex)
    ez = np.cross(ex, ey)
    return np.kron(np.eye(4), np.vstack([ex, ey, ez]))


def fail_cross_product_order(x1, y1, z1, x2, y2, z2, reference_vector=None):
    """Computes ey = cross(ex, ref), which flips local y and z (z points away from ref)."""
    p = np.array([x2 - x1, y2 - y1, z2 - z1], dtype=float)
    L = np.linalg.norm(p)
    if L < 1e-12:
        raise ValueError("zero length")
    ex = p / L
    if reference_vector is None:
        ref = np.array([0.0, 1.0, 0.0]) if np.hypot(ex[0], ex[1]) < 1e-8 else np.array([0.0, 0.0, 1.0])
    else:
        ref = np.asarray(reference_vector, dtype=float)
        if abs(np.linalg.norm(ref) - 1.0) > 1e-6 or np.linalg.norm(np.cross(ref, ex)) < 1e-8:
            raise ValueError("bad reference vector")
    ey = np.cross(ex, ref)
    ey /= np.linalg.norm(ey)
    ez = np.cross(ex, ey)
    return np.kron(np.eye(4), np.vstack([ex, ey, ez]))


def fail_vertical_check_only_x(x1, y1, z1, x2, y2, z2, reference_vector=None):
    """Treats any element with ex_x == 0 as vertical, so elements in the global
    Y-Z plane wrongly get global Y as the default reference."""
    p = np.array([x2 - x1, y2 - y1, z2 - z1], dtype=float)
    L = np.linalg.norm(p)
    if L < 1e-12:
        raise ValueError("zero length")
    ex = p / L
    if reference_vector is None:
        ref = np.array([0.0, 1.0, 0.0]) if abs(ex[0]) < 1e-8 else np.array([0.0, 0.0, 1.0])
    else:
        ref = np.asarray(reference_vector, dtype=float)
        if abs(np.linalg.norm(ref) - 1.0) > 1e-6 or np.linalg.norm(np.cross(ref, ex)) < 1e-8:
            raise ValueError("bad reference vector")
    ey = np.cross(ref, ex)
    ey /= np.linalg.norm(ey)
    ez = np.cross(ex, ey)
    return np.kron(np.eye(4), np.vstack([ex, ey, ez]))


def fail_no_vertical_branch(x1, y1, z1, x2, y2, z2, reference_vector=None):
    """Always uses global Z as the default reference, giving NaNs for vertical elements."""
    p = np.array([x2 - x1, y2 - y1, z2 - z1], dtype=float)
    L = np.linalg.norm(p)
    if L < 1e-12:
        raise ValueError("zero length")
    ex = p / L
    if reference_vector is None:
        ref = np.array([0.0, 0.0, 1.0])
    else:
        ref = np.asarray(reference_vector, dtype=float)
        if abs(np.linalg.norm(ref) - 1.0) > 1e-6 or np.linalg.norm(np.cross(ref, ex)) < 1e-8:
            raise ValueError("bad reference vector")
    ey = np.cross(ref, ex)
    with np.errstate(invalid="ignore", divide="ignore"):
        ey = ey / np.linalg.norm(ey)
    ez = np.cross(ex, ey)
    return np.kron(np.eye(4), np.vstack([ex, ey, ez]))


def fail_no_reference_validation(x1, y1, z1, x2, y2, z2, reference_vector=None):
    """Normalises whatever reference vector it gets and never checks parallelism."""
    p = np.array([x2 - x1, y2 - y1, z2 - z1], dtype=float)
    L = np.linalg.norm(p)
    if L < 1e-12:
        raise ValueError("zero length")
    ex = p / L
    if reference_vector is None:
        ref = np.array([0.0, 1.0, 0.0]) if np.hypot(ex[0], ex[1]) < 1e-8 else np.array([0.0, 0.0, 1.0])
    else:
        ref = np.asarray(reference_vector, dtype=float)
        ref = ref / np.linalg.norm(ref)
    ey = np.cross(ref, ex)
    with np.errstate(invalid="ignore", divide="ignore"):
        ey = ey / np.linalg.norm(ey)
    ez = np.cross(ex, ey)
    return np.kron(np.eye(4), np.vstack([ex, ey, ez]))


def fail_no_length_check(x1, y1, z1, x2, y2, z2, reference_vector=None):
    """Divides by the length without checking it, returning NaNs for coincident nodes."""
    p = np.array([x2 - x1, y2 - y1, z2 - z1], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ex = p / np.linalg.norm(p)
    if reference_vector is None:
        ref = np.array([0.0, 1.0, 0.0]) if np.hypot(ex[0], ex[1]) < 1e-8 else np.array([0.0, 0.0, 1.0])
    else:
        ref = np.asarray(reference_vector, dtype=float)
        if abs(np.linalg.norm(ref) - 1.0) > 1e-6 or np.linalg.norm(np.cross(ref, ex)) < 1e-8:
            raise ValueError("bad reference vector")
    ey = np.cross(ref, ex)
    with np.errstate(invalid="ignore", divide="ignore"):
        ey = ey / np.linalg.norm(ey)
    ez = np.cross(ex, ey)
    return np.kron(np.eye(4), np.vstack([ex, ey, ez]))


def task_info():
    s = 1.0 / np.sqrt(14.0)
    return {
        "task_id": "MSA_3D_transformation_matrix_CC0_H0_T0",
        "task_short_description": "12x12 global-to-local transformation matrix of a 3D beam element with reference-vector rules",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": beam_transformation_matrix_3D,
        "required_imports": [
            "import numpy as np",
            "import pytest",
            "from typing import Optional, Sequence",
        ],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            # Element in the global Y-Z plane (ex_x = 0 but not vertical): global Z branch.
            [0.0, 0.3, -0.2, 0.0, 1.6, 1.9, None],
            # Element in the global X-Z plane (ex_y = 0 but not vertical): global Z branch.
            [0.35, -1.2, 0.7, -1.9, -1.2, 2.45, None],
            # Vertical element pointing down, off the origin: global Y branch.
            [1.5, -0.4, 3.2, 1.5, -0.4, 0.7, None],
            # Skewed element, unit reference not perpendicular to the axis, given as a list.
            [-0.6, 0.2, 1.0, 1.8, 1.3, -0.4, [1.0 * s, -2.0 * s, 3.0 * s]],
            # Vertical element with an explicit reference (overrides the global Y default), as an ndarray.
            [0.8, 2.1, -0.5, 0.8, 2.1, 1.75, np.array([0.6, -0.48, 0.64])],
            # Reference vector of non-unit length -> ValueError.
            [0.0, 0.0, 0.0, 2.0, 1.0, 0.5, [0.3, 0.4, 0.5]],
        ],
        "test_cases": [
            {
                "test_code": test_orthonormal_block_diagonal,
                "expected_failures": [fail_ey_not_normalized, fail_no_vertical_branch],
            },
            {
                "test_code": test_local_axes_orientation,
                "expected_failures": [
                    fail_transposed_rotation,
                    fail_cross_product_order,
                    fail_vertical_check_only_x,
                ],
            },
            {
                "test_code": test_invalid_input_raises,
                "expected_failures": [fail_no_reference_validation, fail_no_length_check],
            },
        ],
        "fresh_inputs": {
            "draws": [{"arguments": ["x1", "y1", "z1", "x2", "y2", "z2"], "axes": [0, 1, 2, 0, 1, 2], "draw": "affine", "dimensions": 3, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]}],
            "fixed": {"reference_vector": "it must be a unit vector not parallel to the member; the published ones test both errors"},
        },
    }

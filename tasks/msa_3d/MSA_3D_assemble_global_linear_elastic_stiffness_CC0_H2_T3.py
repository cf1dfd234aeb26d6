import numpy as np
import pytest
from typing import Optional, Sequence


def local_elastic_stiffness_matrix_3D_beam(
    E: float, nu: float, A: float, L: float, Iy: float, Iz: float, J: float
) -> np.ndarray:
    """
    Local elastic stiffness matrix of a straight 3D Euler-Bernoulli beam element
    (two nodes, six degrees of freedom per node), expressed in the element's
    local coordinate system.

    Local axes: x runs along the element axis from node 1 to node 2; y and z are
    the principal axes of the cross-section. No shear deformation, no warping.

    Parameters
    ----------
    E : float
        Young's modulus (consistent units, e.g. Pa).
    nu : float
        Poisson's ratio. The shear modulus is G = E / (2 * (1 + nu)).
    A : float
        Cross-sectional area.
    L : float
        Element length (assumed strictly positive; not validated).
    Iy : float
        Second moment of area about the local y axis (governs bending in the
        local x-z plane, i.e. displacements w and rotations theta_y).
    Iz : float
        Second moment of area about the local z axis (governs bending in the
        local x-y plane, i.e. displacements v and rotations theta_z).
    J : float
        Saint-Venant torsion constant (torsional stiffness G*J/L).

    Returns
    -------
    np.ndarray of shape (12, 12), dtype float
        Symmetric stiffness matrix K with f_local = K @ d_local, where the local
        DOF vector is
            d_local = [u1, v1, w1, theta_x1, theta_y1, theta_z1,
                       u2, v2, w2, theta_x2, theta_y2, theta_z2]
        (u, v, w translations along local x, y, z; theta rotations about local
        x, y, z, right-hand rule) and the end-force vector is
            f_local = [Fx1, Fy1, Fz1, Mx1, My1, Mz1, Fx2, Fy2, Fz2, Mx2, My2, Mz2].

    Entries (all others zero), with zero-based indices into the 12 DOFs:
    - Axial, DOFs (0, 6): (E*A/L) * [[1, -1], [-1, 1]].
    - Torsion, DOFs (3, 9): (G*J/L) * [[1, -1], [-1, 1]].
    - Bending in the x-y plane (about local z), DOFs (1, 5, 7, 11) in that
      order: (E*Iz/L^3) *
          [[ 12,   6L,  -12,   6L ],
           [ 6L,  4L^2, -6L,  2L^2],
           [-12,  -6L,   12,  -6L ],
           [ 6L,  2L^2, -6L,  4L^2]]
    - Bending in the x-z plane (about local y), DOFs (2, 4, 8, 10) in that
      order: (E*Iy/L^3) *
          [[ 12,  -6L,  -12,  -6L ],
           [-6L,  4L^2,  6L,  2L^2],
           [-12,   6L,   12,   6L ],
           [-6L,  2L^2,  6L,  4L^2]]
      The sign pattern differs from the x-y plane because a positive rotation
      theta_y makes w decrease along +x (dw/dx = -theta_y), whereas
      dv/dx = +theta_z.
    """
    G = E / (2.0 * (1.0 + nu))
    k = np.zeros((12, 12))

    # Axial bar part.
    k_ax = E * A / L
    k[0, 0] = k_ax
    k[6, 6] = k_ax
    k[0, 6] = -k_ax
    k[6, 0] = -k_ax

    # Saint-Venant torsion part.
    k_tor = G * J / L
    k[3, 3] = k_tor
    k[9, 9] = k_tor
    k[3, 9] = -k_tor
    k[9, 3] = -k_tor

    # Bending in the local x-y plane: v and theta_z, with dv/dx = +theta_z.
    c_z = E * Iz / L**3
    k_bz = c_z * np.array(
        [
            [12.0, 6.0 * L, -12.0, 6.0 * L],
            [6.0 * L, 4.0 * L**2, -6.0 * L, 2.0 * L**2],
            [-12.0, -6.0 * L, 12.0, -6.0 * L],
            [6.0 * L, 2.0 * L**2, -6.0 * L, 4.0 * L**2],
        ]
    )
    idx_z = [1, 5, 7, 11]
    k[np.ix_(idx_z, idx_z)] = k_bz

    # Bending in the local x-z plane: w and theta_y, with dw/dx = -theta_y,
    # hence the flipped signs of the displacement-rotation couplings.
    c_y = E * Iy / L**3
    k_by = c_y * np.array(
        [
            [12.0, -6.0 * L, -12.0, -6.0 * L],
            [-6.0 * L, 4.0 * L**2, 6.0 * L, 2.0 * L**2],
            [-12.0, 6.0 * L, 12.0, 6.0 * L],
            [-6.0 * L, 2.0 * L**2, 6.0 * L, 4.0 * L**2],
        ]
    )
    idx_y = [2, 4, 8, 10]
    k[np.ix_(idx_y, idx_y)] = k_by

    return k


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


def assemble_global_stiffness_matrix_3D(node_coords: np.ndarray, elements: list) -> np.ndarray:
    """
    Global elastic stiffness matrix of a 3D frame of two-node Euler-Bernoulli
    beam elements.

    Each element contributes K_e = Gamma.T @ k_local @ Gamma (global axes),
    added into the rows and columns of its 12 global DOFs
    [6*i, ..., 6*i + 5, 6*j, ..., 6*j + 5] (i = node_i, j = node_j); entries
    from several elements at the same DOFs are summed.

    Parameters
    ----------
    node_coords : np.ndarray of shape (N, 3)
        Global coordinates of the nodes; node n is row n (0-based).
    elements : list of dict
        One dict per element with keys "node_i", "node_j" (int node indices,
        0-based, the element runs from node_i to node_j), "E" (Young's
        modulus), "nu" (Poisson's ratio), "A" (area), "I_y", "I_z" (second
        moments of area about the local y and z axes), "J" (torsion constant),
        and optionally "local_z" (sequence of 3 floats, or None): the reference
        vector fixing the element's local z axis. Other keys (e.g. "I_rho")
        are ignored. Consistent units throughout.

    Returns
    -------
    np.ndarray of shape (6N, 6N)
        Global stiffness matrix; global DOF of node n, component c is 6*n + c,
        components ordered [u_x, u_y, u_z, theta_x, theta_y, theta_z]. Rows and
        columns of nodes not connected to any element are zero.

    Conventions
    -----------
    DOFs: 6 per node, [u_x, u_y, u_z, theta_x, theta_y, theta_z]; an element
    has 12, node i's six then node j's six. Local DOF / end-force order:
        [u1, v1, w1, thx1, thy1, thz1, u2, v2, w2, thx2, thy2, thz2]
        [Fx1, Fy1, Fz1, Mx1, My1, Mz1, Fx2, Fy2, Fz2, Mx2, My2, Mz2]
    (node 1 = node i, node 2 = node j; rotations right-hand rule).

    Local axes and transformation Gamma (12x12), d_local = Gamma @ d_global:
      1. ex = (p_j - p_i) / L, L = |p_j - p_i|; ValueError if L < 1e-12.
      2. Reference vector ref = the element's "local_z" when given (not None);
         it must have unit length (|norm - 1| <= 1e-6) and must not be
         parallel to the axis (|cross(ref, ex)| >= 1e-8), else ValueError.
         When "local_z" is absent or None: ref = global Z = (0, 0, 1), except
         for a vertical element (sqrt(ex_x^2 + ex_y^2) < 1e-8), where
         ref = global Y = (0, 1, 0).
      3. ey = cross(ref, ex) / |cross(ref, ex)|,  ez = cross(ex, ey).
      4. R = 3x3 matrix with rows ex, ey, ez; Gamma = blockdiag(R, R, R, R).

    Local elastic stiffness k_local (12x12, Euler-Bernoulli, symmetric), with
    G = E / (2 (1 + nu)); all entries not listed are zero:
      axial,   DOFs (0, 6):  E*A/L * [[1, -1], [-1, 1]]
      torsion, DOFs (3, 9):  G*J/L * [[1, -1], [-1, 1]]
      bending about local z (x-y plane), DOFs (1, 5, 7, 11): E*I_z/L^3 *
          [[ 12,   6L,  -12,   6L ],
           [ 6L,  4L^2, -6L,  2L^2],
           [-12,  -6L,   12,  -6L ],
           [ 6L,  2L^2, -6L,  4L^2]]
      bending about local y (x-z plane), DOFs (2, 4, 8, 10): E*I_y/L^3 *
          [[ 12,  -6L,  -12,  -6L ],
           [-6L,  4L^2,  6L,  2L^2],
           [-12,   6L,   12,   6L ],
           [-6L,  2L^2,  6L,  4L^2]]

    Raises
    ------
    ValueError
        Any element of zero length, or with a "local_z" that is not of unit
        length or is parallel to its axis (thresholds above).
    """
    coords = np.asarray(node_coords, dtype=float)
    n_nodes = coords.shape[0]
    K = np.zeros((6 * n_nodes, 6 * n_nodes))
    for ele in elements:
        i, j = int(ele["node_i"]), int(ele["node_j"])
        xi, yi, zi = coords[i]
        xj, yj, zj = coords[j]
        Gamma = beam_transformation_matrix_3D(xi, yi, zi, xj, yj, zj, ele.get("local_z"))
        L = float(np.linalg.norm(coords[j] - coords[i]))
        k_local = local_elastic_stiffness_matrix_3D_beam(
            ele["E"], ele["nu"], ele["A"], L, ele["I_y"], ele["I_z"], ele["J"]
        )
        dofs = np.concatenate([np.arange(6 * i, 6 * i + 6), np.arange(6 * j, 6 * j + 6)])
        K[np.ix_(dofs, dofs)] += Gamma.T @ k_local @ Gamma
    return K


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_symmetry_and_six_rigid_body_modes(fcn):
    """For an unsupported, connected, non-planar frame (4 nodes, 3 elements,
    non-sequential node numbering, one element with local_z, one vertical
    element, Iy != Iz), K is (6N, 6N) and symmetric; the six rigid-body motions
    (translations t: u = t at every node, zero rotations; small rotations theta
    about the origin: u = cross(theta, x_n), nodal rotation theta) are in its
    null space; and K has exactly six eigenvalues that are zero (below 1e-10
    times the largest) while all others are positive."""
    coords = np.array([[2.2, 1.4, 0.9], [0.0, 0.0, 0.0], [2.2, 1.4, 3.5], [-0.9, 2.6, 1.8]])
    axis = coords[0] - coords[1]
    lz = np.cross(axis, [0.3, -0.2, 1.0])
    lz = lz / np.linalg.norm(lz)
    elements = [
        {"node_i": 1, "node_j": 0, "E": 2.1e11, "nu": 0.3, "A": 4.2e-3, "I_y": 3.3e-5, "I_z": 1.1e-5,
         "J": 2.4e-6, "local_z": lz.tolist()},
        {"node_i": 0, "node_j": 2, "E": 2.1e11, "nu": 0.3, "A": 3.1e-3, "I_y": 1.9e-5, "I_z": 6.2e-6,
         "J": 1.5e-6},
        {"node_i": 3, "node_j": 2, "E": 7.0e10, "nu": 0.33, "A": 2.5e-3, "I_y": 4.4e-6, "I_z": 9.0e-6,
         "J": 3.0e-6, "local_z": None},
    ]
    K = np.asarray(fcn(coords, elements), dtype=float)
    n = coords.shape[0]
    assert K.shape == (6 * n, 6 * n)
    scale = np.max(np.abs(K))
    assert np.allclose(K, K.T, rtol=0.0, atol=1e-12 * scale)
    for c in range(3):
        t = np.zeros(3)
        t[c] = 1.0
        u = np.concatenate([np.concatenate([t, np.zeros(3)]) for _ in range(n)])
        assert np.max(np.abs(K @ u)) <= 1e-9 * scale
        theta = t
        u = np.concatenate([np.concatenate([np.cross(theta, x), theta]) for x in coords])
        assert np.max(np.abs(K @ u)) <= 1e-9 * scale * np.max(np.abs(coords))
    eig = np.linalg.eigvalsh(0.5 * (K + K.T))
    tol = 1e-10 * np.max(np.abs(eig))
    assert np.sum(np.abs(eig) < tol) == 6
    assert np.sum(eig > tol) == 6 * n - 6


def test_inclined_cantilever_tip_response(fcn):
    """A straight cantilever of total length L = 3.3 along the inclined unit
    direction ex = (2, -1, 2)/3, built from two collinear elements (nodes numbered
    tip = 0, root = 1, middle = 2) with local_z = (1, 2, 0)/sqrt(5) (perpendicular
    to the axis) and Iy != Iz, is clamped at the root (all six DOFs removed).
    Solving K_ff u = P for a tip load reproduces the closed-form tip responses:
    force P along ex -> displacement P L/(E A) along ex; force P along local_z ->
    deflection P L^3/(3 E Iy) along local_z; force P along ey = cross(local_z, ex)
    -> deflection P L^3/(3 E Iz) along ey; torque T about ex -> twist
    T L/(G J) with G = E/(2(1+nu))."""
    E, nu, A, Iy, Iz, J = 2.05e11, 0.28, 5.3e-3, 4.1e-5, 1.2e-5, 2.7e-6
    G = E / (2.0 * (1.0 + nu))
    L = 3.3
    ex = np.array([2.0, -1.0, 2.0]) / 3.0
    ez = np.array([1.0, 2.0, 0.0]) / np.sqrt(5.0)
    ey = np.cross(ez, ex)
    root = np.array([0.4, 1.2, -0.3])
    coords = np.array([root + L * ex, root, root + 0.45 * L * ex])
    props = {"E": E, "nu": nu, "A": A, "I_y": Iy, "I_z": Iz, "J": J, "local_z": list(ez)}
    elements = [dict(props, node_i=1, node_j=2), dict(props, node_i=2, node_j=0)]
    K = np.asarray(fcn(coords, elements), dtype=float)
    free = np.r_[0:6, 12:18]
    Kff = K[np.ix_(free, free)]

    def tip_response(force, moment):
        P = np.zeros(12)
        P[0:3] = force
        P[3:6] = moment
        return np.linalg.solve(Kff, P)[0:6]

    Pv = 1.7e4
    u = tip_response(Pv * ex, np.zeros(3))
    assert np.isclose(u[0:3] @ ex, Pv * L / (E * A), rtol=1e-8)
    u = tip_response(Pv * ez, np.zeros(3))
    assert np.isclose(u[0:3] @ ez, Pv * L**3 / (3 * E * Iy), rtol=1e-8)
    assert abs(u[0:3] @ ey) < 1e-8 * abs(u[0:3] @ ez)
    u = tip_response(Pv * ey, np.zeros(3))
    assert np.isclose(u[0:3] @ ey, Pv * L**3 / (3 * E * Iz), rtol=1e-8)
    T = 2.3e3
    u = tip_response(np.zeros(3), T * ex)
    assert np.isclose(u[3:6] @ ex, T * L / (G * J), rtol=1e-8)


def test_superposition_of_elements_and_invalid_geometry(fcn):
    """Assembly adds element contributions: for a frame of three elements that
    share nodes (including two elements joining the same pair of nodes), the
    global matrix equals the sum of the matrices obtained by calling the
    function with each element alone (same node_coords). An element whose two
    nodes coincide raises ValueError."""
    coords = np.array([[0.0, 0.0, 0.0], [1.9, -0.6, 0.7], [3.1, 1.2, 0.2]])
    base = {"E": 1.1e11, "nu": 0.31, "A": 2.8e-3, "I_y": 5.6e-6, "I_z": 2.1e-6, "J": 1.3e-6}
    elements = [
        dict(base, node_i=0, node_j=1),
        dict(base, node_i=2, node_j=1, local_z=[0.0, 0.0, 1.0]),
        dict(base, node_i=0, node_j=1, A=1.0e-3, I_y=9.0e-7, I_z=4.0e-7, J=2.0e-7, local_z=[0.0, 0.6, 0.8]),
    ]
    K = np.asarray(fcn(coords, elements), dtype=float)
    K_sum = sum(np.asarray(fcn(coords, [e]), dtype=float) for e in elements)
    assert K.shape == (18, 18)
    assert np.allclose(K, K_sum, rtol=1e-12, atol=1e-12 * np.max(np.abs(K)))
    coords_bad = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 0.5], [1.0, 2.0, 0.5]])
    with pytest.raises(ValueError):
        fcn(coords_bad, [dict(base, node_i=0, node_j=1), dict(base, node_i=1, node_j=2)])


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------


def fail_swapped_Iy_Iz(node_coords, elements):
    """Passes I_z where I_y belongs and vice versa."""
    coords = np.asarray(node_coords, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        k = local_elastic_stiffness_matrix_3D_beam(e["E"], e["nu"], e["A"], L, e["I_z"], e["I_y"], e["J"])
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        K[np.ix_(d, d)] += G.T @ k @ G
    return K


def fail_transformation_on_wrong_side(node_coords, elements):
    """Rotates with Gamma @ k_local @ Gamma.T instead of Gamma.T @ k_local @ Gamma."""
    coords = np.asarray(node_coords, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        k = local_elastic_stiffness_matrix_3D_beam(e["E"], e["nu"], e["A"], L, e["I_y"], e["I_z"], e["J"])
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        K[np.ix_(d, d)] += G @ k @ G.T
    return K


def fail_overwrites_instead_of_adding(node_coords, elements):
    """Assigns each element block into K, discarding earlier contributions at shared DOFs."""
    coords = np.asarray(node_coords, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        k = local_elastic_stiffness_matrix_3D_beam(e["E"], e["nu"], e["A"], L, e["I_y"], e["I_z"], e["J"])
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        K[np.ix_(d, d)] = G.T @ k @ G
    return K


def fail_one_based_node_numbering(node_coords, elements):
    """Treats node indices as 1-based (DOFs of node n start at 6*(n - 1)), which
    with numpy's negative indexing silently relabels the nodes cyclically."""
    coords = np.asarray(node_coords, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        k = local_elastic_stiffness_matrix_3D_beam(e["E"], e["nu"], e["A"], L, e["I_y"], e["I_z"], e["J"])
        d = np.r_[6 * (i - 1):6 * (i - 1) + 6, 6 * (j - 1):6 * (j - 1) + 6]
        K[np.ix_(d, d)] += G.T @ k @ G
    return K


def fail_local_z_ignored(node_coords, elements):
    """Always uses the default reference vector, ignoring each element's local_z."""
    coords = np.asarray(node_coords, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], None)
        L = np.linalg.norm(coords[j] - coords[i])
        k = local_elastic_stiffness_matrix_3D_beam(e["E"], e["nu"], e["A"], L, e["I_y"], e["I_z"], e["J"])
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        K[np.ix_(d, d)] += G.T @ k @ G
    return K


def fail_no_length_check(node_coords, elements):
    """Builds its own direction cosines without checking the length, so coincident
    nodes give NaN entries instead of a ValueError."""
    coords = np.asarray(node_coords, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    with np.errstate(invalid="ignore", divide="ignore"):
        for e in elements:
            i, j = e["node_i"], e["node_j"]
            axis = coords[j] - coords[i]
            L = np.linalg.norm(axis)
            ex = axis / L
            ref = e.get("local_z")
            if ref is None:
                ref = [0.0, 1.0, 0.0] if np.hypot(ex[0], ex[1]) < 1e-8 else [0.0, 0.0, 1.0]
            ey = np.cross(ref, ex)
            ey = ey / np.linalg.norm(ey)
            G = np.kron(np.eye(4), np.vstack([ex, ey, np.cross(ex, ey)]))
            k = local_elastic_stiffness_matrix_3D_beam(e["E"], e["nu"], e["A"], L, e["I_y"], e["I_z"], e["J"])
            d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
            K[np.ix_(d, d)] += G.T @ k @ G
    return K


def task_info():
    steel = {"E": 2.1e11, "nu": 0.3}
    # Frame 1: non-planar chain, non-sequential numbering, a vertical member.
    c1 = np.array([[0.0, 0.0, 0.0], [3.7, 1.1, 2.9], [2.4, 1.3, 1.6], [2.4, 1.3, -1.5]])
    a = c1[2] - c1[0]
    lz = np.cross(a, [0.4, -0.3, 0.9])
    lz = lz / np.linalg.norm(lz)  # perpendicular to element 0
    e1 = [
        dict(steel, node_i=0, node_j=2, A=4.2e-3, I_y=3.3e-5, I_z=1.1e-5, J=2.4e-6, local_z=lz.tolist()),
        dict(steel, node_i=2, node_j=1, A=3.1e-3, I_y=1.9e-5, I_z=6.2e-6, J=1.5e-6),
        dict(steel, node_i=3, node_j=2, A=5.0e-3, I_y=2.2e-5, I_z=4.7e-5, J=3.9e-6, local_z=None),
    ]
    # Frame 2: two members, oblique unit local_z given as an ndarray, node 1 isolated.
    c2 = np.array([[1.2, -0.5, 0.3], [5.0, 5.0, 5.0], [0.6, 0.45, 0.1], [-0.2, 0.9, 1.05]])
    lz2 = np.array([0.5, -0.1, 0.7])
    lz2 = lz2 / np.linalg.norm(lz2)
    e2 = [
        {"node_i": 2, "node_j": 0, "E": 6.9e10, "nu": 0.33, "A": 1.6e-3, "I_y": 1.8e-6, "I_z": 5.3e-6,
         "J": 2.9e-6, "local_z": lz2, "I_rho": 7.1e-6},
        {"node_i": 3, "node_j": 2, "E": 6.9e10, "nu": 0.33, "A": 1.2e-3, "I_y": 9.5e-7, "I_z": 2.6e-6,
         "J": 1.4e-6},
    ]
    # Frame 3: 3D tripod-like frame with horizontal members, one in the X-Z plane.
    c3 = np.array([[0.0, 0.0, 0.0], [4.1, 0.0, 0.0], [4.1, 0.0, 2.6], [1.3, 2.9, 2.6], [1.3, 2.9, 0.0]])
    e3 = [
        dict(steel, node_i=0, node_j=3, A=3.9e-3, I_y=2.8e-5, I_z=8.6e-6, J=1.9e-6),
        dict(steel, node_i=1, node_j=2, A=3.9e-3, I_y=2.8e-5, I_z=8.6e-6, J=1.9e-6, local_z=[1.0, 0.0, 0.0]),
        dict(steel, node_i=3, node_j=2, A=2.7e-3, I_y=1.2e-5, I_z=3.4e-5, J=1.1e-6),
        dict(steel, node_i=0, node_j=2, nu=0.29, A=2.1e-3, I_y=7.3e-6, I_z=5.1e-6, J=2.2e-6),
    ]
    # Frame 4: second element has coincident nodes -> ValueError.
    c4 = np.array([[0.0, 0.0, 0.0], [1.5, 0.8, 0.4], [1.5, 0.8, 0.4]])
    e4 = [dict(steel, node_i=0, node_j=1, A=1e-3, I_y=2e-6, I_z=3e-6, J=1e-6),
          dict(steel, node_i=1, node_j=2, A=1e-3, I_y=2e-6, I_z=3e-6, J=1e-6)]
    return {
        "task_id": "MSA_3D_assemble_global_linear_elastic_stiffness_CC0_H2_T3",
        "task_short_description": "assemble the global 6N x 6N elastic stiffness matrix of a 3D beam frame",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": assemble_global_stiffness_matrix_3D,
        "required_imports": [
            "import numpy as np",
            "import pytest",
            "from typing import Optional, Sequence",
        ],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            [c1, e1],
            [c2, e2],
            [c3, e3],
            [c4, e4],
        ],
        "test_cases": [
            {
                "test_code": test_symmetry_and_six_rigid_body_modes,
                "expected_failures": [
                    fail_transformation_on_wrong_side,
                    fail_overwrites_instead_of_adding,
                    fail_one_based_node_numbering,
                ],
            },
            {
                "test_code": test_inclined_cantilever_tip_response,
                "expected_failures": [
                    fail_swapped_Iy_Iz,
                    fail_transformation_on_wrong_side,
                    fail_local_z_ignored,
                    fail_one_based_node_numbering,
                ],
            },
            {
                "test_code": test_superposition_of_elements_and_invalid_geometry,
                "expected_failures": [fail_overwrites_instead_of_adding, fail_no_length_check],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["node_coords"], "draw": "affine", "dimensions": 3, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["elements"], "keys": ["E", "A", "I_y", "I_z", "J", "I_rho"], "draw": "scale", "low": 0.5, "high": 2.0},
                {"arguments": ["elements"], "keys": ["nu"], "draw": "uniform", "low": 0.2, "high": 0.4},
            ],
        },
    }

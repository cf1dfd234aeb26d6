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


def local_geometric_stiffness_matrix_3D_beam(
    L: float,
    A: float,
    I_rho: float,
    Fx2: float,
    Mx2: float,
    My1: float,
    Mz1: float,
    My2: float,
    Mz2: float,
) -> np.ndarray:
    """
    Local geometric (initial-stress) stiffness matrix of a 3D two-node
    Euler-Bernoulli beam element, including the coupling of torsion and
    bending produced by end moments. Used in linearised buckling analysis,
    (K_e + lambda * K_g) phi = 0.

    Local DOF order (zero-based indices 0..11):
        [u1, v1, w1, theta_x1, theta_y1, theta_z1,
         u2, v2, w2, theta_x2, theta_y2, theta_z2]
    (u, v, w translations along local x, y, z; theta rotations about local
    x, y, z, right-hand rule; node 1 at x = 0, node 2 at x = L).

    Parameters
    ----------
    L : float
        Element length (> 0; not validated).
    A : float
        Cross-sectional area.
    I_rho : float
        Polar moment of inertia of the cross-section about the element axis.
    Fx2 : float
        Axial force at node 2 (local end force f_local[6]); tension positive,
        compression negative.
    Mx2 : float
        Torsional moment at node 2 (f_local[9]).
    My1, Mz1 : float
        Bending moments about local y and local z at node 1 (f_local[4], f_local[5]).
    My2, Mz2 : float
        Bending moments about local y and local z at node 2 (f_local[10], f_local[11]).
    The end forces are those of the element's local end-force vector
    f_local = k_local @ d_local, ordered like the DOFs
    [Fx1, Fy1, Fz1, Mx1, My1, Mz1, Fx2, Fy2, Fz2, Mx2, My2, Mz2].

    Returns
    -------
    np.ndarray of shape (12, 12)
        The symmetric geometric stiffness matrix K_g in local coordinates.

    Formulation
    -----------
    The consistent geometric stiffness of the classical matrix structural
    analysis texts for a prismatic, doubly symmetric 3D frame element: cubic
    (Hermite) interpolation of the transverse displacements v and w, linear
    interpolation of the axial displacement and the twist, no shear
    deformation, no warping or Wagner terms. It holds
      * the axial-force terms (proportional to Fx2) in both bending planes, in
        the axial pair and in the twist pair (through I_rho / A);
      * the coupling of the end moments My1, Mz1, My2, Mz2 with the twists and
        with the transverse displacements, and of the torsional moment Mx2 with
        the transverse displacements and bending rotations.
    It follows the geometric stiffness of the 3D framework element in
    McGuire, Gallagher and Ziemian, "Matrix Structural Analysis", 2nd edition
    (2000), written in the DOF order above with the end forces named and
    signed as above (Fx2 tension positive).
    Tension stiffens the element, compression softens it; every entry is
    linear in (Fx2, Mx2, My1, Mz1, My2, Mz2), so zero end forces give the zero
    matrix.
    """
    kg = np.zeros((12, 12))

    # Upper triangle, off-diagonal entries: (row, col, value).
    upper = [
        (0, 6, -Fx2 / L),
        # transverse v1 row
        (1, 3, My1 / L),
        (1, 4, Mx2 / L),
        (1, 5, Fx2 / 10.0),
        (1, 7, -6.0 * Fx2 / (5.0 * L)),
        (1, 9, My2 / L),
        (1, 10, -Mx2 / L),
        (1, 11, Fx2 / 10.0),
        # transverse w1 row
        (2, 3, Mz1 / L),
        (2, 4, -Fx2 / 10.0),
        (2, 5, Mx2 / L),
        (2, 8, -6.0 * Fx2 / (5.0 * L)),
        (2, 9, Mz2 / L),
        (2, 10, -Fx2 / 10.0),
        (2, 11, -Mx2 / L),
        # twist theta_x1 row: torsion-bending coupling through the end moments
        (3, 4, -(2.0 * Mz1 - Mz2) / 6.0),
        (3, 5, (2.0 * My1 - My2) / 6.0),
        (3, 7, -My1 / L),
        (3, 8, -Mz1 / L),
        (3, 9, -Fx2 * I_rho / (A * L)),
        (3, 10, -(Mz1 + Mz2) / 6.0),
        (3, 11, (My1 + My2) / 6.0),
        # theta_y1 row
        (4, 7, -Mx2 / L),
        (4, 8, Fx2 / 10.0),
        (4, 9, -(Mz1 + Mz2) / 6.0),
        (4, 10, -Fx2 * L / 30.0),
        (4, 11, Mx2 / 2.0),
        # theta_z1 row
        (5, 7, -Fx2 / 10.0),
        (5, 8, -Mx2 / L),
        (5, 9, (My1 + My2) / 6.0),
        (5, 10, -Mx2 / 2.0),
        (5, 11, -Fx2 * L / 30.0),
        # node-2 rows
        (7, 9, -My2 / L),
        (7, 10, Mx2 / L),
        (7, 11, -Fx2 / 10.0),
        (8, 9, -Mz2 / L),
        (8, 10, Fx2 / 10.0),
        (8, 11, Mx2 / L),
        (9, 10, (Mz1 - 2.0 * Mz2) / 6.0),
        (9, 11, -(My1 - 2.0 * My2) / 6.0),
    ]
    for r, c, value in upper:
        kg[r, c] = value
    # Mirror before the diagonal is set, so the diagonal is not doubled.
    kg = kg + kg.T

    diagonal = [
        (0, Fx2 / L),
        (6, Fx2 / L),
        (1, 6.0 * Fx2 / (5.0 * L)),
        (2, 6.0 * Fx2 / (5.0 * L)),
        (7, 6.0 * Fx2 / (5.0 * L)),
        (8, 6.0 * Fx2 / (5.0 * L)),
        (3, Fx2 * I_rho / (A * L)),
        (9, Fx2 * I_rho / (A * L)),
        (4, 2.0 * Fx2 * L / 15.0),
        (5, 2.0 * Fx2 * L / 15.0),
        (10, 2.0 * Fx2 * L / 15.0),
        (11, 2.0 * Fx2 * L / 15.0),
    ]
    for i, value in diagonal:
        kg[i, i] = value
    return kg


def compute_local_element_loads_3D(
    ele_info: dict,
    xi: float,
    yi: float,
    zi: float,
    xj: float,
    yj: float,
    zj: float,
    u_dofs_global: Sequence[float],
) -> np.ndarray:
    """
    Internal end forces and moments of one 3D Euler-Bernoulli beam element, in
    the element's local coordinate system, for given global nodal displacements:

        f_local = k_local @ (Gamma @ u_dofs_global)

    Parameters
    ----------
    ele_info : dict
        Element properties: "E" (Young's modulus), "nu" (Poisson's ratio),
        "A" (cross-sectional area), "I_y" and "I_z" (second moments of area
        about the local y and z axes), "J" (Saint-Venant torsion constant),
        and optionally "local_z" (sequence of 3 floats, or None): the reference
        vector fixing the local z axis. Any other keys (e.g. "node_i",
        "node_j", "I_rho") are ignored. Consistent units throughout.
    xi, yi, zi : float
        Global coordinates of node i (local node 1).
    xj, yj, zj : float
        Global coordinates of node j (local node 2).
    u_dofs_global : array-like of 12 floats
        Global displacements and rotations of the element's DOFs:
        [u_x, u_y, u_z, theta_x, theta_y, theta_z] of node i, then of node j.

    Returns
    -------
    np.ndarray of shape (12,)
        Local end-force vector
        [Fx1, Fy1, Fz1, Mx1, My1, Mz1, Fx2, Fy2, Fz2, Mx2, My2, Mz2]:
        the forces and moments, along/about the local axes, that the nodes
        exert on the element ends (so Fx2 > 0 means the member is in tension).

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
        Zero-length element; "local_z" not of unit length or parallel to the
        element axis (thresholds above).
    """
    # Gamma first: it validates the geometry before L is used as a divisor.
    Gamma = beam_transformation_matrix_3D(xi, yi, zi, xj, yj, zj, ele_info.get("local_z"))
    L = float(np.linalg.norm([xj - xi, yj - yi, zj - zi]))
    k_local = local_elastic_stiffness_matrix_3D_beam(
        ele_info["E"], ele_info["nu"], ele_info["A"], L,
        ele_info["I_y"], ele_info["I_z"], ele_info["J"],
    )
    u = np.asarray(u_dofs_global, dtype=float).reshape(12)
    return k_local @ (Gamma @ u)


def assemble_global_geometric_stiffness_3D(
    node_coords: np.ndarray, elements: list, u_global: Sequence[float]
) -> np.ndarray:
    """
    Global geometric (initial-stress) stiffness matrix K_g of a 3D frame of
    two-node beam elements, for the member forces produced by a given global
    displacement vector.

    Per element e (nodes i -> j, global DOFs dofs_e = [6i..6i+5, 6j..6j+5]):
      1. Local end forces from the element's part of u_global:
             f = k_local @ (Gamma @ u_global[dofs_e])
         (12 values [Fx1, Fy1, Fz1, Mx1, My1, Mz1, Fx2, Fy2, Fz2, Mx2, My2, Mz2];
         Fx2 > 0 is tension).
      2. Local geometric stiffness k_g(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2)
         with Fx2 = f[6], Mx2 = f[9], My1 = f[4], Mz1 = f[5], My2 = f[10],
         Mz2 = f[11] (see "Local geometric stiffness" below).
      3. K_g[dofs_e, dofs_e] += Gamma.T @ k_g @ Gamma (contributions of several
         elements at the same DOFs are summed).
    K_g is symmetric, linear in u_global, and zero for u_global = 0.

    Parameters
    ----------
    node_coords : np.ndarray of shape (N, 3)
        Global coordinates of the nodes; node n is row n (0-based).
    elements : list of dict
        One dict per element with keys "node_i", "node_j" (int node indices,
        0-based; the element runs from node_i to node_j), "E" (Young's
        modulus), "nu" (Poisson's ratio), "A" (area), "I_y", "I_z" (second
        moments of area about the local y and z axes), "J" (torsion constant),
        "I_rho" (polar moment of inertia, used in k_g), and optionally
        "local_z" (sequence of 3 floats, or None): the reference vector fixing
        the element's local z axis. Consistent units throughout.
    u_global : array-like of 6N floats
        Global displacement vector; global DOF of node n, component c is
        6*n + c, components [u_x, u_y, u_z, theta_x, theta_y, theta_z].

    Returns
    -------
    np.ndarray of shape (6N, 6N)
        Global geometric stiffness matrix, same DOF numbering as u_global.
        Rows and columns of nodes not connected to any element are zero.

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

    Local geometric stiffness k_g (12x12, symmetric) of an element with length
    L, area A, polar moment I_rho and end forces Fx2 (axial force at node j,
    tension positive), Mx2, My1, Mz1, My2, Mz2, in the local DOF order above:
    the consistent initial-stress matrix of a prismatic, doubly symmetric 3D
    Euler-Bernoulli frame element (cubic Hermite interpolation of the
    transverse displacements, linear interpolation of the axial displacement
    and of the twist; no shear deformation, warping or Wagner terms). It holds
    the axial-force terms in both bending planes, in the axial pair and in the
    twist pair (through I_rho / A), and the coupling of the end moments with
    the twists, the transverse displacements and the bending rotations. It is
    the geometric stiffness of the 3D framework element in McGuire, Gallagher
    and Ziemian, "Matrix Structural Analysis", 2nd ed. (2000), with its end
    forces taken from the local end-force vector as stated here. It is linear
    in the six end forces (zero end forces give zero), tension stiffens and
    compression softens.

    Raises
    ------
    ValueError
        Any element of zero length, or with a "local_z" that is not of unit
        length or is parallel to its axis (thresholds above).
    """
    coords = np.asarray(node_coords, dtype=float)
    n_nodes = coords.shape[0]
    u = np.asarray(u_global, dtype=float).reshape(6 * n_nodes)
    K_g = np.zeros((6 * n_nodes, 6 * n_nodes))
    for ele in elements:
        i, j = int(ele["node_i"]), int(ele["node_j"])
        xi, yi, zi = coords[i]
        xj, yj, zj = coords[j]
        dofs = np.concatenate([np.arange(6 * i, 6 * i + 6), np.arange(6 * j, 6 * j + 6)])
        f = compute_local_element_loads_3D(ele, xi, yi, zi, xj, yj, zj, u[dofs])
        Gamma = beam_transformation_matrix_3D(xi, yi, zi, xj, yj, zj, ele.get("local_z"))
        L = float(np.linalg.norm(coords[j] - coords[i]))
        k_g = local_geometric_stiffness_matrix_3D_beam(
            L, ele["A"], ele["I_rho"], f[6], f[9], f[4], f[5], f[10], f[11]
        )
        K_g[np.ix_(dofs, dofs)] += Gamma.T @ k_g @ Gamma
    return K_g


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_symmetric_linear_and_translation_invariant(fcn):
    """For an unsupported non-planar frame (4 nodes, 3 elements sharing nodes,
    one element with local_z, one vertical element, Iy != Iz) and seeded random
    displacement vectors u1, u2: K_g has shape (6N, 6N) and is symmetric;
    K_g(0) is zero; K_g is linear in u (K_g(2 u1 - 0.5 u2) = 2 K_g(u1) - 0.5 K_g(u2));
    and rigid translations (the same translation at every node, zero rotations)
    are in the null space of K_g(u1)."""
    coords = np.array([[0.0, 0.0, 0.0], [2.9, 1.2, 1.7], [2.9, 1.2, 4.6], [0.8, 3.3, 4.1]])
    lz = np.cross(coords[1] - coords[0], [0.2, 0.1, 1.0])
    lz = lz / np.linalg.norm(lz)
    elements = [
        {"node_i": 0, "node_j": 1, "E": 2.1e11, "nu": 0.3, "A": 4.0e-3, "I_y": 2.6e-5, "I_z": 9.1e-6,
         "J": 2.1e-6, "I_rho": 3.51e-5, "local_z": lz.tolist()},
        {"node_i": 1, "node_j": 2, "E": 2.1e11, "nu": 0.3, "A": 3.2e-3, "I_y": 1.5e-5, "I_z": 6.4e-6,
         "J": 1.6e-6, "I_rho": 2.14e-5},
        {"node_i": 3, "node_j": 2, "E": 2.1e11, "nu": 0.3, "A": 2.4e-3, "I_y": 4.8e-6, "I_z": 1.3e-5,
         "J": 2.9e-6, "I_rho": 1.78e-5, "local_z": None},
    ]
    n = 4
    rng = np.random.default_rng(42)
    u1 = 1e-3 * rng.standard_normal(6 * n)
    u2 = 1e-3 * rng.standard_normal(6 * n)
    K1 = np.asarray(fcn(coords, elements, u1), dtype=float)
    K2 = np.asarray(fcn(coords, elements, u2), dtype=float)
    assert K1.shape == (6 * n, 6 * n)
    scale = np.max(np.abs(K1))
    assert scale > 0.0
    assert np.allclose(K1, K1.T, rtol=0.0, atol=1e-12 * scale)
    K0 = np.asarray(fcn(coords, elements, np.zeros(6 * n)), dtype=float)
    assert np.max(np.abs(K0)) <= 1e-12 * scale
    K12 = np.asarray(fcn(coords, elements, 2.0 * u1 - 0.5 * u2), dtype=float)
    assert np.allclose(K12, 2.0 * K1 - 0.5 * K2, rtol=0.0, atol=1e-9 * scale)
    for c in range(3):
        t = np.zeros(6 * n)
        t[c::6] = 1.0
        assert np.max(np.abs(K1 @ t)) <= 1e-9 * scale


def test_rigid_body_displacement_gives_zero(fcn):
    """A rigid-body displacement of the whole frame (translation t plus a small
    rotation theta about a point x0: u_n = t + cross(theta, x_n - x0), nodal
    rotation theta) produces no member forces, so K_g vanishes: its entries are
    below 1e-9 times the largest entry of K_g for a generic random displacement
    of the same size. The frame has inclined members with and without local_z."""
    coords = np.array([[0.3, -0.4, 0.2], [2.5, 0.9, 1.4], [4.0, -1.1, 2.2]])
    elements = [
        {"node_i": 0, "node_j": 1, "E": 7.0e10, "nu": 0.33, "A": 2.6e-3, "I_y": 3.9e-6, "I_z": 7.2e-6,
         "J": 2.0e-6, "I_rho": 1.11e-5, "local_z": [0.0, -0.6, 0.8]},
        {"node_i": 2, "node_j": 1, "E": 7.0e10, "nu": 0.33, "A": 1.8e-3, "I_y": 2.2e-6, "I_z": 1.5e-6,
         "J": 1.2e-6, "I_rho": 3.7e-6},
    ]
    rng = np.random.default_rng(3)
    K_generic = np.asarray(fcn(coords, elements, 1e-3 * rng.standard_normal(18)), dtype=float)
    scale = np.max(np.abs(K_generic))
    assert scale > 0.0
    t = 1e-3 * rng.standard_normal(3)
    theta = 1e-3 * rng.standard_normal(3)
    x0 = rng.standard_normal(3)
    u = np.concatenate([np.concatenate([t + np.cross(theta, x - x0), theta]) for x in coords])
    K = np.asarray(fcn(coords, elements, u), dtype=float)
    assert np.max(np.abs(K)) <= 1e-9 * scale


def test_single_member_closed_forms(fcn):
    """(a) Axial: one member along the inclined unit direction ex = (2, 3, 6)/7,
    length L = 2.8, node j displaced by d*ex (node i fixed), so the member force
    is Fx2 = E A d/L and all end moments vanish. For global vectors q the
    quadratic form q.K_g.q must be: 6 Fx2/(5L) |a|^2 for a translation a of node j
    perpendicular to ex; Fx2/L for the unit translation ex of node j; 2 Fx2 L/15
    |b|^2 for a rotation b of node i perpendicular to ex; Fx2 I_rho/(A L) for the
    unit rotation ex at node i; and the coupling between translations a (node i)
    and a (node j) is -6 Fx2/(5L) |a|^2. Checked for tension (d > 0) and
    compression (d < 0), with I_rho != J.
    (b) Bending: one member along +X (default reference, local = global axes),
    length L = 2.3, rotations phi1, phi2 about Z at nodes i and j only. Then
    Fx2 = Mx2 = My1 = My2 = 0, Mz1 = E Iz (4 phi1 + 2 phi2)/L,
    Mz2 = E Iz (2 phi1 + 4 phi2)/L, and K_g must equal the symmetric matrix whose
    only nonzero upper-triangle entries are (2,3) Mz1/L, (2,9) Mz2/L,
    (3,4) -(2 Mz1 - Mz2)/6, (3,8) -Mz1/L, (3,10) -(Mz1 + Mz2)/6,
    (4,9) -(Mz1 + Mz2)/6, (8,9) -Mz2/L, (9,10) (Mz1 - 2 Mz2)/6."""
    E, nu, A, Iy, Iz, J, I_rho = 2.0e11, 0.3, 3.6e-3, 2.7e-5, 8.3e-6, 1.9e-6, 3.53e-5
    props = {"E": E, "nu": nu, "A": A, "I_y": Iy, "I_z": Iz, "J": J, "I_rho": I_rho}

    # (a) axial force in an inclined member
    L = 2.8
    ex = np.array([2.0, 3.0, 6.0]) / 7.0
    p_i = np.array([0.5, -1.0, 0.25])
    coords = np.array([p_i, p_i + L * ex])
    a_perp = np.cross(ex, [1.0, 0.0, 0.0])
    b_perp = np.cross(ex, a_perp)
    for d in (1.4e-3, -0.9e-3):
        u = np.zeros(12)
        u[6:9] = d * ex
        K = np.asarray(fcn(coords, [dict(props, node_i=0, node_j=1)], u), dtype=float)
        Fx2 = E * A * d / L

        def form(q1, q2):
            return q1 @ K @ q2

        def vec(block, v):
            q = np.zeros(12)
            q[3 * block:3 * block + 3] = v
            return q

        assert np.isclose(form(vec(2, a_perp), vec(2, a_perp)), 6 * Fx2 / (5 * L) * (a_perp @ a_perp), rtol=1e-8)
        assert np.isclose(form(vec(2, b_perp), vec(2, b_perp)), 6 * Fx2 / (5 * L) * (b_perp @ b_perp), rtol=1e-8)
        assert np.isclose(form(vec(2, ex), vec(2, ex)), Fx2 / L, rtol=1e-8)
        assert np.isclose(form(vec(1, b_perp), vec(1, b_perp)), 2 * Fx2 * L / 15 * (b_perp @ b_perp), rtol=1e-8)
        assert np.isclose(form(vec(1, ex), vec(1, ex)), Fx2 * I_rho / (A * L), rtol=1e-8)
        assert np.isclose(form(vec(0, a_perp), vec(2, a_perp)), -6 * Fx2 / (5 * L) * (a_perp @ a_perp), rtol=1e-8)

    # (b) end moments about Z in a member along +X
    L = 2.3
    coords = np.array([[1.0, 0.5, -0.2], [1.0 + L, 0.5, -0.2]])
    phi1, phi2 = 1.1e-3, -2.7e-3
    u = np.zeros(12)
    u[5] = phi1
    u[11] = phi2
    K = np.asarray(fcn(coords, [dict(props, node_i=0, node_j=1)], u), dtype=float)
    Mz1 = E * Iz * (4 * phi1 + 2 * phi2) / L
    Mz2 = E * Iz * (2 * phi1 + 4 * phi2) / L
    expected = np.zeros((12, 12))
    expected[2, 3] = Mz1 / L
    expected[2, 9] = Mz2 / L
    expected[3, 4] = -(2 * Mz1 - Mz2) / 6
    expected[3, 8] = -Mz1 / L
    expected[3, 10] = -(Mz1 + Mz2) / 6
    expected[4, 9] = -(Mz1 + Mz2) / 6
    expected[8, 9] = -Mz2 / L
    expected[9, 10] = (Mz1 - 2 * Mz2) / 6
    expected = expected + expected.T
    assert np.allclose(K, expected, rtol=1e-8, atol=1e-9 * np.max(np.abs(expected)))


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------


def fail_axial_force_from_node_1(node_coords, elements, u_global):
    """Takes the axial force from f[0] (= -Fx2), i.e. treats compression as tension."""
    coords = np.asarray(node_coords, dtype=float)
    u = np.asarray(u_global, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        f = compute_local_element_loads_3D(e, *coords[i], *coords[j], u[d])
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        kg = local_geometric_stiffness_matrix_3D_beam(L, e["A"], e["I_rho"], f[0], f[9], f[4], f[5], f[10], f[11])
        K[np.ix_(d, d)] += G.T @ kg @ G
    return K


def fail_torsion_constant_for_polar_moment(node_coords, elements, u_global):
    """Uses the torsion constant J where the polar moment I_rho belongs."""
    coords = np.asarray(node_coords, dtype=float)
    u = np.asarray(u_global, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        f = compute_local_element_loads_3D(e, *coords[i], *coords[j], u[d])
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        kg = local_geometric_stiffness_matrix_3D_beam(L, e["A"], e["J"], f[6], f[9], f[4], f[5], f[10], f[11])
        K[np.ix_(d, d)] += G.T @ kg @ G
    return K


def fail_geometric_matrix_not_rotated(node_coords, elements, u_global):
    """Assembles the local geometric stiffness without transforming it to global axes."""
    coords = np.asarray(node_coords, dtype=float)
    u = np.asarray(u_global, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        f = compute_local_element_loads_3D(e, *coords[i], *coords[j], u[d])
        L = np.linalg.norm(coords[j] - coords[i])
        kg = local_geometric_stiffness_matrix_3D_beam(L, e["A"], e["I_rho"], f[6], f[9], f[4], f[5], f[10], f[11])
        K[np.ix_(d, d)] += kg
    return K


def fail_forces_from_untransformed_displacements(node_coords, elements, u_global):
    """Computes member forces as k_local @ u_global[dofs], skipping Gamma."""
    coords = np.asarray(node_coords, dtype=float)
    u = np.asarray(u_global, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        k = local_elastic_stiffness_matrix_3D_beam(e["E"], e["nu"], e["A"], L, e["I_y"], e["I_z"], e["J"])
        f = k @ u[d]
        kg = local_geometric_stiffness_matrix_3D_beam(L, e["A"], e["I_rho"], f[6], f[9], f[4], f[5], f[10], f[11])
        K[np.ix_(d, d)] += G.T @ kg @ G
    return K


def fail_geometric_matrix_upper_triangle_only(node_coords, elements, u_global):
    """Keeps only the upper triangle of the local geometric stiffness (forgets to mirror)."""
    coords = np.asarray(node_coords, dtype=float)
    u = np.asarray(u_global, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        f = compute_local_element_loads_3D(e, *coords[i], *coords[j], u[d])
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        kg = local_geometric_stiffness_matrix_3D_beam(L, e["A"], e["I_rho"], f[6], f[9], f[4], f[5], f[10], f[11])
        K[np.ix_(d, d)] += G.T @ np.triu(kg) @ G
    return K


def fail_overwrites_instead_of_adding(node_coords, elements, u_global):
    """Assigns each element block into K_g, discarding earlier contributions at shared DOFs."""
    coords = np.asarray(node_coords, dtype=float)
    u = np.asarray(u_global, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        f = compute_local_element_loads_3D(e, *coords[i], *coords[j], u[d])
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        kg = local_geometric_stiffness_matrix_3D_beam(L, e["A"], e["I_rho"], f[6], f[9], f[4], f[5], f[10], f[11])
        K[np.ix_(d, d)] = G.T @ kg @ G
    return K


def fail_bending_moments_y_z_swapped(node_coords, elements, u_global):
    """Reads My from the Mz slots and Mz from the My slots of the end-force vector."""
    coords = np.asarray(node_coords, dtype=float)
    u = np.asarray(u_global, dtype=float)
    K = np.zeros((6 * len(coords), 6 * len(coords)))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        d = np.r_[6 * i:6 * i + 6, 6 * j:6 * j + 6]
        f = compute_local_element_loads_3D(e, *coords[i], *coords[j], u[d])
        G = beam_transformation_matrix_3D(*coords[i], *coords[j], e.get("local_z"))
        L = np.linalg.norm(coords[j] - coords[i])
        kg = local_geometric_stiffness_matrix_3D_beam(L, e["A"], e["I_rho"], f[6], f[9], f[5], f[4], f[11], f[10])
        K[np.ix_(d, d)] += G.T @ kg @ G
    return K


def task_info():
    rng = np.random.default_rng(8675309)
    scale_dofs = np.array([1e-3, 1e-3, 1e-3, 2e-3, 2e-3, 2e-3])
    # Frame 1: non-planar chain, element with perpendicular local_z, vertical element (node_i > node_j).
    c1 = np.array([[0.0, 0.0, 0.0], [3.7, 1.1, 2.9], [2.4, 1.3, 1.6], [2.4, 1.3, -1.5]])
    lz = np.cross(c1[2] - c1[0], [0.4, -0.3, 0.9])
    lz = lz / np.linalg.norm(lz)
    e1 = [
        {"node_i": 0, "node_j": 2, "E": 2.1e11, "nu": 0.3, "A": 4.2e-3, "I_y": 3.3e-5, "I_z": 1.1e-5,
         "J": 2.4e-6, "I_rho": 4.4e-5, "local_z": lz.tolist()},
        {"node_i": 2, "node_j": 1, "E": 2.1e11, "nu": 0.3, "A": 3.1e-3, "I_y": 1.9e-5, "I_z": 6.2e-6,
         "J": 1.5e-6, "I_rho": 2.52e-5},
        {"node_i": 3, "node_j": 2, "E": 2.1e11, "nu": 0.3, "A": 5.0e-3, "I_y": 2.2e-5, "I_z": 4.7e-5,
         "J": 3.9e-6, "I_rho": 6.9e-5, "local_z": None},
    ]
    u1 = np.tile(scale_dofs, 4) * rng.standard_normal(24)
    # Frame 2: two members, oblique unit local_z as an ndarray, non-sequential numbering, isolated node 1.
    c2 = np.array([[1.2, -0.5, 0.3], [5.0, 5.0, 5.0], [0.6, 0.45, 0.1], [-0.2, 0.9, 1.05]])
    lz2 = np.array([0.5, -0.1, 0.7])
    lz2 = lz2 / np.linalg.norm(lz2)
    e2 = [
        {"node_i": 2, "node_j": 0, "E": 6.9e10, "nu": 0.33, "A": 1.6e-3, "I_y": 1.8e-6, "I_z": 5.3e-6,
         "J": 2.9e-6, "I_rho": 7.1e-6, "local_z": lz2},
        {"node_i": 3, "node_j": 2, "E": 6.9e10, "nu": 0.33, "A": 1.2e-3, "I_y": 9.5e-7, "I_z": 2.6e-6,
         "J": 1.4e-6, "I_rho": 3.55e-6},
    ]
    u2 = np.tile(scale_dofs, 4) * rng.standard_normal(24)
    # Frame 3: 3D frame with horizontal members (one in the X-Z plane) and a vertical one with local_z.
    c3 = np.array([[0.0, 0.0, 0.0], [4.1, 0.0, 0.0], [4.1, 0.0, 2.6], [1.3, 2.9, 2.6], [1.3, 2.9, 0.0]])
    sec_a = {"E": 2.1e11, "nu": 0.3, "A": 3.9e-3, "I_y": 2.8e-5, "I_z": 8.6e-6, "J": 1.9e-6, "I_rho": 3.66e-5}
    e3 = [
        dict(sec_a, node_i=0, node_j=3),
        dict(sec_a, node_i=1, node_j=2, local_z=[1.0, 0.0, 0.0]),
        {"node_i": 3, "node_j": 2, "E": 2.1e11, "nu": 0.3, "A": 2.7e-3, "I_y": 1.2e-5, "I_z": 3.4e-5,
         "J": 1.1e-6, "I_rho": 4.6e-5},
        {"node_i": 0, "node_j": 2, "E": 2.1e11, "nu": 0.29, "A": 2.1e-3, "I_y": 7.3e-6, "I_z": 5.1e-6,
         "J": 2.2e-6, "I_rho": 1.24e-5},
    ]
    u3 = np.tile(scale_dofs, 5) * rng.standard_normal(30)
    # Frame 4: coincident nodes in the second element -> ValueError.
    c4 = np.array([[0.0, 0.0, 0.0], [1.5, 0.8, 0.4], [1.5, 0.8, 0.4]])
    sec_b = {"E": 2.1e11, "nu": 0.3, "A": 1e-3, "I_y": 2e-6, "I_z": 3e-6, "J": 1e-6, "I_rho": 5e-6}
    e4 = [dict(sec_b, node_i=0, node_j=1), dict(sec_b, node_i=1, node_j=2)]
    u4 = np.tile(scale_dofs, 3) * rng.standard_normal(18)
    return {
        "task_id": "MSA_3D_assemble_global_geometric_stiffness_CC1_H4_T2",
        "task_short_description": "assemble the global geometric stiffness of a 3D beam frame from a displacement state",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": assemble_global_geometric_stiffness_3D,
        "required_imports": [
            "import numpy as np",
            "import pytest",
            "from typing import Optional, Sequence",
        ],
        "fcn_dependencies": [local_geometric_stiffness_matrix_3D_beam],
        "reference_verification_inputs": [
            [c1, e1, u1],
            [c2, e2, u2],
            [c3, e3, u3],
            [c4, e4, u4],
        ],
        "test_cases": [
            {
                "test_code": test_symmetric_linear_and_translation_invariant,
                "expected_failures": [
                    fail_geometric_matrix_upper_triangle_only,
                    fail_overwrites_instead_of_adding,
                ],
            },
            {
                "test_code": test_rigid_body_displacement_gives_zero,
                "expected_failures": [fail_forces_from_untransformed_displacements],
            },
            {
                "test_code": test_single_member_closed_forms,
                "expected_failures": [
                    fail_axial_force_from_node_1,
                    fail_torsion_constant_for_polar_moment,
                    fail_geometric_matrix_not_rotated,
                    fail_forces_from_untransformed_displacements,
                    fail_bending_moments_y_z_swapped,
                ],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["node_coords"], "draw": "affine", "dimensions": 3, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["elements"], "keys": ["E", "A", "I_y", "I_z", "J", "I_rho"], "draw": "scale", "low": 0.5, "high": 2.0},
                {"arguments": ["elements"], "keys": ["nu"], "draw": "uniform", "low": 0.2, "high": 0.4},
                {"arguments": ["u_global"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
            ],
        },
    }

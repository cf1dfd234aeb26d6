import numpy as np
import pytest
from typing import Dict, Optional, Sequence, Tuple
import scipy.linalg


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


def assemble_global_load_vector_3D(
    nodal_loads: Dict[int, Sequence[float]], n_nodes: int
) -> np.ndarray:
    """
    Assemble the global nodal load vector of a 3D frame with six degrees of
    freedom per node.

    Parameters
    ----------
    nodal_loads : dict {int: sequence of 6 floats}
        Maps a zero-based node index n to the loads applied at that node,
        [F_x, F_y, F_z, M_x, M_y, M_z] in global coordinates (forces along and
        moments about the global axes). The sequence may be a list, tuple or 1-D
        np.ndarray. Nodes that do not appear carry no load. The dict may list
        nodes in any order. The input is not modified.
    n_nodes : int
        Total number of nodes N in the model.

    Returns
    -------
    np.ndarray of shape (6*N,), dtype float
        Global load vector P. The load component c (0..5) of node n sits at
        index 6*n + c, i.e. per node [F_x, F_y, F_z, M_x, M_y, M_z] in node
        order. All other entries are zero.

    Raises
    ------
    ValueError
        If a node index is outside 0 <= n < N (negative indices are not
        accepted), or if a load is not a one-dimensional sequence of exactly 6
        values.
    """
    P = np.zeros(6 * n_nodes)
    for node, load in nodal_loads.items():
        if node < 0 or node >= n_nodes:
            raise ValueError(f"Node index {node} is out of range for {n_nodes} nodes.")
        values = np.asarray(load, dtype=float)
        if values.shape != (6,):
            raise ValueError(f"Load at node {node} must have 6 components, got shape {values.shape}.")
        P[6 * node : 6 * node + 6] = values
    return P


def partition_degrees_of_freedom_3D(
    boundary_conditions: Dict[int, Sequence[int]], n_nodes: int
) -> Tuple[np.ndarray, np.ndarray]:
    """
    Split the global degrees of freedom of a 3D frame (six per node) into
    fixed (supported) and free sets.

    Global DOF numbering: DOF c (0..5) of node n is 6*n + c, with the per-node
    order [u_x, u_y, u_z, theta_x, theta_y, theta_z].

    Parameters
    ----------
    boundary_conditions : dict {int: sequence of 6 flags}
        Maps a zero-based node index n to six flags (0/1 ints or bools; list,
        tuple or 1-D np.ndarray), one per DOF in the order above. A truthy flag
        (1 / True) means that DOF is fixed, 0 / False means it is free. Nodes
        not in the dict are entirely free. The dict may list nodes in any order.
    n_nodes : int
        Total number of nodes N in the model.

    Returns
    -------
    (fixed, free) : tuple of two 1-D np.ndarray of integer dtype
        fixed: global indices of the fixed DOFs, sorted ascending.
        free: global indices of all remaining DOFs in 0 .. 6N-1, sorted ascending.
        Together they cover every DOF exactly once; either may be empty
        (shape (0,)).

    Raises
    ------
    ValueError
        If a node index is outside 0 <= n < N (negative indices are not
        accepted), or if a node's flags are not a one-dimensional sequence of
        exactly 6 values.
    """
    is_fixed = np.zeros(6 * n_nodes, dtype=bool)
    for node, flags in boundary_conditions.items():
        if node < 0 or node >= n_nodes:
            raise ValueError(f"Node index {node} is out of range for {n_nodes} nodes.")
        flag_array = np.asarray(flags)
        if flag_array.shape != (6,):
            raise ValueError(f"Boundary condition of node {node} must have 6 flags, got shape {flag_array.shape}.")
        is_fixed[6 * node : 6 * node + 6] = flag_array.astype(bool)
    # flatnonzero returns ascending indices, so both sets come out sorted.
    fixed = np.flatnonzero(is_fixed)
    free = np.flatnonzero(~is_fixed)
    return fixed, free


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


def linear_solve_3D(
    P_global: np.ndarray, K_global: np.ndarray, boundary_conditions: dict, n_nodes: int
) -> tuple:
    """
    Solve the linear static problem K u = P + r of a supported 3D frame.

    The DOFs are split into fixed (s) and free (f) sets from the boundary
    conditions (6 DOFs per node [u_x, u_y, u_z, theta_x, theta_y, theta_z],
    global index 6*n + c, both sets sorted). The free displacements solve
    K_ff u_f = P_f; fixed displacements are zero. The support reactions are
    r_s = K_sf u_f - P_s (forces and moments the supports exert on the
    structure, so that K u = P + r) and r is zero at every free DOF.

    Parameters
    ----------
    P_global : np.ndarray, shape (6N,)
        Global load vector (loads at fixed DOFs are allowed).
    K_global : np.ndarray, shape (6N, 6N)
        Global stiffness matrix.
    boundary_conditions : dict {int: sequence of 6 flags}
        Node index -> six 0/1 flags, 1 = DOF fixed; nodes not listed are free.
    n_nodes : int
        Number of nodes N.

    Returns
    -------
    (u, nodal_reaction_forces) : tuple of np.ndarray, each shape (6N,)

    Raises
    ------
    ValueError
        If K_ff is ill-conditioned: np.linalg.cond(K_ff) >= 1e16 (unsupported
        structure or mechanism).
    """
    P_global = np.asarray(P_global, dtype=float)
    K_global = np.asarray(K_global, dtype=float)
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    K_ff = K_global[np.ix_(free, free)]
    if np.linalg.cond(K_ff) >= 1e16:
        raise ValueError("free-free stiffness matrix is ill-conditioned (structure not properly supported)")
    u = np.zeros(6 * n_nodes)
    u[free] = np.linalg.solve(K_ff, P_global[free])
    r = np.zeros(6 * n_nodes)
    r[fixed] = K_global[np.ix_(fixed, free)] @ u[free] - P_global[fixed]
    return u, r


def eigenvalue_analysis_3D(
    K_e_global: np.ndarray, K_g_global: np.ndarray, boundary_conditions: dict, n_nodes: int
) -> tuple:
    """
    Elastic critical load factor and buckling mode from elastic and geometric stiffness.

    With the DOFs split into fixed and free sets from the boundary conditions
    (6 DOFs per node, global index 6*n + c, sets sorted), solve the generalized
    eigenproblem on the free DOFs

        K_e_ff phi = -lam K_g_ff phi

    with a general (non-symmetric) solver, e.g. scipy.linalg.eig(K_e_ff, -K_g_ff);
    K_g_ff may be singular or non-symmetric. Keep only eigenvalues that are
    finite, real (|Im lam| <= 1e-8 |Re lam|) and strictly positive (Re lam > 0);
    the critical load factor is the smallest kept one.

    Parameters
    ----------
    K_e_global : np.ndarray, shape (6N, 6N)
        Global elastic stiffness matrix.
    K_g_global : np.ndarray, shape (6N, 6N)
        Global geometric stiffness matrix for the reference load.
    boundary_conditions : dict {int: sequence of 6 flags}
        Node index -> six 0/1 flags, 1 = DOF fixed; nodes not listed are free.
    n_nodes : int
        Number of nodes N.

    Returns
    -------
    (lam, mode) : tuple
        lam : float, smallest positive real eigenvalue.
        mode : np.ndarray, shape (6N,), real part of its eigenvector on the free
        DOFs and zero at the fixed DOFs. Defined only up to a nonzero scale
        factor (sign included), any scaling is accepted; the reference scales
        it so that its entry of largest magnitude equals +1.

    Raises
    ------
    ValueError
        If K_e_ff is ill-conditioned (np.linalg.cond(K_e_ff) >= 1e16) or no
        eigenvalue passes the filter.
    """
    K_e_global = np.asarray(K_e_global, dtype=float)
    K_g_global = np.asarray(K_g_global, dtype=float)
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    K_e_ff = K_e_global[np.ix_(free, free)]
    K_g_ff = K_g_global[np.ix_(free, free)]
    if np.linalg.cond(K_e_ff) >= 1e16:
        raise ValueError("free-free elastic stiffness is ill-conditioned (structure not properly supported)")
    # A singular K_g gives infinite (alpha/0) eigenvalues; they are filtered out below.
    with np.errstate(divide="ignore", invalid="ignore"):
        w, v = scipy.linalg.eig(K_e_ff, -K_g_ff)
    keep = np.isfinite(w) & (np.abs(w.imag) <= 1e-8 * np.abs(w.real)) & (w.real > 0.0)
    if not np.any(keep):
        raise ValueError("no positive real eigenvalue: the reference load does not cause buckling")
    candidates = np.flatnonzero(keep)
    idx = candidates[np.argmin(w.real[candidates])]
    mode = np.zeros(6 * n_nodes)
    mode[free] = np.real(v[:, idx])
    mode = mode / mode[np.argmax(np.abs(mode))]
    return float(w.real[idx]), mode


def elastic_critical_load_analysis_frame_3D(
    node_coords: np.ndarray,
    elements: list,
    boundary_conditions: dict,
    nodal_loads: dict,
) -> tuple:
    """
    Elastic critical load (linear buckling) analysis of a 3D frame of 2-node
    Euler-Bernoulli beam elements.

    The given nodal loads are a reference load pattern P. The function returns the
    elastic critical load factor lam (the frame buckles under lam * P) and the
    corresponding buckling mode.

    Parameters
    ----------
    node_coords : np.ndarray, shape (N, 3)
        Node coordinates [x, y, z]; node n is row n.
    elements : list of dict
        One dict per element with keys "node_i", "node_j" (int node indices),
        "E" (Young's modulus), "nu" (Poisson's ratio), "A" (area),
        "I_y", "I_z" (second moments of area about the local y and z axes),
        "J" (torsion constant), "I_rho" (polar moment of area, used by the
        geometric stiffness; required) and optionally "local_z" (sequence of 3
        floats or None: reference vector for the element's local z axis).
        Any consistent unit system.
    boundary_conditions : dict {int: sequence of 6 flags}
        Node index -> six 0/1 (or bool) flags for [u_x, u_y, u_z, theta_x,
        theta_y, theta_z]; 1 means that DOF is fixed (zero displacement).
        Nodes not in the dict are completely free.
    nodal_loads : dict {int: sequence of 6 floats}
        Node index -> [F_x, F_y, F_z, M_x, M_y, M_z] in global axes (reference
        load pattern). Nodes not in the dict are unloaded.

    Returns
    -------
    (lam, mode) : tuple
        lam : float, the smallest strictly positive critical load factor.
        mode : np.ndarray, shape (6N,), the buckling mode in global DOFs (zero at
        every fixed DOF). A mode is defined only up to a nonzero scale factor
        (sign included): any scaling is accepted. The reference scales it so
        that its entry of largest magnitude equals +1.

    Raises
    ------
    ValueError
        If an element has zero length, an element's "local_z" is not unit length
        or is parallel to the element axis (tolerances below), the free-free
        elastic stiffness is ill-conditioned (np.linalg.cond(K_e_ff) >= 1e16, e.g.
        an unsupported structure or a mechanism), or no eigenvalue passes the
        filter of step 4 (e.g. a frame loaded only in tension).

    Conventions
    -----------
    DOFs: 6 per node ordered [u_x, u_y, u_z, theta_x, theta_y, theta_z]; global
    DOF of node n, component c is 6*n + c. An element's 12 DOFs are node_i's six
    then node_j's six; local order [u1, v1, w1, thx1, thy1, thz1, u2, v2, w2,
    thx2, thy2, thz2] and local end forces [Fx1, Fy1, Fz1, Mx1, My1, Mz1, Fx2,
    Fy2, Fz2, Mx2, My2, Mz2] in the same order.

    Local axes: ex = (p_j - p_i) / L (error if L < 1e-12). Reference vector ref =
    the element's "local_z" when given (error if | |ref| - 1 | > 1e-6 or
    |ref x ex| < 1e-8); otherwise global Z = (0, 0, 1), or global Y = (0, 1, 0)
    for a vertical member (sqrt(ex_x^2 + ex_y^2) < 1e-8). ey = (ref x ex) / |ref x ex|,
    ez = ex x ey. R (3x3) has rows ex, ey, ez; Gamma (12x12) is block-diagonal
    with four copies of R, so u_local = Gamma @ u_global and an element's global
    stiffness is Gamma.T @ k_local @ Gamma.

    Local elastic stiffness k_local (12x12), G = E / (2 (1 + nu)); all entries not
    listed are zero:
      axial DOFs (0, 6): (E A / L) [[1, -1], [-1, 1]];
      torsion DOFs (3, 9): (G J / L) [[1, -1], [-1, 1]];
      DOFs (1, 5, 7, 11), bending in the local x-y plane, E I_z / L^3 times
        [[12, 6L, -12, 6L], [6L, 4L^2, -6L, 2L^2], [-12, -6L, 12, -6L], [6L, 2L^2, -6L, 4L^2]];
      DOFs (2, 4, 8, 10), bending in the local x-z plane, E I_y / L^3 times
        [[12, -6L, -12, -6L], [-6L, 4L^2, 6L, 2L^2], [-12, 6L, 12, 6L], [-6L, 2L^2, 6L, 4L^2]].

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

    Procedure
    1. Assemble the global elastic stiffness K_e (sum of Gamma.T @ k_local @ Gamma
       over the elements) and the global load vector P (6N,).
    2. Partition the DOFs into fixed and free (both sorted ascending) and solve
       the linear static problem K_e_ff u_f = P_f (ValueError if
       np.linalg.cond(K_e_ff) >= 1e16); u = 0 at the fixed DOFs.
    3. For every element, local end forces f = k_local @ (Gamma @ u_e) with u_e
       the element's 12 global displacements; k_g from L, A, I_rho and
       Fx2 = f[6], Mx2 = f[9], My1 = f[4], Mz1 = f[5], My2 = f[10], Mz2 = f[11];
       assemble K_g = sum of Gamma.T @ k_g @ Gamma.
    4. Solve the generalized eigenproblem K_e_ff phi = -lam K_g_ff phi on the free
       DOFs with a general (non-symmetric) solver such as
       scipy.linalg.eig(K_e_ff, -K_g_ff); K_g_ff may be singular. Keep only the
       eigenvalues that are finite, real (|Im lam| <= 1e-8 |Re lam|) and strictly
       positive (Re lam > 0); lam is the smallest kept one and phi the real part
       of its eigenvector, scattered into the free DOFs of mode.
    """
    node_coords = np.asarray(node_coords, dtype=float)
    n_nodes = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n_nodes)
    K_e = assemble_global_stiffness_matrix_3D(node_coords, elements)
    # Linear static state under the reference load: its internal forces drive K_g.
    u, _ = linear_solve_3D(P, K_e, boundary_conditions, n_nodes)
    K_g = assemble_global_geometric_stiffness_3D(node_coords, elements, u)
    return eigenvalue_analysis_3D(K_e, K_g, boundary_conditions, n_nodes)


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

def test_euler_buckling_cantilever_column(fcn):
    """Euler buckling of a cantilever column: a vertical column (base fully fixed,
    8 equal elements, length 4, I_y < I_z) under an axial tip compression P must give
    lam * P = pi^2 E min(I_y, I_z) / (4 L^2) within 0.1 %. The mode must bend about the
    weak axis: with the default local axes of a vertical member (local z = global Y)
    the tip moves along global Y and not along X; when every element is given
    local_z = global X the weak-axis deflection must be along global X instead. The mode
    has shape (6N,) and is zero at the fixed base DOFs."""
    n_el, L, E, P = 8, 4.0, 200e9, 1000.0
    Iy, Iz = 1.5e-6, 4.0e-6
    coords = np.array([[0.0, 0.0, L * k / n_el] for k in range(n_el + 1)])
    base = dict(E=E, nu=0.3, A=2.0e-3, I_y=Iy, I_z=Iz, J=1.0e-6, I_rho=Iy + Iz)
    expected = np.pi ** 2 * E * min(Iy, Iz) / (4.0 * L ** 2)
    tip = 6 * n_el
    for local_z, lateral in [(None, 1), ([1.0, 0.0, 0.0], 0)]:
        elements = [dict(base, node_i=k, node_j=k + 1, local_z=local_z) for k in range(n_el)]
        lam, mode = fcn(coords, elements, {0: [1, 1, 1, 1, 1, 1]}, {n_el: [0.0, 0.0, -P, 0.0, 0.0, 0.0]})
        assert np.isclose(lam * P, expected, rtol=1e-3)
        mode = np.asarray(mode, dtype=float)
        assert mode.shape == (6 * (n_el + 1),)
        assert np.allclose(mode[:6], 0.0)
        other = 1 - lateral
        assert abs(mode[tip + other]) < 1e-6 * abs(mode[tip + lateral])


def test_load_factor_scaling(fcn):
    """Linearity in the reference load: for a 3D L-frame (fixed column base, pinned far
    end) under a mixed load pattern, doubling every nodal load must halve the critical
    load factor, scaling the loads by 0.25 must multiply it by 4, and the buckling mode
    must be unchanged up to scale (|cosine| between the modes = 1). The mode must be zero
    at the fixed DOFs."""
    coords = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 3.0], [2.5, 1.0, 3.0], [2.0, 2.6, 2.1]])
    col = dict(E=210e9, nu=0.3, A=4e-3, I_y=3e-6, I_z=7e-6, J=1.5e-6, I_rho=1e-5)
    beam = dict(E=210e9, nu=0.3, A=3e-3, I_y=2e-6, I_z=5e-6, J=1.0e-6, I_rho=7e-6)
    elements = [dict(col, node_i=0, node_j=1), dict(beam, node_i=1, node_j=2),
                dict(beam, node_i=2, node_j=3)]
    bcs = {0: [1, 1, 1, 1, 1, 1], 3: [1, 1, 1, 0, 0, 0]}
    loads = {1: [1500.0, -800.0, -60000.0, 200.0, 0.0, -300.0], 2: [-500.0, 1200.0, -40000.0, 0.0, 400.0, 0.0]}
    lam1, mode1 = fcn(coords, elements, bcs, loads)
    for factor in (2.0, 0.25):
        scaled = {n: [factor * v for v in vals] for n, vals in loads.items()}
        lam2, mode2 = fcn(coords, elements, bcs, scaled)
        assert np.isclose(lam2, lam1 / factor, rtol=1e-8)
        m1, m2 = np.asarray(mode1, dtype=float), np.asarray(mode2, dtype=float)
        cos = abs(m1 @ m2) / (np.linalg.norm(m1) * np.linalg.norm(m2))
        assert np.isclose(cos, 1.0, atol=1e-8)
    fixed = [0, 1, 2, 3, 4, 5, 18, 19, 20]
    assert np.allclose(np.asarray(mode1)[fixed], 0.0)


def test_invalid_problems_raise(fcn):
    """ValueError for problems without a buckling answer: a frame with no supports at
    all (singular elastic stiffness) and a cantilever column loaded only in axial
    tension (no positive critical load factor)."""
    coords = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.5], [0.0, 0.0, 3.0]])
    props = dict(E=200e9, nu=0.3, A=2e-3, I_y=1.5e-6, I_z=4e-6, J=1e-6, I_rho=5.5e-6)
    elements = [dict(props, node_i=0, node_j=1), dict(props, node_i=1, node_j=2)]
    with pytest.raises(ValueError):
        fcn(coords, elements, {}, {2: [0.0, 0.0, -1000.0, 0.0, 0.0, 0.0]})
    with pytest.raises(ValueError):
        fcn(coords, elements, {0: [1, 1, 1, 1, 1, 1]}, {2: [0.0, 0.0, 1000.0, 0.0, 0.0, 0.0]})


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------

def fail_eigenproblem_sign_flipped(node_coords, elements, boundary_conditions, nodal_loads):
    """Solves K_e phi = +lam K_g phi: compression then gives negative eigenvalues."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n)
    K_e = assemble_global_stiffness_matrix_3D(node_coords, elements)
    u, _ = linear_solve_3D(P, K_e, boundary_conditions, n)
    K_g = assemble_global_geometric_stiffness_3D(node_coords, elements, u)
    return eigenvalue_analysis_3D(K_e, -K_g, boundary_conditions, n)


def fail_axial_force_sign(node_coords, elements, boundary_conditions, nodal_loads):
    """Takes Fx2 with compression positive (f[0] instead of f[6])."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n)
    K_e = assemble_global_stiffness_matrix_3D(node_coords, elements)
    u, _ = linear_solve_3D(P, K_e, boundary_conditions, n)
    K_g = np.zeros_like(K_e)
    for ele in elements:
        i, j = ele["node_i"], ele["node_j"]
        dofs = np.r_[6 * i: 6 * i + 6, 6 * j: 6 * j + 6]
        f = compute_local_element_loads_3D(ele, *node_coords[i], *node_coords[j], u[dofs])
        L = np.linalg.norm(node_coords[j] - node_coords[i])
        k_g = local_geometric_stiffness_matrix_3D_beam(L, ele["A"], ele["I_rho"], f[0], f[9], f[4], f[5], f[10], f[11])
        G = beam_transformation_matrix_3D(*node_coords[i], *node_coords[j], ele.get("local_z"))
        K_g[np.ix_(dofs, dofs)] += G.T @ k_g @ G
    return eigenvalue_analysis_3D(K_e, K_g, boundary_conditions, n)


def fail_geometric_stiffness_not_rotated(node_coords, elements, boundary_conditions, nodal_loads):
    """Adds the local geometric stiffness to the global matrix without Gamma.T @ k_g @ Gamma."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n)
    K_e = assemble_global_stiffness_matrix_3D(node_coords, elements)
    u, _ = linear_solve_3D(P, K_e, boundary_conditions, n)
    K_g = np.zeros_like(K_e)
    for ele in elements:
        i, j = ele["node_i"], ele["node_j"]
        dofs = np.r_[6 * i: 6 * i + 6, 6 * j: 6 * j + 6]
        f = compute_local_element_loads_3D(ele, *node_coords[i], *node_coords[j], u[dofs])
        L = np.linalg.norm(node_coords[j] - node_coords[i])
        K_g[np.ix_(dofs, dofs)] += local_geometric_stiffness_matrix_3D_beam(
            L, ele["A"], ele["I_rho"], f[6], f[9], f[4], f[5], f[10], f[11])
    return eigenvalue_analysis_3D(K_e, K_g, boundary_conditions, n)


def fail_bending_inertias_swapped(node_coords, elements, boundary_conditions, nodal_loads):
    """Uses I_y for bending in the local x-y plane and I_z in the x-z plane."""
    swapped = [dict(e, I_y=e["I_z"], I_z=e["I_y"]) for e in elements]
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n)
    K_e = assemble_global_stiffness_matrix_3D(node_coords, swapped)
    u, _ = linear_solve_3D(P, K_e, boundary_conditions, n)
    K_g = assemble_global_geometric_stiffness_3D(node_coords, swapped, u)
    return eigenvalue_analysis_3D(K_e, K_g, boundary_conditions, n)


def fail_returns_critical_load(node_coords, elements, boundary_conditions, nodal_loads):
    """Returns the critical load magnitude lam * |P| instead of the load factor."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n)
    K_e = assemble_global_stiffness_matrix_3D(node_coords, elements)
    u, _ = linear_solve_3D(P, K_e, boundary_conditions, n)
    K_g = assemble_global_geometric_stiffness_3D(node_coords, elements, u)
    lam, mode = eigenvalue_analysis_3D(K_e, K_g, boundary_conditions, n)
    return lam * float(np.linalg.norm(P)), mode


def fail_largest_eigenvalue(node_coords, elements, boundary_conditions, nodal_loads):
    """Picks the largest positive eigenvalue instead of the smallest."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n)
    K_e = assemble_global_stiffness_matrix_3D(node_coords, elements)
    u, _ = linear_solve_3D(P, K_e, boundary_conditions, n)
    K_g = assemble_global_geometric_stiffness_3D(node_coords, elements, u)
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n)
    w, v = scipy.linalg.eig(K_e[np.ix_(free, free)], -K_g[np.ix_(free, free)])
    ok = np.flatnonzero(np.isfinite(w) & (w.real > 0) & (np.abs(w.imag) <= 1e-8 * np.abs(w.real)))
    if ok.size == 0:
        raise ValueError("no positive eigenvalue")
    idx = ok[np.argmax(w.real[ok])]
    mode = np.zeros(6 * n)
    mode[free] = v[:, idx].real
    return float(w.real[idx]), mode


def fail_geometric_axial_coefficient(node_coords, elements, boundary_conditions, nodal_loads):
    """Geometric stiffness with the transverse term Fx2/L instead of 6 Fx2/(5 L)."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n)
    K_e = assemble_global_stiffness_matrix_3D(node_coords, elements)
    u, _ = linear_solve_3D(P, K_e, boundary_conditions, n)
    K_g = np.zeros_like(K_e)
    for ele in elements:
        i, j = ele["node_i"], ele["node_j"]
        dofs = np.r_[6 * i: 6 * i + 6, 6 * j: 6 * j + 6]
        f = compute_local_element_loads_3D(ele, *node_coords[i], *node_coords[j], u[dofs])
        L = np.linalg.norm(node_coords[j] - node_coords[i])
        k_g = local_geometric_stiffness_matrix_3D_beam(L, ele["A"], ele["I_rho"], f[6], f[9], f[4], f[5], f[10], f[11])
        for a, b in [(1, 1), (2, 2), (7, 7), (8, 8), (1, 7), (7, 1), (2, 8), (8, 2)]:
            k_g[a, b] *= 5.0 / 6.0
        G = beam_transformation_matrix_3D(*node_coords[i], *node_coords[j], ele.get("local_z"))
        K_g[np.ix_(dofs, dofs)] += G.T @ k_g @ G
    return eigenvalue_analysis_3D(K_e, K_g, boundary_conditions, n)


def fail_no_support_check(node_coords, elements, boundary_conditions, nodal_loads):
    """Never checks conditioning: least-squares static solve and no cond test before eig."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n)
    K_e = assemble_global_stiffness_matrix_3D(node_coords, elements)
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n)
    u = np.zeros(6 * n)
    u[free] = np.linalg.lstsq(K_e[np.ix_(free, free)], P[free], rcond=None)[0]
    K_g = assemble_global_geometric_stiffness_3D(node_coords, elements, u)
    w, v = scipy.linalg.eig(K_e[np.ix_(free, free)], -K_g[np.ix_(free, free)])
    ok = np.flatnonzero(np.isfinite(w))
    if ok.size == 0:
        return 0.0, np.zeros(6 * n)
    idx = ok[np.argmin(np.abs(w[ok]))]
    mode = np.zeros(6 * n)
    mode[free] = v[:, idx].real
    return float(abs(w[idx])), mode


# ---------------------------------------------------------------------------
# Task metadata
# ---------------------------------------------------------------------------

def task_info():
    steel_col = {"E": 2.1e11, "nu": 0.3, "A": 4.5e-3, "I_y": 3.4e-6, "I_z": 8.6e-6, "J": 1.8e-6, "I_rho": 1.2e-5}
    skew_sec = {"E": 2.1e11, "nu": 0.29, "A": 3.2e-3, "I_y": 2.6e-6, "I_z": 7.9e-6, "J": 1.1e-6, "I_rho": 1.05e-5}
    l_col = {"E": 2.0e11, "nu": 0.3, "A": 5.0e-3, "I_y": 4.1e-6, "I_z": 9.3e-6, "J": 2.2e-6, "I_rho": 1.34e-5}
    l_beam = {"E": 2.0e11, "nu": 0.3, "A": 3.8e-3, "I_y": 2.9e-6, "I_z": 6.4e-6, "J": 1.5e-6, "I_rho": 9.3e-6}
    p_col = {"E": 2.05e11, "nu": 0.3, "A": 6.0e-3, "I_y": 5.2e-6, "I_z": 1.37e-5, "J": 3.1e-6, "I_rho": 1.89e-5}
    p_beam = {"E": 2.05e11, "nu": 0.3, "A": 4.4e-3, "I_y": 3.3e-6, "I_z": 1.1e-5, "J": 1.9e-6, "I_rho": 1.43e-5}

    # Cantilever column, base offset from the origin, unequal element lengths;
    # axial compression plus lateral loads and a tip torque (moments enter K_g).
    column_coords = np.array([[0.25, -0.4, 0.1], [0.25, -0.4, 0.9], [0.25, -0.4, 1.8],
                              [0.25, -0.4, 2.6], [0.25, -0.4, 3.4]])
    column_elements = [dict(steel_col, node_i=k, node_j=k + 1) for k in range(4)]
    column = [column_coords, column_elements, {0: [1, 1, 1, 1, 1, 1]},
              {4: [350.0, -220.0, -52000.0, 180.0, -95.0, 140.0], 2: [0.0, 400.0, 0.0, 0.0, 0.0, 0.0]}]

    # Skew cantilever along (0.48, -0.6, 0.64), compressed along its axis; the middle
    # element has an explicit local_z; the fixed base node also carries a load.
    skew_coords = np.array([[0.35, -0.2, 0.15], [0.7388, -0.686, 0.6684],
                            [1.1924, -1.253, 1.2732], [1.646, -1.82, 1.878]])
    skew_elements = [dict(skew_sec, node_i=0, node_j=1),
                     dict(skew_sec, node_i=1, node_j=2, local_z=[0.8, 0.6, 0.0]),
                     dict(skew_sec, node_i=2, node_j=3, local_z=None)]
    skew = [skew_coords, skew_elements, {0: [1, 1, 1, 1, 1, 1]},
            {3: [-18900.0, 24250.0, -25600.0, 150.0, -220.0, 310.0],
             1: [0.0, 500.0, 0.0, 0.0, 0.0, -90.0], 0: [300.0, 0.0, -200.0, 0.0, 40.0, 0.0]}]

    # 3D L-frame: vertical column, horizontal skew beam (explicit local_z) and an
    # inclined member to a pinned support.
    l_coords = np.array([[0.1, 0.2, 0.0], [0.1, 0.2, 3.1], [2.3, 1.4, 3.1], [1.9, 2.8, 2.2]])
    l_elements = [dict(l_col, node_i=0, node_j=1),
                  dict(l_beam, node_i=1, node_j=2, local_z=[0.0, 0.6, 0.8]),
                  dict(l_beam, node_i=2, node_j=3)]
    l_frame = [l_coords, l_elements, {0: [1, 1, 1, 1, 1, 1], 3: [1, 1, 1, 0, 0, 0]},
               {1: [2000.0, -1500.0, -80000.0, 300.0, 0.0, -450.0],
                2: [-700.0, 2500.0, -50000.0, 0.0, 600.0, 200.0], 0: [0.0, 0.0, -1000.0, 0.0, 0.0, 0.0]}]

    # 3D portal frame 4.2 x 3.1 x 3.6: two fixed and two pinned bases, one beam with
    # a tilted section (local_z), gravity plus lateral loads and moments; loads large
    # enough that the critical factor is below 1.
    plan = [(0.4, 0.3), (4.6, 0.3), (4.6, 3.4), (0.4, 3.4)]
    portal_coords = np.array([[x, y, 0.0] for x, y in plan] + [[x, y, 3.6] for x, y in plan])
    portal_elements = [dict(p_col, node_i=k, node_j=k + 4) for k in range(4)]
    portal_elements += [dict(p_beam, node_i=4 + k, node_j=4 + (k + 1) % 4) for k in range(4)]
    portal_elements[4]["local_z"] = [0.0, -0.6, 0.8]
    portal = [portal_coords, portal_elements,
              {0: [1, 1, 1, 1, 1, 1], 2: [1, 1, 1, 1, 1, 1], 1: [1, 1, 1, 0, 0, 0], 3: [1, 1, 1, 0, 0, 0]},
              {4: [9000.0, 3600.0, -450000.0, 0.0, 0.0, 1500.0], 5: [0.0, 5400.0, -360000.0, 1200.0, 0.0, 0.0],
               6: [-2700.0, 0.0, -540000.0, 0.0, -900.0, 0.0], 7: [4500.0, -1800.0, -270000.0, 0.0, 0.0, 0.0],
               1: [0.0, 0.0, 0.0, 0.0, 0.0, 750.0], 0: [300.0, 0.0, 0.0, 0.0, 0.0, 0.0]}]

    # Pure axial tension: no positive load factor -> ValueError.
    tension = [column_coords, column_elements, {0: [1, 1, 1, 1, 1, 1]},
               {4: [0.0, 0.0, 52000.0, 0.0, 0.0, 0.0]}]

    return {
        "task_id": "MSA_3D_elastic_critical_load_CC1_H10_T1",
        "task_short_description": "elastic critical load factor and buckling mode of a 3D frame",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": elastic_critical_load_analysis_frame_3D,
        "required_imports": ["import numpy as np", "import scipy.linalg", "import pytest",
                             "from typing import Dict, Optional, Sequence, Tuple"],
        "fcn_dependencies": [
            local_elastic_stiffness_matrix_3D_beam,
            beam_transformation_matrix_3D,
            local_geometric_stiffness_matrix_3D_beam,
            assemble_global_load_vector_3D,
            partition_degrees_of_freedom_3D,
            compute_local_element_loads_3D,
            assemble_global_stiffness_matrix_3D,
            assemble_global_geometric_stiffness_3D,
            linear_solve_3D,
            eigenvalue_analysis_3D,
        ],
        "reference_verification_inputs": [column, skew, l_frame, portal, tension],
        "test_cases": [
            {"test_code": test_euler_buckling_cantilever_column,
             "expected_failures": [fail_eigenproblem_sign_flipped, fail_axial_force_sign,
                                   fail_geometric_stiffness_not_rotated, fail_bending_inertias_swapped,
                                   fail_returns_critical_load, fail_largest_eigenvalue,
                                   fail_geometric_axial_coefficient]},
            {"test_code": test_load_factor_scaling,
             "expected_failures": [fail_returns_critical_load]},
            {"test_code": test_invalid_problems_raise,
             "expected_failures": [fail_no_support_check]},
        ],
        "comparison": {"rules": [{"path": [1], "invariance": "scale"}]},
        "fresh_inputs": {
            "draws": [
                {"arguments": ["node_coords"], "draw": "affine", "dimensions": 3, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["elements"], "keys": ["E", "A", "I_y", "I_z", "J", "I_rho"], "draw": "scale", "low": 0.5, "high": 2.0},
                {"arguments": ["elements"], "keys": ["nu"], "draw": "uniform", "low": 0.2, "high": 0.4},
                {"arguments": ["nodal_loads"], "draw": "scale", "low": 0.5, "high": 2.0},
            ],
            "fixed": {"boundary_conditions": "the supports keep the frame stable; the published inputs include an unsupported one"},
        },
    }

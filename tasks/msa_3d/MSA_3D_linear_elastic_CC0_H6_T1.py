import numpy as np
import pytest
from typing import Dict, Optional, Sequence, Tuple


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


def solve_linear_elastic_frame_3D(
    node_coords: np.ndarray,
    elements: list,
    boundary_conditions: dict,
    nodal_loads: dict,
) -> tuple:
    """
    Linear static analysis of a 3D frame of 2-node Euler-Bernoulli beam elements.

    Parameters
    ----------
    node_coords : np.ndarray, shape (N, 3)
        Node coordinates [x, y, z]; node n is row n.
    elements : list of dict
        One dict per element with keys "node_i", "node_j" (int node indices),
        "E" (Young's modulus), "nu" (Poisson's ratio), "A" (area),
        "I_y", "I_z" (second moments of area about the local y and z axes),
        "J" (torsion constant) and optionally "local_z" (sequence of 3 floats
        or None: reference vector for the element's local z axis). Other keys
        (e.g. "I_rho") are ignored. Any consistent unit system.
    boundary_conditions : dict {int: sequence of 6 flags}
        Node index -> six 0/1 (or bool) flags for [u_x, u_y, u_z, theta_x,
        theta_y, theta_z]; 1 means that DOF is fixed (zero displacement).
        Nodes not in the dict are completely free.
    nodal_loads : dict {int: sequence of 6 floats}
        Node index -> [F_x, F_y, F_z, M_x, M_y, M_z] in global axes. Nodes not
        in the dict are unloaded; loads on fixed DOFs are allowed.

    Returns
    -------
    (u, r) : tuple of np.ndarray, each shape (6N,)
        u : global displacements and rotations (zero at every fixed DOF).
        r : support reactions in global axes, r_s = K_sf u_f - P_s at the fixed
        DOFs (the forces and moments the supports exert on the structure, so
        that K u = P + r and the reactions balance the applied loads) and zero
        at every free DOF.

    Raises
    ------
    ValueError
        If an element has zero length, an element's "local_z" is not unit length
        or is parallel to the element axis (tolerances below), or the free-free
        stiffness is ill-conditioned: np.linalg.cond(K_ff) >= 1e16 (an
        unsupported structure or a mechanism).

    Conventions
    -----------
    DOFs: 6 per node ordered [u_x, u_y, u_z, theta_x, theta_y, theta_z]; global
    DOF of node n, component c is 6*n + c. An element's 12 DOFs are node_i's six
    then node_j's six; local order [u1, v1, w1, thx1, thy1, thz1, u2, v2, w2,
    thx2, thy2, thz2].

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

    Procedure: assemble K = sum over elements of Gamma.T @ k_local @ Gamma and the
    load vector P (6N,); split the DOFs into fixed (s) and free (f) sets, both
    sorted ascending; solve K_ff u_f = P_f; r_s = K_sf u_f - P_s.
    """
    node_coords = np.asarray(node_coords, dtype=float)
    n_nodes = node_coords.shape[0]
    P = assemble_global_load_vector_3D(nodal_loads, n_nodes)
    K = assemble_global_stiffness_matrix_3D(node_coords, elements)
    return linear_solve_3D(P, K, boundary_conditions, n_nodes)


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

def test_cantilever_closed_form(fcn):
    """Closed-form cantilever responses, superposed, for a cantilever (4 equal elements,
    base fully fixed) lying along the skew direction (2, -1, 2)/3 with default local axes
    (ey = normalised Z x ex, ez = ex x ey) and a tip load with components Pa, Py, Pz along
    ex, ey, ez plus a torque T about ex: the tip must move Pa L/(EA) along ex,
    Py L^3/(3 E I_z) along ey and Pz L^3/(3 E I_y) along ez, and rotate T L/(G J) about ex,
    Py L^2/(2 E I_z) about ez and -Pz L^2/(2 E I_y) about ey, with G = E/(2(1+nu)).
    Second case: a cantilever along global X with local_z = (0, 0.6, 0.8) under a global
    Z tip load P must deflect -0.6 P L^3/(3 E I_z) along ey = (0, 0.8, -0.6) plus
    0.8 P L^3/(3 E I_y) along ez = (0, 0.6, 0.8)."""
    E, nu, A, Iy, Iz, J = 70e9, 0.33, 1.2e-3, 2.0e-7, 9.0e-7, 3.0e-7
    G = E / (2 * (1 + nu))
    props = dict(E=E, nu=nu, A=A, I_y=Iy, I_z=Iz, J=J)
    L, n_el = 2.4, 4
    ex = np.array([2.0, -1.0, 2.0]) / 3.0
    ey = np.cross([0.0, 0.0, 1.0], ex)
    ey /= np.linalg.norm(ey)
    ez = np.cross(ex, ey)
    base = np.array([0.3, 0.5, -0.2])
    coords = np.array([base + L * k / n_el * ex for k in range(n_el + 1)])
    elements = [dict(props, node_i=k, node_j=k + 1) for k in range(n_el)]
    Pa, Py, Pz, T = 900.0, -150.0, 80.0, 45.0
    force = Pa * ex + Py * ey + Pz * ez
    load = {n_el: list(force) + list(T * ex)}
    u, _ = fcn(coords, elements, {0: [1, 1, 1, 1, 1, 1]}, load)
    d, th = u[6 * n_el: 6 * n_el + 3], u[6 * n_el + 3: 6 * n_el + 6]
    assert np.isclose(d @ ex, Pa * L / (E * A), rtol=1e-8)
    assert np.isclose(d @ ey, Py * L ** 3 / (3 * E * Iz), rtol=1e-8)
    assert np.isclose(d @ ez, Pz * L ** 3 / (3 * E * Iy), rtol=1e-8)
    assert np.isclose(th @ ex, T * L / (G * J), rtol=1e-8)
    assert np.isclose(th @ ez, Py * L ** 2 / (2 * E * Iz), rtol=1e-8)
    assert np.isclose(th @ ey, -Pz * L ** 2 / (2 * E * Iy), rtol=1e-8)

    coords2 = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    elements2 = [dict(props, node_i=k, node_j=k + 1, local_z=[0.0, 0.6, 0.8]) for k in range(2)]
    P = 120.0
    u2, _ = fcn(coords2, elements2, {0: [1, 1, 1, 1, 1, 1]}, {2: [0.0, 0.0, P, 0.0, 0.0, 0.0]})
    L2 = 2.0
    expected = (-0.6 * P * L2 ** 3 / (3 * E * Iz) * np.array([0.0, 0.8, -0.6])
                + 0.8 * P * L2 ** 3 / (3 * E * Iy) * np.array([0.0, 0.6, 0.8]))
    assert np.allclose(u2[12:15], expected, rtol=1e-8, atol=1e-12)


def test_reaction_equilibrium(fcn):
    """Global equilibrium of a 3D portal frame (two fixed and two pinned column bases,
    loads at the top nodes and at one support node): displacements vanish at fixed DOFs,
    reactions vanish at free DOFs, the reaction forces plus the applied forces sum to zero,
    and the moments of reactions plus loads about the origin (sum of x_n cross F_n plus the
    nodal moments) sum to zero."""
    plan = [(0.0, 0.0), (5.0, 0.0), (5.0, 3.5), (0.0, 3.5)]
    coords = np.array([[x, y, 0.0] for x, y in plan] + [[x, y, 4.0] for x, y in plan])
    col = dict(E=200e9, nu=0.3, A=5e-3, I_y=4e-6, I_z=1.2e-5, J=2e-6)
    beam = dict(E=200e9, nu=0.3, A=4e-3, I_y=3e-6, I_z=9e-6, J=1.5e-6)
    elements = [dict(col, node_i=k, node_j=k + 4) for k in range(4)]
    elements += [dict(beam, node_i=4 + k, node_j=4 + (k + 1) % 4) for k in range(4)]
    bcs = {0: [1, 1, 1, 1, 1, 1], 1: [1, 1, 1, 0, 0, 0], 2: [1, 1, 1, 1, 1, 1], 3: [1, 1, 1, 0, 0, 0]}
    loads = {4: [5000.0, -2000.0, -30000.0, 0.0, 800.0, 0.0], 6: [0.0, 3000.0, -20000.0, -500.0, 0.0, 1200.0],
             7: [-1500.0, 0.0, -10000.0, 0.0, 0.0, 0.0], 1: [700.0, 400.0, -900.0, 0.0, 0.0, 300.0]}
    u, r = fcn(coords, elements, bcs, loads)
    u, r = np.asarray(u), np.asarray(r)
    fixed = np.array([6 * n + c for n, f in bcs.items() for c in range(6) if f[c]])
    free = np.setdiff1d(np.arange(48), fixed)
    assert np.allclose(u[fixed], 0.0)
    assert np.allclose(r[free], 0.0)
    P = np.zeros(48)
    for n, vals in loads.items():
        P[6 * n: 6 * n + 6] = vals
    total = (P + r).reshape(8, 6)
    scale = np.abs(P).max()
    assert np.allclose(total[:, :3].sum(axis=0), 0.0, atol=1e-8 * scale)
    moment = np.cross(coords, total[:, :3]).sum(axis=0) + total[:, 3:].sum(axis=0)
    assert np.allclose(moment, 0.0, atol=1e-8 * scale)


def test_degenerate_frames_raise(fcn):
    """ValueError for degenerate input: a two-element frame with no supports at all
    (singular stiffness) and a frame containing a zero-length element."""
    coords = np.array([[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [3.0, 0.0, 0.0]])
    props = dict(E=200e9, nu=0.3, A=2e-3, I_y=1.5e-6, I_z=4e-6, J=1e-6)
    elements = [dict(props, node_i=0, node_j=1), dict(props, node_i=1, node_j=2)]
    with pytest.raises(ValueError):
        fcn(coords, elements, {}, {2: [0.0, 100.0, 0.0, 0.0, 0.0, 0.0]})
    coords_bad = np.array([[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [1.5, 0.0, 0.0]])
    with pytest.raises(ValueError):
        fcn(coords_bad, elements, {0: [1, 1, 1, 1, 1, 1]}, {2: [0.0, 100.0, 0.0, 0.0, 0.0, 0.0]})


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------

def fail_bending_inertias_swapped(node_coords, elements, boundary_conditions, nodal_loads):
    """Uses I_y for bending in the local x-y plane and I_z in the x-z plane."""
    swapped = [dict(e, I_y=e["I_z"], I_z=e["I_y"]) for e in elements]
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    K = assemble_global_stiffness_matrix_3D(node_coords, swapped)
    return linear_solve_3D(assemble_global_load_vector_3D(nodal_loads, n), K, boundary_conditions, n)


def fail_transformation_transposed(node_coords, elements, boundary_conditions, nodal_loads):
    """Rotates the element stiffness with Gamma @ k @ Gamma.T instead of Gamma.T @ k @ Gamma."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    K = np.zeros((6 * n, 6 * n))
    for e in elements:
        i, j = e["node_i"], e["node_j"]
        L = np.linalg.norm(node_coords[j] - node_coords[i])
        G = beam_transformation_matrix_3D(*node_coords[i], *node_coords[j], e.get("local_z"))
        k = local_elastic_stiffness_matrix_3D_beam(e["E"], e["nu"], e["A"], L, e["I_y"], e["I_z"], e["J"])
        dofs = np.r_[6 * i: 6 * i + 6, 6 * j: 6 * j + 6]
        K[np.ix_(dofs, dofs)] += G @ k @ G.T
    return linear_solve_3D(assemble_global_load_vector_3D(nodal_loads, n), K, boundary_conditions, n)


def fail_shear_modulus_missing_two(node_coords, elements, boundary_conditions, nodal_loads):
    """Takes G = E / (1 + nu) (torsional stiffness twice too large)."""
    doubled = [dict(e, J=2.0 * e["J"]) for e in elements]
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    K = assemble_global_stiffness_matrix_3D(node_coords, doubled)
    return linear_solve_3D(assemble_global_load_vector_3D(nodal_loads, n), K, boundary_conditions, n)


def fail_ignores_local_z(node_coords, elements, boundary_conditions, nodal_loads):
    """Always uses the default reference vector, ignoring the elements' local_z."""
    plain = [dict(e, local_z=None) for e in elements]
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    K = assemble_global_stiffness_matrix_3D(node_coords, plain)
    return linear_solve_3D(assemble_global_load_vector_3D(nodal_loads, n), K, boundary_conditions, n)


def fail_reaction_sign(node_coords, elements, boundary_conditions, nodal_loads):
    """Reports reactions with the opposite sign (P_s - K_sf u_f)."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    K = assemble_global_stiffness_matrix_3D(node_coords, elements)
    u, r = linear_solve_3D(assemble_global_load_vector_3D(nodal_loads, n), K, boundary_conditions, n)
    return u, -r


def fail_reactions_omit_applied_loads(node_coords, elements, boundary_conditions, nodal_loads):
    """Reactions K_sf u_f without subtracting loads applied directly at fixed DOFs."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    K = assemble_global_stiffness_matrix_3D(node_coords, elements)
    P = assemble_global_load_vector_3D(nodal_loads, n)
    u, r = linear_solve_3D(P, K, boundary_conditions, n)
    fixed, _ = partition_degrees_of_freedom_3D(boundary_conditions, n)
    r[fixed] += P[fixed]
    return u, r


def fail_no_support_check(node_coords, elements, boundary_conditions, nodal_loads):
    """Least-squares solve that never rejects a singular (unsupported) structure."""
    node_coords = np.asarray(node_coords, dtype=float)
    n = node_coords.shape[0]
    K = assemble_global_stiffness_matrix_3D(node_coords, elements)
    P = assemble_global_load_vector_3D(nodal_loads, n)
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n)
    u = np.zeros(6 * n)
    u[free] = np.linalg.lstsq(K[np.ix_(free, free)], P[free], rcond=None)[0]
    r = np.zeros(6 * n)
    r[fixed] = K[np.ix_(fixed, free)] @ u[free] - P[fixed]
    return u, r


# ---------------------------------------------------------------------------
# Task metadata
# ---------------------------------------------------------------------------

def task_info():
    skew_sec = {"E": 2.1e11, "nu": 0.29, "A": 3.2e-3, "I_y": 2.6e-6, "I_z": 7.9e-6, "J": 1.1e-6}
    l_col = {"E": 2.0e11, "nu": 0.3, "A": 5.0e-3, "I_y": 4.1e-6, "I_z": 9.3e-6, "J": 2.2e-6}
    l_beam = {"E": 2.0e11, "nu": 0.3, "A": 3.8e-3, "I_y": 2.9e-6, "I_z": 6.4e-6, "J": 1.5e-6}
    p_col = {"E": 2.05e11, "nu": 0.3, "A": 6.0e-3, "I_y": 5.2e-6, "I_z": 1.37e-5, "J": 3.1e-6}
    p_beam = {"E": 2.05e11, "nu": 0.3, "A": 4.4e-3, "I_y": 3.3e-6, "I_z": 1.1e-5, "J": 1.9e-6}

    # Skew cantilever along (0.48, -0.6, 0.64) with unequal elements; the middle one
    # has an explicit local_z; all six load components at the tip, a load at the
    # fixed base (enters the reactions) and one at an interior node.
    skew_coords = np.array([[0.35, -0.2, 0.15], [0.7388, -0.686, 0.6684],
                            [1.1924, -1.253, 1.2732], [1.646, -1.82, 1.878]])
    skew_elements = [dict(skew_sec, node_i=0, node_j=1),
                     dict(skew_sec, node_i=1, node_j=2, local_z=[0.8, 0.6, 0.0]),
                     dict(skew_sec, node_i=2, node_j=3, local_z=None)]
    skew_loads = {3: [1200.0, -800.0, 950.0, 150.0, -220.0, 310.0],
                  1: [0.0, 500.0, 0.0, 0.0, 0.0, -90.0], 0: [300.0, 0.0, -200.0, 0.0, 40.0, 0.0]}
    skew = [skew_coords, skew_elements, {0: [1, 1, 1, 1, 1, 1]}, skew_loads]

    # 3D L-frame: vertical column (default axes use global Y), horizontal skew beam
    # with explicit local_z, inclined member to a pinned support (statically
    # indeterminate).
    l_coords = np.array([[0.1, 0.2, 0.0], [0.1, 0.2, 3.1], [2.3, 1.4, 3.1], [1.9, 2.8, 2.2]])
    l_elements = [dict(l_col, node_i=0, node_j=1),
                  dict(l_beam, node_i=1, node_j=2, local_z=[0.0, 0.6, 0.8]),
                  dict(l_beam, node_i=2, node_j=3)]
    l_frame = [l_coords, l_elements, {0: [1, 1, 1, 1, 1, 1], 3: [True, True, True, False, False, False]},
               {1: [2000.0, -1500.0, -8000.0, 300.0, 0.0, -450.0],
                2: [-700.0, 2500.0, -5000.0, 0.0, 600.0, 200.0], 0: [0.0, 0.0, -1000.0, 0.0, 0.0, 0.0]}]

    # 3D portal frame 4.2 x 3.1 x 3.6 (8 nodes): two fixed and two pinned bases, one
    # beam with a tilted section (local_z), gravity plus lateral loads and moments,
    # including loads on support nodes.
    plan = [(0.4, 0.3), (4.6, 0.3), (4.6, 3.4), (0.4, 3.4)]
    portal_coords = np.array([[x, y, 0.0] for x, y in plan] + [[x, y, 3.6] for x, y in plan])
    portal_elements = [dict(p_col, node_i=k, node_j=k + 4) for k in range(4)]
    portal_elements += [dict(p_beam, node_i=4 + k, node_j=4 + (k + 1) % 4) for k in range(4)]
    portal_elements[4]["local_z"] = [0.0, -0.6, 0.8]
    portal = [portal_coords, portal_elements,
              {0: [1, 1, 1, 1, 1, 1], 2: [1, 1, 1, 1, 1, 1], 1: [1, 1, 1, 0, 0, 0], 3: [1, 1, 1, 0, 0, 0]},
              {4: [3000.0, 1200.0, -15000.0, 0.0, 0.0, 500.0], 5: [0.0, 1800.0, -12000.0, 400.0, 0.0, 0.0],
               6: [-900.0, 0.0, -18000.0, 0.0, -300.0, 0.0], 7: [1500.0, -600.0, -9000.0, 0.0, 0.0, 0.0],
               1: [0.0, 0.0, 0.0, 0.0, 0.0, 250.0], 0: [100.0, 0.0, 0.0, 0.0, 0.0, 0.0]}]

    # The skew cantilever with no supports: singular stiffness -> ValueError.
    unsupported = [skew_coords, skew_elements, {}, skew_loads]

    return {
        "task_id": "MSA_3D_linear_elastic_CC0_H6_T1",
        "task_short_description": "linear static displacements and support reactions of a 3D frame",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": solve_linear_elastic_frame_3D,
        "required_imports": ["import numpy as np", "import pytest",
                             "from typing import Dict, Optional, Sequence, Tuple"],
        "fcn_dependencies": [
            local_elastic_stiffness_matrix_3D_beam,
            beam_transformation_matrix_3D,
            assemble_global_load_vector_3D,
            partition_degrees_of_freedom_3D,
            assemble_global_stiffness_matrix_3D,
            linear_solve_3D,
        ],
        "reference_verification_inputs": [skew, l_frame, portal, unsupported],
        "test_cases": [
            {"test_code": test_cantilever_closed_form,
             "expected_failures": [fail_bending_inertias_swapped, fail_transformation_transposed,
                                   fail_shear_modulus_missing_two, fail_ignores_local_z]},
            {"test_code": test_reaction_equilibrium,
             "expected_failures": [fail_reaction_sign, fail_reactions_omit_applied_loads]},
            {"test_code": test_degenerate_frames_raise,
             "expected_failures": [fail_no_support_check]},
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["node_coords"], "draw": "affine", "dimensions": 3, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["elements"], "keys": ["E", "A", "I_y", "I_z", "J", "I_rho"], "draw": "scale", "low": 0.5, "high": 2.0},
                {"arguments": ["elements"], "keys": ["nu"], "draw": "uniform", "low": 0.2, "high": 0.4},
                {"arguments": ["nodal_loads"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
            ],
            "fixed": {"boundary_conditions": "the supports keep the frame stable; the published inputs include an unsupported one"},
        },
    }

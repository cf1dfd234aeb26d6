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


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_rigid_body_motion_gives_zero_end_forces(fcn):
    """For an inclined member with a given local_z, an inclined member with the
    default reference and a vertical member, a rigid-body motion of the element
    (a translation t plus a small rotation theta about an arbitrary point x0:
    node displacement t + cross(theta, x - x0) and node rotation theta at both
    nodes) produces end forces that vanish, i.e. are below 1e-9 times the
    largest end force a generic random displacement of the same size produces."""
    ele = {"E": 2.1e11, "nu": 0.3, "A": 4.3e-3, "I_y": 2.9e-5, "I_z": 8.1e-6, "J": 1.7e-6}
    axis = np.array([2.6, 2.3, 1.3])
    lz = np.cross(axis, [0.2, -0.5, 0.9])
    lz = lz / np.linalg.norm(lz)
    cases = [
        ((0.3, -0.7, 1.1), (2.9, 1.6, 2.4), lz.tolist()),
        ((-1.2, 0.4, 0.9), (1.5, -0.8, -0.6), None),
        ((0.7, 1.9, -0.4), (0.7, 1.9, 2.8), None),
    ]
    rng = np.random.default_rng(11)
    for pi, pj, local_z in cases:
        e = dict(ele, local_z=local_z)
        pi = np.array(pi)
        pj = np.array(pj)
        f_generic = np.asarray(fcn(e, *pi, *pj, 1e-3 * rng.standard_normal(12)), dtype=float)
        scale = np.max(np.abs(f_generic))
        assert scale > 0.0
        t = 1e-3 * rng.standard_normal(3)
        theta = 1e-3 * rng.standard_normal(3)
        x0 = rng.standard_normal(3)
        u = np.concatenate([t + np.cross(theta, pi - x0), theta, t + np.cross(theta, pj - x0), theta])
        f = np.asarray(fcn(e, *pi, *pj, u), dtype=float)
        assert f.shape == (12,)
        assert np.all(np.abs(f) <= 1e-9 * scale)


def test_end_forces_in_static_equilibrium(fcn):
    """For inclined members (with and without local_z, Iy != Iz) and seeded
    random global displacements, the local end forces satisfy static
    equilibrium of the free element: F1 + F2 = 0 and, taking moments about
    node 1 with node 2 at local position (L, 0, 0), M1 + M2 + cross((L,0,0), F2) = 0,
    i.e. Mx1 + Mx2 = 0, My1 + My2 - L*Fz2 = 0, Mz1 + Mz2 + L*Fy2 = 0."""
    rng = np.random.default_rng(5)
    cases = [
        ({"E": 7.0e10, "nu": 0.33, "A": 2.2e-3, "I_y": 3.1e-6, "I_z": 9.4e-6, "J": 1.1e-6,
          "local_z": [0.0, 0.6, 0.8]}, (0.4, -1.3, 0.2), (3.1, 0.5, 0.2)),
        ({"E": 2.0e11, "nu": 0.29, "A": 6.1e-3, "I_y": 5.2e-5, "I_z": 1.4e-5, "J": 3.3e-6},
         (1.0, 2.0, -0.5), (-0.8, 3.1, 1.7)),
    ]
    for e, pi, pj in cases:
        L = np.linalg.norm(np.subtract(pj, pi))
        for _ in range(3):
            u = 1e-3 * rng.standard_normal(12)
            f = np.asarray(fcn(e, *pi, *pj, u), dtype=float)
            F1, M1, F2, M2 = f[0:3], f[3:6], f[6:9], f[9:12]
            tol = 1e-9 * np.max(np.abs(f)) * max(1.0, L)
            assert np.max(np.abs(f)) > 0.0
            assert np.allclose(F1 + F2, 0.0, atol=tol)
            assert np.allclose(M1 + M2 + np.cross([L, 0.0, 0.0], F2), 0.0, atol=tol)


def test_closed_form_end_forces_and_invalid_geometry(fcn):
    """Closed-form stiffness columns in simple orientations (Iy != Iz, L = 2.5):
    member along +X, default reference (local = global axes): node-j axial
    displacement d gives Fx2 = -Fx1 = EA d/L; node-j displacement d along Y gives
    Fy2 = 12 E Iz d/L^3 and Mz1 = Mz2 = -6 E Iz d/L^2; along Z gives
    Fz2 = 12 E Iy d/L^3 and My1 = My2 = 6 E Iy d/L^2; twist phi about X gives
    Mx2 = -Mx1 = G J phi/L with G = E/(2(1+nu)).
    Member along +Y, default reference (local y = -X): node-j displacement d along
    X gives Fy2 = -12 E Iz d/L^3, Mz1 = Mz2 = 6 E Iz d/L^2.
    Member along +Z, default reference (local y = +X, local z = +Y): node-j
    displacement d along Y gives Fz2 = 12 E Iy d/L^3, My1 = My2 = 6 E Iy d/L^2.
    Member along +X with local_z = (0, -1, 0) (local y = +Z): node-j displacement
    d along Z gives Fy2 = 12 E Iz d/L^3.
    ValueError for coincident nodes and for local_z parallel to the member."""
    E, nu, A, Iy, Iz, J, L, d = 2.0e5, 0.25, 30.0, 410.0, 150.0, 220.0, 2.5, 1.3e-3
    G = E / (2.0 * (1.0 + nu))
    ele = {"E": E, "nu": nu, "A": A, "I_y": Iy, "I_z": Iz, "J": J}
    p0 = (0.5, -0.2, 1.0)

    def run(direction, dof, value, local_z=None):
        u = np.zeros(12)
        u[dof] = value
        pj = tuple(np.add(p0, L * np.asarray(direction, dtype=float)))
        return np.asarray(fcn(dict(ele, local_z=local_z), *p0, *pj, u), dtype=float)

    def close(a, b):
        return np.isclose(a, b, rtol=1e-9, atol=0.0)

    f = run((1, 0, 0), 6, d)
    assert close(f[6], E * A * d / L) and close(f[0], -E * A * d / L)
    f = run((1, 0, 0), 7, d)
    assert close(f[7], 12 * E * Iz * d / L**3) and close(f[5], -6 * E * Iz * d / L**2)
    assert close(f[11], -6 * E * Iz * d / L**2) and abs(f[8]) < 1e-12 * abs(f[7])
    f = run((1, 0, 0), 8, d)
    assert close(f[8], 12 * E * Iy * d / L**3) and close(f[4], 6 * E * Iy * d / L**2)
    assert close(f[10], 6 * E * Iy * d / L**2)
    f = run((1, 0, 0), 9, d)
    assert close(f[9], G * J * d / L) and close(f[3], -G * J * d / L)
    f = run((0, 1, 0), 6, d)
    assert close(f[7], -12 * E * Iz * d / L**3) and close(f[5], 6 * E * Iz * d / L**2)
    assert close(f[11], 6 * E * Iz * d / L**2)
    f = run((0, 0, 1), 7, d)
    assert close(f[8], 12 * E * Iy * d / L**3) and close(f[4], 6 * E * Iy * d / L**2)
    assert close(f[10], 6 * E * Iy * d / L**2)
    f = run((1, 0, 0), 8, d, local_z=[0.0, -1.0, 0.0])
    assert close(f[7], 12 * E * Iz * d / L**3)

    with pytest.raises(ValueError):
        fcn(ele, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, np.zeros(12))
    axis = np.array([1.0, -2.0, 2.0]) / 3.0
    with pytest.raises(ValueError):
        fcn(dict(ele, local_z=list(axis)), 0.0, 0.0, 0.0, *(1.5 * axis), np.zeros(12))


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------


def fail_transposed_transformation(ele_info, xi, yi, zi, xj, yj, zj, u_dofs_global):
    """Maps global to local with Gamma.T instead of Gamma."""
    Gamma = beam_transformation_matrix_3D(xi, yi, zi, xj, yj, zj, ele_info.get("local_z"))
    L = float(np.linalg.norm([xj - xi, yj - yi, zj - zi]))
    k = local_elastic_stiffness_matrix_3D_beam(
        ele_info["E"], ele_info["nu"], ele_info["A"], L, ele_info["I_y"], ele_info["I_z"], ele_info["J"])
    return k @ (Gamma.T @ np.asarray(u_dofs_global, dtype=float))


def fail_displacements_not_transformed(ele_info, xi, yi, zi, xj, yj, zj, u_dofs_global):
    """Multiplies the local stiffness directly by the global displacements."""
    L = float(np.linalg.norm([xj - xi, yj - yi, zj - zi]))
    if L < 1e-12:
        raise ValueError("zero length")
    k = local_elastic_stiffness_matrix_3D_beam(
        ele_info["E"], ele_info["nu"], ele_info["A"], L, ele_info["I_y"], ele_info["I_z"], ele_info["J"])
    return k @ np.asarray(u_dofs_global, dtype=float)


def fail_same_sign_pattern_both_planes(ele_info, xi, yi, zi, xj, yj, zj, u_dofs_global):
    """Uses the x-y bending sign pattern (dv/dx = +theta_z) for the x-z plane too."""
    Gamma = beam_transformation_matrix_3D(xi, yi, zi, xj, yj, zj, ele_info.get("local_z"))
    L = float(np.linalg.norm([xj - xi, yj - yi, zj - zi]))
    E, I_y = ele_info["E"], ele_info["I_y"]
    k = local_elastic_stiffness_matrix_3D_beam(
        E, ele_info["nu"], ele_info["A"], L, I_y, ele_info["I_z"], ele_info["J"])
    idx = [2, 4, 8, 10]
    k[np.ix_(idx, idx)] = E * I_y / L**3 * np.array(
        [[12, 6 * L, -12, 6 * L], [6 * L, 4 * L**2, -6 * L, 2 * L**2],
         [-12, -6 * L, 12, -6 * L], [6 * L, 2 * L**2, -6 * L, 4 * L**2]])
    return k @ (Gamma @ np.asarray(u_dofs_global, dtype=float))


def fail_swapped_Iy_Iz(ele_info, xi, yi, zi, xj, yj, zj, u_dofs_global):
    """Passes I_z where I_y belongs and vice versa."""
    Gamma = beam_transformation_matrix_3D(xi, yi, zi, xj, yj, zj, ele_info.get("local_z"))
    L = float(np.linalg.norm([xj - xi, yj - yi, zj - zi]))
    k = local_elastic_stiffness_matrix_3D_beam(
        ele_info["E"], ele_info["nu"], ele_info["A"], L, ele_info["I_z"], ele_info["I_y"], ele_info["J"])
    return k @ (Gamma @ np.asarray(u_dofs_global, dtype=float))


def fail_shear_modulus_missing_factor_two(ele_info, xi, yi, zi, xj, yj, zj, u_dofs_global):
    """Torsional stiffness with G = E / (1 + nu)."""
    Gamma = beam_transformation_matrix_3D(xi, yi, zi, xj, yj, zj, ele_info.get("local_z"))
    L = float(np.linalg.norm([xj - xi, yj - yi, zj - zi]))
    E, nu, J = ele_info["E"], ele_info["nu"], ele_info["J"]
    k = local_elastic_stiffness_matrix_3D_beam(E, nu, ele_info["A"], L, ele_info["I_y"], ele_info["I_z"], J)
    kt = E / (1.0 + nu) * J / L
    k[np.ix_([3, 9], [3, 9])] = kt * np.array([[1.0, -1.0], [-1.0, 1.0]])
    return k @ (Gamma @ np.asarray(u_dofs_global, dtype=float))


def fail_local_z_ignored(ele_info, xi, yi, zi, xj, yj, zj, u_dofs_global):
    """Always uses the default reference vector, ignoring the element's local_z."""
    Gamma = beam_transformation_matrix_3D(xi, yi, zi, xj, yj, zj, None)
    L = float(np.linalg.norm([xj - xi, yj - yi, zj - zi]))
    k = local_elastic_stiffness_matrix_3D_beam(
        ele_info["E"], ele_info["nu"], ele_info["A"], L, ele_info["I_y"], ele_info["I_z"], ele_info["J"])
    return k @ (Gamma @ np.asarray(u_dofs_global, dtype=float))


def fail_no_geometry_validation(ele_info, xi, yi, zi, xj, yj, zj, u_dofs_global):
    """Builds its own axes without checking the length or the reference vector
    (coincident nodes give NaNs instead of a ValueError)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.array([xj - xi, yj - yi, zj - zi], dtype=float)
        L = float(np.linalg.norm(d))
        ex = d / L
        ref = ele_info.get("local_z")
        if ref is None:
            ref = [0.0, 1.0, 0.0] if np.hypot(ex[0], ex[1]) < 1e-8 else [0.0, 0.0, 1.0]
        ey = np.cross(ref, ex)
        ey = ey / np.linalg.norm(ey)
        R = np.vstack([ex, ey, np.cross(ex, ey)])
        k = local_elastic_stiffness_matrix_3D_beam(
            ele_info["E"], ele_info["nu"], ele_info["A"], L, ele_info["I_y"], ele_info["I_z"], ele_info["J"])
        return k @ (np.kron(np.eye(4), R) @ np.asarray(u_dofs_global, dtype=float))


def task_info():
    rng = np.random.default_rng(20261122)
    scale = np.array([1e-3, 1e-3, 1e-3, 2e-3, 2e-3, 2e-3] * 2)
    axis1 = np.array([2.6, 2.3, 1.3])
    lz1 = np.cross(axis1, [0.2, -0.5, 0.9])
    lz1 = lz1 / np.linalg.norm(lz1)  # perpendicular to the member
    lz4 = np.array([0.3, -0.4, 0.6])
    lz4 = lz4 / np.linalg.norm(lz4)  # oblique (not perpendicular) reference
    steel = {"E": 2.1e11, "nu": 0.3, "A": 4.3e-3, "I_y": 2.9e-5, "I_z": 8.1e-6, "J": 1.7e-6}
    return {
        "task_id": "MSA_3D_local_element_loads_CC0_H2_T1",
        "task_short_description": "local end forces k_local @ Gamma @ u of a 3D beam element from global displacements",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": compute_local_element_loads_3D,
        "required_imports": [
            "import numpy as np",
            "import pytest",
            "from typing import Optional, Sequence",
        ],
        "fcn_dependencies": [local_elastic_stiffness_matrix_3D_beam, beam_transformation_matrix_3D],
        "reference_verification_inputs": [
            # Inclined member, local_z given perpendicular to the axis (as a list).
            [dict(steel, local_z=lz1.tolist()), 0.3, -0.7, 1.1, 2.9, 1.6, 2.4, scale * rng.standard_normal(12)],
            # Horizontal member off the axes, default reference (global Z); extra keys ignored.
            [{"node_i": 3, "node_j": 1, "E": 6.9e10, "nu": 0.33, "A": 1.9e-3, "I_y": 2.4e-6,
              "I_z": 7.7e-6, "J": 4.1e-6, "I_rho": 1.01e-5},
             -1.0, 2.0, 0.5, 1.6, 0.3, 0.5, scale * rng.standard_normal(12)],
            # Vertical member pointing down, default reference (global Y).
            [{"E": 3.1e10, "nu": 0.2, "A": 0.09, "I_y": 6.75e-4, "I_z": 1.2e-3, "J": 1.4e-3, "local_z": None},
             1.2, 0.4, 3.7, 1.2, 0.4, 0.45, scale * rng.standard_normal(12)],
            # Inclined member, oblique unit local_z given as an ndarray, short member (L < 1).
            [dict(steel, I_y=1.3e-5, I_z=3.6e-5, J=8.8e-6, local_z=lz4),
             0.15, 0.2, -0.1, 0.62, -0.18, 0.35, scale * rng.standard_normal(12)],
            # Member in the global X-Z plane (ex_y = 0 but not vertical), default reference.
            [dict(steel, E=1.95e11, nu=0.27), -0.4, 1.1, 2.0, 2.3, 1.1, 0.8, scale * rng.standard_normal(12)],
            # Coincident nodes -> ValueError.
            [dict(steel), 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, scale * rng.standard_normal(12)],
        ],
        "test_cases": [
            {
                "test_code": test_rigid_body_motion_gives_zero_end_forces,
                "expected_failures": [
                    fail_transposed_transformation,
                    fail_displacements_not_transformed,
                    fail_same_sign_pattern_both_planes,
                ],
            },
            {
                "test_code": test_end_forces_in_static_equilibrium,
                "expected_failures": [fail_same_sign_pattern_both_planes],
            },
            {
                "test_code": test_closed_form_end_forces_and_invalid_geometry,
                "expected_failures": [
                    fail_transposed_transformation,
                    fail_displacements_not_transformed,
                    fail_swapped_Iy_Iz,
                    fail_shear_modulus_missing_factor_two,
                    fail_local_z_ignored,
                    fail_no_geometry_validation,
                ],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["ele_info"], "keys": ["E", "A", "I_y", "I_z", "J", "I_rho"], "draw": "scale", "low": 0.5, "high": 2.0},
                {"arguments": ["ele_info"], "keys": ["nu"], "draw": "uniform", "low": 0.2, "high": 0.4},
                {"arguments": ["xi", "yi", "zi", "xj", "yj", "zj"], "axes": [0, 1, 2, 0, 1, 2], "draw": "affine", "dimensions": 3, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["u_dofs_global"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
            ],
        },
    }

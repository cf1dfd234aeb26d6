import numpy as np
import pytest


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


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_symmetry_and_rigid_body_modes(fcn):
    """The matrix is 12x12 and symmetric, and the six rigid-body motions of the
    element (translations along local x, y, z and small rotations about local x,
    y, z, e.g. a rotation theta about z gives v = x*theta and theta_z = theta at
    both nodes, while a rotation theta about y gives w = -x*theta and
    theta_y = theta) produce zero end forces, so K has exactly six zero
    eigenvalues and six positive ones. Uses Iy != Iz and a non-unit length."""
    E, nu, A, L, Iy, Iz, J = 2.1e5, 0.28, 37.0, 3.4, 410.0, 125.0, 260.0
    K = np.asarray(fcn(E, nu, A, L, Iy, Iz, J), dtype=float)
    assert K.shape == (12, 12)
    scale = np.max(np.abs(K))
    assert np.allclose(K, K.T, rtol=0.0, atol=1e-12 * scale)

    # Rigid-body modes in local coordinates; node 1 at x = 0, node 2 at x = L.
    modes = []
    for c in range(3):  # translations
        d = np.zeros(12)
        d[c] = 1.0
        d[6 + c] = 1.0
        modes.append(d)
    d = np.zeros(12)  # rotation about x
    d[3] = d[9] = 1.0
    modes.append(d)
    d = np.zeros(12)  # rotation about y: w = -x * theta
    d[4] = d[10] = 1.0
    d[8] = -L
    modes.append(d)
    d = np.zeros(12)  # rotation about z: v = +x * theta
    d[5] = d[11] = 1.0
    d[7] = L
    modes.append(d)
    for d in modes:
        f = K @ d
        assert np.allclose(f, 0.0, atol=1e-9 * scale * max(1.0, L))

    eig = np.linalg.eigvalsh(0.5 * (K + K.T))
    tol = 1e-9 * np.max(np.abs(eig))
    assert np.sum(np.abs(eig) < tol) == 6
    assert np.sum(eig > tol) == 6


def test_cantilever_tip_response(fcn):
    """Clamp node 1 (all six DOFs) and load node 2 of a single element with
    Iy != Iz. Closed-form tip responses must be reproduced:
    axial force P -> u = P L/(E A);
    torque T -> theta_x = T L/(G J) with G = E/(2(1+nu));
    transverse force P along local y -> v = P L^3/(3 E Iz), theta_z = P L^2/(2 E Iz);
    transverse force P along local z -> w = P L^3/(3 E Iy), theta_y = -P L^2/(2 E Iy);
    end moment M about local y -> theta_y = M L/(E Iy), w = -M L^2/(2 E Iy);
    end moment M about local z -> theta_z = M L/(E Iz), v = M L^2/(2 E Iz)."""
    E, nu, A, L, Iy, Iz, J = 70.0e3, 0.33, 12.5, 2.6, 95.0, 31.0, 44.0
    G = E / (2.0 * (1.0 + nu))
    K = np.asarray(fcn(E, nu, A, L, Iy, Iz, J), dtype=float)
    Kff = K[6:, 6:]

    def tip(load_index, value):
        f = np.zeros(6)
        f[load_index] = value
        return np.linalg.solve(Kff, f)

    P = 3.7
    d = tip(0, P)
    assert np.isclose(d[0], P * L / (E * A), rtol=1e-9)
    d = tip(3, P)
    assert np.isclose(d[3], P * L / (G * J), rtol=1e-9)
    d = tip(1, P)
    assert np.isclose(d[1], P * L**3 / (3 * E * Iz), rtol=1e-9)
    assert np.isclose(d[5], P * L**2 / (2 * E * Iz), rtol=1e-9)
    assert np.isclose(d[2], 0.0, atol=1e-14)
    d = tip(2, P)
    assert np.isclose(d[2], P * L**3 / (3 * E * Iy), rtol=1e-9)
    assert np.isclose(d[4], -P * L**2 / (2 * E * Iy), rtol=1e-9)
    assert np.isclose(d[1], 0.0, atol=1e-14)
    d = tip(4, P)
    assert np.isclose(d[4], P * L / (E * Iy), rtol=1e-9)
    assert np.isclose(d[2], -P * L**2 / (2 * E * Iy), rtol=1e-9)
    d = tip(5, P)
    assert np.isclose(d[5], P * L / (E * Iz), rtol=1e-9)
    assert np.isclose(d[1], P * L**2 / (2 * E * Iz), rtol=1e-9)


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------


def fail_same_sign_pattern_both_planes(E, nu, A, L, Iy, Iz, J):
    """Copies the x-y bending sign pattern (dv/dx = +theta_z) into the x-z plane."""
    G = E / (2.0 * (1.0 + nu))
    k = np.zeros((12, 12))
    k[np.ix_([0, 6], [0, 6])] = E * A / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
    k[np.ix_([3, 9], [3, 9])] = G * J / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
    for idx, I in (([1, 5, 7, 11], Iz), ([2, 4, 8, 10], Iy)):
        k[np.ix_(idx, idx)] = E * I / L**3 * np.array(
            [[12, 6 * L, -12, 6 * L], [6 * L, 4 * L**2, -6 * L, 2 * L**2],
             [-12, -6 * L, 12, -6 * L], [6 * L, 2 * L**2, -6 * L, 4 * L**2]])
    return k


def fail_upper_triangle_only(E, nu, A, L, Iy, Iz, J):
    """Fills only the upper triangle (diagonal included) and forgets to mirror it."""
    G = E / (2.0 * (1.0 + nu))
    k = np.zeros((12, 12))
    k[np.ix_([0, 6], [0, 6])] = E * A / L * np.array([[1.0, -1.0], [0.0, 1.0]])
    k[np.ix_([3, 9], [3, 9])] = G * J / L * np.array([[1.0, -1.0], [0.0, 1.0]])
    k[np.ix_([1, 5, 7, 11], [1, 5, 7, 11])] = E * Iz / L**3 * np.triu(np.array(
        [[12, 6 * L, -12, 6 * L], [6 * L, 4 * L**2, -6 * L, 2 * L**2],
         [-12, -6 * L, 12, -6 * L], [6 * L, 2 * L**2, -6 * L, 4 * L**2]]))
    k[np.ix_([2, 4, 8, 10], [2, 4, 8, 10])] = E * Iy / L**3 * np.triu(np.array(
        [[12, -6 * L, -12, -6 * L], [-6 * L, 4 * L**2, 6 * L, 2 * L**2],
         [-12, 6 * L, 12, 6 * L], [-6 * L, 2 * L**2, 6 * L, 4 * L**2]]))
    return k


def fail_swapped_Iy_Iz(E, nu, A, L, Iy, Iz, J):
    """Uses Iy for bending in the x-y plane and Iz for bending in the x-z plane."""
    G = E / (2.0 * (1.0 + nu))
    k = np.zeros((12, 12))
    k[np.ix_([0, 6], [0, 6])] = E * A / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
    k[np.ix_([3, 9], [3, 9])] = G * J / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
    k[np.ix_([1, 5, 7, 11], [1, 5, 7, 11])] = E * Iy / L**3 * np.array(
        [[12, 6 * L, -12, 6 * L], [6 * L, 4 * L**2, -6 * L, 2 * L**2],
         [-12, -6 * L, 12, -6 * L], [6 * L, 2 * L**2, -6 * L, 4 * L**2]])
    k[np.ix_([2, 4, 8, 10], [2, 4, 8, 10])] = E * Iz / L**3 * np.array(
        [[12, -6 * L, -12, -6 * L], [-6 * L, 4 * L**2, 6 * L, 2 * L**2],
         [-12, 6 * L, 12, 6 * L], [-6 * L, 2 * L**2, 6 * L, 4 * L**2]])
    return k


def fail_shear_modulus_missing_factor_two(E, nu, A, L, Iy, Iz, J):
    """Shear modulus written as E / (1 + nu)."""
    G = E / (1.0 + nu)
    k = np.zeros((12, 12))
    k[np.ix_([0, 6], [0, 6])] = E * A / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
    k[np.ix_([3, 9], [3, 9])] = G * J / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
    k[np.ix_([1, 5, 7, 11], [1, 5, 7, 11])] = E * Iz / L**3 * np.array(
        [[12, 6 * L, -12, 6 * L], [6 * L, 4 * L**2, -6 * L, 2 * L**2],
         [-12, -6 * L, 12, -6 * L], [6 * L, 2 * L**2, -6 * L, 4 * L**2]])
    k[np.ix_([2, 4, 8, 10], [2, 4, 8, 10])] = E * Iy / L**3 * np.array(
        [[12, -6 * L, -12, -6 * L], [-6 * L, 4 * L**2, 6 * L, 2 * L**2],
         [-12, 6 * L, 12, 6 * L], [-6 * L, 2 * L**2, 6 * L, 4 * L**2]])
    return k


def fail_rotation_coefficients_swapped(E, nu, A, L, Iy, Iz, J):
    """Puts 2L^2 on the rotational diagonal and 4L^2 on the rotation-rotation coupling."""
    G = E / (2.0 * (1.0 + nu))
    k = np.zeros((12, 12))
    k[np.ix_([0, 6], [0, 6])] = E * A / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
    k[np.ix_([3, 9], [3, 9])] = G * J / L * np.array([[1.0, -1.0], [-1.0, 1.0]])
    k[np.ix_([1, 5, 7, 11], [1, 5, 7, 11])] = E * Iz / L**3 * np.array(
        [[12, 6 * L, -12, 6 * L], [6 * L, 2 * L**2, -6 * L, 4 * L**2],
         [-12, -6 * L, 12, -6 * L], [6 * L, 4 * L**2, -6 * L, 2 * L**2]])
    k[np.ix_([2, 4, 8, 10], [2, 4, 8, 10])] = E * Iy / L**3 * np.array(
        [[12, -6 * L, -12, -6 * L], [-6 * L, 2 * L**2, 6 * L, 4 * L**2],
         [-12, 6 * L, 12, 6 * L], [-6 * L, 4 * L**2, 6 * L, 2 * L**2]])
    return k


def task_info():
    return {
        "task_id": "MSA_3D_local_elastic_stiffness_CC0_H0_T0",
        "task_short_description": "12x12 local elastic stiffness matrix of a 3D Euler-Bernoulli beam element",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": local_elastic_stiffness_matrix_3D_beam,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            # E, nu, A, L, Iy, Iz, J: all distinct, non-round, Iy != Iz.
            [210.0e3, 0.3, 53.7, 2.85, 712.0, 236.0, 389.0],
            [68.9e3, 0.33, 9.4, 1.37, 18.3, 41.6, 12.9],
            [3.25, 0.17, 0.61, 0.742, 0.0923, 0.0371, 0.158],
            [1.9e4, 0.45, 2.2, 4.6, 1.15, 3.05, 0.87],
        ],
        "test_cases": [
            {
                "test_code": test_symmetry_and_rigid_body_modes,
                "expected_failures": [fail_same_sign_pattern_both_planes, fail_upper_triangle_only],
            },
            {
                "test_code": test_cantilever_tip_response,
                "expected_failures": [
                    fail_swapped_Iy_Iz,
                    fail_shear_modulus_missing_factor_two,
                    fail_rotation_coefficients_swapped,
                    fail_same_sign_pattern_both_planes,
                ],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["E", "A", "L", "Iy", "Iz", "J"], "draw": "scale", "low": 0.5, "high": 2.0},
                {"arguments": ["nu"], "draw": "uniform", "low": 0.15, "high": 0.45},
            ],
        },
    }

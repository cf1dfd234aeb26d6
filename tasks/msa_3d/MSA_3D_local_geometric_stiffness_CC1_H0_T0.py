import numpy as np
import pytest


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


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_symmetric_and_linear_in_loads(fcn):
    """For fixed L, A, I_rho and two load sets in which all six loads (Fx2, Mx2,
    My1, Mz1, My2, Mz2) are distinct and non-zero, the matrix is 12x12 and
    symmetric, depends linearly on the loads
    (K(a*s1 + b*s2) = a*K(s1) + b*K(s2)), and is exactly zero for zero loads."""
    L, A, I_rho = 1.85, 0.024, 3.7e-4
    s1 = np.array([-1520.0, 63.0, -41.0, 118.0, 77.0, -29.0])
    s2 = np.array([830.0, -22.0, 95.0, -14.0, -56.0, 133.0])
    K1 = np.asarray(fcn(L, A, I_rho, *s1), dtype=float)
    K2 = np.asarray(fcn(L, A, I_rho, *s2), dtype=float)
    assert K1.shape == (12, 12)
    for K in (K1, K2):
        assert np.allclose(K, K.T, rtol=0.0, atol=1e-12 * np.max(np.abs(K)))
    a, b = 0.7, -2.3
    K12 = np.asarray(fcn(L, A, I_rho, *(a * s1 + b * s2)), dtype=float)
    assert np.allclose(K12, a * K1 + b * K2, rtol=1e-10, atol=1e-10 * np.max(np.abs(K12)))
    K0 = np.asarray(fcn(L, A, I_rho, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), dtype=float)
    assert np.allclose(K0, 0.0, atol=0.0)


def test_axial_force_energies(fcn):
    """Under a pure axial force P = Fx2 (all moments zero) the quadratic form
    d^T K_g d equals P times the integral of the squared axial gradients:
    rigid translations along x, y, z give zero end forces; a rigid rotation theta
    about local z (v = x*theta, theta_z = theta) and about local y
    (w = -x*theta, theta_y = theta) each give P*L*theta^2; a uniform axial
    stretch (u1 = 0, u2 = delta) gives P*delta^2/L; a uniform twist
    (theta_x1 = 0, theta_x2 = phi) gives P*(I_rho/A)*phi^2/L. Tension (P > 0)
    therefore stiffens and compression softens."""
    L, A, I_rho = 2.4, 0.031, 5.2e-4
    for P in (1375.0, -640.0):
        K = np.asarray(fcn(L, A, I_rho, P, 0.0, 0.0, 0.0, 0.0, 0.0), dtype=float)
        scale = np.max(np.abs(K))
        for c in range(3):
            d = np.zeros(12)
            d[c] = d[6 + c] = 1.0
            assert np.allclose(K @ d, 0.0, atol=1e-12 * scale)
        theta = 0.013
        d = np.zeros(12)
        d[5] = d[11] = theta
        d[7] = L * theta
        assert np.isclose(d @ K @ d, P * L * theta**2, rtol=1e-9)
        d = np.zeros(12)
        d[4] = d[10] = theta
        d[8] = -L * theta
        assert np.isclose(d @ K @ d, P * L * theta**2, rtol=1e-9)
        delta = 0.004
        d = np.zeros(12)
        d[6] = delta
        assert np.isclose(d @ K @ d, P * delta**2 / L, rtol=1e-9)
        phi = 0.021
        d = np.zeros(12)
        d[9] = phi
        assert np.isclose(d @ K @ d, P * (I_rho / A) * phi**2 / L, rtol=1e-9)


def test_moment_coupling_terms(fcn):
    """With all six loads distinct and non-zero, rigid translations along local
    x, y and z still produce zero end forces, and the torsion-bending coupling
    entries follow the documented formulas, e.g. K[3,4] = -(2 Mz1 - Mz2)/6,
    K[3,5] = (2 My1 - My2)/6, K[9,10] = (Mz1 - 2 Mz2)/6,
    K[9,11] = -(My1 - 2 My2)/6, K[3,10] = K[4,9] = -(Mz1 + Mz2)/6,
    K[4,11] = Mx2/2, K[1,3] = My1/L, K[2,3] = Mz1/L, K[1,4] = Mx2/L,
    K[8,9] = -Mz2/L. With the axial force zero, the moment-only matrix is
    non-zero."""
    L, A, I_rho = 1.3, 0.018, 2.9e-4
    Fx2, Mx2, My1, Mz1, My2, Mz2 = -910.0, 47.0, -83.0, 121.0, 36.0, -68.0
    K = np.asarray(fcn(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2), dtype=float)
    scale = np.max(np.abs(K))
    for c in range(3):
        d = np.zeros(12)
        d[c] = d[6 + c] = 1.0
        assert np.allclose(K @ d, 0.0, atol=1e-12 * scale)
    expected = {
        (3, 4): -(2 * Mz1 - Mz2) / 6,
        (3, 5): (2 * My1 - My2) / 6,
        (9, 10): (Mz1 - 2 * Mz2) / 6,
        (9, 11): -(My1 - 2 * My2) / 6,
        (3, 10): -(Mz1 + Mz2) / 6,
        (4, 9): -(Mz1 + Mz2) / 6,
        (3, 11): (My1 + My2) / 6,
        (4, 11): Mx2 / 2,
        (5, 10): -Mx2 / 2,
        (1, 3): My1 / L,
        (2, 3): Mz1 / L,
        (1, 4): Mx2 / L,
        (8, 9): -Mz2 / L,
        (7, 9): -My2 / L,
    }
    for (r, c), v in expected.items():
        assert np.isclose(K[r, c], v, rtol=1e-10)
        assert np.isclose(K[c, r], v, rtol=1e-10)
    Km = np.asarray(fcn(L, A, I_rho, 0.0, Mx2, My1, Mz1, My2, Mz2), dtype=float)
    assert np.max(np.abs(Km)) > 1.0


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------


def fail_upper_triangle_only(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2):
    """Fills the upper triangle and the diagonal but never mirrors to the lower triangle."""
    kg = np.zeros((12, 12))
    P = Fx2
    entries = {
        (0, 6): -P / L, (1, 3): My1 / L, (1, 4): Mx2 / L, (1, 5): P / 10, (1, 7): -6 * P / (5 * L),
        (1, 9): My2 / L, (1, 10): -Mx2 / L, (1, 11): P / 10, (2, 3): Mz1 / L, (2, 4): -P / 10,
        (2, 5): Mx2 / L, (2, 8): -6 * P / (5 * L), (2, 9): Mz2 / L, (2, 10): -P / 10, (2, 11): -Mx2 / L,
        (3, 4): -(2 * Mz1 - Mz2) / 6, (3, 5): (2 * My1 - My2) / 6, (3, 7): -My1 / L, (3, 8): -Mz1 / L,
        (3, 9): -P * I_rho / (A * L), (3, 10): -(Mz1 + Mz2) / 6, (3, 11): (My1 + My2) / 6,
        (4, 7): -Mx2 / L, (4, 8): P / 10, (4, 9): -(Mz1 + Mz2) / 6, (4, 10): -P * L / 30,
        (4, 11): Mx2 / 2, (5, 7): -P / 10, (5, 8): -Mx2 / L, (5, 9): (My1 + My2) / 6,
        (5, 10): -Mx2 / 2, (5, 11): -P * L / 30, (7, 9): -My2 / L, (7, 10): Mx2 / L,
        (7, 11): -P / 10, (8, 9): -Mz2 / L, (8, 10): P / 10, (8, 11): Mx2 / L,
        (9, 10): (Mz1 - 2 * Mz2) / 6, (9, 11): -(My1 - 2 * My2) / 6,
    }
    for (r, c), v in entries.items():
        kg[r, c] = v
    for i, v in zip(range(12), [P / L, 6 * P / (5 * L), 6 * P / (5 * L), P * I_rho / (A * L),
                                 2 * P * L / 15, 2 * P * L / 15, P / L, 6 * P / (5 * L),
                                 6 * P / (5 * L), P * I_rho / (A * L), 2 * P * L / 15, 2 * P * L / 15]):
        kg[i, i] = v
    return kg


def fail_antisymmetric_moment_part(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2):
    """Mirrors the moment-dependent entries with the opposite sign (treats them as skew-symmetric)."""
    P = Fx2
    axial = {
        (0, 6): -P / L, (1, 5): P / 10, (1, 7): -6 * P / (5 * L), (1, 11): P / 10, (2, 4): -P / 10,
        (2, 8): -6 * P / (5 * L), (2, 10): -P / 10, (3, 9): -P * I_rho / (A * L), (4, 8): P / 10,
        (4, 10): -P * L / 30, (5, 7): -P / 10, (5, 11): -P * L / 30, (7, 11): -P / 10, (8, 10): P / 10,
    }
    moment = {
        (1, 3): My1 / L, (1, 4): Mx2 / L, (1, 9): My2 / L, (1, 10): -Mx2 / L, (2, 3): Mz1 / L,
        (2, 5): Mx2 / L, (2, 9): Mz2 / L, (2, 11): -Mx2 / L, (3, 4): -(2 * Mz1 - Mz2) / 6,
        (3, 5): (2 * My1 - My2) / 6, (3, 7): -My1 / L, (3, 8): -Mz1 / L, (3, 10): -(Mz1 + Mz2) / 6,
        (3, 11): (My1 + My2) / 6, (4, 7): -Mx2 / L, (4, 9): -(Mz1 + Mz2) / 6, (4, 11): Mx2 / 2,
        (5, 8): -Mx2 / L, (5, 9): (My1 + My2) / 6, (5, 10): -Mx2 / 2, (7, 9): -My2 / L,
        (7, 10): Mx2 / L, (8, 9): -Mz2 / L, (8, 11): Mx2 / L, (9, 10): (Mz1 - 2 * Mz2) / 6,
        (9, 11): -(My1 - 2 * My2) / 6,
    }
    kg = np.zeros((12, 12))
    for (r, c), v in axial.items():
        kg[r, c] = kg[c, r] = v
    for (r, c), v in moment.items():
        kg[r, c] = v
        kg[c, r] = -v
    for idx, v in (([0, 6], P / L), ([1, 2, 7, 8], 6 * P / (5 * L)), ([3, 9], P * I_rho / (A * L)),
                   ([4, 5, 10, 11], 2 * P * L / 15)):
        kg[idx, idx] = v
    return kg


def fail_compression_positive(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2):
    """Takes Fx2 as positive in compression, flipping the sign of every axial-force term."""
    P = -Fx2
    axial = {
        (0, 6): -P / L, (1, 5): P / 10, (1, 7): -6 * P / (5 * L), (1, 11): P / 10, (2, 4): -P / 10,
        (2, 8): -6 * P / (5 * L), (2, 10): -P / 10, (3, 9): -P * I_rho / (A * L), (4, 8): P / 10,
        (4, 10): -P * L / 30, (5, 7): -P / 10, (5, 11): -P * L / 30, (7, 11): -P / 10, (8, 10): P / 10,
    }
    moment = {
        (1, 3): My1 / L, (1, 4): Mx2 / L, (1, 9): My2 / L, (1, 10): -Mx2 / L, (2, 3): Mz1 / L,
        (2, 5): Mx2 / L, (2, 9): Mz2 / L, (2, 11): -Mx2 / L, (3, 4): -(2 * Mz1 - Mz2) / 6,
        (3, 5): (2 * My1 - My2) / 6, (3, 7): -My1 / L, (3, 8): -Mz1 / L, (3, 10): -(Mz1 + Mz2) / 6,
        (3, 11): (My1 + My2) / 6, (4, 7): -Mx2 / L, (4, 9): -(Mz1 + Mz2) / 6, (4, 11): Mx2 / 2,
        (5, 8): -Mx2 / L, (5, 9): (My1 + My2) / 6, (5, 10): -Mx2 / 2, (7, 9): -My2 / L,
        (7, 10): Mx2 / L, (8, 9): -Mz2 / L, (8, 11): Mx2 / L, (9, 10): (Mz1 - 2 * Mz2) / 6,
        (9, 11): -(My1 - 2 * My2) / 6,
    }
    kg = np.zeros((12, 12))
    for (r, c), v in list(axial.items()) + list(moment.items()):
        kg[r, c] = kg[c, r] = v
    for idx, v in (([0, 6], P / L), ([1, 2, 7, 8], 6 * P / (5 * L)), ([3, 9], P * I_rho / (A * L)),
                   ([4, 5, 10, 11], 2 * P * L / 15)):
        kg[idx, idx] = v
    return kg


def fail_torsion_without_polar_radius(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2):
    """Uses Fx2/L for the twist terms, forgetting the factor I_rho/A."""
    P = Fx2
    axial = {
        (0, 6): -P / L, (1, 5): P / 10, (1, 7): -6 * P / (5 * L), (1, 11): P / 10, (2, 4): -P / 10,
        (2, 8): -6 * P / (5 * L), (2, 10): -P / 10, (3, 9): -P / L, (4, 8): P / 10,
        (4, 10): -P * L / 30, (5, 7): -P / 10, (5, 11): -P * L / 30, (7, 11): -P / 10, (8, 10): P / 10,
    }
    moment = {
        (1, 3): My1 / L, (1, 4): Mx2 / L, (1, 9): My2 / L, (1, 10): -Mx2 / L, (2, 3): Mz1 / L,
        (2, 5): Mx2 / L, (2, 9): Mz2 / L, (2, 11): -Mx2 / L, (3, 4): -(2 * Mz1 - Mz2) / 6,
        (3, 5): (2 * My1 - My2) / 6, (3, 7): -My1 / L, (3, 8): -Mz1 / L, (3, 10): -(Mz1 + Mz2) / 6,
        (3, 11): (My1 + My2) / 6, (4, 7): -Mx2 / L, (4, 9): -(Mz1 + Mz2) / 6, (4, 11): Mx2 / 2,
        (5, 8): -Mx2 / L, (5, 9): (My1 + My2) / 6, (5, 10): -Mx2 / 2, (7, 9): -My2 / L,
        (7, 10): Mx2 / L, (8, 9): -Mz2 / L, (8, 11): Mx2 / L, (9, 10): (Mz1 - 2 * Mz2) / 6,
        (9, 11): -(My1 - 2 * My2) / 6,
    }
    kg = np.zeros((12, 12))
    for (r, c), v in list(axial.items()) + list(moment.items()):
        kg[r, c] = kg[c, r] = v
    for idx, v in (([0, 6], P / L), ([1, 2, 7, 8], 6 * P / (5 * L)), ([3, 9], P / L),
                   ([4, 5, 10, 11], 2 * P * L / 15)):
        kg[idx, idx] = v
    return kg


def fail_same_signs_both_bending_planes(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2):
    """Copies the x-y plane axial-force pattern (+P/10 couplings) into the x-z plane."""
    P = Fx2
    axial = {
        (0, 6): -P / L, (1, 5): P / 10, (1, 7): -6 * P / (5 * L), (1, 11): P / 10, (2, 4): P / 10,
        (2, 8): -6 * P / (5 * L), (2, 10): P / 10, (3, 9): -P * I_rho / (A * L), (4, 8): -P / 10,
        (4, 10): -P * L / 30, (5, 7): -P / 10, (5, 11): -P * L / 30, (7, 11): -P / 10, (8, 10): -P / 10,
    }
    moment = {
        (1, 3): My1 / L, (1, 4): Mx2 / L, (1, 9): My2 / L, (1, 10): -Mx2 / L, (2, 3): Mz1 / L,
        (2, 5): Mx2 / L, (2, 9): Mz2 / L, (2, 11): -Mx2 / L, (3, 4): -(2 * Mz1 - Mz2) / 6,
        (3, 5): (2 * My1 - My2) / 6, (3, 7): -My1 / L, (3, 8): -Mz1 / L, (3, 10): -(Mz1 + Mz2) / 6,
        (3, 11): (My1 + My2) / 6, (4, 7): -Mx2 / L, (4, 9): -(Mz1 + Mz2) / 6, (4, 11): Mx2 / 2,
        (5, 8): -Mx2 / L, (5, 9): (My1 + My2) / 6, (5, 10): -Mx2 / 2, (7, 9): -My2 / L,
        (7, 10): Mx2 / L, (8, 9): -Mz2 / L, (8, 11): Mx2 / L, (9, 10): (Mz1 - 2 * Mz2) / 6,
        (9, 11): -(My1 - 2 * My2) / 6,
    }
    kg = np.zeros((12, 12))
    for (r, c), v in list(axial.items()) + list(moment.items()):
        kg[r, c] = kg[c, r] = v
    for idx, v in (([0, 6], P / L), ([1, 2, 7, 8], 6 * P / (5 * L)), ([3, 9], P * I_rho / (A * L)),
                   ([4, 5, 10, 11], 2 * P * L / 15)):
        kg[idx, idx] = v
    return kg


def fail_axial_terms_only(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2):
    """Drops every moment-dependent (torsion-bending coupling) term."""
    P = Fx2
    axial = {
        (0, 6): -P / L, (1, 5): P / 10, (1, 7): -6 * P / (5 * L), (1, 11): P / 10, (2, 4): -P / 10,
        (2, 8): -6 * P / (5 * L), (2, 10): -P / 10, (3, 9): -P * I_rho / (A * L), (4, 8): P / 10,
        (4, 10): -P * L / 30, (5, 7): -P / 10, (5, 11): -P * L / 30, (7, 11): -P / 10, (8, 10): P / 10,
    }
    kg = np.zeros((12, 12))
    for (r, c), v in axial.items():
        kg[r, c] = kg[c, r] = v
    for idx, v in (([0, 6], P / L), ([1, 2, 7, 8], 6 * P / (5 * L)), ([3, 9], P * I_rho / (A * L)),
                   ([4, 5, 10, 11], 2 * P * L / 15)):
        kg[idx, idx] = v
    return kg


def fail_twist_coupling_signs(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2):
    """Gets the sign of the twist-rotation couplings (rows 3 and 9 with columns 4, 5, 10, 11) wrong."""
    P = Fx2
    axial = {
        (0, 6): -P / L, (1, 5): P / 10, (1, 7): -6 * P / (5 * L), (1, 11): P / 10, (2, 4): -P / 10,
        (2, 8): -6 * P / (5 * L), (2, 10): -P / 10, (3, 9): -P * I_rho / (A * L), (4, 8): P / 10,
        (4, 10): -P * L / 30, (5, 7): -P / 10, (5, 11): -P * L / 30, (7, 11): -P / 10, (8, 10): P / 10,
    }
    moment = {
        (1, 3): My1 / L, (1, 4): Mx2 / L, (1, 9): My2 / L, (1, 10): -Mx2 / L, (2, 3): Mz1 / L,
        (2, 5): Mx2 / L, (2, 9): Mz2 / L, (2, 11): -Mx2 / L, (3, 4): (2 * Mz1 - Mz2) / 6,
        (3, 5): -(2 * My1 - My2) / 6, (3, 7): -My1 / L, (3, 8): -Mz1 / L, (3, 10): (Mz1 + Mz2) / 6,
        (3, 11): -(My1 + My2) / 6, (4, 7): -Mx2 / L, (4, 9): (Mz1 + Mz2) / 6, (4, 11): Mx2 / 2,
        (5, 8): -Mx2 / L, (5, 9): -(My1 + My2) / 6, (5, 10): -Mx2 / 2, (7, 9): -My2 / L,
        (7, 10): Mx2 / L, (8, 9): -Mz2 / L, (8, 11): Mx2 / L, (9, 10): -(Mz1 - 2 * Mz2) / 6,
        (9, 11): (My1 - 2 * My2) / 6,
    }
    kg = np.zeros((12, 12))
    for (r, c), v in list(axial.items()) + list(moment.items()):
        kg[r, c] = kg[c, r] = v
    for idx, v in (([0, 6], P / L), ([1, 2, 7, 8], 6 * P / (5 * L)), ([3, 9], P * I_rho / (A * L)),
                   ([4, 5, 10, 11], 2 * P * L / 15)):
        kg[idx, idx] = v
    return kg


def fail_transverse_moment_signs(L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2):
    """Gives the node-2 twist-translation couplings (3,7), (3,8), (7,9), (8,9) the same sign as
    the node-1 ones, so a rigid translation no longer produces zero force."""
    P = Fx2
    axial = {
        (0, 6): -P / L, (1, 5): P / 10, (1, 7): -6 * P / (5 * L), (1, 11): P / 10, (2, 4): -P / 10,
        (2, 8): -6 * P / (5 * L), (2, 10): -P / 10, (3, 9): -P * I_rho / (A * L), (4, 8): P / 10,
        (4, 10): -P * L / 30, (5, 7): -P / 10, (5, 11): -P * L / 30, (7, 11): -P / 10, (8, 10): P / 10,
    }
    moment = {
        (1, 3): My1 / L, (1, 4): Mx2 / L, (1, 9): My2 / L, (1, 10): -Mx2 / L, (2, 3): Mz1 / L,
        (2, 5): Mx2 / L, (2, 9): Mz2 / L, (2, 11): -Mx2 / L, (3, 4): -(2 * Mz1 - Mz2) / 6,
        (3, 5): (2 * My1 - My2) / 6, (3, 7): My1 / L, (3, 8): Mz1 / L, (3, 10): -(Mz1 + Mz2) / 6,
        (3, 11): (My1 + My2) / 6, (4, 7): -Mx2 / L, (4, 9): -(Mz1 + Mz2) / 6, (4, 11): Mx2 / 2,
        (5, 8): -Mx2 / L, (5, 9): (My1 + My2) / 6, (5, 10): -Mx2 / 2, (7, 9): My2 / L,
        (7, 10): Mx2 / L, (8, 9): Mz2 / L, (8, 11): Mx2 / L, (9, 10): (Mz1 - 2 * Mz2) / 6,
        (9, 11): -(My1 - 2 * My2) / 6,
    }
    kg = np.zeros((12, 12))
    for (r, c), v in list(axial.items()) + list(moment.items()):
        kg[r, c] = kg[c, r] = v
    for idx, v in (([0, 6], P / L), ([1, 2, 7, 8], 6 * P / (5 * L)), ([3, 9], P * I_rho / (A * L)),
                   ([4, 5, 10, 11], 2 * P * L / 15)):
        kg[idx, idx] = v
    return kg


def task_info():
    return {
        "task_id": "MSA_3D_local_geometric_stiffness_CC1_H0_T0",
        "task_short_description": "12x12 local geometric stiffness matrix of a 3D beam with axial force and torsion-bending coupling",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": local_geometric_stiffness_matrix_3D_beam,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            # L, A, I_rho, Fx2, Mx2, My1, Mz1, My2, Mz2: all loads distinct and non-zero.
            [2.3, 0.017, 3.1e-4, -1234.5, 87.3, -56.2, 143.7, 211.9, -38.4],
            [0.85, 0.0042, 1.9e-5, 3120.0, -14.6, 72.8, -9.3, 25.1, 61.7],
            [4.7, 0.11, 0.0036, -78.9, 311.0, 129.5, 204.2, -97.6, 158.3],
            [1.55, 1.3, 0.62, 0.47, -0.83, 0.29, -1.12, 0.74, 0.36],
        ],
        "test_cases": [
            {
                "test_code": test_symmetric_and_linear_in_loads,
                "expected_failures": [fail_upper_triangle_only, fail_antisymmetric_moment_part],
            },
            {
                "test_code": test_axial_force_energies,
                "expected_failures": [
                    fail_compression_positive,
                    fail_torsion_without_polar_radius,
                    fail_same_signs_both_bending_planes,
                ],
            },
            {
                "test_code": test_moment_coupling_terms,
                "expected_failures": [
                    fail_axial_terms_only,
                    fail_twist_coupling_signs,
                    fail_transverse_moment_signs,
                ],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["L", "A", "I_rho"], "draw": "scale", "low": 0.5, "high": 2.0},
                {"arguments": ["Fx2", "Mx2", "My1", "Mz1", "My2", "Mz2"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
            ],
        },
    }

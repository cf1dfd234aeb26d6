import numpy as np
import pytest
from typing import Dict, Optional, Sequence, Tuple
import scipy.linalg


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


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

def test_diagonal_pencil_closed_form(fcn):
    """Diagonal pencil with 2 nodes (12 DOFs): K_e = diag(k), K_g = -diag(g) with some
    g negative (tension) and some positive, so the eigenvalues are k_i / g_i in closed
    form. The result must be the smallest positive ratio over the free DOFs (not a
    negative ratio of smaller magnitude, not a ratio at a fixed DOF), the mode must have
    shape (12,) and be proportional to the unit vector of that DOF (zero elsewhere,
    including the fixed DOFs); fixing that DOF as well must move the answer to the next
    smallest positive ratio."""
    k = np.array([5.0, 7.0, 3.0, 9.0, 4.0, 6.0, 8.0, 2.0, 5.5, 7.5, 6.5, 3.5])
    g = np.array([1.0, -4.0, 0.5, 2.0, -8.0, 1.5, 3.0, 0.4, -1.0, 2.5, 0.9, 0.25])
    ratios = k / g   # positive where g > 0
    K_e, K_g = np.diag(k), -np.diag(g)
    bcs = {0: [0, 0, 0, 0, 0, 0], 1: [1, 0, 0, 0, 0, 0]}          # DOF 6 (ratio 8/3) fixed
    lam, mode = fcn(K_e, K_g, bcs, 2)
    free_pos = [i for i in range(12) if g[i] > 0 and i != 6]
    expected_dof = min(free_pos, key=lambda i: ratios[i])        # DOF 9: 7.5/2.5 = 3.0
    assert np.isclose(lam, ratios[expected_dof], rtol=1e-10)
    mode = np.asarray(mode, dtype=float)
    assert mode.shape == (12,)
    unit = np.zeros(12)
    unit[expected_dof] = 1.0
    assert np.allclose(mode / mode[expected_dof], unit, atol=1e-10)
    bcs2 = {1: [1, 0, 0, 1, 0, 0]}                                # fix DOFs 6 and 9
    lam2, _ = fcn(K_e, K_g, bcs2, 2)
    assert np.isclose(lam2, min(ratios[i] for i in free_pos if i != 9), rtol=1e-10)


def test_scaling_and_residual(fcn):
    """For a seeded symmetric positive definite K_e (18x18, 3 nodes) and a symmetric
    negative definite K_g (compression everywhere), with node 0 fully fixed: lam equals
    the smallest eigenvalue of the reduced problem, the pair satisfies
    K_e_ff phi = -lam K_g_ff phi on the free DOFs, the mode is zero at the fixed DOFs,
    doubling K_g halves lam and tripling K_e triples it."""
    rng = np.random.default_rng(7)
    B = rng.normal(size=(18, 18))
    K_e = B @ B.T + 18.0 * np.eye(18)
    C = rng.normal(size=(18, 18))
    K_g = -(C @ C.T + np.eye(18))
    bcs = {0: [1, 1, 1, 1, 1, 1]}
    free = np.arange(6, 18)
    lam, mode = fcn(K_e, K_g, bcs, 3)
    Kff, Gff = K_e[np.ix_(free, free)], K_g[np.ix_(free, free)]
    expected = np.min(np.linalg.eigvals(np.linalg.solve(-Gff, Kff)).real)
    assert np.isclose(lam, expected, rtol=1e-8)
    mode = np.asarray(mode, dtype=float)
    assert np.allclose(mode[:6], 0.0)
    phi = mode[free]
    assert np.linalg.norm(Kff @ phi + lam * Gff @ phi) <= 1e-8 * np.linalg.norm(Kff @ phi)
    assert np.isclose(fcn(K_e, 2.0 * K_g, bcs, 3)[0], lam / 2.0, rtol=1e-8)
    assert np.isclose(fcn(3.0 * K_e, K_g, bcs, 3)[0], 3.0 * lam, rtol=1e-8)


def test_invalid_problems_raise(fcn):
    """ValueError when K_g is positive definite (pure tension: every eigenvalue is
    negative, so no positive critical load factor) and when the free-free K_e is
    singular (a free DOF with zero stiffness, i.e. an unsupported structure)."""
    k = np.array([5.0, 7.0, 3.0, 9.0, 4.0, 6.0, 8.0, 2.0, 5.5, 7.5, 6.5, 3.5])
    with pytest.raises(ValueError):
        fcn(np.diag(k), np.diag(np.linspace(0.5, 2.0, 12)), {0: [1, 1, 1, 0, 0, 0]}, 2)
    k_singular = k.copy()
    k_singular[10] = 0.0
    with pytest.raises(ValueError):
        fcn(np.diag(k_singular), -np.eye(12), {0: [1, 1, 1, 1, 1, 1]}, 2)


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------

def fail_pencil_sign(K_e_global, K_g_global, boundary_conditions, n_nodes):
    """Solves K_e phi = +lam K_g phi (sign convention of K_g ignored)."""
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    Kff = K_e_global[np.ix_(free, free)]
    if np.linalg.cond(Kff) >= 1e16:
        raise ValueError("ill-conditioned")
    w, v = scipy.linalg.eig(Kff, K_g_global[np.ix_(free, free)])
    ok = np.flatnonzero(np.isfinite(w) & (np.abs(w.imag) <= 1e-8 * np.abs(w.real)) & (w.real > 0))
    if ok.size == 0:
        raise ValueError("no positive eigenvalue")
    idx = ok[np.argmin(w.real[ok])]
    mode = np.zeros(6 * n_nodes)
    mode[free] = v[:, idx].real
    return float(w.real[idx]), mode


def fail_smallest_magnitude(K_e_global, K_g_global, boundary_conditions, n_nodes):
    """Takes the real eigenvalue of smallest magnitude, negative ones included."""
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    Kff = K_e_global[np.ix_(free, free)]
    if np.linalg.cond(Kff) >= 1e16:
        raise ValueError("ill-conditioned")
    w, v = scipy.linalg.eig(Kff, -K_g_global[np.ix_(free, free)])
    ok = np.flatnonzero(np.isfinite(w) & (np.abs(w.imag) <= 1e-8 * np.abs(w.real)))
    if ok.size == 0:
        raise ValueError("no real eigenvalue")
    idx = ok[np.argmin(np.abs(w.real[ok]))]
    mode = np.zeros(6 * n_nodes)
    mode[free] = v[:, idx].real
    return float(w.real[idx]), mode


def fail_first_positive(K_e_global, K_g_global, boundary_conditions, n_nodes):
    """Returns the first positive eigenvalue in solver order instead of the smallest."""
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    Kff = K_e_global[np.ix_(free, free)]
    if np.linalg.cond(Kff) >= 1e16:
        raise ValueError("ill-conditioned")
    w, v = scipy.linalg.eig(Kff, -K_g_global[np.ix_(free, free)])
    ok = np.flatnonzero(np.isfinite(w) & (np.abs(w.imag) <= 1e-8 * np.abs(w.real)) & (w.real > 0))
    if ok.size == 0:
        raise ValueError("no positive eigenvalue")
    mode = np.zeros(6 * n_nodes)
    mode[free] = v[:, ok[0]].real
    return float(w.real[ok[0]]), mode


def fail_ignores_boundary_conditions(K_e_global, K_g_global, boundary_conditions, n_nodes):
    """Solves the eigenproblem on the full matrices, ignoring the supports."""
    w, v = scipy.linalg.eig(K_e_global, -K_g_global)
    ok = np.flatnonzero(np.isfinite(w) & (np.abs(w.imag) <= 1e-8 * np.abs(w.real)) & (w.real > 0))
    if ok.size == 0:
        raise ValueError("no positive eigenvalue")
    idx = ok[np.argmin(w.real[ok])]
    return float(w.real[idx]), v[:, idx].real


def fail_mode_on_free_dofs_only(K_e_global, K_g_global, boundary_conditions, n_nodes):
    """Returns the eigenvector of the reduced problem without scattering it to 6N DOFs."""
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    Kff = K_e_global[np.ix_(free, free)]
    if np.linalg.cond(Kff) >= 1e16:
        raise ValueError("ill-conditioned")
    w, v = scipy.linalg.eig(Kff, -K_g_global[np.ix_(free, free)])
    ok = np.flatnonzero(np.isfinite(w) & (np.abs(w.imag) <= 1e-8 * np.abs(w.real)) & (w.real > 0))
    if ok.size == 0:
        raise ValueError("no positive eigenvalue")
    idx = ok[np.argmin(w.real[ok])]
    return float(w.real[idx]), v[:, idx].real


def fail_no_positive_check(K_e_global, K_g_global, boundary_conditions, n_nodes):
    """Returns inf instead of raising when no positive eigenvalue exists, and never checks K_e."""
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    w, v = scipy.linalg.eig(K_e_global[np.ix_(free, free)], -K_g_global[np.ix_(free, free)])
    lam = np.where(np.isfinite(w) & (w.real > 0), w.real, np.inf)
    idx = int(np.argmin(lam))
    mode = np.zeros(6 * n_nodes)
    mode[free] = v[:, idx].real
    return float(lam[idx]), mode


# ---------------------------------------------------------------------------
# Task metadata
# ---------------------------------------------------------------------------

def task_info():
    def frame_matrices(coords, members):
        """Elastic stiffness K_e and axial-force geometric stiffness K_g of a small frame
        (verification-data builder only).

        members: tuples (i, j, E, nu, A, Iy, Iz, J, I_rho, local_z, N) with N the
        member's axial force (tension positive); same axis conventions as the MSA tasks.
        """
        coords = np.asarray(coords, dtype=float)
        ndof = 6 * len(coords)
        K_e, K_g = np.zeros((ndof, ndof)), np.zeros((ndof, ndof))
        bar = np.array([[1.0, -1.0], [-1.0, 1.0]])
        for i, j, E, nu, A, Iy, Iz, J, I_rho, local_z, N in members:
            d = coords[j] - coords[i]
            L = np.linalg.norm(d)
            ex = d / L
            if local_z is not None:
                ref = np.asarray(local_z, dtype=float)
            else:
                ref = np.array([0.0, 1.0, 0.0]) if abs(ex[2]) > 1.0 - 1e-12 else np.array([0.0, 0.0, 1.0])
            ey = np.cross(ref, ex)
            ey /= np.linalg.norm(ey)
            T = np.kron(np.eye(4), np.vstack([ex, ey, np.cross(ex, ey)]))
            k, kg = np.zeros((12, 12)), np.zeros((12, 12))
            k[np.ix_([0, 6], [0, 6])] = E * A / L * bar
            k[np.ix_([3, 9], [3, 9])] = E / (2 * (1 + nu)) * J / L * bar
            kg[np.ix_([0, 6], [0, 6])] = N / L * bar
            kg[np.ix_([3, 9], [3, 9])] = N * I_rho / (A * L) * bar
            for idx, inertia, sg in (([1, 5, 7, 11], Iz, 1.0), ([2, 4, 8, 10], Iy, -1.0)):
                c = sg * L
                k[np.ix_(idx, idx)] = E * inertia / L ** 3 * np.array(
                    [[12, 6 * c, -12, 6 * c], [6 * c, 4 * L * L, -6 * c, 2 * L * L],
                     [-12, -6 * c, 12, -6 * c], [6 * c, 2 * L * L, -6 * c, 4 * L * L]])
                kg[np.ix_(idx, idx)] = N / (30 * L) * np.array(
                    [[36, 3 * c, -36, 3 * c], [3 * c, 4 * L * L, -3 * c, -L * L],
                     [-36, -3 * c, 36, -3 * c], [3 * c, -L * L, -3 * c, 4 * L * L]])
            dofs = np.r_[6 * i: 6 * i + 6, 6 * j: 6 * j + 6]
            K_e[np.ix_(dofs, dofs)] += T.T @ k @ T
            K_g[np.ix_(dofs, dofs)] += T.T @ kg @ T
        return K_e, K_g

    # One node, explicit non-symmetric pencil (follower-load type K_g): with DOF 3
    # fixed the eigenvalues are a complex pair (Re ~ 0.088, discarded), -0.544,
    # 0.632 (the answer) and one infinite eigenvalue (zero row/column of K_g).
    small_Ke = np.array([[8.2, -1.1, 0.4, 0.0, 0.3, -0.2],
                         [-1.1, 6.5, -0.9, 0.2, 0.0, 0.5],
                         [0.4, -0.9, 7.3, -1.4, 0.6, 0.0],
                         [0.0, 0.2, -1.4, 5.9, -0.7, 0.3],
                         [0.3, 0.0, 0.6, -0.7, 9.1, -1.2],
                         [-0.2, 0.5, 0.0, 0.3, -1.2, 4.8]])
    small_Kg = np.array([[-3.0, -0.8, 7.9, 5.5, 3.3, 0.0],
                         [6.1, -7.8, 2.6, 3.3, -8.0, 0.0],
                         [6.7, 3.1, 8.1, 5.7, -6.4, 0.0],
                         [-2.5, -4.7, 2.8, -6.2, 0.4, 0.0],
                         [-7.4, -5.9, 5.6, 5.7, 4.1, 0.0],
                         [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    small = [small_Ke, small_Kg, {0: [0, 0, 0, 1, 0, 0]}, 1]

    # 3D L-frame: compressed column, beam in tension, inclined strut in compression.
    l_coords = [[0.1, 0.2, 0.0], [0.1, 0.2, 3.1], [2.3, 1.4, 3.1], [1.9, 2.8, 2.2]]
    l_Ke, l_Kg = frame_matrices(l_coords, [
        (0, 1, 2.0e11, 0.3, 5.0e-3, 4.1e-6, 9.3e-6, 2.2e-6, 1.34e-5, None, -6.0e4),
        (1, 2, 2.0e11, 0.3, 3.8e-3, 2.9e-6, 6.4e-6, 1.5e-6, 9.3e-6, [0.0, 0.6, 0.8], 1.5e4),
        (2, 3, 2.0e11, 0.3, 3.8e-3, 2.9e-6, 6.4e-6, 1.5e-6, 9.3e-6, None, -2.2e4)])
    l_frame = [l_Ke, l_Kg, {0: [1, 1, 1, 1, 1, 1], 3: [1, 1, 1, 0, 0, 0]}, 4]

    # 3D portal frame: unequal column compressions, beams with mixed axial forces
    # (one unloaded), two fixed and two pinned bases.
    plan = [(0.4, 0.3), (4.6, 0.3), (4.6, 3.4), (0.4, 3.4)]
    p_coords = [[x, y, 0.0] for x, y in plan] + [[x, y, 3.6] for x, y in plan]
    col_forces = [-4.1e5, -2.7e5, -5.3e5, -1.9e5]
    beam_forces = [1.2e4, 0.0, -3.5e4, 8.0e3]
    p_members = [(k, k + 4, 2.05e11, 0.3, 6.0e-3, 5.2e-6, 1.37e-5, 3.1e-6, 1.89e-5, None, col_forces[k])
                 for k in range(4)]
    p_members += [(4 + k, 4 + (k + 1) % 4, 2.05e11, 0.3, 4.4e-3, 3.3e-6, 1.1e-5, 1.9e-6, 1.43e-5,
                   [0.0, -0.6, 0.8] if k == 0 else None, beam_forces[k]) for k in range(4)]
    p_Ke, p_Kg = frame_matrices(p_coords, p_members)
    portal = [p_Ke, p_Kg, {0: [1, 1, 1, 1, 1, 1], 2: [1, 1, 1, 1, 1, 1], 1: [1, 1, 1, 0, 0, 0],
                           3: [True, True, True, False, False, False]}, 8]

    # The L-frame with every member in tension: no positive eigenvalue -> ValueError.
    t_Ke, t_Kg = frame_matrices(l_coords, [
        (0, 1, 2.0e11, 0.3, 5.0e-3, 4.1e-6, 9.3e-6, 2.2e-6, 1.34e-5, None, 6.0e4),
        (1, 2, 2.0e11, 0.3, 3.8e-3, 2.9e-6, 6.4e-6, 1.5e-6, 9.3e-6, [0.0, 0.6, 0.8], 1.5e4),
        (2, 3, 2.0e11, 0.3, 3.8e-3, 2.9e-6, 6.4e-6, 1.5e-6, 9.3e-6, None, 2.2e4)])
    tension = [t_Ke, t_Kg, {0: [1, 1, 1, 1, 1, 1], 3: [1, 1, 1, 0, 0, 0]}, 4]

    # Nearly singular K_e_ff (cond = 3.0 / 2.4e-16 = 1.25e16, computed exactly for a
    # diagonal matrix): above the documented limit -> ValueError.
    near_singular = [np.diag([3.0, 2.0, 1.5, 2.5, 1.0, 2.4e-16]), -np.eye(6), {}, 1]

    return {
        "task_id": "MSA_3D_solve_eigenvalue_CC1_H1_T1",
        "task_short_description": "smallest positive critical load factor and mode of K_e phi = -lam K_g phi",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": eigenvalue_analysis_3D,
        "required_imports": ["import numpy as np", "import scipy.linalg", "import pytest",
                             "from typing import Dict, Optional, Sequence, Tuple"],
        "fcn_dependencies": [partition_degrees_of_freedom_3D],
        "reference_verification_inputs": [small, l_frame, portal, tension, near_singular],
        "test_cases": [
            {"test_code": test_diagonal_pencil_closed_form,
             "expected_failures": [fail_pencil_sign, fail_smallest_magnitude, fail_first_positive,
                                   fail_ignores_boundary_conditions, fail_mode_on_free_dofs_only]},
            {"test_code": test_scaling_and_residual,
             "expected_failures": [fail_ignores_boundary_conditions, fail_mode_on_free_dofs_only]},
            {"test_code": test_invalid_problems_raise,
             "expected_failures": [fail_no_positive_check]},
        ],
        "comparison": {"rules": [{"path": [1], "invariance": "scale"}]},
        "fresh_inputs": {
            "draws": [
                {"arguments": ["K_e_global"], "draw": "scale", "low": 0.5, "high": 2.0, "common": True},
                {"arguments": ["K_g_global"], "draw": "scale", "low": 0.5, "high": 2.0, "common": True},
            ],
            "fixed": {
                "boundary_conditions": "the supports decide whether the problem is singular; the published inputs test that error",
                "n_nodes": "it must match the size of the matrices",
            },
        },
    }

import numpy as np
import pytest
from typing import Dict, Optional, Sequence, Tuple


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


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

def test_cantilever_tip_deflection_and_reactions(fcn):
    """Single Euler-Bernoulli beam element along global X (local axes = global axes),
    node 0 fully fixed, tip loaded by an axial force F and a transverse force -P along Y.
    The tip must move F L/(EA) along X and -P L^3/(3 E I_z) along Y and rotate
    -P L^2/(2 E I_z) about Z; the reactions at node 0 must be [-F, P, 0, 0, 0, P L]
    (they balance the load), displacements at node 0 and reactions at node 1 are zero."""
    E, nu, A, Iy, Iz, J, L = 200e9, 0.3, 2.5e-3, 3.0e-6, 7.0e-6, 1.2e-6, 1.8
    G = E / (2 * (1 + nu))
    k = np.zeros((12, 12))
    k[np.ix_([0, 6], [0, 6])] = E * A / L * np.array([[1, -1], [-1, 1]])
    k[np.ix_([3, 9], [3, 9])] = G * J / L * np.array([[1, -1], [-1, 1]])
    b = np.array([[12, 6 * L, -12, 6 * L], [6 * L, 4 * L * L, -6 * L, 2 * L * L],
                  [-12, -6 * L, 12, -6 * L], [6 * L, 2 * L * L, -6 * L, 4 * L * L]])
    s = np.diag([1.0, -1.0, 1.0, -1.0])
    k[np.ix_([1, 5, 7, 11], [1, 5, 7, 11])] = E * Iz / L ** 3 * b
    k[np.ix_([2, 4, 8, 10], [2, 4, 8, 10])] = E * Iy / L ** 3 * (s @ b @ s)
    F, P = 4000.0, 250.0
    loads = np.zeros(12)
    loads[6], loads[7] = F, -P
    u, r = fcn(loads, k, {0: [1, 1, 1, 1, 1, 1]}, 2)
    assert np.allclose(u[:6], 0.0)
    assert np.isclose(u[6], F * L / (E * A), rtol=1e-9)
    assert np.isclose(u[7], -P * L ** 3 / (3 * E * Iz), rtol=1e-9)
    assert np.isclose(u[11], -P * L ** 2 / (2 * E * Iz), rtol=1e-9)
    assert np.allclose(u[[8, 9, 10]], 0.0, atol=1e-15)
    assert np.allclose(r[:6], [-F, P, 0.0, 0.0, 0.0, P * L], rtol=1e-9, atol=1e-9 * F)
    assert np.allclose(r[6:], 0.0)


def test_equilibrium_identity_general_matrix(fcn):
    """For a symmetric positive definite 24x24 stiffness (4 nodes, seeded), boundary
    conditions fixing a mix of DOFs on two nodes, and loads on every DOF including the
    fixed ones: u is zero at the fixed DOFs, r is zero at the free DOFs, and
    K u = P + r holds on every DOF (free rows: K_ff u_f = P_f; fixed rows:
    r_s = K_sf u_f - P_s)."""
    rng = np.random.default_rng(20261122)
    B = rng.normal(size=(24, 24))
    K = B @ B.T + 24.0 * np.eye(24)
    P = rng.normal(size=24) * 100.0
    bcs = {1: [1, 1, 1, 0, 0, 0], 3: [0, 1, 0, 1, 0, 1]}
    fixed = [6, 7, 8, 19, 21, 23]
    free = [d for d in range(24) if d not in fixed]
    u, r = fcn(P, K, bcs, 4)
    u, r = np.asarray(u), np.asarray(r)
    assert u.shape == (24,) and r.shape == (24,)
    assert np.allclose(u[fixed], 0.0)
    assert np.allclose(r[free], 0.0)
    assert np.allclose(K @ u, P + r, rtol=1e-10, atol=1e-9 * np.abs(P).max())


def test_unsupported_structure_raises(fcn):
    """ValueError when the free-free stiffness is singular: a free-floating beam element
    (no boundary conditions) and a structure with a node that has no stiffness and no
    support."""
    E, A, I, L = 200e9, 2e-3, 4e-6, 2.0
    k = np.zeros((12, 12))
    k[np.ix_([0, 6], [0, 6])] = E * A / L * np.array([[1, -1], [-1, 1]])
    k[np.ix_([3, 9], [3, 9])] = 0.8e6 * np.array([[1, -1], [-1, 1]])
    b = np.array([[12, 6 * L, -12, 6 * L], [6 * L, 4 * L * L, -6 * L, 2 * L * L],
                  [-12, -6 * L, 12, -6 * L], [6 * L, 2 * L * L, -6 * L, 4 * L * L]])
    s = np.diag([1.0, -1.0, 1.0, -1.0])
    k[np.ix_([1, 5, 7, 11], [1, 5, 7, 11])] = E * I / L ** 3 * b
    k[np.ix_([2, 4, 8, 10], [2, 4, 8, 10])] = E * I / L ** 3 * (s @ b @ s)
    P = np.zeros(12)
    P[7] = 100.0
    with pytest.raises(ValueError):
        fcn(P, k, {}, 2)
    K3 = np.zeros((18, 18))
    K3[:12, :12] = k
    with pytest.raises(ValueError):
        fcn(np.zeros(18), K3, {0: [1, 1, 1, 1, 1, 1]}, 3)


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------

def fail_reaction_sign(P_global, K_global, boundary_conditions, n_nodes):
    """Reactions with the opposite sign: P_s - K_sf u_f."""
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    K_ff = K_global[np.ix_(free, free)]
    if np.linalg.cond(K_ff) >= 1e16:
        raise ValueError("ill-conditioned")
    u = np.zeros(6 * n_nodes)
    u[free] = np.linalg.solve(K_ff, P_global[free])
    r = np.zeros(6 * n_nodes)
    r[fixed] = P_global[fixed] - K_global[np.ix_(fixed, free)] @ u[free]
    return u, r


def fail_reactions_omit_applied_loads(P_global, K_global, boundary_conditions, n_nodes):
    """Reactions K_sf u_f, forgetting loads applied directly at fixed DOFs."""
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    K_ff = K_global[np.ix_(free, free)]
    if np.linalg.cond(K_ff) >= 1e16:
        raise ValueError("ill-conditioned")
    u = np.zeros(6 * n_nodes)
    u[free] = np.linalg.solve(K_ff, P_global[free])
    r = np.zeros(6 * n_nodes)
    r[fixed] = K_global[np.ix_(fixed, free)] @ u[free]
    return u, r


def fail_flags_inverted(P_global, K_global, boundary_conditions, n_nodes):
    """Reads a flag of 1 as free and 0 as fixed."""
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    listed = np.concatenate([6 * n + np.arange(6) for n in boundary_conditions]).astype(int)
    fixed, free = np.setdiff1d(listed, fixed), np.setdiff1d(np.arange(6 * n_nodes), np.setdiff1d(listed, fixed))
    K_ff = K_global[np.ix_(free, free)]
    if np.linalg.cond(K_ff) >= 1e16:
        raise ValueError("ill-conditioned")
    u = np.zeros(6 * n_nodes)
    u[free] = np.linalg.solve(K_ff, P_global[free])
    r = np.zeros(6 * n_nodes)
    r[fixed] = K_global[np.ix_(fixed, free)] @ u[free] - P_global[fixed]
    return u, r


def fail_no_conditioning_check(P_global, K_global, boundary_conditions, n_nodes):
    """Least-squares solve that silently accepts a singular K_ff."""
    fixed, free = partition_degrees_of_freedom_3D(boundary_conditions, n_nodes)
    u = np.zeros(6 * n_nodes)
    u[free] = np.linalg.lstsq(K_global[np.ix_(free, free)], P_global[free], rcond=None)[0]
    r = np.zeros(6 * n_nodes)
    r[fixed] = K_global[np.ix_(fixed, free)] @ u[free] - P_global[fixed]
    return u, r


# ---------------------------------------------------------------------------
# Task metadata
# ---------------------------------------------------------------------------

def task_info():
    def frame_stiffness(coords, members):
        """Global elastic stiffness of a small frame (verification-data builder only).

        members: tuples (i, j, E, nu, A, Iy, Iz, J, local_z); same conventions as the
        MSA tasks (local z from local_z, else global Z, or global Y for vertical members).
        """
        coords = np.asarray(coords, dtype=float)
        K = np.zeros((6 * len(coords), 6 * len(coords)))
        for i, j, E, nu, A, Iy, Iz, J, local_z in members:
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
            k = np.zeros((12, 12))
            k[np.ix_([0, 6], [0, 6])] = E * A / L * np.array([[1, -1], [-1, 1]])
            k[np.ix_([3, 9], [3, 9])] = E / (2 * (1 + nu)) * J / L * np.array([[1, -1], [-1, 1]])
            for idx, inertia, sg in (([1, 5, 7, 11], Iz, 1.0), ([2, 4, 8, 10], Iy, -1.0)):
                c = 6 * L * sg
                k[np.ix_(idx, idx)] = E * inertia / L ** 3 * np.array(
                    [[12, c, -12, c], [c, 4 * L * L, -c, 2 * L * L], [-12, -c, 12, -c], [c, 2 * L * L, -c, 4 * L * L]])
            dofs = np.r_[6 * i: 6 * i + 6, 6 * j: 6 * j + 6]
            K[np.ix_(dofs, dofs)] += T.T @ k @ T
        return K

    def load_vector(n_nodes, loads):
        P = np.zeros(6 * n_nodes)
        for n, vals in loads.items():
            P[6 * n: 6 * n + 6] = vals
        return P

    # 3D L-frame: vertical column, skew horizontal beam (local_z given), inclined
    # member to a pinned support; loads everywhere, including the fixed base.
    l_coords = [[0.1, 0.2, 0.0], [0.1, 0.2, 3.1], [2.3, 1.4, 3.1], [1.9, 2.8, 2.2]]
    l_members = [(0, 1, 2.0e11, 0.3, 5.0e-3, 4.1e-6, 9.3e-6, 2.2e-6, None),
                 (1, 2, 2.0e11, 0.3, 3.8e-3, 2.9e-6, 6.4e-6, 1.5e-6, [0.0, 0.6, 0.8]),
                 (2, 3, 2.0e11, 0.3, 3.8e-3, 2.9e-6, 6.4e-6, 1.5e-6, None)]
    l_frame = [load_vector(4, {1: [2000.0, -1500.0, -8000.0, 300.0, 0.0, -450.0],
                               2: [-700.0, 2500.0, -5000.0, 0.0, 600.0, 200.0],
                               0: [150.0, 0.0, -1000.0, 0.0, 80.0, 0.0],
                               3: [0.0, 400.0, 0.0, 0.0, 0.0, 0.0]}),
               frame_stiffness(l_coords, l_members),
               {0: [1, 1, 1, 1, 1, 1], 3: [1, 1, 1, 0, 0, 0]}, 4]

    # 3D portal frame (8 nodes, 48 DOFs): two fixed and two pinned bases.
    plan = [(0.4, 0.3), (4.6, 0.3), (4.6, 3.4), (0.4, 3.4)]
    p_coords = [[x, y, 0.0] for x, y in plan] + [[x, y, 3.6] for x, y in plan]
    p_members = [(k, k + 4, 2.05e11, 0.3, 6.0e-3, 5.2e-6, 1.37e-5, 3.1e-6, None) for k in range(4)]
    p_members += [(4 + k, 4 + (k + 1) % 4, 2.05e11, 0.3, 4.4e-3, 3.3e-6, 1.1e-5, 1.9e-6,
                   [0.0, -0.6, 0.8] if k == 0 else None) for k in range(4)]
    portal = [load_vector(8, {4: [3000.0, 1200.0, -15000.0, 0.0, 0.0, 500.0],
                              5: [0.0, 1800.0, -12000.0, 400.0, 0.0, 0.0],
                              6: [-900.0, 0.0, -18000.0, 0.0, -300.0, 0.0],
                              7: [1500.0, -600.0, -9000.0, 0.0, 0.0, 0.0],
                              1: [50.0, -30.0, 0.0, 0.0, 0.0, 250.0], 0: [100.0, 0.0, 0.0, 0.0, 0.0, 0.0]}),
              frame_stiffness(p_coords, p_members),
              {0: [1, 1, 1, 1, 1, 1], 2: [True] * 6, 1: [1, 1, 1, 0, 0, 0], 3: [1, 1, 1, 0, 0, 0]}, 8]

    # Skew cantilever with an extra vertical support at an interior node.
    s_coords = [[0.35, -0.2, 0.15], [0.7388, -0.686, 0.6684], [1.1924, -1.253, 1.2732], [1.646, -1.82, 1.878]]
    s_members = [(0, 1, 2.1e11, 0.29, 3.2e-3, 2.6e-6, 7.9e-6, 1.1e-6, None),
                 (1, 2, 2.1e11, 0.29, 3.2e-3, 2.6e-6, 7.9e-6, 1.1e-6, [0.8, 0.6, 0.0]),
                 (2, 3, 2.1e11, 0.29, 3.2e-3, 2.6e-6, 7.9e-6, 1.1e-6, None)]
    s_K = frame_stiffness(s_coords, s_members)
    s_P = load_vector(4, {3: [1200.0, -800.0, 950.0, 150.0, -220.0, 310.0],
                          2: [0.0, 0.0, -700.0, 0.0, 0.0, 0.0],
                          1: [0.0, 500.0, 0.0, 0.0, 0.0, -90.0], 0: [300.0, 0.0, -200.0, 0.0, 40.0, 0.0]})
    skew = [s_P, s_K, {0: [1, 1, 1, 1, 1, 1], 2: [0, 0, 1, 0, 0, 0]}, 4]

    # Same skew cantilever without supports: singular K_ff -> ValueError.
    unsupported = [s_P, s_K, {}, 4]

    return {
        "task_id": "MSA_3D_solve_linear_CC0_H1_T3",
        "task_short_description": "solve K u = P with supports and recover the support reactions",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": linear_solve_3D,
        "required_imports": ["import numpy as np", "import pytest",
                             "from typing import Dict, Optional, Sequence, Tuple"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [l_frame, portal, skew, unsupported],
        "test_cases": [
            {"test_code": test_cantilever_tip_deflection_and_reactions,
             "expected_failures": [fail_reaction_sign, fail_flags_inverted]},
            {"test_code": test_equilibrium_identity_general_matrix,
             "expected_failures": [fail_reaction_sign, fail_reactions_omit_applied_loads, fail_flags_inverted]},
            {"test_code": test_unsupported_structure_raises,
             "expected_failures": [fail_no_conditioning_check]},
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["P_global"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
                {"arguments": ["K_global"], "draw": "scale", "low": 0.5, "high": 2.0, "common": True},
            ],
            "fixed": {
                "boundary_conditions": "the supports decide whether K_ff is singular; the published inputs test that error",
                "n_nodes": "it must match the size of the matrices",
            },
        },
    }

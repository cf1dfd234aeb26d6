import numpy as np
import pytest
from typing import Dict, Sequence, Tuple


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


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_partition_sets(fcn):
    """A clamped node, a pinned node (translations fixed only) and a node with
    mixed bool flags, given in unsorted dict order, with other nodes absent:
    fixed contains exactly the DOFs 6n + c whose flag is set, free the rest;
    both are integer arrays sorted ascending, disjoint, and together cover
    0 .. 6N-1. An empty dict leaves every DOF free (fixed is empty)."""
    bcs = {
        3: [1, 1, 1, 1, 1, 1],
        0: (1, 1, 1, 0, 0, 0),
        1: [False, True, False, False, False, True],
    }
    n_nodes = 5
    fixed, free = fcn(bcs, n_nodes)
    fixed = np.asarray(fixed)
    free = np.asarray(free)
    assert np.issubdtype(fixed.dtype, np.integer) and np.issubdtype(free.dtype, np.integer)
    expected_fixed = [0, 1, 2, 7, 11, 18, 19, 20, 21, 22, 23]
    assert fixed.tolist() == expected_fixed
    expected_free = [d for d in range(30) if d not in expected_fixed]
    assert free.tolist() == expected_free
    assert sorted(fixed.tolist() + free.tolist()) == list(range(30))

    fixed, free = fcn({}, 2)
    assert len(np.asarray(fixed)) == 0
    assert np.asarray(free).tolist() == list(range(12))


def test_invalid_input_raises(fcn):
    """ValueError for a negative node index, for a node index equal to the
    number of nodes, and for flag sequences with 5 or 7 entries."""
    clamp = [1, 1, 1, 1, 1, 1]
    with pytest.raises(ValueError):
        fcn({-1: clamp}, 3)
    with pytest.raises(ValueError):
        fcn({0: clamp, 3: clamp}, 3)
    with pytest.raises(ValueError):
        fcn({1: [1, 1, 1, 0, 0]}, 3)
    with pytest.raises(ValueError):
        fcn({2: [1, 1, 1, 0, 0, 0, 1]}, 3)


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------


def fail_unsorted_fixed(boundary_conditions, n_nodes):
    """Collects fixed DOFs in dict iteration order without sorting."""
    fixed = []
    for node, flags in boundary_conditions.items():
        if node < 0 or node >= n_nodes or len(flags) != 6:
            raise ValueError("bad boundary condition")
        fixed += [6 * node + c for c in range(6) if flags[c]]
    free = [d for d in range(6 * n_nodes) if d not in fixed]
    return np.array(fixed, dtype=int), np.array(free, dtype=int)


def fail_inverted_flags(boundary_conditions, n_nodes):
    """Reads flag 0 as fixed and 1 as free (only for the nodes listed)."""
    fixed = set()
    for node, flags in boundary_conditions.items():
        if node < 0 or node >= n_nodes or len(flags) != 6:
            raise ValueError("bad boundary condition")
        fixed |= {6 * node + c for c in range(6) if not flags[c]}
    fixed = sorted(fixed)
    free = [d for d in range(6 * n_nodes) if d not in fixed]
    return np.array(fixed, dtype=int), np.array(free, dtype=int)


def fail_three_dofs_per_node(boundary_conditions, n_nodes):
    """Numbers DOFs with a stride of 3 (translations only) instead of 6."""
    fixed = set()
    for node, flags in boundary_conditions.items():
        if node < 0 or node >= n_nodes or len(flags) != 6:
            raise ValueError("bad boundary condition")
        fixed |= {3 * node + c for c in range(6) if flags[c]}
    fixed = sorted(fixed)
    free = [d for d in range(6 * n_nodes) if d not in fixed]
    return np.array(fixed, dtype=int), np.array(free, dtype=int)


def fail_no_validation(boundary_conditions, n_nodes):
    """Never checks node indices or the number of flags."""
    fixed = set()
    for node, flags in boundary_conditions.items():
        fixed |= {6 * node + c for c, flag in enumerate(flags) if flag}
    fixed = sorted(fixed)
    free = [d for d in range(6 * n_nodes) if d not in fixed]
    return np.array(fixed, dtype=int), np.array(free, dtype=int)


def task_info():
    return {
        "task_id": "MSA_3D_partition_DOFs_CC0_H0_T0",
        "task_short_description": "Partition the global DOFs of a 3D frame into sorted fixed and free index arrays",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": partition_degrees_of_freedom_3D,
        "required_imports": [
            "import numpy as np",
            "import pytest",
            "from typing import Dict, Sequence, Tuple",
        ],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            # Unsorted keys, a clamped node, a pinned node, mixed flags; nodes 1 and 3 absent.
            [{4: [1, 1, 1, 1, 1, 1], 0: [1, 1, 1, 0, 0, 0], 2: (0, 1, 0, 0, 0, 1)}, 5],
            # Bool flags and an ndarray of flags; the last node carries conditions.
            [{3: np.array([0, 0, 1, 1, 0, 0]), 1: [True, False, True, False, True, False]}, 4],
            # No supports at all: fixed is empty.
            [{}, 2],
            # A node listed with all-zero flags, and a fully clamped node.
            [{0: [0, 0, 0, 0, 0, 0], 1: (1, 1, 1, 1, 1, 1)}, 2],
            # Node index equal to n_nodes -> ValueError.
            [{0: [1, 1, 1, 1, 1, 1], 3: [0, 0, 1, 0, 0, 0]}, 3],
            # Flags of length 5 -> ValueError.
            [{1: [1, 0, 1, 0, 1]}, 2],
        ],
        "test_cases": [
            {
                "test_code": test_partition_sets,
                "expected_failures": [fail_unsorted_fixed, fail_inverted_flags, fail_three_dofs_per_node],
            },
            {
                "test_code": test_invalid_input_raises,
                "expected_failures": [fail_no_validation],
            },
        ],
        "fresh_inputs": {
            "only_fixed": "its arguments are 0/1 support flags and a node count: no number to draw anew, and other flags are another problem",
        },
    }

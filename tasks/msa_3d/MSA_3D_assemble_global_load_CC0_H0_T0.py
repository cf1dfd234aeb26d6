import numpy as np
import pytest
from typing import Dict, Sequence


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


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_loads_placed_at_node_dofs(fcn):
    """For loads given at non-consecutive nodes in unsorted dict order (as list,
    tuple and ndarray), the result has length 6N, each node's six components
    sit at indices 6n .. 6n+5 in the order [Fx, Fy, Fz, Mx, My, Mz], every other
    entry (unloaded nodes, including the last node) is zero, and the sum of all
    entries equals the sum of the applied components. An empty dict gives a
    zero vector of length 6N."""
    loads = {
        4: [1.5, -2.0, 3.25, 0.4, -0.7, 9.0],
        1: (-6.0, 0.0, 2.5, 11.0, 0.0, -3.3),
        0: np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]),
    }
    n_nodes = 6
    P = np.asarray(fcn(loads, n_nodes), dtype=float)
    assert P.shape == (36,)
    expected = np.zeros(36)
    for n, f in loads.items():
        expected[6 * n : 6 * n + 6] = f
    assert np.allclose(P, expected, rtol=0.0, atol=1e-15)
    assert np.isclose(P.sum(), sum(float(np.sum(f)) for f in loads.values()))
    assert np.allclose(P[12:24], 0.0) and np.allclose(P[30:36], 0.0)
    P0 = np.asarray(fcn({}, 3), dtype=float)
    assert P0.shape == (18,) and np.all(P0 == 0.0)


def test_invalid_input_raises(fcn):
    """ValueError for a negative node index, for a node index equal to the
    number of nodes, and for load sequences with 5 or 7 components."""
    good = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    with pytest.raises(ValueError):
        fcn({-1: good}, 3)
    with pytest.raises(ValueError):
        fcn({0: good, 3: good}, 3)
    with pytest.raises(ValueError):
        fcn({1: good[:5]}, 3)
    with pytest.raises(ValueError):
        fcn({2: good + [7.0]}, 3)


# ---------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ---------------------------------------------------------------------------


def fail_one_based_nodes(nodal_loads, n_nodes):
    """Treats node indices as one-based (node n at DOFs 6(n-1) .. 6(n-1)+5)."""
    P = np.zeros(6 * n_nodes)
    for node, load in nodal_loads.items():
        if node < 1 or node > n_nodes or len(load) != 6:
            raise ValueError("bad load")
        P[6 * (node - 1) : 6 * node] = load
    return P


def fail_component_major_ordering(nodal_loads, n_nodes):
    """Orders the vector by component first (index c*N + n) instead of node first."""
    P = np.zeros(6 * n_nodes)
    for node, load in nodal_loads.items():
        if node < 0 or node >= n_nodes or len(load) != 6:
            raise ValueError("bad load")
        for c in range(6):
            P[c * n_nodes + node] = load[c]
    return P


def fail_forces_only(nodal_loads, n_nodes):
    """Places only the three force components and drops the moments."""
    P = np.zeros(6 * n_nodes)
    for node, load in nodal_loads.items():
        if node < 0 or node >= n_nodes or len(load) != 6:
            raise ValueError("bad load")
        P[6 * node : 6 * node + 3] = load[:3]
    return P


def fail_no_validation(nodal_loads, n_nodes):
    """Copies components one by one without checking indices or lengths, so a
    negative node index silently wraps around to the last nodes and extra
    components are ignored."""
    P = np.zeros(6 * n_nodes)
    for node, load in nodal_loads.items():
        for c in range(min(6, len(load))):
            P[6 * node + c] = load[c]
    return P


def task_info():
    return {
        "task_id": "MSA_3D_assemble_global_load_CC0_H0_T0",
        "task_short_description": "Assemble the 6N global nodal load vector of a 3D frame from a dict of nodal loads",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": assemble_global_load_vector_3D,
        "required_imports": [
            "import numpy as np",
            "import pytest",
            "from typing import Dict, Sequence",
        ],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            # Unsorted keys, mixed sequence types, unloaded nodes in between and at the end.
            [
                {
                    3: [12.5, -4.75, 0.0, 1.3, -0.27, 8.6],
                    0: (-3.1, 7.2, 15.9, 0.0, 2.45, -0.66),
                    5: np.array([0.9, 0.0, -21.4, -5.5, 0.0, 3.8]),
                },
                7,
            ],
            # Single node model, load at node 0.
            [{0: [1.1, -2.2, 3.3, -4.4, 5.5, -6.6]}, 1],
            # No loads at all.
            [{}, 3],
            # Load at the last node only.
            [{2: (0.0, 0.0, -980.7, 35.2, -17.9, 0.0)}, 3],
            # Node index equal to n_nodes -> ValueError.
            [{1: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 4: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]}, 4],
        ],
        "test_cases": [
            {
                "test_code": test_loads_placed_at_node_dofs,
                "expected_failures": [fail_one_based_nodes, fail_component_major_ordering, fail_forces_only],
            },
            {
                "test_code": test_invalid_input_raises,
                "expected_failures": [fail_no_validation],
            },
        ],
        "fresh_inputs": {
            "draws": [{"arguments": ["nodal_loads"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True}],
            "fixed": {"n_nodes": "the loaded node indices must stay below it; the published inputs test the error"},
        },
    }

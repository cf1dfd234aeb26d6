import numpy as np
import pytest
from typing import Tuple


def generate_uniform_mesh_1d(x_min: float, x_max: float, num_elements: int) -> Tuple[np.ndarray, np.ndarray]:
    """
    Build a uniform mesh of 2-node linear elements on the interval [x_min, x_max].

    Parameters
    ----------
    x_min : float
        Left end of the domain.
    x_max : float
        Right end of the domain. Must satisfy x_max > x_min.
    num_elements : int
        Number of equal-length elements. Must be >= 1.

    Returns
    -------
    node_coords : np.ndarray of float, shape (num_elements + 1,)
        Node coordinates in increasing order, node_coords[i] = x_min + i * h with
        h = (x_max - x_min) / num_elements; node_coords[0] == x_min and
        node_coords[-1] == x_max.
    element_connectivity : np.ndarray of integer dtype, shape (num_elements, 2)
        Zero-based node indices of each element, element e connecting nodes
        [e, e + 1] (left node first).

    Raises
    ------
    ValueError
        If num_elements < 1 or x_max <= x_min.
    """
    if num_elements < 1:
        raise ValueError("num_elements must be at least 1")
    if x_max <= x_min:
        raise ValueError("x_max must be greater than x_min")
    node_coords = np.linspace(x_min, x_max, num_elements + 1)
    left_nodes = np.arange(num_elements, dtype=int)
    # Element e spans nodes e and e+1; stacking the left-node indices with their successors.
    element_connectivity = np.column_stack((left_nodes, left_nodes + 1))
    return node_coords, element_connectivity


# ----------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------

def test_uniform_mesh_geometry_and_connectivity(fcn):
    """Check, for a few domains (including negative coordinates) and element counts, that
    the node array has num_elements + 1 entries, starts at x_min and ends at x_max, has
    equal spacing (x_max - x_min) / num_elements, and that the connectivity has shape
    (num_elements, 2), integer dtype, and row e equal to [e, e + 1]."""
    for x_min, x_max, n in [(0.0, 1.0, 1), (-1.3, 2.45, 5), (2.0, 7.5, 11)]:
        nodes, conn = fcn(x_min, x_max, n)
        nodes = np.asarray(nodes)
        conn = np.asarray(conn)
        assert nodes.shape == (n + 1,)
        assert np.isclose(nodes[0], x_min)
        assert np.isclose(nodes[-1], x_max)
        h = (x_max - x_min) / n
        assert np.allclose(np.diff(nodes), h)
        assert conn.shape == (n, 2)
        assert np.issubdtype(conn.dtype, np.integer)
        expected = np.array([[e, e + 1] for e in range(n)])
        assert np.array_equal(conn, expected)


def test_invalid_mesh_input_raises(fcn):
    """Check that a ValueError is raised for zero elements, a negative element count,
    a zero-length domain (x_max == x_min) and a reversed domain (x_max < x_min)."""
    with pytest.raises(ValueError):
        fcn(0.0, 1.0, 0)
    with pytest.raises(ValueError):
        fcn(0.0, 1.0, -3)
    with pytest.raises(ValueError):
        fcn(1.5, 1.5, 4)
    with pytest.raises(ValueError):
        fcn(2.0, -1.0, 4)


# ----------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ----------------------------------------------------------------------------

def fail_num_elements_nodes(x_min: float, x_max: float, num_elements: int) -> Tuple[np.ndarray, np.ndarray]:
    """Off by one: creates num_elements nodes instead of num_elements + 1."""
    if num_elements < 1 or x_max <= x_min:
        raise ValueError("bad input")
    nodes = np.linspace(x_min, x_max, num_elements)
    conn = np.array([[e, e + 1] for e in range(num_elements)], dtype=int)
    return nodes, conn


def fail_one_based_connectivity(x_min: float, x_max: float, num_elements: int) -> Tuple[np.ndarray, np.ndarray]:
    """Uses 1-based node numbering in the connectivity."""
    if num_elements < 1 or x_max <= x_min:
        raise ValueError("bad input")
    nodes = np.linspace(x_min, x_max, num_elements + 1)
    conn = np.array([[e + 1, e + 2] for e in range(num_elements)], dtype=int)
    return nodes, conn


def fail_spacing_ignores_x_min(x_min: float, x_max: float, num_elements: int) -> Tuple[np.ndarray, np.ndarray]:
    """Uses h = x_max / num_elements, as if the domain always started at zero."""
    if num_elements < 1 or x_max <= x_min:
        raise ValueError("bad input")
    h = x_max / num_elements
    nodes = x_min + h * np.arange(num_elements + 1)
    conn = np.array([[e, e + 1] for e in range(num_elements)], dtype=int)
    return nodes, conn


def fail_float_connectivity(x_min: float, x_max: float, num_elements: int) -> Tuple[np.ndarray, np.ndarray]:
    """Returns the connectivity as a float array."""
    if num_elements < 1 or x_max <= x_min:
        raise ValueError("bad input")
    nodes = np.linspace(x_min, x_max, num_elements + 1)
    conn = np.array([[e, e + 1] for e in range(num_elements)], dtype=float)
    return nodes, conn


def fail_no_input_validation(x_min: float, x_max: float, num_elements: int) -> Tuple[np.ndarray, np.ndarray]:
    """Never validates its input; a reversed domain silently yields decreasing nodes."""
    n = max(int(num_elements), 0)
    nodes = np.linspace(x_min, x_max, n + 1)
    conn = np.array([[e, e + 1] for e in range(n)], dtype=int).reshape(n, 2)
    return nodes, conn


def fail_only_checks_count(x_min: float, x_max: float, num_elements: int) -> Tuple[np.ndarray, np.ndarray]:
    """Checks the element count but accepts a zero-length or reversed domain."""
    if num_elements < 1:
        raise ValueError("num_elements must be at least 1")
    nodes = np.linspace(x_min, x_max, num_elements + 1)
    conn = np.array([[e, e + 1] for e in range(num_elements)], dtype=int)
    return nodes, conn


def task_info():
    return {
        "task_id": "FEM_1D_uniform_mesh_CC0_H0_T0",
        "task_short_description": "uniform 1D mesh of 2-node linear elements: node coordinates and connectivity",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": generate_uniform_mesh_1d,
        "required_imports": ["import numpy as np", "import pytest", "from typing import Tuple"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            [-0.7, 2.35, 7],
            [1.25, 4.0, 1],
            [0.0, 0.3, 4],
            [3.0, 3.0, 2],
        ],
        "test_cases": [
            {
                "test_code": test_uniform_mesh_geometry_and_connectivity,
                "expected_failures": [
                    fail_num_elements_nodes,
                    fail_one_based_connectivity,
                    fail_spacing_ignores_x_min,
                    fail_float_connectivity,
                ],
            },
            {
                "test_code": test_invalid_mesh_input_raises,
                "expected_failures": [fail_no_input_validation, fail_only_checks_count],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["x_min", "x_max"], "draw": "affine", "dimensions": 1, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["num_elements"], "draw": "integer", "low": 1, "high": 12},
            ],
        },
    }

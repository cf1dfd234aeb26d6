import numpy as np
import pytest
from typing import Dict, List


def solve_linear_elastic_bar_1d(
    x_min: float,
    x_max: float,
    num_elements: int,
    material_regions: List[Dict[str, float]],
    body_force: float,
    dirichlet_bcs: List[Dict[str, float]],
    neumann_bcs: List[Dict[str, float]],
    n_gauss: int,
) -> Dict[str, np.ndarray]:
    """
    Solve the 1D linear elastic bar problem  -d/dx( E(x) A(x) du/dx ) = f  on [x_min, x_max]
    with 2-node linear finite elements on a uniform mesh.

    Mesh
    ----
    num_elements equal elements; node i (i = 0 .. num_elements) is at
    x_i = x_min + i * h, h = (x_max - x_min) / num_elements; element e joins nodes e and
    e + 1. One degree of freedom per node: the axial displacement u_i (positive in +x).

    Material
    --------
    material_regions is a list of dicts with keys "coord_min", "coord_max", "E", "A".
    Each element takes E and A (constant over the element) from the FIRST region in list
    order with coord_min <= x_mid <= coord_max, where x_mid is the element midpoint.

    Element matrices (Gauss-Legendre quadrature with n_gauss points on xi in [-1, 1],
    shape functions N1 = (1 - xi)/2, N2 = (1 + xi)/2, J = h/2):
        k_e[a, b] = sum_g w_g * E*A * dN_a/dx * dN_b/dx * J
        f_e[a]    = sum_g w_g * body_force * N_a(xi_g) * J
    body_force is a uniform distributed axial load (force per unit length, positive in +x).
    Element contributions are assembled into the global stiffness K and load vector F.

    Boundary conditions
    -------------------
    dirichlet_bcs: list of dicts {"x_location": float, "u_prescribed": float}; the node at
    x_location gets the prescribed displacement.
    neumann_bcs: list of dicts {"x_location": float, "load": float}; a concentrated axial
    force (positive in +x) added to F at the node at x_location. Several loads at the same
    node add up. A load may also act at a Dirichlet node (it then only changes the reaction).
    An x_location identifies the mesh node nearest to it; it must lie within
    1e-9 * (x_max - x_min) of that node.

    Solution
    --------
    Free displacements solve K_ff u_f = F_f - K_fc u_c (f: free nodes, c: Dirichlet nodes).
    The reaction at each Dirichlet node is R = (K u - F) at that node, i.e. the force the
    support exerts on the bar (positive in +x), so that
    sum(R) + sum(point loads) + body_force * (x_max - x_min) = 0.

    Parameters
    ----------
    x_min, x_max : float
        Domain ends, x_max > x_min.
    num_elements : int
        Number of elements, >= 1.
    material_regions : list of dict
        As described above.
    body_force : float
        Uniform distributed load f (force/length).
    dirichlet_bcs : list of dict
        At least one entry; at most one entry per node.
    neumann_bcs : list of dict
        Point loads; may be empty.
    n_gauss : int
        Number of Gauss points per element, 1, 2 or 3.

    Returns
    -------
    dict with keys
        "node_coords":    np.ndarray (num_elements + 1,), node coordinates x_i.
        "displacements":  np.ndarray (num_elements + 1,), nodal displacements u_i.
        "reactions":      np.ndarray (len(dirichlet_bcs),), reaction at each Dirichlet node,
                          in the order of dirichlet_bcs.
        "reaction_nodes": np.ndarray of int (len(dirichlet_bcs),), node index of each
                          Dirichlet condition, in the order of dirichlet_bcs.

    Raises
    ------
    ValueError
        If num_elements < 1; x_max <= x_min; n_gauss not in {1, 2, 3}; an element midpoint
        lies in no material region; dirichlet_bcs is empty; two Dirichlet conditions refer
        to the same node; or a boundary condition x_location is not at a mesh node.
    """
    if num_elements < 1:
        raise ValueError("num_elements must be at least 1")
    if x_max <= x_min:
        raise ValueError("x_max must be greater than x_min")
    if n_gauss not in (1, 2, 3):
        raise ValueError("n_gauss must be 1, 2 or 3")
    if len(dirichlet_bcs) == 0:
        raise ValueError("at least one Dirichlet condition is required")

    n_nodes = num_elements + 1
    node_coords = np.linspace(x_min, x_max, n_nodes)
    h = (x_max - x_min) / num_elements
    tol = 1e-9 * (x_max - x_min)

    def node_at(x_loc: float) -> int:
        idx = int(np.argmin(np.abs(node_coords - x_loc)))
        if abs(node_coords[idx] - x_loc) > tol:
            raise ValueError(f"x_location {x_loc} is not at a mesh node")
        return idx

    xi_pts, w_pts = np.polynomial.legendre.leggauss(n_gauss)
    K = np.zeros((n_nodes, n_nodes))
    F = np.zeros(n_nodes)
    for e in range(num_elements):
        x_mid = (node_coords[e] + node_coords[e + 1]) / 2
        region = next((r for r in material_regions if r["coord_min"] <= x_mid <= r["coord_max"]), None)
        if region is None:
            raise ValueError(f"element {e} (midpoint {x_mid}) lies in no material region")
        EA = region["E"] * region["A"]
        J = h / 2
        dN_dx = np.array([-1.0, 1.0]) / h
        k_e = np.zeros((2, 2))
        f_e = np.zeros(2)
        for xi, w in zip(xi_pts, w_pts):
            N = np.array([1.0 - xi, 1.0 + xi]) / 2
            k_e += w * EA * np.outer(dN_dx, dN_dx) * J
            f_e += w * body_force * N * J
        dofs = [e, e + 1]
        K[np.ix_(dofs, dofs)] += k_e
        F[dofs] += f_e

    for bc in neumann_bcs:
        F[node_at(bc["x_location"])] += bc["load"]

    fixed = np.array([node_at(bc["x_location"]) for bc in dirichlet_bcs], dtype=int)
    if len(set(fixed.tolist())) != len(fixed):
        raise ValueError("two Dirichlet conditions refer to the same node")
    u = np.zeros(n_nodes)
    u[fixed] = [bc["u_prescribed"] for bc in dirichlet_bcs]
    free = np.setdiff1d(np.arange(n_nodes), fixed)
    if free.size:
        rhs = F[free] - K[np.ix_(free, fixed)] @ u[fixed]
        u[free] = np.linalg.solve(K[np.ix_(free, free)], rhs)

    reactions = K[fixed, :] @ u - F[fixed]
    return {
        "node_coords": node_coords,
        "displacements": u,
        "reactions": reactions,
        "reaction_nodes": fixed,
    }


# ----------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------

def test_body_force_closed_form(fcn):
    """A homogeneous bar on [0, L] fixed at x = 0 (u = 0), free at x = L, under a uniform
    body force f: the exact solution u(x) = f/(E A) * (L x - x^2 / 2) is reproduced
    exactly at the nodes by linear elements with consistent loads, for every quadrature
    order; the single reaction equals -f L; node coordinates are uniform from 0 to L and
    the reaction node is 0."""
    L, E, A, f, n = 2.5, 120.0, 0.4, 3.2, 6
    regions = [{"coord_min": 0.0, "coord_max": L, "E": E, "A": A}]
    for n_gauss in (1, 2, 3):
        out = fcn(0.0, L, n, regions, f, [{"x_location": 0.0, "u_prescribed": 0.0}], [], n_gauss)
        x = np.asarray(out["node_coords"])
        assert np.allclose(x, np.linspace(0.0, L, n + 1))
        u_exact = f / (E * A) * (L * x - x ** 2 / 2)
        assert np.allclose(out["displacements"], u_exact, rtol=1e-10, atol=1e-12)
        assert np.allclose(out["reactions"], [-f * L], rtol=1e-10)
        assert np.array_equal(np.asarray(out["reaction_nodes"]), [0])


def test_two_materials_and_equilibrium(fcn):
    """Two bars in series (different E and A, interface at a node) on [1, 4], fixed at the
    right end with u = 0.01 and loaded at the left end by a point load P (positive in +x):
    the left-end displacement is 0.01 + P * (L1/(E1 A1) + L2/(E2 A2)) and the reaction
    is -P. A second
    case with a body force, a nonzero prescribed displacement at both ends and an interior
    point load checks global equilibrium sum(R) + sum(P) + f * length = 0 and that the
    prescribed displacements are returned at the Dirichlet nodes."""
    regions = [
        {"coord_min": 1.0, "coord_max": 2.2, "E": 50.0, "A": 2.0},
        {"coord_min": 2.2, "coord_max": 4.0, "E": 300.0, "A": 0.5},
    ]
    P = -7.5
    out = fcn(1.0, 4.0, 5, regions, 0.0, [{"x_location": 4.0, "u_prescribed": 0.01}],
              [{"x_location": 1.0, "load": P}], 2)
    u = np.asarray(out["displacements"])
    flex = 1.2 / (50.0 * 2.0) + 1.8 / (300.0 * 0.5)
    assert np.isclose(u[0], 0.01 + P * flex, rtol=1e-10)
    assert np.isclose(u[-1], 0.01)
    assert np.allclose(out["reactions"], [-P], rtol=1e-10)
    assert np.array_equal(np.asarray(out["reaction_nodes"]), [5])

    f = 1.7
    out = fcn(1.0, 4.0, 10, regions, f,
              [{"x_location": 1.0, "u_prescribed": -0.02}, {"x_location": 4.0, "u_prescribed": 0.03}],
              [{"x_location": 2.2, "load": 4.0}], 3)
    R = np.asarray(out["reactions"])
    assert R.shape == (2,)
    assert np.isclose(R.sum() + 4.0 + f * 3.0, 0.0, atol=1e-10)
    u = np.asarray(out["displacements"])
    assert np.isclose(u[0], -0.02) and np.isclose(u[-1], 0.03)
    assert np.array_equal(np.asarray(out["reaction_nodes"]), [0, 10])


def test_invalid_problem_raises(fcn):
    """Check ValueError for: no Dirichlet condition (singular stiffness), a boundary
    condition located between nodes, and an element lying outside every material region."""
    regions = [{"coord_min": 0.0, "coord_max": 1.0, "E": 10.0, "A": 1.0}]
    with pytest.raises(ValueError):
        fcn(0.0, 1.0, 4, regions, 1.0, [], [{"x_location": 1.0, "load": 1.0}], 2)
    with pytest.raises(ValueError):
        fcn(0.0, 1.0, 4, regions, 1.0, [{"x_location": 0.1, "u_prescribed": 0.0}], [], 2)
    with pytest.raises(ValueError):
        fcn(0.0, 2.0, 4, regions, 1.0, [{"x_location": 0.0, "u_prescribed": 0.0}], [], 2)


# ----------------------------------------------------------------------------
# Expected failures (plausible mistakes)
# ----------------------------------------------------------------------------

def fail_load_missing_jacobian(x_min, x_max, num_elements, material_regions, body_force,
                               dirichlet_bcs, neumann_bcs, n_gauss):
    """Integrates the body-force load in the natural coordinate without the factor J = h/2."""
    if num_elements < 1 or x_max <= x_min or n_gauss not in (1, 2, 3) or not dirichlet_bcs:
        raise ValueError("bad input")
    n = num_elements + 1
    x = np.linspace(x_min, x_max, n)
    h = (x_max - x_min) / num_elements
    node = lambda xl: int(np.argmin(np.abs(x - xl)))
    K = np.zeros((n, n))
    F = np.zeros(n)
    for e in range(num_elements):
        xm = 0.5 * (x[e] + x[e + 1])
        r = next(r for r in material_regions if r["coord_min"] <= xm <= r["coord_max"])
        K[e:e + 2, e:e + 2] += r["E"] * r["A"] / h * np.array([[1.0, -1.0], [-1.0, 1.0]])
        F[e:e + 2] += body_force * 1.0  # mistake: sum_g w_g N_a = 1, J omitted
    for bc in neumann_bcs:
        F[node(bc["x_location"])] += bc["load"]
    c = np.array([node(bc["x_location"]) for bc in dirichlet_bcs], dtype=int)
    u = np.zeros(n)
    u[c] = [bc["u_prescribed"] for bc in dirichlet_bcs]
    f = np.setdiff1d(np.arange(n), c)
    u[f] = np.linalg.solve(K[np.ix_(f, f)], F[f] - K[np.ix_(f, c)] @ u[c])
    return {"node_coords": x, "displacements": u, "reactions": K[c] @ u - F[c], "reaction_nodes": c}


def fail_reaction_sign_flipped(x_min, x_max, num_elements, material_regions, body_force,
                               dirichlet_bcs, neumann_bcs, n_gauss):
    """Reports reactions as F - K u (the force on the support instead of on the bar)."""
    if num_elements < 1 or x_max <= x_min or n_gauss not in (1, 2, 3) or not dirichlet_bcs:
        raise ValueError("bad input")
    n = num_elements + 1
    x = np.linspace(x_min, x_max, n)
    h = (x_max - x_min) / num_elements
    node = lambda xl: int(np.argmin(np.abs(x - xl)))
    K = np.zeros((n, n))
    F = np.zeros(n)
    for e in range(num_elements):
        xm = 0.5 * (x[e] + x[e + 1])
        r = next(r for r in material_regions if r["coord_min"] <= xm <= r["coord_max"])
        K[e:e + 2, e:e + 2] += r["E"] * r["A"] / h * np.array([[1.0, -1.0], [-1.0, 1.0]])
        F[e:e + 2] += body_force * h / 2
    for bc in neumann_bcs:
        F[node(bc["x_location"])] += bc["load"]
    c = np.array([node(bc["x_location"]) for bc in dirichlet_bcs], dtype=int)
    u = np.zeros(n)
    u[c] = [bc["u_prescribed"] for bc in dirichlet_bcs]
    f = np.setdiff1d(np.arange(n), c)
    u[f] = np.linalg.solve(K[np.ix_(f, f)], F[f] - K[np.ix_(f, c)] @ u[c])
    return {"node_coords": x, "displacements": u, "reactions": F[c] - K[c] @ u, "reaction_nodes": c}


def fail_first_region_only(x_min, x_max, num_elements, material_regions, body_force,
                           dirichlet_bcs, neumann_bcs, n_gauss):
    """Uses the first material region for every element."""
    if num_elements < 1 or x_max <= x_min or n_gauss not in (1, 2, 3) or not dirichlet_bcs:
        raise ValueError("bad input")
    n = num_elements + 1
    x = np.linspace(x_min, x_max, n)
    h = (x_max - x_min) / num_elements
    node = lambda xl: int(np.argmin(np.abs(x - xl)))
    EA = material_regions[0]["E"] * material_regions[0]["A"]
    K = np.zeros((n, n))
    F = np.zeros(n)
    for e in range(num_elements):
        K[e:e + 2, e:e + 2] += EA / h * np.array([[1.0, -1.0], [-1.0, 1.0]])
        F[e:e + 2] += body_force * h / 2
    for bc in neumann_bcs:
        F[node(bc["x_location"])] += bc["load"]
    c = np.array([node(bc["x_location"]) for bc in dirichlet_bcs], dtype=int)
    u = np.zeros(n)
    u[c] = [bc["u_prescribed"] for bc in dirichlet_bcs]
    f = np.setdiff1d(np.arange(n), c)
    u[f] = np.linalg.solve(K[np.ix_(f, f)], F[f] - K[np.ix_(f, c)] @ u[c])
    return {"node_coords": x, "displacements": u, "reactions": K[c] @ u - F[c], "reaction_nodes": c}


def fail_body_force_lumped_left(x_min, x_max, num_elements, material_regions, body_force,
                                dirichlet_bcs, neumann_bcs, n_gauss):
    """Puts the whole element body-force resultant f*h on the element's left node."""
    if num_elements < 1 or x_max <= x_min or n_gauss not in (1, 2, 3) or not dirichlet_bcs:
        raise ValueError("bad input")
    n = num_elements + 1
    x = np.linspace(x_min, x_max, n)
    h = (x_max - x_min) / num_elements
    node = lambda xl: int(np.argmin(np.abs(x - xl)))
    K = np.zeros((n, n))
    F = np.zeros(n)
    for e in range(num_elements):
        xm = 0.5 * (x[e] + x[e + 1])
        r = next(r for r in material_regions if r["coord_min"] <= xm <= r["coord_max"])
        K[e:e + 2, e:e + 2] += r["E"] * r["A"] / h * np.array([[1.0, -1.0], [-1.0, 1.0]])
        F[e] += body_force * h
    for bc in neumann_bcs:
        F[node(bc["x_location"])] += bc["load"]
    c = np.array([node(bc["x_location"]) for bc in dirichlet_bcs], dtype=int)
    u = np.zeros(n)
    u[c] = [bc["u_prescribed"] for bc in dirichlet_bcs]
    f = np.setdiff1d(np.arange(n), c)
    u[f] = np.linalg.solve(K[np.ix_(f, f)], F[f] - K[np.ix_(f, c)] @ u[c])
    return {"node_coords": x, "displacements": u, "reactions": K[c] @ u - F[c], "reaction_nodes": c}


def fail_prescribed_values_ignored(x_min, x_max, num_elements, material_regions, body_force,
                                   dirichlet_bcs, neumann_bcs, n_gauss):
    """Treats every Dirichlet condition as homogeneous (u = 0 at the constrained nodes)."""
    if num_elements < 1 or x_max <= x_min or n_gauss not in (1, 2, 3) or not dirichlet_bcs:
        raise ValueError("bad input")
    n = num_elements + 1
    x = np.linspace(x_min, x_max, n)
    h = (x_max - x_min) / num_elements
    node = lambda xl: int(np.argmin(np.abs(x - xl)))
    K = np.zeros((n, n))
    F = np.zeros(n)
    for e in range(num_elements):
        xm = 0.5 * (x[e] + x[e + 1])
        r = next(r for r in material_regions if r["coord_min"] <= xm <= r["coord_max"])
        K[e:e + 2, e:e + 2] += r["E"] * r["A"] / h * np.array([[1.0, -1.0], [-1.0, 1.0]])
        F[e:e + 2] += body_force * h / 2
    for bc in neumann_bcs:
        F[node(bc["x_location"])] += bc["load"]
    c = np.array([node(bc["x_location"]) for bc in dirichlet_bcs], dtype=int)
    u = np.zeros(n)
    f = np.setdiff1d(np.arange(n), c)
    u[f] = np.linalg.solve(K[np.ix_(f, f)], F[f])
    return {"node_coords": x, "displacements": u, "reactions": K[c] @ u - F[c], "reaction_nodes": c}


def fail_no_validation(x_min, x_max, num_elements, material_regions, body_force,
                       dirichlet_bcs, neumann_bcs, n_gauss):
    """Snaps off-node locations to the nearest node, falls back to the last region for
    uncovered elements and solves a singular system in the least-squares sense instead
    of raising."""
    n = num_elements + 1
    x = np.linspace(x_min, x_max, n)
    h = (x_max - x_min) / num_elements
    node = lambda xl: int(np.argmin(np.abs(x - xl)))
    K = np.zeros((n, n))
    F = np.zeros(n)
    for e in range(num_elements):
        xm = 0.5 * (x[e] + x[e + 1])
        r = next((r for r in material_regions if r["coord_min"] <= xm <= r["coord_max"]), material_regions[-1])
        K[e:e + 2, e:e + 2] += r["E"] * r["A"] / h * np.array([[1.0, -1.0], [-1.0, 1.0]])
        F[e:e + 2] += body_force * h / 2
    for bc in neumann_bcs:
        F[node(bc["x_location"])] += bc["load"]
    c = np.array([node(bc["x_location"]) for bc in dirichlet_bcs], dtype=int)
    u = np.zeros(n)
    u[c] = [bc["u_prescribed"] for bc in dirichlet_bcs]
    f = np.setdiff1d(np.arange(n), c)
    u[f] = np.linalg.lstsq(K[np.ix_(f, f)], F[f] - K[np.ix_(f, c)] @ u[c], rcond=None)[0]
    return {"node_coords": x, "displacements": u, "reactions": K[c] @ u - F[c], "reaction_nodes": c}


def task_info():
    return {
        "task_id": "FEM_1D_linear_elastic_CC0_H0_T0",
        "task_short_description": "1D linear elastic bar FE solve with material regions, body force, Dirichlet and point loads",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": solve_linear_elastic_bar_1d,
        "required_imports": ["import numpy as np", "import pytest", "from typing import Dict, List"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            # two regions, interface inside an element (midpoint rule decides), tip load
            [0.3, 2.1, 7,
             [{"coord_min": 0.3, "coord_max": 1.13, "E": 210.0, "A": 0.35},
              {"coord_min": 1.13, "coord_max": 2.1, "E": 70.0, "A": 0.9}],
             -1.3,
             [{"x_location": 0.3, "u_prescribed": 0.0}],
             [{"x_location": 2.1, "load": 3.7}],
             2],
            # both ends prescribed (nonzero), three regions listed out of order, interior load
            [-1.5, 1.1, 10,
             [{"coord_min": 0.4, "coord_max": 1.1, "E": 95.0, "A": 1.6},
              {"coord_min": -1.5, "coord_max": -0.46, "E": 30.0, "A": 2.2},
              {"coord_min": -0.46, "coord_max": 0.4, "E": 400.0, "A": 0.15}],
             2.45,
             [{"x_location": 1.1, "u_prescribed": -0.013}, {"x_location": -1.5, "u_prescribed": 0.021}],
             [{"x_location": -0.46, "load": -1.9}, {"x_location": -0.46, "load": 0.6}],
             3],
            # fixed at the right end, loaded at the left end and at the fixed end, one region
            [-3.2, -0.7, 4,
             [{"coord_min": -5.0, "coord_max": 0.0, "E": 1.3e3, "A": 0.02}],
             0.85,
             [{"x_location": -0.7, "u_prescribed": 0.004}],
             [{"x_location": -3.2, "load": 5.5}, {"x_location": -0.7, "load": -2.0}],
             1],
            # single element, overlapping regions (first match wins)
            [0.5, 1.75, 1,
             [{"coord_min": 0.0, "coord_max": 2.0, "E": 12.0, "A": 0.6},
              {"coord_min": 0.5, "coord_max": 1.75, "E": 99.0, "A": 9.0}],
             -0.4,
             [{"x_location": 0.5, "u_prescribed": 0.002}],
             [{"x_location": 1.75, "load": 1.15}],
             2],
            # boundary condition between nodes -> ValueError
            [0.0, 1.0, 4,
             [{"coord_min": 0.0, "coord_max": 1.0, "E": 10.0, "A": 1.0}],
             1.0,
             [{"x_location": 0.3, "u_prescribed": 0.0}],
             [],
             2],
        ],
        "test_cases": [
            {
                "test_code": test_body_force_closed_form,
                "expected_failures": [fail_load_missing_jacobian, fail_reaction_sign_flipped,
                                      fail_body_force_lumped_left],
            },
            {
                "test_code": test_two_materials_and_equilibrium,
                "expected_failures": [fail_first_region_only, fail_prescribed_values_ignored,
                                      fail_reaction_sign_flipped, fail_load_missing_jacobian],
            },
            {
                "test_code": test_invalid_problem_raises,
                "expected_failures": [fail_no_validation],
            },
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["x_min", "x_max", "material_regions", "dirichlet_bcs", "neumann_bcs"],
                  "keys": ["coord_min", "coord_max", "x_location"],
                  "draw": "affine", "dimensions": 1, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["material_regions"], "keys": ["E", "A"], "draw": "scale", "low": 0.5, "high": 2.0},
                {"arguments": ["body_force"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
                {"arguments": ["dirichlet_bcs"], "keys": ["u_prescribed"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
                {"arguments": ["neumann_bcs"], "keys": ["load"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},
            ],
            "fixed": {
                "num_elements": "each x_location must fall on a node of the mesh, which the element count places",
                "n_gauss": "the docstring supports 1, 2 or 3 points; the published inputs use each",
            },
        },
    }

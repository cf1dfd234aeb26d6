import numpy as np
import pytest


def quad8_mesh_rectangle(xl, xh, yl, yh, nx, ny):
    """
    Structured mesh of 8-node serendipity quadrilaterals (Q8) on the rectangle
    [xl, xh] x [yl, yh], divided into nx equal columns and ny equal rows of elements.

    Global nodes
    ------------
    Let dx = (xh - xl) / (2 nx) and dy = (yh - yl) / (2 ny), and consider the
    (2 nx + 1) x (2 ny + 1) grid of points (xl + i dx, yl + j dy), i = 0..2nx,
    j = 0..2ny. Element corners are the points with i and j both even, midside
    nodes are the points with exactly one of i, j odd, and the points with i and j
    both odd (element centres) are NOT nodes. Global node numbers are assigned by
    scanning this grid row by row from the bottom (j = 0, 1, ..., 2ny) and, within
    a row, from left to right (i = 0, 1, ..., 2nx), skipping element centres,
    starting from 0. Hence rows with even j hold 2nx + 1 nodes, rows with odd j
    hold nx + 1 nodes, and n_nodes = (2nx + 1)(2ny + 1) - nx ny.

    Elements
    --------
    Element (cx, cy), cx = 0..nx-1 (column), cy = 0..ny-1 (row), occupies
    [xl + 2 cx dx, xl + 2 (cx + 1) dx] x [yl + 2 cy dy, yl + 2 (cy + 1) dy] and has
    number e = cy * nx + cx (row by row from the bottom, left to right within a
    row). With i0 = 2 cx, j0 = 2 cy and node(i, j) the global number of grid point
    (i, j), its 8 local nodes are, in this order:
        0: node(i0,     j0)       bottom-left corner
        1: node(i0 + 2, j0)       bottom-right corner
        2: node(i0 + 2, j0 + 2)   top-right corner
        3: node(i0,     j0 + 2)   top-left corner
        4: node(i0 + 1, j0)       midside of the bottom edge
        5: node(i0 + 2, j0 + 1)   midside of the right edge
        6: node(i0 + 1, j0 + 2)   midside of the top edge
        7: node(i0,     j0 + 1)   midside of the left edge
    i.e. corners counter-clockwise from the bottom-left, then midsides
    counter-clockwise starting with the bottom edge (the standard Q8 ordering whose
    natural coordinates are (-1,-1), (1,-1), (1,1), (-1,1), (0,-1), (1,0), (0,1),
    (-1,0)). Neighbouring elements share their corner and midside nodes.

    Parameters
    ----------
    xl, xh : float
        Left and right x-limits of the rectangle (xl < xh).
    yl, yh : float
        Bottom and top y-limits of the rectangle (yl < yh).
    nx, ny : int
        Number of elements in the x and y directions (each >= 1).

    Returns
    -------
    coords : np.ndarray of float, shape (n_nodes, 2)
        coords[k] = (x, y) of global node k, computed as (xl + i dx, yl + j dy).
    connect : np.ndarray of int, shape (nx * ny, 8)
        connect[e] lists the global node numbers of element e in the local order above.
    Returned as the tuple (coords, connect).

    Raises
    ------
    ValueError
        If nx < 1, ny < 1, xl >= xh or yl >= yh.
    """
    if nx < 1 or ny < 1:
        raise ValueError("nx and ny must be at least 1")
    if not xl < xh:
        raise ValueError("xl must be smaller than xh")
    if not yl < yh:
        raise ValueError("yl must be smaller than yh")

    n_gx = 2 * nx + 1
    n_gy = 2 * ny + 1
    dx = (xh - xl) / (2 * nx)
    dy = (yh - yl) / (2 * ny)

    # Global number of every grid point; centre points get no number and are never read.
    node_of = np.empty((n_gy, n_gx), dtype=np.int64)
    coords = []
    for j in range(n_gy):
        for i in range(n_gx):
            if i % 2 == 1 and j % 2 == 1:
                continue
            node_of[j, i] = len(coords)
            coords.append((xl + i * dx, yl + j * dy))

    connect = np.empty((nx * ny, 8), dtype=np.int64)
    for cy in range(ny):
        for cx in range(nx):
            i0 = 2 * cx
            j0 = 2 * cy
            connect[cy * nx + cx] = (
                node_of[j0, i0],
                node_of[j0, i0 + 2],
                node_of[j0 + 2, i0 + 2],
                node_of[j0 + 2, i0],
                node_of[j0, i0 + 1],
                node_of[j0 + 1, i0 + 2],
                node_of[j0 + 2, i0 + 1],
                node_of[j0 + 1, i0],
            )

    return np.array(coords, dtype=float), connect


# --------------------------------------------------------------------------- tests

def test_counts_areas_and_orientation(fcn):
    """For a 3 x 2 mesh of [-0.4, 2.6] x [1.0, 2.5]: shapes and integer connectivity,
    (2nx+1)(2ny+1) - nx*ny nodes, nx*ny elements, all coordinates inside the rectangle,
    no duplicate nodes, every node used by some element, and each element's signed area
    (shoelace formula over the boundary loop corner-midside-corner...) positive
    (counter-clockwise) and equal to the cell area, so that the areas sum to the
    rectangle area."""
    xl, xh, yl, yh, nx, ny = -0.4, 2.6, 1.0, 2.5, 3, 2
    coords, connect = fcn(xl, xh, yl, yh, nx, ny)
    coords = np.asarray(coords, dtype=float)
    connect = np.asarray(connect)
    n_nodes = (2 * nx + 1) * (2 * ny + 1) - nx * ny
    assert coords.shape == (n_nodes, 2)
    assert connect.shape == (nx * ny, 8)
    assert np.issubdtype(connect.dtype, np.integer)
    assert connect.min() == 0 and connect.max() == n_nodes - 1
    assert np.unique(connect).size == n_nodes
    assert np.all(coords[:, 0] >= xl - 1e-12) and np.all(coords[:, 0] <= xh + 1e-12)
    assert np.all(coords[:, 1] >= yl - 1e-12) and np.all(coords[:, 1] <= yh + 1e-12)
    assert np.unique(np.round(coords, 9), axis=0).shape[0] == n_nodes

    loop = [0, 4, 1, 5, 2, 6, 3, 7]  # boundary walk of a Q8 element
    cell = (xh - xl) / nx * (yh - yl) / ny
    total = 0.0
    for e in range(connect.shape[0]):
        p = coords[connect[e, loop]]
        area = 0.5 * np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1])
        assert area > 0.0
        assert np.isclose(area, cell, rtol=1e-10)
        total += area
    assert np.isclose(total, (xh - xl) * (yh - yl), rtol=1e-10)


def test_midside_nodes_are_edge_midpoints_and_shared(fcn):
    """For a 4 x 3 mesh: each element's local midside nodes 4, 5, 6, 7 lie at the
    midpoints of its edges 0-1, 1-2, 2-3, 3-0; every element edge is used by one
    (boundary) or two (interior) elements, two elements sharing an edge also share the
    same midside node, and the number of interior edges is nx(ny-1) + ny(nx-1)."""
    nx, ny = 4, 3
    coords, connect = fcn(0.25, 1.75, -0.5, 0.4, nx, ny)
    coords = np.asarray(coords, dtype=float)
    connect = np.asarray(connect)
    edges = {}
    for e in range(connect.shape[0]):
        c = connect[e]
        assert len(set(c.tolist())) == 8
        for k in range(4):
            a, b, m = c[k], c[(k + 1) % 4], c[4 + k]
            assert np.allclose(coords[m], 0.5 * (coords[a] + coords[b]), atol=1e-12)
            edges.setdefault(frozenset((int(a), int(b))), []).append(int(m))
    interior = 0
    for mids in edges.values():
        assert len(mids) in (1, 2)
        if len(mids) == 2:
            interior += 1
            assert mids[0] == mids[1]
    assert interior == nx * (ny - 1) + ny * (nx - 1)


def test_numbering_and_invalid_input(fcn):
    """The documented numbering holds exactly: for nx = ny = 2 on [0,4] x [0,2] the
    nodes run row by row from the bottom (skipping element centres) and the element
    connectivity equals the hand-derived table; node coordinates are ordered by y, then
    x. Non-positive element counts and empty or inverted intervals raise ValueError."""
    coords, connect = fcn(0.0, 4.0, 0.0, 2.0, 2, 2)
    coords = np.asarray(coords, dtype=float)
    expected_coords = np.array(
        [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0],
         [0, 0.5], [2, 0.5], [4, 0.5],
         [0, 1], [1, 1], [2, 1], [3, 1], [4, 1],
         [0, 1.5], [2, 1.5], [4, 1.5],
         [0, 2], [1, 2], [2, 2], [3, 2], [4, 2]], dtype=float)
    assert np.allclose(coords, expected_coords, atol=1e-12)
    expected_connect = np.array([
        [0, 2, 10, 8, 1, 6, 9, 5],
        [2, 4, 12, 10, 3, 7, 11, 6],
        [8, 10, 18, 16, 9, 14, 17, 13],
        [10, 12, 20, 18, 11, 15, 19, 14],
    ])
    assert np.array_equal(np.asarray(connect), expected_connect)

    for args in ((0.0, 1.0, 0.0, 1.0, 0, 2), (0.0, 1.0, 0.0, 1.0, 2, 0),
                 (1.0, 1.0, 0.0, 1.0, 2, 2), (2.0, 1.0, 0.0, 1.0, 2, 2),
                 (0.0, 1.0, 3.0, 3.0, 2, 2), (0.0, 1.0, 3.0, -1.0, 2, 2)):
        with pytest.raises(ValueError):
            fcn(*args)


# --------------------------------------------------------------- expected failures

def fail_centre_points_numbered(xl, xh, yl, yh, nx, ny):
    """Numbers every point of the (2nx+1)x(2ny+1) grid, including the unused element
    centres (Q9-style numbering with Q8 connectivity)."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    ngx, ngy = 2 * nx + 1, 2 * ny + 1
    X, Y = np.meshgrid(np.linspace(xl, xh, ngx), np.linspace(yl, yh, ngy))
    coords = np.column_stack([X.ravel(), Y.ravel()])
    g = np.arange(ngx * ngy).reshape(ngy, ngx)
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            i, j = 2 * cx, 2 * cy
            conn.append([g[j, i], g[j, i + 2], g[j + 2, i + 2], g[j + 2, i],
                         g[j, i + 1], g[j + 1, i + 2], g[j + 2, i + 1], g[j + 1, i]])
    return coords, np.array(conn, dtype=np.int64)


def fail_clockwise_local_order(xl, xh, yl, yh, nx, ny):
    """Correct global numbering, but local nodes run clockwise: corners BL, TL, TR, BR,
    then midsides left, top, right, bottom."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    ngx, ngy = 2 * nx + 1, 2 * ny + 1
    g = -np.ones((ngy, ngx), dtype=np.int64)
    pts = []
    for j in range(ngy):
        for i in range(ngx):
            if i % 2 and j % 2:
                continue
            g[j, i] = len(pts)
            pts.append((xl + i * (xh - xl) / (2 * nx), yl + j * (yh - yl) / (2 * ny)))
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            i, j = 2 * cx, 2 * cy
            conn.append([g[j, i], g[j + 2, i], g[j + 2, i + 2], g[j, i + 2],
                         g[j + 1, i], g[j + 2, i + 1], g[j + 1, i + 2], g[j, i + 1]])
    return np.array(pts), np.array(conn, dtype=np.int64)


def fail_midsides_start_at_left_edge(xl, xh, yl, yh, nx, ny):
    """Corners correct, but the midside nodes are listed left, bottom, right, top."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    ngx, ngy = 2 * nx + 1, 2 * ny + 1
    g = -np.ones((ngy, ngx), dtype=np.int64)
    pts = []
    for j in range(ngy):
        for i in range(ngx):
            if i % 2 and j % 2:
                continue
            g[j, i] = len(pts)
            pts.append((xl + i * (xh - xl) / (2 * nx), yl + j * (yh - yl) / (2 * ny)))
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            i, j = 2 * cx, 2 * cy
            conn.append([g[j, i], g[j, i + 2], g[j + 2, i + 2], g[j + 2, i],
                         g[j + 1, i], g[j, i + 1], g[j + 1, i + 2], g[j + 2, i + 1]])
    return np.array(pts), np.array(conn, dtype=np.int64)


def fail_midside_nodes_not_shared(xl, xh, yl, yh, nx, ny):
    """Corner nodes on a shared (nx+1)x(ny+1) grid, but every element creates its own
    four midside nodes, so neighbouring elements are not connected along their edges."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    xs = np.linspace(xl, xh, nx + 1)
    ys = np.linspace(yl, yh, ny + 1)
    pts = [(x, y) for y in ys for x in xs]
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            c = [cy * (nx + 1) + cx, cy * (nx + 1) + cx + 1,
                 (cy + 1) * (nx + 1) + cx + 1, (cy + 1) * (nx + 1) + cx]
            mids = []
            for k in range(4):
                a, b = np.array(pts[c[k]]), np.array(pts[c[(k + 1) % 4]])
                mids.append(len(pts))
                pts.append(tuple(0.5 * (a + b)))
            conn.append(c + mids)
    return np.array(pts, dtype=float), np.array(conn, dtype=np.int64)


def fail_column_major_numbering(xl, xh, yl, yh, nx, ny):
    """Nodes numbered column by column (bottom to top within a column) and elements
    column by column, instead of row by row."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    ngx, ngy = 2 * nx + 1, 2 * ny + 1
    g = -np.ones((ngy, ngx), dtype=np.int64)
    pts = []
    for i in range(ngx):
        for j in range(ngy):
            if i % 2 and j % 2:
                continue
            g[j, i] = len(pts)
            pts.append((xl + i * (xh - xl) / (2 * nx), yl + j * (yh - yl) / (2 * ny)))
    conn = []
    for cx in range(nx):
        for cy in range(ny):
            i, j = 2 * cx, 2 * cy
            conn.append([g[j, i], g[j, i + 2], g[j + 2, i + 2], g[j + 2, i],
                         g[j, i + 1], g[j + 1, i + 2], g[j + 2, i + 1], g[j + 1, i]])
    return np.array(pts), np.array(conn, dtype=np.int64)


def fail_no_input_validation(xl, xh, yl, yh, nx, ny):
    """Correct mesh for valid input, but degenerate input is not rejected."""
    ngx, ngy = 2 * nx + 1, 2 * ny + 1
    g = -np.ones((max(ngy, 1), max(ngx, 1)), dtype=np.int64)
    pts = []
    for j in range(ngy):
        for i in range(ngx):
            if i % 2 and j % 2:
                continue
            g[j, i] = len(pts)
            pts.append((xl + i * (xh - xl) / max(2 * nx, 1), yl + j * (yh - yl) / max(2 * ny, 1)))
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            i, j = 2 * cx, 2 * cy
            conn.append([g[j, i], g[j, i + 2], g[j + 2, i + 2], g[j + 2, i],
                         g[j, i + 1], g[j + 1, i + 2], g[j + 2, i + 1], g[j + 1, i]])
    return np.array(pts, dtype=float).reshape(-1, 2), np.array(conn, dtype=np.int64).reshape(-1, 8)


def task_info():
    return {
        "task_id": "FEM_2D_quad8_mesh_rectangle_CC0_H0_T0",
        "task_short_description": "Structured Q8 mesh of a rectangle: node coordinates and element connectivity",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": quad8_mesh_rectangle,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            [-0.37, 2.91, 1.13, 2.05, 3, 2],
            [0.52, 1.87, -3.4, 1.6, 1, 4],
            [-2.25, -0.6, 0.15, 0.77, 2, 3],
            [0.0, 1.3, 0.0, 0.45, 1, 1],
            [1.5, 1.5, 0.0, 1.0, 2, 2],  # zero-width rectangle -> ValueError
        ],
        "test_cases": [
            {"test_code": test_counts_areas_and_orientation,
             "expected_failures": [fail_centre_points_numbered, fail_clockwise_local_order]},
            {"test_code": test_midside_nodes_are_edge_midpoints_and_shared,
             "expected_failures": [fail_midsides_start_at_left_edge, fail_midside_nodes_not_shared]},
            {"test_code": test_numbering_and_invalid_input,
             "expected_failures": [fail_column_major_numbering, fail_no_input_validation]},
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["xl", "xh", "yl", "yh"], "axes": [0, 0, 1, 1], "draw": "affine", "dimensions": 2, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["nx", "ny"], "draw": "integer", "low": 1, "high": 4},
            ],
        },
    }

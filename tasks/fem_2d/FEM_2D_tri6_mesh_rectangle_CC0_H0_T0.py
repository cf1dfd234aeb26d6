import numpy as np
import pytest


def tri6_mesh_rectangle(xl, xh, yl, yh, nx, ny):
    """
    Structured mesh of 6-node quadratic triangles (T6) on the rectangle
    [xl, xh] x [yl, yh]: nx by ny equal rectangular cells, each split into two
    triangles along its diagonal from the bottom-left to the top-right corner.

    Global nodes
    ------------
    Let dx = (xh - xl) / (2 nx) and dy = (yh - yl) / (2 ny). The nodes are all
    points of the (2 nx + 1) x (2 ny + 1) grid (xl + i dx, yl + j dy), i = 0..2nx,
    j = 0..2ny (the cell centres are nodes too: they are the midside nodes of the
    diagonals). Node (i, j) has global number j * (2 nx + 1) + i, i.e. numbering
    runs row by row from the bottom and left to right within a row, starting at 0;
    n_nodes = (2 nx + 1)(2 ny + 1).

    Elements
    --------
    Cell (cx, cy), cx = 0..nx-1 (column), cy = 0..ny-1 (row), is
    [xl + 2 cx dx, xl + 2 (cx + 1) dx] x [yl + 2 cy dy, yl + 2 (cy + 1) dy]; cells
    are visited row by row from the bottom, left to right within a row, so cell
    c = cy * nx + cx. Cell c produces elements 2c and 2c + 1 (n_elems = 2 nx ny).
    With i0 = 2 cx, j0 = 2 cy and node(i, j) as above, the cell corners are
    BL = node(i0, j0), BR = node(i0 + 2, j0), TR = node(i0 + 2, j0 + 2),
    TL = node(i0, j0 + 2), and the local node order of each element is
    (corner 1, corner 2, corner 3, midside 1-2, midside 2-3, midside 3-1):
        element 2c     (lower-right triangle):
            BL, BR, TR, node(i0 + 1, j0), node(i0 + 2, j0 + 1), node(i0 + 1, j0 + 1)
        element 2c + 1 (upper-left triangle):
            BL, TR, TL, node(i0 + 1, j0 + 1), node(i0 + 1, j0 + 2), node(i0, j0 + 1)
    Both triangles are counter-clockwise (positive area), and the local order matches
    the reference T6 whose natural coordinates are (0,0), (1,0), (0,1), (1/2,0),
    (1/2,1/2), (0,1/2).

    Parameters
    ----------
    xl, xh : float
        Left and right x-limits of the rectangle (xl < xh).
    yl, yh : float
        Bottom and top y-limits of the rectangle (yl < yh).
    nx, ny : int
        Number of cells in the x and y directions (each >= 1).

    Returns
    -------
    coords : np.ndarray of float, shape ((2nx+1)(2ny+1), 2)
        coords[k] = (x, y) of global node k, computed as (xl + i dx, yl + j dy).
    connect : np.ndarray of int, shape (2 nx ny, 6)
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

    coords = np.empty((n_gx * n_gy, 2))
    for j in range(n_gy):
        for i in range(n_gx):
            coords[j * n_gx + i] = (xl + i * dx, yl + j * dy)

    connect = np.empty((2 * nx * ny, 6), dtype=np.int64)
    for cy in range(ny):
        for cx in range(nx):
            i0 = 2 * cx
            j0 = 2 * cy
            bl = j0 * n_gx + i0
            br = bl + 2
            tl = bl + 2 * n_gx
            tr = tl + 2
            centre = bl + n_gx + 1  # midpoint of the BL-TR diagonal
            c = cy * nx + cx
            connect[2 * c] = (bl, br, tr, bl + 1, br + n_gx, centre)
            connect[2 * c + 1] = (bl, tr, tl, centre, tl + 1, bl + n_gx)

    return coords, connect


# --------------------------------------------------------------------------- tests

def test_counts_areas_and_orientation(fcn):
    """For a 3 x 2 mesh of [-0.4, 2.6] x [1.0, 2.5]: shapes and integer connectivity,
    (2nx+1)(2ny+1) nodes, 2*nx*ny elements, all coordinates inside the rectangle, no
    duplicate nodes, every node used, and each triangle's signed area (shoelace formula
    over the loop corner-midside-corner...) positive (counter-clockwise) and equal to
    half a cell, so that the areas sum to the rectangle area."""
    xl, xh, yl, yh, nx, ny = -0.4, 2.6, 1.0, 2.5, 3, 2
    coords, connect = fcn(xl, xh, yl, yh, nx, ny)
    coords = np.asarray(coords, dtype=float)
    connect = np.asarray(connect)
    n_nodes = (2 * nx + 1) * (2 * ny + 1)
    assert coords.shape == (n_nodes, 2)
    assert connect.shape == (2 * nx * ny, 6)
    assert np.issubdtype(connect.dtype, np.integer)
    assert connect.min() == 0 and connect.max() == n_nodes - 1
    assert np.unique(connect).size == n_nodes
    assert np.all(coords[:, 0] >= xl - 1e-12) and np.all(coords[:, 0] <= xh + 1e-12)
    assert np.all(coords[:, 1] >= yl - 1e-12) and np.all(coords[:, 1] <= yh + 1e-12)
    assert np.unique(np.round(coords, 9), axis=0).shape[0] == n_nodes

    loop = [0, 3, 1, 4, 2, 5]  # boundary walk of a T6 element
    half_cell = 0.5 * (xh - xl) / nx * (yh - yl) / ny
    total = 0.0
    for e in range(connect.shape[0]):
        p = coords[connect[e, loop]]
        area = 0.5 * np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1])
        assert area > 0.0
        assert np.isclose(area, half_cell, rtol=1e-10)
        total += area
    assert np.isclose(total, (xh - xl) * (yh - yl), rtol=1e-10)


def test_midside_nodes_are_edge_midpoints_and_shared(fcn):
    """For a 4 x 3 mesh: each triangle's local midside nodes 3, 4, 5 lie at the
    midpoints of its edges 0-1, 1-2, 2-0; every edge is used by one (boundary) or two
    (interior) triangles, two triangles sharing an edge also share its midside node,
    and the number of boundary edges is 2(nx + ny)."""
    nx, ny = 4, 3
    coords, connect = fcn(0.25, 1.75, -0.5, 0.4, nx, ny)
    coords = np.asarray(coords, dtype=float)
    connect = np.asarray(connect)
    edges = {}
    for e in range(connect.shape[0]):
        c = connect[e]
        assert len(set(c.tolist())) == 6
        for k in range(3):
            a, b, m = c[k], c[(k + 1) % 3], c[3 + k]
            assert np.allclose(coords[m], 0.5 * (coords[a] + coords[b]), atol=1e-12)
            edges.setdefault(frozenset((int(a), int(b))), []).append(int(m))
    boundary = 0
    for mids in edges.values():
        assert len(mids) in (1, 2)
        if len(mids) == 1:
            boundary += 1
        else:
            assert mids[0] == mids[1]
    assert boundary == 2 * (nx + ny)


def test_numbering_diagonal_and_invalid_input(fcn):
    """The documented numbering holds exactly: for nx = 2, ny = 1 on [0,4] x [0,2]
    nodes run row by row from the bottom over the 5 x 3 grid, each cell is cut along
    its bottom-left to top-right diagonal, the lower-right triangle of a cell comes
    first, and the connectivity equals the hand-derived table. Non-positive cell counts
    and empty or inverted intervals raise ValueError."""
    coords, connect = fcn(0.0, 4.0, 0.0, 2.0, 2, 1)
    coords = np.asarray(coords, dtype=float)
    gx, gy = np.meshgrid(np.arange(5.0), np.arange(3.0))
    assert np.allclose(coords, np.column_stack([gx.ravel(), gy.ravel()]), atol=1e-12)
    expected_connect = np.array([
        [0, 2, 12, 1, 7, 6],
        [0, 12, 10, 6, 11, 5],
        [2, 4, 14, 3, 9, 8],
        [2, 14, 12, 8, 13, 7],
    ])
    assert np.array_equal(np.asarray(connect), expected_connect)

    for args in ((0.0, 1.0, 0.0, 1.0, 0, 2), (0.0, 1.0, 0.0, 1.0, 2, -1),
                 (1.0, 1.0, 0.0, 1.0, 2, 2), (2.0, 1.0, 0.0, 1.0, 2, 2),
                 (0.0, 1.0, 3.0, 3.0, 2, 2), (0.0, 1.0, 3.0, -1.0, 2, 2)):
        with pytest.raises(ValueError):
            fcn(*args)


# --------------------------------------------------------------- expected failures

def fail_clockwise_triangles(xl, xh, yl, yh, nx, ny):
    """Correct nodes and diagonal, but both triangles listed clockwise
    (BL, TR, BR and BL, TL, TR) with midsides following that order."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    ngx = 2 * nx + 1
    X, Y = np.meshgrid(np.linspace(xl, xh, ngx), np.linspace(yl, yh, 2 * ny + 1))
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            bl = 2 * cy * ngx + 2 * cx
            br, tl = bl + 2, bl + 2 * ngx
            tr, ce = tl + 2, bl + ngx + 1
            conn.append([bl, tr, br, ce, br + ngx, bl + 1])
            conn.append([bl, tl, tr, bl + ngx, tl + 1, ce])
    return np.column_stack([X.ravel(), Y.ravel()]), np.array(conn, dtype=np.int64)


def fail_other_diagonal(xl, xh, yl, yh, nx, ny):
    """Cells split along the bottom-right to top-left diagonal instead
    (triangles BL, BR, TL and BR, TR, TL, both counter-clockwise)."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    ngx = 2 * nx + 1
    X, Y = np.meshgrid(np.linspace(xl, xh, ngx), np.linspace(yl, yh, 2 * ny + 1))
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            bl = 2 * cy * ngx + 2 * cx
            br, tl = bl + 2, bl + 2 * ngx
            tr, ce = tl + 2, bl + ngx + 1
            conn.append([bl, br, tl, bl + 1, ce, bl + ngx])
            conn.append([br, tr, tl, br + ngx, tl + 1, ce])
    return np.column_stack([X.ravel(), Y.ravel()]), np.array(conn, dtype=np.int64)


def fail_midsides_rotated(xl, xh, yl, yh, nx, ny):
    """Corners correct, but midsides listed as edges 3-1, 1-2, 2-3."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    ngx = 2 * nx + 1
    X, Y = np.meshgrid(np.linspace(xl, xh, ngx), np.linspace(yl, yh, 2 * ny + 1))
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            bl = 2 * cy * ngx + 2 * cx
            br, tl = bl + 2, bl + 2 * ngx
            tr, ce = tl + 2, bl + ngx + 1
            conn.append([bl, br, tr, ce, bl + 1, br + ngx])
            conn.append([bl, tr, tl, bl + ngx, ce, tl + 1])
    return np.column_stack([X.ravel(), Y.ravel()]), np.array(conn, dtype=np.int64)


def fail_upper_triangle_first(xl, xh, yl, yh, nx, ny):
    """Within each cell the upper-left triangle is numbered before the lower-right one."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    ngx = 2 * nx + 1
    X, Y = np.meshgrid(np.linspace(xl, xh, ngx), np.linspace(yl, yh, 2 * ny + 1))
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            bl = 2 * cy * ngx + 2 * cx
            br, tl = bl + 2, bl + 2 * ngx
            tr, ce = tl + 2, bl + ngx + 1
            conn.append([bl, tr, tl, ce, tl + 1, bl + ngx])
            conn.append([bl, br, tr, bl + 1, br + ngx, ce])
    return np.column_stack([X.ravel(), Y.ravel()]), np.array(conn, dtype=np.int64)


def fail_midsides_not_shared(xl, xh, yl, yh, nx, ny):
    """Corner nodes on a shared (nx+1)x(ny+1) grid, but each triangle appends its own
    three midside nodes, so the mesh is not conforming along interior edges."""
    if nx < 1 or ny < 1 or not xl < xh or not yl < yh:
        raise ValueError("bad input")
    xs = np.linspace(xl, xh, nx + 1)
    ys = np.linspace(yl, yh, ny + 1)
    pts = [(x, y) for y in ys for x in xs]
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            bl = cy * (nx + 1) + cx
            br, tl = bl + 1, bl + nx + 1
            tr = tl + 1
            for tri in ((bl, br, tr), (bl, tr, tl)):
                mids = []
                for k in range(3):
                    a, b = np.array(pts[tri[k]]), np.array(pts[tri[(k + 1) % 3]])
                    mids.append(len(pts))
                    pts.append(tuple(0.5 * (a + b)))
                conn.append(list(tri) + mids)
    return np.array(pts, dtype=float), np.array(conn, dtype=np.int64)


def fail_no_input_validation(xl, xh, yl, yh, nx, ny):
    """Correct mesh for valid input, but degenerate input is not rejected."""
    ngx, ngy = max(2 * nx + 1, 1), max(2 * ny + 1, 1)
    X, Y = np.meshgrid(np.linspace(xl, xh, ngx), np.linspace(yl, yh, ngy))
    conn = []
    for cy in range(ny):
        for cx in range(nx):
            bl = 2 * cy * ngx + 2 * cx
            br, tl = bl + 2, bl + 2 * ngx
            tr, ce = tl + 2, bl + ngx + 1
            conn.append([bl, br, tr, bl + 1, br + ngx, ce])
            conn.append([bl, tr, tl, ce, tl + 1, bl + ngx])
    return np.column_stack([X.ravel(), Y.ravel()]), np.array(conn, dtype=np.int64).reshape(-1, 6)


def task_info():
    return {
        "task_id": "FEM_2D_tri6_mesh_rectangle_CC0_H0_T0",
        "task_short_description": "Structured T6 mesh of a rectangle (cells split along the BL-TR diagonal): coordinates and connectivity",
        "created_date": "2026-11-22",
        "created_by": "fembench-agents",
        "main_fcn": tri6_mesh_rectangle,
        "required_imports": ["import numpy as np", "import pytest"],
        "fcn_dependencies": [],
        "reference_verification_inputs": [
            [-0.37, 2.91, 1.13, 2.05, 3, 2],
            [0.52, 1.87, -3.4, 1.6, 1, 4],
            [-2.25, -0.6, 0.15, 0.77, 2, 3],
            [0.0, 1.3, 0.0, 0.45, 1, 1],
            [0.0, 1.0, 2.5, 1.5, 2, 2],  # inverted y-interval -> ValueError
        ],
        "test_cases": [
            {"test_code": test_counts_areas_and_orientation,
             "expected_failures": [fail_clockwise_triangles, fail_midsides_not_shared]},
            {"test_code": test_midside_nodes_are_edge_midpoints_and_shared,
             "expected_failures": [fail_midsides_rotated, fail_midsides_not_shared]},
            {"test_code": test_numbering_diagonal_and_invalid_input,
             "expected_failures": [fail_other_diagonal, fail_upper_triangle_first,
                                   fail_no_input_validation]},
        ],
        "fresh_inputs": {
            "draws": [
                {"arguments": ["xl", "xh", "yl", "yh"], "axes": [0, 0, 1, 1], "draw": "affine", "dimensions": 2, "scale": [0.5, 2.0], "shift": [-3.0, 3.0]},
                {"arguments": ["nx", "ny"], "draw": "integer", "low": 1, "high": 4},
            ],
        },
    }

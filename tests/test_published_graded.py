"""A numerical reference on a mesh graded toward the domain's re-entrant corners
(published_graded.py): which corners are re-entrant, which records take the graded rung, the
mesh it makes, and an L-shape record the uniform ladder refuses imported with it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fembench_agents.cases import domains, published_graded, published_import
from fembench_agents.cases.calibration import dolfinx_gmsh, gmsh_shapes
from fembench_agents.cases.published import ImportReport, convert
from tests.published_records import _record, lshape

L_OUTER = ((0.0, 0.0), (1.0, 0.0), (1.0, 0.5), (0.5, 0.5), (0.5, 1.0), (0.0, 1.0))
SQUARE = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))


def test_the_reentrant_corners_are_the_outer_loops_reflex_vertices_and_every_hole_corner() -> None:
    assert domains.reentrant_corners(L_OUTER, ()) == ((0.5, 0.5),)
    assert domains.reentrant_corners(tuple(reversed(L_OUTER)), ()) == ((0.5, 0.5),)  # either orientation
    hole = ((0.4, 0.4), (0.4, 0.6), (0.6, 0.6), (0.6, 0.4))  # clockwise, as a hole may be given
    assert domains.reentrant_corners(SQUARE, (hole,)) == hole
    assert domains.reentrant_corners(SQUARE, ()) == ()


def _gravity(rid: str, domain: object = None, **pde: object) -> dict:
    data = {"type": "linear_elasticity", "pde_params": {"E": 1.0, "nu": 0.3}, "source_term": ["0.0", "-1.0"], **pde}
    return _record(
        rid,
        data,
        domain=domain or lshape(0.5),  # type: ignore[arg-type]
        bc={"dirichlet": {"on": "all", "value": ["0.0", "0.0"]}},
        field="displacement_magnitude",
    )


def test_steady_records_on_a_domain_with_a_reentrant_corner_take_the_graded_rung() -> None:
    assert published_graded.applies(convert(_gravity("on_the_l"), ImportReport())[0])
    assert not published_graded.applies(convert(_gravity("on_the_square", "unit_square"), ImportReport())[0])


def test_the_graded_mesh_shrinks_toward_the_corner() -> None:
    """Cells of size h = 0.08 away from the corner, h / 64 at it: the smallest cell touching
    (0.5, 0.5) is below h / 20, every cell farther than the grading radius 0.25 above h / 3."""
    mesh = dolfinx_gmsh.graded_mesh_for(
        {
            "domain": {"outer": [list(p) for p in L_OUTER], "holes": []},
            "grid": {"nx": 26, "ny": 26, "bbox": [0, 1, 0, 1]},
        }
    )
    x = mesh.geometry.x
    cells = mesh.geometry.dofmaps[0][:, :3]
    corners = x[cells][:, :, :2]
    size = np.max(np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2), axis=1)
    distance = np.min(np.linalg.norm(corners - np.array([0.5, 0.5]), axis=2), axis=1)
    h = dolfinx_gmsh.CELLS_PER_SPACING / 25
    assert size[distance < 1e-12].max() < h / 20
    assert size[distance > gmsh_shapes.GRADED_RADIUS].min() > h / 3


def test_an_l_shape_reference_the_uniform_ladder_refuses_imports_on_the_graded_mesh() -> None:
    """le_exp_lshape_gravity_load's data on a 50-point grid: the uniform ladder's last estimate
    (its 4x solve against the 8x) was 4.4e-4 above 2.6e-4; the graded 1x solve is 1.1e-4 from the
    graded 2x, within the threshold 4.1e-4 and below half the calibration solve's 8.3e-4 distance to it."""
    grid = {"bbox": [0, 1, 0, 1], "nx": 50, "ny": 50}
    record = _gravity("gravity_on_the_l")
    record["oracle_config"]["output"]["grid"] = grid
    built, _, report = published_import.import_records([json.dumps(record)])
    assert report.imported == ["gravity_on_the_l"], report.excluded
    check = built[0].hidden.reference_check
    assert check is not None
    assert check.solver == "dolfinx:p2-graded@refined2x" and check.refinements == (1, 1, 2)
    e_base = built[0].hidden.calibration["dolfinx"].e_base
    assert check.distances_to_finest[0] == e_base == pytest.approx(8.275e-4, rel=0.01)
    assert check.error_estimate == check.distances_to_finest[1] == pytest.approx(1.149e-4, rel=0.01)
    assert check.threshold == pytest.approx(0.5 * e_base, rel=1e-3)

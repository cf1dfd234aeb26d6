"""`cases import` in worker processes (cases/import_workers.py) and the memory of a numerical
reference's solves (cases/reference_memory.py): the folder does not depend on how many workers
built it, a worker that dies costs only its record, solves share one memory budget, and large
solves factorise out of core with the same solution."""

from __future__ import annotations

# mpi4py first: dolfinx and petsc4py load its MPI library.
from mpi4py import MPI  # noqa: F401  # isort: skip

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import published_records as pr
import pytest
import sympy as sp

from fembench_agents.cases import import_workers, published_import, reference_memory
from fembench_agents.cases.published import ImportReport
from fembench_agents.cases.published_domains import Excluded

CALIBRATION = Path(reference_memory.__file__).parent / "calibration"


def _records() -> list[str]:
    return [
        json.dumps(pr.poisson("poisson_smooth", pr.SMOOTH_U)),
        "{cut",
        json.dumps(pr.heat("heat_decay", sp.exp(-pr.t) * sp.sin(sp.pi * pr.x) * sp.sin(sp.pi * pr.y))),
        json.dumps(pr.poisson("poisson_legacy", pr.SMOOTH_U, evaluation={"tolerance": 0.05, "time_tolerance": 3})),
        json.dumps(
            pr._record(
                "poisson_numerical",
                {
                    "type": "poisson",
                    "coefficients": {"kappa": {"type": "constant", "value": 1.0}},
                    "source_term": "1.0",
                },
                bc={"dirichlet": {"on": "all", "value": "0.0"}},
            )
        ),
    ]


def _folder(tmp: Path, workers: int) -> dict[str, bytes]:
    built, views, report = published_import.import_records(_records(), workers=workers)
    published_import.write(tmp, built, views, report)
    return {str(p.relative_to(tmp)): p.read_bytes() for p in sorted(tmp.rglob("*")) if p.is_file()}


def test_two_workers_write_the_folder_one_process_writes_byte_for_byte(tmp_path: Path) -> None:
    alone = _folder(tmp_path / "alone", 0)
    side_by_side = _folder(tmp_path / "workers", 2)
    assert list(alone) == list(side_by_side) and alone == side_by_side
    report = json.loads(alone["import_report.json"])
    assert (report["read"], report["imported"], list(report["excluded_cases"])) == (5, 4, ["line 2"])
    assert report["decisions"]["legacy_tolerance_ignored"] == 1
    assert list(report["marked_leaking"]) == ["heat_decay"]
    assert list(report["numerical_references"]) == ["poisson_numerical"]


def dies_on_crash(record: dict[str, Any], report: ImportReport, budget: Any = None) -> tuple[Any, dict]:
    """A build that takes its worker down on the record named crash, as a solver library's
    segfault would, and excludes every other record after noting a decision."""
    if record["id"] == "crash":
        os._exit(7)
    report.legacy_tolerance.append(record["id"])
    raise Excluded(f"excluded by the test: {record['id']}")


def test_a_worker_that_dies_costs_only_its_record_and_results_keep_the_records_order() -> None:
    records = [{"id": name} for name in ("a", "crash", "b", "c", "d")]
    seen: list[int] = []
    results = import_workers.build_all(dies_on_crash, records, 2, lambda i, _: seen.append(i))
    assert [r.excluded for r in results] == [
        "excluded by the test: a",
        "calibration solver failed: its process ended with code 7",
        "excluded by the test: b",
        "excluded by the test: c",
        "excluded by the test: d",
    ]
    assert sorted(seen) == [0, 1, 2, 3, 4]
    report = ImportReport(read=1, legacy_tolerance=["z"], numerical={"z": 1.0})
    for r in results:
        import_workers.merge(report, r.report)
    assert (report.read, report.legacy_tolerance, report.numerical) == (1, ["z", "a", "b", "c", "d"], {"z": 1.0})


def test_a_worker_takes_the_costliest_record_first_and_results_keep_the_records_order() -> None:
    records = [{"id": name, "cost": cost} for name, cost in (("a", 1.0), ("b", 30.0), ("c", 2.0), ("d", 30.0))]
    seen: list[int] = []
    results = import_workers.build_all(dies_on_crash, records, 1, lambda i, _: seen.append(i), lambda r: r["cost"])
    assert seen == [1, 3, 2, 0]  # ties in the file's order
    assert [r.excluded for r in results] == [f"excluded by the test: {n}" for n in "abcd"]


def test_a_record_s_expected_cost_reads_its_grid_time_reference_and_family() -> None:
    def record(kind: str, solution: bool, time: dict[str, float] | None = None) -> dict[str, Any]:
        pde: dict[str, Any] = {"type": kind, **({"manufactured_solution": {"u": "x"}} if solution else {})}
        return {
            "oracle_config": {
                "pde": {**pde, **({"time": time} if time else {})},
                "output": {"grid": {"nx": 50, "ny": 40}},
            }
        }

    cost = published_import.expected_cost
    assert cost(record("poisson", True)) == 2000.0
    assert cost(record("poisson", False)) == 2000.0 * 50
    assert cost(record("stokes", False)) == 2000.0 * 50 * 2.25
    assert cost(record("heat", True, {"t0": 0.0, "t_end": 0.5})) == 2000.0 * (1 + 0.5 * 50)
    assert cost({"oracle_config": {"output": {"grid": {"nx": "many"}}}}) == 0.0


def test_a_solve_waits_until_its_memory_fits_beside_the_others_and_a_larger_one_runs_alone() -> None:
    budget = reference_memory.MemoryBudget(100.0)
    events: list[str] = []

    def hold(name: str, mb: float, seconds: float) -> None:
        with budget.take(mb):
            events.append(f"{name} in")
            time.sleep(seconds)
            events.append(f"{name} out")

    first = threading.Thread(target=hold, args=("a", 60.0, 0.3))
    first.start()
    time.sleep(0.1)
    second = threading.Thread(target=hold, args=("b", 50.0, 0.0))  # 110 > 100: waits for a
    second.start()
    second.join()
    first.join()
    assert events == ["a in", "a out", "b in", "b out"]
    events.clear()
    hold("huge", 500.0, 0.0)  # nothing else held: it runs
    assert events == ["huge in", "huge out"]


def test_the_unknowns_of_a_solve_are_read_off_its_grid_and_family() -> None:
    def spec(family: str, n: int) -> dict[str, Any]:
        return {"family": family, "grid": {"nx": n, "ny": n}}

    # the 100-point lid cavity refined 8x: 793 x 793 nodes, Taylor-Hood's 2 + 1/4 unknowns a node
    assert reference_memory.unknowns(spec("stokes", 793)) == 1_414_910
    assert reference_memory.unknowns(spec("elasticity", 393)) == 308_898
    assert reference_memory.unknowns(spec("poisson", 393)) == 154_449
    assert reference_memory.unknowns({"family": "heat", "grid": {"nx": 11, "ny": 11, "nz": 11}}) == 1331
    assert reference_memory.expected_mb(154_449) == pytest.approx(154_449 * 3000 / 2**20)
    assert reference_memory.expected_mb(308_898) == pytest.approx(308_898 * 1000 / 2**20)
    assert reference_memory.expected_mb(308_898, through_schur=True) == pytest.approx(308_898 * 550 / 2**20)
    assert reference_memory.expected_mb(154_449, through_schur=True) == pytest.approx(154_449 * 3000 / 2**20)


def test_a_plane_stokes_solve_without_periodic_pieces_is_counted_as_its_schur_complement() -> None:
    def spec(family: str, *kinds: str, nz: int | None = None) -> dict[str, Any]:
        grid = {"nx": 601, "ny": 601, "nz": nz}
        return {"family": family, "grid": grid, "boundary": [{"kind": k} for k in kinds]}

    assert reference_memory.through_schur(spec("stokes", "dirichlet", "neumann")) is True
    assert reference_memory.through_schur(spec("stokes", "dirichlet", "periodic")) is False  # reduced: an LU
    assert reference_memory.through_schur(spec("stokes", "dirichlet", nz=41)) is False  # the cube's Cholesky fills in
    assert reference_memory.through_schur(spec("navier_stokes", "dirichlet")) is False  # Newton: an LU a step
    # two 6x rungs of a 100-point Stokes grid fit the import's budget side by side, as their LU did not
    six = reference_memory.unknowns(spec("stokes", "dirichlet"))
    budget = import_workers.SOLVE_BUDGET_MB
    assert 2 * reference_memory.expected_mb(six, True) < budget < 2 * reference_memory.expected_mb(six)


def test_every_prefix_of_the_calibration_s_lu_solves_is_switched_out_of_core() -> None:
    written = set()
    for path in CALIBRATION.glob("dolfinx_*.py"):
        written |= set(re.findall(r'petsc_options_prefix="([a-z_]*)"', path.read_text()))
    assert written and written | {""} == set(reference_memory.SOLVER_PREFIXES)


def test_an_out_of_core_solve_is_the_in_core_solution_and_the_switch_is_undone() -> None:
    import numpy as np
    from petsc4py import PETSc

    from fembench_agents.cases.calibration import dolfinx_fem

    spec = json.loads(published_import.build(json.loads(_records()[0]), ImportReport())[0].spec.model_dump_json())
    in_core = dolfinx_fem.solve(spec)["u"]
    # out of core (ICNTL(22) = 1), ordered by SCOTCH (ICNTL(7) = 3): a fifth less CPU than METIS's
    assert reference_memory.LARGE_SOLVE_OPTIONS == {"mat_mumps_icntl_22": 1, "mat_mumps_icntl_7": 3}
    with reference_memory.out_of_core(True):
        assert PETSc.Options().getInt("calibration_mat_mumps_icntl_22") == 1
        assert PETSc.Options().getInt("calibration_ns_mat_mumps_icntl_7") == 3
        out_of_core = dolfinx_fem.solve(spec)["u"]
    assert not PETSc.Options().hasName("calibration_mat_mumps_icntl_22")
    assert not PETSc.Options().hasName("calibration_mat_mumps_icntl_7")
    assert np.nanmax(np.abs(out_of_core - in_core)) <= 1e-13 * np.nanmax(np.abs(in_core))

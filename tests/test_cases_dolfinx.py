"""The DOLFINx track for real: the facts of this install its environment check
and contract state, our calibration solver passing its own gates through the
sandbox, hand-written DOLFINx attempts (tests/dolfinx_solvers.py) scored
through the sandbox (each attempt compiles its forms into its own scratch),
a hypre request failing with the documented reason, the recorded hypre->gamg
compatibility rewrite, and a form whose C code does not build."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dolfinx_solvers as ds
import pytest

from fembench_agents.cases import calibrate, compat, dolfinx_env, timing
from fembench_agents.cases.outcomes import CaseOutcome
from fembench_agents.cases.problem import SolverCase, load_cases
from fembench_agents.cases.scorer import CaseScorer, CaseScoringConfig
from fembench_agents.cases.tracks import get_track
from fembench_agents.scoring.extraction import parse_code
from fembench_agents.scoring.sandbox import Sandbox

CASES = Path(__file__).resolve().parent.parent / "cases"
T_BASE = 60.0  # seconds: these tests judge executes and accuracy; the fast gate is pinned elsewhere
TRACK = get_track("dolfinx")


@pytest.fixture(scope="module")
def case() -> SolverCase:
    return next(c for c in load_cases(CASES) if c.task_id == ds.CASE)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=1, preload=TRACK.modules) as box:
        yield box


def scorer(sandbox: Sandbox, **config: tuple[str, ...]) -> CaseScorer:
    calibration = timing.MachineCalibration(
        machine="test", fingerprint={}, repeats=1, t_base={ds.CASE: {"dolfinx": T_BASE}}
    )
    return CaseScorer(sandbox, calibration, CaseScoringConfig(**config))  # type: ignore[arg-type]


def score(s: CaseScorer, case: SolverCase, source: str) -> CaseOutcome:
    out = s.score(case, "dolfinx", f"```python\n{source}\n```\n")
    assert out.isolation == "namespaced"
    return out


def stages(outcome: CaseOutcome) -> list[tuple[str, bool, str | None]]:
    return [(s.stage, s.passed, s.reason) for s in outcome.stages]


def test_the_environment_check_reports_this_installs_facts() -> None:
    facts = dolfinx_env.probe()
    assert (facts["hypre"], facts["mumps"], facts["superlu_dist"], facts["ranks"]) == (False, True, True, 1)
    assert str(facts["dolfinx"]).startswith("0.11.")
    ok, why = TRACK.available()
    assert ok and why == f"available (dolfinx {facts['dolfinx']}, PETSc with MUMPS, no hypre, MPI singleton)"
    text = TRACK.contract_text()
    for fact in ("no hypre", "gamg", "MUMPS", "MPI singleton", "import mpi4py", "petsc_options_prefix"):
        assert fact in text, fact
    # The import-order fact the contract states: petsc4py alone does not find its MPI library.
    alone = subprocess.run([sys.executable, "-c", "import petsc4py.PETSc"], capture_output=True, text=True)
    assert alone.returncode != 0 and "libmpi.so.12" in alone.stderr
    # The warm workers import mpi4py.MPI before anything that links MPI.
    assert TRACK.modules[0] == "mpi4py.MPI" and TRACK.modules.index("dolfinx") > 0


def mpi_files_left_by_a_killed_process(modules: tuple[str, ...]) -> list[str]:
    """The MPICH shared-memory files of a process that imported `modules` and was then killed."""
    code = (
        "import importlib, os, sys\n"
        f"for name in {list(modules)!r}:\n    importlib.import_module(name)\n"
        "print(os.getpid(), flush=True)\nos.kill(os.getpid(), 9)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == -9, run.stderr
    left = sorted(glob.glob(f"/dev/shm/mpich_shm_{int(run.stdout):x}_*"))
    for path in left:
        os.unlink(path)
    return left


def test_a_killed_warm_worker_leaves_no_mpi_file_in_memory() -> None:
    # MPICH makes a 1 MB file in /dev/shm when MPI starts and unlinks it when MPI finalises; a process
    # killed (or ending with os._exit, as the sandbox's forks do) never finalises, so the file stayed.
    assert [Path(p).name.rsplit("_", 1)[1] for p in mpi_files_left_by_a_killed_process(("mpi4py.MPI",))] == ["0"]
    # The track's warm workers import dolfinx_env last, which unlinks it at once.
    assert mpi_files_left_by_a_killed_process(TRACK.modules) == []


def test_the_dolfinx_calibration_solver_passes_its_own_gates_through_the_sandbox(case: SolverCase) -> None:
    with calibrate.calibration_sandbox(["dolfinx"]) as box:
        probe = CaseScorer(box)
        t_base = calibrate.time_case(probe, case, "dolfinx", repeats=1)
        cal = timing.MachineCalibration(machine="t", fingerprint={}, repeats=1, t_base={ds.CASE: {"dolfinx": t_base}})
        out = calibrate.gate_calibration(CaseScorer(box, cal), case, "dolfinx")
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    assert out.relative_l2_error == pytest.approx(1.9473e-07, rel=1e-3)
    assert out.solver_info["method"] == "dolfinx-p2-poisson" and out.solver_info["pc_type"] == "lu"


def test_the_dolfinx_stokes_solver_passes_its_own_gates_with_velocity_and_pressure() -> None:
    stokes = next(c for c in load_cases(CASES) if c.task_id == "st_square_vortex")
    with calibrate.calibration_sandbox(["dolfinx"]) as box:
        cal = timing.MachineCalibration(
            machine="t", fingerprint={}, repeats=1, t_base={"st_square_vortex": {"dolfinx": T_BASE}}
        )
        out = calibrate.gate_calibration(CaseScorer(box, cal), stokes, "dolfinx")
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    # Taylor-Hood on the grid's nodes: scikit-fem's P2/P1 error, to its recorded digits
    assert out.relative_l2_error == pytest.approx(1.5132e-03, rel=1e-3)
    assert out.solver_info["method"] == "dolfinx-p2-stokes" and out.solver_info["dofs"] > 0


# the smallest case of each family solved by dolfinx_flow.py / dolfinx_dynamics.py / the biharmonic split:
# (case, its recorded dolfinx e_base, equal to scikit-fem's: the same scheme on the same nodes)
NEW_FAMILIES = {
    "biharmonic": ("bh_channel_poly", 1.0194e-08),
    "burgers": ("bg_square_bump", 1.0507e-03),
    "navier_stokes": ("ns_square_cavity_re20", 1.1513e-02),
    "wave": ("wv_square_pulse", 3.7886e-02),
}


# our own cases with natural pieces: (case, its piece kinds other than dirichlet, its recorded e_base)
NATURAL_PIECES = {
    "neumann": ("po_square_neumann", {"right": "neumann", "top": "neumann"}, 2.9228e-07),
    "robin": ("po_lshape_robin", {"notch_bottom": "robin", "notch_left": "robin"}, 1.9705e-07),
}


@pytest.mark.parametrize("kind", sorted(NATURAL_PIECES))
def test_the_dolfinx_solver_with_natural_pieces_passes_its_own_gates(kind: str) -> None:
    case_id, kinds, e_base = NATURAL_PIECES[kind]
    chosen = next(c for c in load_cases(CASES) if c.task_id == case_id)
    assert {p.name: p.kind for p in chosen.spec.boundary if p.kind != "dirichlet"} == kinds
    with calibrate.calibration_sandbox(["dolfinx"]) as box:
        probe = CaseScorer(box)
        t_base = calibrate.time_case(probe, chosen, "dolfinx", repeats=1)
        cal = timing.MachineCalibration(machine="t", fingerprint={}, repeats=1, t_base={case_id: {"dolfinx": t_base}})
        out = calibrate.gate_calibration(CaseScorer(box, cal), chosen, "dolfinx")
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    # a flux applied with the wrong sign or on the wrong facets would be O(1) off, not P2's 1e-7
    assert out.relative_l2_error == pytest.approx(e_base, rel=1e-3)


@pytest.mark.parametrize("family", sorted(NEW_FAMILIES))
def test_the_dolfinx_solver_of_each_later_family_passes_its_own_gates(family: str) -> None:
    case_id, e_base = NEW_FAMILIES[family]
    chosen = next(c for c in load_cases(CASES) if c.task_id == case_id)
    assert chosen.family == family and "dolfinx" in chosen.spec.libraries
    with calibrate.calibration_sandbox(["dolfinx"]) as box:
        probe = CaseScorer(box)
        t_base = calibrate.time_case(probe, chosen, "dolfinx", repeats=1)
        cal = timing.MachineCalibration(machine="t", fingerprint={}, repeats=1, t_base={case_id: {"dolfinx": t_base}})
        out = calibrate.gate_calibration(CaseScorer(box, cal), chosen, "dolfinx")
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    assert out.relative_l2_error == pytest.approx(e_base, rel=1e-3)
    assert out.solver_info["method"] == f"dolfinx-p2-{family}" and out.solver_info["dofs"] > 0


def test_a_correct_attempt_passes_and_compiles_its_forms_into_its_own_scratch(
    sandbox: Sandbox, case: SolverCase
) -> None:
    out = score(scorer(sandbox), case, ds.CORRECT)
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    assert out.relative_l2_error < 1.9473e-06  # type: ignore[operator]
    # HOME of a namespaced job is its scratch tmpfs, where nothing outlives the job
    assert out.solver_info["method"] == "forms compiled into /tmp/scratch/.cache/fenics"
    assert out.substitutions == ()


def test_an_attempt_that_uses_fem_petsc_without_importing_it_fails_as_in_a_fresh_interpreter(
    sandbox: Sandbox, case: SolverCase
) -> None:
    # The shape of two published programs: `from dolfinx import fem`, then `fem.petsc.LinearProblem`.
    # The warm worker preloaded dolfinx.fem.petsc; the attempt still does not reach what it did not import.
    unimported = ds.CORRECT.replace("from dolfinx.fem.petsc import LinearProblem\n", "").replace(
        "LinearProblem(", "fem.petsc.LinearProblem("
    )
    out = score(scorer(sandbox), case, unimported)
    assert stages(out) == [("executes", False, "runtime_error")]
    assert out.error is not None
    assert (out.error.type, out.error.message) == ("AttributeError", "module 'dolfinx.fem' has no attribute 'petsc'")
    imported = unimported.replace(
        "from dolfinx import fem, geometry, mesh\n",
        "from dolfinx import fem, geometry, mesh\nimport dolfinx.fem.petsc\n",
    )
    out = score(scorer(sandbox), case, imported)
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]


def test_a_wrong_forcing_sign_fails_the_accuracy_gate(sandbox: Sandbox, case: SolverCase) -> None:
    out = score(scorer(sandbox), case, ds.WRONG_FORCING_SIGN)
    assert stages(out) == [("executes", True, None), ("accurate", False, "too_inaccurate")]
    assert out.relative_l2_error > 0.1  # type: ignore[operator]


def test_a_hypre_request_fails_executes_with_the_documented_reason(sandbox: Sandbox, case: SolverCase) -> None:
    out = score(scorer(sandbox), case, ds.ASKS_FOR_HYPRE)
    assert stages(out) == [("executes", False, "runtime_error")]
    assert out.error is not None and "Unable to find requested PC type hypre" in out.error.message
    detail = out.stages[0].detail or ""
    assert detail.endswith("; " + dolfinx_env.NO_HYPRE)
    assert "use pc_type gamg (algebraic multigrid) or lu (MUMPS, SuperLU_dist)" in detail


def test_the_hypre_as_gamg_option_rescues_it_and_is_recorded(sandbox: Sandbox, case: SolverCase) -> None:
    out = score(scorer(sandbox, compat=("hypre-as-gamg",)), case, ds.ASKS_FOR_HYPRE)
    assert stages(out) == [("executes", True, None), ("accurate", True, None), ("fast", True, None)]
    # the program's options and its own solver_info: both are literals naming hypre (lines of the
    # code as extracted, which normalises quotes)
    code = parse_code(f"```python\n{ds.ASKS_FOR_HYPRE}\n```\n", ("solve",)).code
    lines = [n for n, text in enumerate(code.splitlines(), 1) if "'hypre'" in text]
    assert len(lines) == 2
    assert out.substitutions == tuple(f"hypre-as-gamg: line {n}: 'hypre' -> 'gamg'" for n in lines)
    assert out.solver_info["pc_type"] == "gamg"


def test_a_form_that_does_not_compile_fails_executes_with_a_clear_reason(sandbox: Sandbox, case: SolverCase) -> None:
    out = score(scorer(sandbox), case, ds.BAD_COMPILER_FLAG)
    assert stages(out) == [("executes", False, "runtime_error")]
    assert out.error is not None and out.error.type == "VerificationError"
    assert "-fno-such-compiler-flag" in out.error.message
    assert (out.stages[0].detail or "").endswith("; " + dolfinx_env.COMPILE_FAILED)


def test_hypre_as_gamg_rewrites_every_spelling_and_nothing_else() -> None:
    code = (
        'opts = {"ksp_type": "cg", "pc_type": "hypre", "pc_hypre_type": "boomeramg"}\n'
        "pc.setType('hypre'); pc.setType(PETSc.PC.Type.HYPRE)\n"
        'PETSc.Options().insertString("-ksp_type cg -pc_type hypre")\n'
        'name = "hypre_settings"  # hypre\n'
    )
    new, notes = compat.apply(("hypre-as-gamg",), code)
    assert new == (
        'opts = {"ksp_type": "cg", "pc_type": "gamg", "pc_hypre_type": "boomeramg"}\n'
        "pc.setType('gamg'); pc.setType(PETSc.PC.Type.GAMG)\n"
        'PETSc.Options().insertString("-ksp_type cg -pc_type gamg")\n'
        'name = "hypre_settings"  # hypre\n'
    )
    assert notes == (
        'hypre-as-gamg: line 1: "hypre" -> "gamg"',
        "hypre-as-gamg: line 2: 'hypre' -> 'gamg'",
        "hypre-as-gamg: line 2: HYPRE -> GAMG",
        'hypre-as-gamg: line 3: "-ksp_type cg -pc_type hypre" -> "-ksp_type cg -pc_type gamg"',
    )
    assert compat.apply((), code) == (code, ())
    with pytest.raises(ValueError, match="unknown compatibility rewrite"):
        compat.apply(("hypre-as-ml",), code)

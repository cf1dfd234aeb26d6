"""The `cases` sub-app through typer's CliRunner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from fembench_agents.cases import store, timing
from fembench_agents.cli.cases import cases_app

CASES = Path(__file__).resolve().parent.parent / "cases"
runner = CliRunner()


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "cases"
    shutil.copytree(CASES, copy, ignore=shutil.ignore_patterns("calibration"))
    return copy


def test_list_shows_cases_and_tracks() -> None:
    res = runner.invoke(cases_app, ["list", "--cases", str(CASES)])
    assert res.exit_code == 0, res.output
    assert "poisson_lshape_smooth" in res.output and "el_hole_trig" in res.output
    assert "track numpy-scipy: available; no calibration solver for stokes, navier_stokes" in res.output
    assert "track scikit-fem: available" in res.output
    assert "track dolfinx: available" in res.output.splitlines()  # a calibration solver for every family
    assert "track ngsolve: available; no calibration solver for navier_stokes, burgers, wave" in res.output
    # family, five polygons, the unit cube, three curved domains, the total: 12 bars
    rows = [line for line in res.output.splitlines() if line.startswith("│ ") and line.count("│") == 12]
    assert rows[0] == (
        "│ poisson              │ 5 abcD      │ 4 aBcD  │ 3 aBCD      │ 2 bCD             │ 2 bCD  "
        "│ 1 ABD     │ 1 ABD  │ 1 ABD   │ 1 ABD            │ 20    │"
    )
    assert rows[1] == (
        "│ heat                 │ 5 abcD      │ 3 aBCD  │ 2 ABCD      │ 1 BCD             │ 1 BCD  "
        "│ 1 ABD     │ 1 ABD  │ 1 ABD   │ 1 ABD            │ 16    │"
    )  # the cube cases run on DOLFINx, NGSolve and scikit-fem; periodic heat too
    assert rows[2] == (
        "│ convection_diffusion │ 6 aBcD      │ 2 ABCD  │ 2 ABCD      │ 1 BCD             │ 2 aBcD "
        "│ 2 ABD     │ 1 ABD  │ 1 ABD   │ 1 ABD            │ 18    │"
    )
    assert rows[3] == (
        "│ reaction_diffusion   │ 3 ABcD      │ 4 abcD  │ 3 ABcD      │ 1 BCD             │ 1 BCD  "
        "│ 2 ABD     │ 1 ABD  │ 1 ABD   │ 1 ABD            │ 17    │"
    )
    assert rows[4] == (
        "│ elasticity           │ 4 ABcD      │ 2 ABCD  │ 2 ABCD      │ 2 bCD             │ 1 BCD  "
        "│ 1 ABD     │ 1 ABD  │ 1 ABD   │ 1 ABD            │ 15    │"
    )
    assert rows[5] == (
        "│ helmholtz            │ 5 aBcD      │ 2 ABCD  │ 2 ABCD      │ 1 BCD             │ 1 BCD  "
        "│ 1 ABD     │ 1 ABD  │ 1 ABD   │ 1 ABD            │ 15    │"
    )
    assert rows[6] == (
        "│ biharmonic           │ 3 ABCD      │ 2 ABCD  │ 3 ABCD      │ 2 ABCD            │ 2 ABCD "
        "│ -         │ 1 ABD  │ 1 ABD   │ 1 ABD            │ 15    │"
    )
    assert rows[7] == (
        "│ stokes               │ 6 Abd       │ 2 ABD   │ 2 ABD       │ 2 ABD             │ 2 ABD  "
        "│ 1 A       │ 1 ABD  │ 1 ABD   │ 1 ABD            │ 18    │"
    )
    assert rows[8] == (
        "│ navier_stokes        │ 4 AD        │ 2 AD    │ 2 AD        │ 2 AD              │ 2 AD   "
        "│ -         │ 1 AD   │ 1 AD    │ 1 AD             │ 15    │"
    )
    assert rows[9] == (
        "│ burgers              │ 3 ACD       │ 2 ACD   │ 2 ACD       │ 2 ACD             │ 2 ACD  "
        "│ -         │ 1 AD   │ 1 AD    │ 1 AD             │ 14    │"
    )
    assert rows[10] == (
        "│ wave                 │ 3 ACD       │ 2 ACD   │ 2 ACD       │ 2 ACD             │ 2 ACD  "
        "│ -         │ 1 AD   │ 1 AD    │ 1 AD             │ 14    │"
    )
    assert len(rows) == 11
    assert (
        "libraries: A = dolfinx, B = ngsolve, C = numpy-scipy, D = scikit-fem (lower case: some cases only)"
        in res.output
    )
    assert "177 of 177 cases" in res.output
    # the natural and periodic pieces and transient variants, per family, with the tracks whose calibration
    # applies them: DOLFINx every kind, scikit-fem all but do-nothing, NGSolve all but do-nothing; the
    # cube's natural faces and transient variants on all three
    variants = [line for line in res.output.splitlines() if line.startswith("│ ") and line.count("│") == 8]
    assert variants == [
        "│ poisson              │ 2 ABD   │ 2 ABD │ -          │ 1 ABD    │ -         │ 5     │",
        "│ heat                 │ 1 ABD   │ 2 ABD │ -          │ 1 ABD    │ -         │ 3     │",
        "│ convection_diffusion │ 3 ABD   │ -     │ -          │ 1 ABD    │ 4 ABD     │ 7     │",
        "│ reaction_diffusion   │ 2 ABD   │ 1 ABD │ -          │ -        │ 5 ABD     │ 7     │",
        "│ elasticity           │ 4 ABD   │ -     │ -          │ 1 ABD    │ -         │ 5     │",
        "│ helmholtz            │ -       │ 3 ABD │ -          │ 1 ABD    │ -         │ 4     │",
        "│ stokes               │ -       │ -     │ 1 A        │ 1 ABD    │ -         │ 2     │",
    ]
    some = runner.invoke(cases_app, ["list", "--cases", str(CASES), "--family", "helmholtz", "--library", "scikit-fem"])
    assert some.exit_code == 0, some.output
    assert "15 of 177 cases" in some.output and "hz_lshape_k3" in some.output and "poisson" not in some.output
    assert "track scikit-fem: available" in some.output and "track numpy-scipy" not in some.output
    bad = runner.invoke(cases_app, ["list", "--cases", str(CASES), "--library", "fenics"])
    assert (
        bad.exit_code == 2
        and "unknown library track 'fenics'; known: dolfinx, ngsolve, numpy-scipy, scikit-fem" in bad.output
    )


def test_show_prints_only_the_agent_visible_spec() -> None:
    res = runner.invoke(cases_app, ["show", "hz_square_k4", "--cases", str(CASES)])
    assert res.exit_code == 0, res.output
    spec = json.loads(res.output)
    assert spec["family"] == "helmholtz" and spec["grid"]["nx"] == 65
    for word in ("e_base", "tau", "solution", "reference"):
        assert word not in res.output
    bad = runner.invoke(cases_app, ["show", "nope", "--cases", str(CASES)])
    assert bad.exit_code == 2 and "unknown case" in bad.output


def test_build_one_case_keeps_the_others_and_is_identical(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    before = (copy / store.SPECS_FILE).read_bytes()
    res = runner.invoke(cases_app, ["build", "--cases", str(copy), "--only", "poisson_square_smooth"])
    assert res.exit_code == 0, res.output
    assert "built 0 cases, 1 unchanged" in res.output
    res = runner.invoke(cases_app, ["build", "--cases", str(copy), "--only", "poisson_square_smooth", "--force"])
    assert res.exit_code == 0 and "built 1 cases, 0 unchanged" in res.output, res.output
    assert (copy / store.SPECS_FILE).read_bytes() == before
    # a specs file that no longer matches its record (as a merge can leave it) is rebuilt, not reused
    lines = before.decode().splitlines()
    for i, line in enumerate(lines):
        spec = json.loads(line)
        if spec["id"] == "poisson_square_smooth":
            spec["libraries"] = [lib for lib in spec["libraries"] if lib != "dolfinx"]
            lines[i] = json.dumps(spec)
    (copy / store.SPECS_FILE).write_text("\n".join(lines) + "\n")
    res = runner.invoke(cases_app, ["build", "--cases", str(copy), "--only", "poisson_square_smooth"])
    assert res.exit_code == 0 and "built 1 cases, 0 unchanged" in res.output, res.output
    assert (copy / store.SPECS_FILE).read_bytes() == before
    bad = runner.invoke(cases_app, ["build", "--cases", str(copy), "--only", "nope"])
    assert bad.exit_code == 2 and "unknown case ids: nope" in bad.output


def test_calibrate_writes_machine_times_apart(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    res = runner.invoke(
        cases_app,
        ["calibrate", "--cases", str(copy), "--only", "hz_square_k4", "--repeats", "1", "--machine", "testbox"],
    )
    assert res.exit_code == 0, res.output
    cal = timing.load(copy, "testbox")
    assert set(cal.t_base["hz_square_k4"]) == {"dolfinx", "ngsolve", "numpy-scipy", "scikit-fem"}
    assert cal.lookup("hz_square_k4", "numpy-scipy") > 0
    assert cal.calibration_id in res.output
    # a partial calibration keeps the times it did not redo
    res = runner.invoke(
        cases_app,
        ["calibrate", "--cases", str(copy), "--only", "poisson_square_smooth", "--library", "numpy-scipy"]
        + ["--repeats", "1", "--machine", "testbox"],
    )
    assert res.exit_code == 0, res.output
    assert "kept 4 solves timed before" in res.output
    again = timing.load(copy, "testbox")
    assert again.t_base["hz_square_k4"] == cal.t_base["hz_square_k4"]
    assert set(again.t_base) == {"hz_square_k4", "poisson_square_smooth"}
    assert set(again.t_base["poisson_square_smooth"]) == {"numpy-scipy"}
    assert "for 5 solves written" in res.output
    # timed with other repeats, the old file is replaced and the drop said
    res = runner.invoke(
        cases_app,
        ["calibrate", "--cases", str(copy), "--only", "poisson_square_smooth", "--library", "numpy-scipy"]
        + ["--repeats", "2", "--machine", "testbox"],
    )
    assert res.exit_code == 0, res.output
    assert "(repeats 1): 4 solves timed there dropped" in res.output
    assert set(timing.load(copy, "testbox").t_base) == {"poisson_square_smooth"}


def test_calibrating_one_library_keeps_the_other_libraries_times(tmp_path: Path) -> None:
    folder = _folder_of(tmp_path / "one", ["hz_square_k4"])
    args = ["calibrate", "--cases", str(folder), "--repeats", "1", "--machine", "testbox", "--library"]
    res = runner.invoke(cases_app, [*args, "scikit-fem"])
    assert res.exit_code == 0, res.output
    assert "for 1 solves written" in res.output and "kept" not in res.output
    first = timing.load(folder, "testbox").t_base
    res = runner.invoke(cases_app, [*args, "numpy-scipy"])
    assert res.exit_code == 0, res.output
    assert "kept 1 solves timed before" in res.output and "for 2 solves written" in res.output
    both = timing.load(folder, "testbox").t_base
    assert sorted(both["hz_square_k4"]) == ["numpy-scipy", "scikit-fem"]
    assert both["hz_square_k4"]["scikit-fem"] == first["hz_square_k4"]["scikit-fem"]


def _sample(tmp_path: Path) -> Path:
    """A copy of the committed cases holding, for every family, the first cases (by id) that
    together list every library of the family: each (family, library) solver once."""
    specs = sorted(store.load_specs(CASES), key=lambda s: s.id)
    wanted = {(s.family, lib) for s in specs for lib in s.libraries}
    keep = []
    for spec in specs:
        if any((spec.family, lib) in wanted for lib in spec.libraries):
            keep.append(spec.id)
            wanted -= {(spec.family, lib) for lib in spec.libraries}
    return _folder_of(tmp_path / "sample", keep)


def _folder_of(folder: Path, keep: list[str]) -> Path:
    """A cases folder holding the committed cases `keep` alone."""
    (folder / store.HIDDEN).mkdir(parents=True)
    lines = [line for line in (CASES / store.SPECS_FILE).read_text().splitlines() if json.loads(line)["id"] in keep]
    (folder / store.SPECS_FILE).write_text("\n".join(lines) + "\n")
    for case in keep:
        for f in (CASES / store.HIDDEN).glob(f"{case}.*"):
            shutil.copy(f, folder / store.HIDDEN / f.name)
    return folder


def test_validate_passes_on_the_committed_cases_and_catches_a_leak(tmp_path: Path) -> None:
    from fembench_agents.cases.validation import calibration_problems

    # --no-rebuild: a full rebuild takes minutes; test_cases_records rebuilds a sample and compares it
    res = runner.invoke(cases_app, ["validate", "--cases", str(CASES), "--no-rebuild", "--no-calibration"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == "cases valid: leak-free, reproducible, coverage met"
    # calibration solvers scored through the sandbox as attempts at their own cases pass (the fast
    # gate too where this machine has a calibration: not checked is said, never passed): every
    # (family, library) solver once here; tests/test_cases_calibration.py runs every one of the
    # pairs against its own gates in-process, and `cases validate` scores them all
    skipped: list[str] = []
    found, checked = calibration_problems(_sample(tmp_path), lambda what, why: skipped.append(what))
    assert (found, checked) == ([], 56)  # the sample cases and every library each lists
    copy = _copy(tmp_path)
    lines = (copy / store.SPECS_FILE).read_text().splitlines()
    hidden = json.loads((copy / store.HIDDEN / "poisson_square_smooth.json").read_text())
    for i, line in enumerate(lines):
        spec = json.loads(line)
        if spec["id"] == "poisson_square_smooth":
            spec["boundary"][0]["value"] = hidden["solution"]  # the published track's leak
            lines[i] = json.dumps(spec)
    (copy / store.SPECS_FILE).write_text("\n".join(lines) + "\n")
    res = runner.invoke(cases_app, ["validate", "--cases", str(copy), "--no-rebuild"])
    assert res.exit_code == 1
    assert "poisson_square_smooth" in res.output and "accuracy gate" in res.output


def test_a_partial_machine_calibration_leaves_the_other_fast_gates_unchecked_not_failed(tmp_path: Path) -> None:
    from fembench_agents.cases.validation import calibration_problems

    copy = tmp_path / "cases"
    (copy / store.HIDDEN).mkdir(parents=True)
    keep = ("hz_square_k4", "poisson_square_smooth")
    lines = [line for line in (CASES / store.SPECS_FILE).read_text().splitlines() if json.loads(line)["id"] in keep]
    (copy / store.SPECS_FILE).write_text("\n".join(lines) + "\n")
    for case in keep:
        for f in (CASES / store.HIDDEN).glob(f"{case}.*"):
            shutil.copy(f, copy / store.HIDDEN / f.name)
    # one solve timed (generously: it passes the fast gate), the seven others not
    cal = timing.MachineCalibration(
        machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={"hz_square_k4": {"numpy-scipy": 60.0}}
    )
    timing.save(copy, cal)
    skipped: list[tuple[str, str]] = []
    found, checked = calibration_problems(copy, lambda what, why: skipped.append((what, why)))
    assert (found, checked) == ([], 8)
    assert skipped == [
        (
            "the fast gate of 7 solves",
            f"calibration {cal.machine} has no time for them: run `fembench-agents cases calibrate`",
        )
    ]

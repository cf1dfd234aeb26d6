"""Fresh instances named in a selection (`fresh:...`): the items a selection splits into,
the spec an item parses to and the generator calls it makes, the errors a bad item
gets, the cache a second load and a resumed run reuse byte for byte, and the run's
manifest naming the ids it drew."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from fembench_agents.cases import fresh_sets, store, timing
from fembench_agents.cases.fresh_sets import FreshSpec, FreshSpecError, made_cases, parse_spec, set_dir
from fembench_agents.cases.generate import output
from fembench_agents.cases.generate.output import Request
from fembench_agents.kinds.contract import ProblemsUnavailable, ScoringOptions
from fembench_agents.runs.problems import load_problems
from fembench_agents.runs.selection import resolve_selection, select_tasks
from fembench_agents.scoring.sandbox import Sandbox

PUBLISHED = "poisson_square_smooth"
ITEM = "fresh:poisson:seed=7:domain=unit_square"
ID = "fresh_v2_poisson_unit_square_s7_00"


def test_an_item_parses_to_its_strata_seed_and_count() -> None:
    spec = parse_spec("fresh:poisson/l_shape, heat,poisson/l_shape,elasticity:count=2:seed=7:domain=cross")
    assert spec == FreshSpec(
        strata=(("elasticity", "cross"), ("heat", "cross"), ("poisson", "l_shape")), seed=7, count=2
    )
    assert spec.canonical() == "fresh:elasticity/cross,heat/cross,poisson/l_shape:seed=7:count=2"
    assert spec.ids() == [
        "fresh_v2_elasticity_cross_s7_00",
        "fresh_v2_elasticity_cross_s7_01",
        "fresh_v2_heat_cross_s7_00",
        "fresh_v2_heat_cross_s7_01",
        "fresh_v2_poisson_l_shape_s7_00",
        "fresh_v2_poisson_l_shape_s7_01",
    ]
    drawn = parse_spec("fresh:helmholtz:seed=0")
    assert drawn == FreshSpec(strata=(("helmholtz", None),), seed=0, count=1)
    assert drawn.ids() == ["fresh_v2_helmholtz_s0_00"]


@pytest.mark.parametrize(
    ("item", "says"),
    [
        ("fresh:poisson", "'fresh:poisson' has no seed: expected fresh:FAMILY[/DOMAIN][,FAMILY[/DOMAIN]...]:seed=S"),
        ("fresh:poisson:seed=x", "'fresh:poisson:seed=x': seed='x'; expected a whole number >= 0"),
        ("fresh:poisson:seed=1:count=0", "count='0'; expected a whole number >= 1"),
        ("fresh:poisson:seed=1:colour=red", "'colour=red' is no option; expected one of seed=S, count=N, domain=D"),
        ("fresh:poisson:seed=1:seed=2", "seed is given twice"),
        ("fresh:stokes:seed=1", "no fresh family 'stokes'; known: poisson, heat, convection_diffusion"),
        ("fresh:poisson/moon:seed=1", "no domain 'moon'; known: unit_square, l_shape"),
        ("fresh:poisson:seed=1:domain=moon", "no domain 'moon'; known:"),
    ],
)
def test_a_bad_item_is_refused_naming_the_bad_part(item: str, says: str) -> None:
    with pytest.raises(FreshSpecError) as caught:
        parse_spec(item)
    assert says in str(caught.value)


def test_an_item_makes_one_generator_call_per_stratum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Request, str]] = []

    def spy(request: Request, out: Path) -> list[object]:
        calls.append((request, out.name))
        out.mkdir(parents=True, exist_ok=True)
        return []

    monkeypatch.setattr(output, "generate", spy)
    spec = parse_spec("fresh:poisson,heat/l_shape:seed=7:count=3")
    folder = fresh_sets.make_set(tmp_path, spec, ["numpy-scipy", "scikit-fem"])
    scratch = f"{folder.name}.partial-{__import__('os').getpid()}"
    assert calls == [
        (Request("heat", 7, 3, "l_shape", ("numpy-scipy", "scikit-fem")), scratch),
        (Request("poisson", 7, 3, None, ("numpy-scipy", "scikit-fem")), scratch),
    ]
    assert folder.parent == tmp_path / "fresh_sets" and folder.name.startswith("v2_s7_n3_")
    assert json.loads((folder / "spec.json").read_text()) == {
        "item": "fresh:heat/l_shape,poisson:seed=7:count=3",
        "libraries": ["numpy-scipy", "scikit-fem"],
    }
    # the key is the item's meaning and the libraries: another spelling is the same folder, other libraries not
    assert (
        set_dir(tmp_path, parse_spec("fresh:heat/l_shape,poisson:count=3:seed=7"), ["scikit-fem", "numpy-scipy"])
        == folder
    )
    assert set_dir(tmp_path, spec, ["numpy-scipy"]) != folder


@pytest.fixture
def one_case(tmp_path: Path) -> Path:
    """A cases folder holding one published case, calibrated on this machine."""
    cases = tmp_path / "cases"
    (cases / store.HIDDEN).mkdir(parents=True)
    line = next(x for x in (ROOT / "cases" / store.SPECS_FILE).read_text().splitlines() if f'"id":"{PUBLISHED}"' in x)
    (cases / store.SPECS_FILE).write_text(line + "\n")
    for f in (ROOT / "cases" / store.HIDDEN).glob(f"{PUBLISHED}.*"):
        shutil.copy(f, cases / store.HIDDEN / f.name)
    cal = timing.MachineCalibration(machine=timing.machine_name(), fingerprint={}, repeats=1, t_base={})
    timing.save(cases, cal)
    return cases


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_second_load_reuses_the_cached_bytes(one_case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    selection = f"{PUBLISHED},{ITEM}"
    with Sandbox(workers=1) as sandbox:
        sets = load_problems(
            ["numpy-scipy"], sandbox, {"cases": str(one_case)}, selections=[("numpy-scipy", selection)]
        )
        sets.evaluator.close()
        assert sets.made == {ITEM: ID}
        assert resolve_selection(selection, sets.made) == f"{PUBLISHED},{ID}"
        assert [
            c.task_id for c in select_tasks(sets.by_track["numpy-scipy"], resolve_selection(selection, sets.made))
        ] == [
            ID,
            PUBLISHED,
        ]
        # a selection that names no fresh item does not offer the cached ones
        plain = load_problems(["numpy-scipy"], sandbox, {"cases": str(one_case)})
        plain.evaluator.close()
        assert [c.task_id for c in plain.by_track["numpy-scipy"]] == [PUBLISHED]
        (folder,) = (one_case / "fresh_sets").iterdir()
        before = _snapshot(folder)
        assert sorted(before) == [
            "case_specs.jsonl",
            f"definitions/{ID}.toml",
            "fresh.json",
            f"hidden/{ID}.json",
            f"hidden/{ID}.npz",
            "spec.json",
        ]

        def refuse(*_: object) -> None:
            raise AssertionError("the cached set was generated again")

        monkeypatch.setattr(output, "generate", refuse)
        again = load_problems(
            ["numpy-scipy"], sandbox, {"cases": str(one_case)}, selections=[("numpy-scipy", selection)]
        )
        again.evaluator.close()
    assert again.made == {ITEM: ID} and _snapshot(folder) == before
    assert [c.task_id for c in again.by_track["numpy-scipy"]] == [PUBLISHED, ID]  # the folder's, then the made


def test_bad_items_in_a_load_are_refused_before_anything_is_made(one_case: Path) -> None:
    with Sandbox(workers=1) as sandbox:
        for selection, says in [
            ("fresh:poisson", "'fresh:poisson' has no seed"),
            ("frsh:poisson:seed=1", "'frsh:poisson:seed=1' names nothing the PDE cases make: expected a case id"),
        ]:
            with pytest.raises(ProblemsUnavailable) as caught:
                load_problems(
                    ["numpy-scipy"], sandbox, {"cases": str(one_case)}, selections=[("numpy-scipy", selection)]
                )
            assert says in str(caught.value)
        options = ScoringOptions(gates="published", prepared_later=True)
        with pytest.raises(ProblemsUnavailable):
            load_problems(["numpy-scipy"], sandbox, {"cases": str(one_case)}, options, [("numpy-scipy", ITEM)])
    assert not (one_case / "fresh_sets").exists()


def test_a_selection_without_made_items_makes_nothing(tmp_path: Path) -> None:
    assert made_cases(tmp_path, ["a,b_*", "all"], ["numpy-scipy"]) == ([], {})
    assert not (tmp_path / "fresh_sets").exists()


def test_a_run_makes_calibrates_and_names_its_fresh_instances_and_a_resume_reuses_them(
    one_case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run --cases PUBLISHED,fresh:...`: the fresh case is generated and timed before the first
    episode, the manifest names its id, and the same command again resumes with the same bytes
    (nothing generated or timed again, nothing run again)."""
    from cli_in_process import cli

    from fembench_agents.models.scripted import ensure_registered, register_script
    from fembench_agents.runs.log import read_manifest

    ensure_registered()
    # a script of its own: another test in the same process may have taken `echo` away
    register_script("fresh-selection", ["no program in this reply"] * 8)
    monkeypatch.chdir(tmp_path)
    published = timing.MachineCalibration(  # this machine's fingerprint: the run's times are merged with it
        machine=timing.machine_name(),
        fingerprint=timing.fingerprint(),
        repeats=1,
        t_base={PUBLISHED: {"numpy-scipy": 1.0}},
    )
    timing.save(one_case, published)  # the published case is timed already: the run times the fresh one alone
    run = ["run", "--model", "scripted/fresh-selection", "--cases", f"{PUBLISHED},{ITEM}", "--library", "numpy-scipy"]
    run += ["--cases-path", str(one_case), "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "r")]
    first = cli(*run)
    assert first.code == 0, first.text
    assert "calibrating numpy-scipy on this machine (once): 1 case(s): done" in first.err
    manifest = read_manifest(tmp_path / "r")
    assert manifest.config["tasks"] == f"{PUBLISHED},{ID}"
    assert sorted(manifest.task_hashes) == [ID, PUBLISHED]
    machine = json.loads((one_case / "calibration" / f"{timing.machine_name()}.json").read_text())
    assert sorted(machine["t_base"]) == [ID, PUBLISHED] and machine["t_base"][PUBLISHED] == {"numpy-scipy": 1.0}
    (folder,) = (one_case / "fresh_sets").iterdir()
    before = _snapshot(folder)

    def refuse(*_: object) -> None:
        raise AssertionError("the cached set was generated again")

    monkeypatch.setattr(output, "generate", refuse)
    log = (tmp_path / "r" / "log.jsonl").read_bytes()
    again = cli(*run)
    assert again.code == 0, again.text
    assert "calibrating" not in again.err
    assert _snapshot(folder) == before and (tmp_path / "r" / "log.jsonl").read_bytes() == log


def test_an_optimizations_fresh_held_out_items_take_part_by_id() -> None:
    from fembench_agents.optimize.split import with_made

    made = {"fresh:poisson:seed=7": "fresh_v2_poisson_s7_00", "fresh:heat:seed=1": "fresh_v2_heat_s1_00"}
    assert with_made("poisson_square_*", "poisson_square_jump,fresh:poisson:seed=7", made) == (
        "poisson_square_*,fresh_v2_poisson_s7_00",
        "poisson_square_jump,fresh_v2_poisson_s7_00",
    )
    assert with_made("all", "fresh:poisson:seed=7", made) == ("all", "fresh_v2_poisson_s7_00")  # all holds them
    assert with_made("p_*,fresh:heat:seed=1", "p_1", made) == ("p_*,fresh_v2_heat_s1_00", "p_1")
    assert with_made("p_*", "p_1", {}) == ("p_*", "p_1")


def test_a_dry_run_lists_the_fresh_instances_it_would_make_and_makes_none(
    one_case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run --dry-run` of a selection naming a fresh item: the item's ids, where they will be made and
    that they are not made yet, the episodes counted with them and their prompts from each case's first
    draw; nothing generated, no sandbox. Once the set is made, the dry run reads it: the same row."""
    from cli_in_process import cli

    from fembench_agents.models.scripted import ensure_registered, register_script
    from fembench_agents.scoring.sandbox import Sandbox

    ensure_registered()
    register_script("fresh-dry-run", ["no program in this reply"])
    folder = set_dir(one_case, parse_spec(ITEM), ["numpy-scipy"])
    run = ["run", "--model", "scripted/fresh-dry-run", "--cases", f"{PUBLISHED},{ITEM}", "--library", "numpy-scipy"]
    run += ["--cases-path", str(one_case), "--out", str(tmp_path / "r"), "--dry-run"]

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a dry run made a fresh set or started the sandbox")

    with monkeypatch.context() as patched:
        patched.setattr(output, "generate", refuse)
        patched.setattr(Sandbox, "__init__", refuse)
        before = cli(*run)
    assert before.code == 0, before.text
    assert not (one_case / "fresh_sets").exists() and not (tmp_path / "r").exists()
    rows = [" ".join(line.strip("│┃ ").split()) for line in before.out.splitlines() if "│" in line]
    assert rows[0].startswith("scripted/fresh-dry-run │ single-shot │ numpy-scipy │ 2 │ 2 │ ")  # published + fresh
    assert (
        f"note: {ITEM}: 1 fresh case(s) not made yet (a dry run makes none); the run generates, checks and "
        f"calibrates them into {folder} before its first episode: {ID}; their prompts are counted from each "
        "case's first draw, which a refused draw replaces"
    ) in " ".join(before.out.split())
    made_cases(one_case, [ITEM], ["numpy-scipy"])  # what the run makes first (draw 0 kept: no redraw)
    after = cli(*run)
    assert after.code == 0, after.text
    assert [" ".join(line.strip("│┃ ").split()) for line in after.out.splitlines() if "│" in line] == rows
    assert f"note: {ITEM}: 1 fresh case(s) read from {folder}" in " ".join(after.out.split())
    bad = cli(*[("fresh:poisson" if part == f"{PUBLISHED},{ITEM}" else part) for part in run])
    assert bad.code == 2 and "'fresh:poisson' has no seed: expected fresh:FAMILY" in " ".join(bad.err.split())

"""The published-against-fresh section: per model x agent x track, tasks grouped by the
stratum their kind names, each side's rate per stratum, the paired difference
(published - fresh) per family and overall with a bootstrap interval over strata, the
unpaired strata listed apart; the PDE kind's word on a case id; and the section in
every rendering (Markdown, terminal, tables, plot, `report --contamination`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_in_process import cli
from run_builders import episode, make_run

from fembench_agents.cases.fresh_sets import SETS_DIR
from fembench_agents.cases.report_view import CASE_REPORT
from fembench_agents.report import build_report, render_markdown, write_report
from fembench_agents.report.contamination import by_stratum, contamination, family_of, task_rates
from fembench_agents.report.schema import ContaminationRow, Estimate, ReportSettings, TaskInfo, UnpairedStratum
from fembench_agents.report.stats import bootstrap_ci
from fembench_agents.runs.log import EpisodeRecord

TRACK = "numpy-scipy"
# task -> (origin, stratum)
STRATA: dict[str, tuple[str, str | None]] = {
    "p1": ("published", "poisson/unit_square"),
    "p2": ("published", "poisson/unit_square"),
    "f1": ("fresh", "poisson/unit_square"),
    "p3": ("published", "poisson/l_shape"),
    "f2": ("fresh", "poisson/l_shape"),
    "f3": ("fresh", "poisson/l_shape"),
    "p4": ("published", "heat/unit_square"),
    "f4": ("fresh", "heat/unit_square"),
    "p5": ("published", "heat/cross"),
    "f5": ("fresh", "helmholtz/cross"),
    "x": ("published", None),
    "T1": ("published", "T1"),  # a function task: its own id is its stratum and its family
    "T1@fresh": ("fresh", "T1"),
}
# task -> passes of 2 repeats
PASSES = {"p1": 2, "p2": 1, "f1": 0, "p3": 1, "f2": 1, "f3": 2, "p4": 2, "f4": 0, "p5": 2, "f5": 1, "x": 2}
PASSES |= {"T1": 1, "T1@fresh": 1}


def info(track: str, task_id: str) -> TaskInfo:
    origin, stratum = STRATA[task_id]
    return TaskInfo(domain="other", tier="-", knowledge="-", origin=origin, stratum=stratum)


def episodes(agent: str = "single-shot", tasks: dict[str, int] = PASSES) -> list[EpisodeRecord]:
    return [episode(agent, t, r, r < n, track=TRACK) for t, n in tasks.items() for r in range(2)]


def test_a_task_rate_is_its_share_of_repeats_and_strata_keep_their_sides() -> None:
    rates = task_rates(episodes())[("mock/model", "single-shot", TRACK)]
    assert rates["p2"] == 0.5 and rates["f3"] == 1.0 and rates["f1"] == 0.0
    sides = by_stratum(rates, lambda t: info(TRACK, t))
    assert sides["poisson/unit_square"] == {"published": [1.0, 0.5], "fresh": [0.0]}
    assert sides["helmholtz/cross"] == {"published": [], "fresh": [0.5]}
    assert None not in sides and len(sides) == 6  # "x" has no stratum
    assert [family_of(s) for s in ("poisson/l_shape", "T1", "a/b/c")] == ["poisson", "T1", "a"]


def test_rates_difference_and_interval_per_family_and_overall() -> None:
    rows, unpaired = contamination(episodes(), info, ReportSettings())

    def row(
        scope: str, strata: int, tasks: tuple[int, int], rates: tuple[float, float], d: Estimate
    ) -> ContaminationRow:
        return ContaminationRow(
            model="mock/model",
            agent="single-shot",
            track=TRACK,
            scope=scope,
            strata=strata,
            published_tasks=tasks[0],
            fresh_tasks=tasks[1],
            published=rates[0],
            fresh=rates[1],
            difference=d,
        )

    # strata differences: T1 0, heat/unit_square 1, poisson/l_shape 0.5 - 0.75, poisson/unit_square 0.75 - 0
    assert rows == [
        row("T1", 1, (1, 1), (0.5, 0.5), Estimate(value=0.0, low=0.0, high=0.0)),
        row("heat", 1, (1, 1), (1.0, 0.0), Estimate(value=1.0, low=1.0, high=1.0)),
        row("poisson", 2, (3, 3), (0.625, 0.375), Estimate(value=0.25, low=-0.25, high=0.75)),
        row("overall", 4, (5, 5), (0.6875, 0.3125), Estimate(value=0.375, low=-0.125, high=0.875)),
    ]
    # The bounds are the percentiles of the mean of 2 (poisson) or 4 (overall) differences drawn from
    # the strata's: poisson's -0.25 and 0.75 each come up a quarter of the time; overall, a mean at or
    # below -0.1875 (three or four draws of -0.25, the rest 0) has probability 5/256 < 2.5%, at or below
    # -0.125 11/256, and symmetrically 0.875 above. Resampling tasks would give other bounds.
    assert unpaired == [
        UnpairedStratum(
            model="mock/model", agent="single-shot", track=TRACK, stratum="heat/cross", side="published", tasks=1
        ),
        UnpairedStratum(
            model="mock/model", agent="single-shot", track=TRACK, stratum="helmholtz/cross", side="fresh", tasks=1
        ),
    ]


def test_the_interval_resamples_strata_with_the_reports_settings() -> None:
    settings = ReportSettings(resamples=7, confidence=0.8, seed=3)
    rows, _ = contamination(episodes(), info, settings)
    poisson = next(r for r in rows if r.scope == "poisson").difference
    low, high = bootstrap_ci([-0.25, 0.75], resamples=7, confidence=0.8, seed=3)  # strata sorted by name
    assert (poisson.low, poisson.high) == (low, high)
    assert (low, high) != bootstrap_ci([-0.25, 0.75], resamples=2000, confidence=0.95, seed=0)
    # eight strata, differences 1/8 .. 8/8: the report's seed 3 gives (0.453125, 0.646875), which about 1 in
    # 1000 other seeds give (3 of seeds 0 .. 2999), so an interval drawn without the seed is told apart
    eight = [
        episode("single-shot", f"{side}{i}", r, side == "p" and r < i, track=TRACK)
        for i in range(1, 9)
        for side in "pf"
        for r in range(8)
    ]

    def by_name(track: str, task_id: str) -> TaskInfo:
        origin = "published" if task_id[0] == "p" else "fresh"
        return TaskInfo(domain="other", tier="-", knowledge="-", origin=origin, stratum=f"poisson/s{task_id[1:]}")

    rows, _ = contamination(eight, by_name, settings)
    assert [(r.scope, r.difference) for r in rows] == [
        ("poisson", Estimate(value=0.5625, low=0.453125, high=0.646875)),
        ("overall", Estimate(value=0.5625, low=0.453125, high=0.646875)),
    ]


def test_only_groups_with_a_fresh_task_have_rows() -> None:
    published_only = {t: n for t, n in PASSES.items() if STRATA[t][0] == "published"}
    fresh_only = {"f5": 1}
    eps = episodes("published-only", published_only) + episodes("fresh-only", fresh_only)
    rows, unpaired = contamination(eps, info, ReportSettings())
    assert rows == []
    assert [(u.agent, u.stratum, u.side, u.tasks) for u in unpaired] == [("fresh-only", "helmholtz/cross", "fresh", 1)]
    # a group without fresh tasks is passed over, not the end: the groups sorted after it still have rows
    rows, _ = contamination(eps + episodes("single-shot"), info, ReportSettings())
    assert [(r.agent, r.scope) for r in rows] == [("single-shot", s) for s in ("T1", "heat", "poisson", "overall")]


@pytest.fixture
def cases_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cases folder's records: two published cases and a set of fresh ones (one with its domain drawn)."""
    cases = tmp_path / "cases"
    cases.mkdir()
    specs = [("poisson_square_smooth", "poisson", "unit_square"), ("hz_lshape_k3", "helmholtz", "l_shape")]
    lines = [json.dumps({"id": i, "family": f, "domain": {"name": d}}) for i, f, d in specs]
    (cases / "case_specs.jsonl").write_text("\n".join(lines) + "\n")
    (cases / "imported").mkdir()
    imported = {"id": "imported_case", "family": "heat", "domain": {"name": "l_shape"}}
    (cases / "imported" / "case_specs.jsonl").write_text(json.dumps(imported) + "\n")
    held = {}
    for case_id, family, domain in [
        ("fresh_v1_poisson_unit_square_s7_00", "poisson", "unit_square"),
        ("fresh_v1_helmholtz_s7_00", "helmholtz", "cross"),
    ]:
        held[case_id] = {
            "id": case_id,
            "generator_version": 1,
            "family": family,
            "domain": domain,
            "domain_fixed": "_s7" not in case_id.split(family)[1][:3],
            "seed": 7,
            "index": 0,
            "draw": 0,
            "terms": ["smooth"],
            "libraries": [TRACK],
        }
    (cases / SETS_DIR / "v1_s7_n1_x").mkdir(parents=True)
    (cases / SETS_DIR / "v1_s7_n1_x" / "fresh.json").write_text(json.dumps({"generator_version": 1, "cases": held}))
    monkeypatch.setenv("FEMBENCH_CASES", str(cases))
    return cases


def test_a_case_id_says_its_origin_and_family_and_domain(cases_folder: Path) -> None:
    said = {
        i: (CASE_REPORT.task_info(i).origin, CASE_REPORT.task_info(i).stratum)
        for i in (
            "poisson_square_smooth",
            "imported_case",
            "fresh_v1_poisson_unit_square_s7_00",
            "fresh_v1_helmholtz_s7_00",
        )
    }
    assert said == {
        "poisson_square_smooth": ("published", "poisson/unit_square"),
        "imported_case": ("published", "heat/l_shape"),
        "fresh_v1_poisson_unit_square_s7_00": ("fresh", "poisson/unit_square"),
        "fresh_v1_helmholtz_s7_00": ("fresh", "helmholtz/cross"),
    }
    unknown = CASE_REPORT.task_info("fresh_v1_heat_s9_00")
    assert (unknown.origin, unknown.stratum, unknown.domain) == ("fresh", None, "other")


def _case_run(tmp_path: Path) -> Path:
    passes = {"poisson_square_smooth": 1, "fresh_v1_poisson_unit_square_s7_00": 0, "hz_lshape_k3": 0}
    passes["fresh_v1_helmholtz_s7_00"] = 1
    return make_run(
        tmp_path / "run", "r1", [episode("single-shot", t, 0, n > 0, track=TRACK) for t, n in passes.items()]
    )


def test_the_section_renders_in_markdown_terminal_tables_and_a_plot(cases_folder: Path, tmp_path: Path) -> None:
    run = _case_run(tmp_path)
    report = build_report([run])
    assert [(r.scope, r.published, r.fresh, r.difference.value) for r in report.contamination] == [
        ("poisson", 1.0, 0.0, 1.0),
        ("overall", 1.0, 0.0, 1.0),
    ]
    assert [(u.stratum, u.side) for u in report.contamination_unpaired] == [
        ("helmholtz/cross", "fresh"),
        ("helmholtz/l_shape", "published"),
    ]
    md = render_markdown(report)
    assert "## Published against fresh instances\n" in md
    assert (
        "| mock/model | single-shot | numpy-scipy | poisson | 1 | 1.000 (1) | 0.000 (1) | +1.000 [+1.000, +1.000] |"
        in md
    )
    assert "| mock/model | single-shot | numpy-scipy | helmholtz/l_shape | published | 1 |" in md
    written = write_report(report, tmp_path / "out")
    assert (tmp_path / "out" / "plots" / "contamination.png").stat().st_size > 0
    assert (tmp_path / "out" / "plots" / "contamination.svg").stat().st_size > 0
    table = json.loads((tmp_path / "out" / "tables" / "contamination.json").read_text())
    assert table["rows"][1] == {
        "Model": "mock/model",
        "Agent": "single-shot",
        "Track": "numpy-scipy",
        "Family": "overall",
        "Strata": "1",
        "Published (tasks)": "1.000 (1)",
        "Fresh (tasks)": "0.000 (1)",
        "Published - fresh [95% CI]": "+1.000 [+1.000, +1.000]",
    }
    assert "![Published against fresh](plots/contamination.png)" in written["markdown"].read_text()
    shown = cli("report", str(run), "--contamination")
    assert shown.code == 0, shown.text
    assert "Published against fresh instances" in shown.out and "unpaired strata" in shown.out
    assert "+1.000 [+1.000, +1.000]" in shown.out and "Summary" not in shown.out
    site = cli("view", str(run), "--out", str(tmp_path / "site"))  # the HTML report: its tables and plots
    assert site.code == 0, site.text
    assert "Published against fresh instances" in (tmp_path / "site" / "data" / "index.js").read_text()
    assert (tmp_path / "site" / "plots" / "contamination.svg").is_file()


def test_report_contamination_without_fresh_instances_says_what_to_do(cases_folder: Path, tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", "r1", [episode("single-shot", "poisson_square_smooth", 0, True, track=TRACK)])
    assert build_report([run]).contamination == []
    shown = cli("report", str(run), "--contamination")
    assert shown.code == 2
    assert "no fresh instances in these runs: name some in the selection (`fresh:...`" in shown.err

"""Writing the static site: the page and its scripts, the index (episodes, the
report's tables and the comparison's arms and tasks), one data file per
episode, one per task for the side-by-side comparison, and the plots.

Data files are JSON wrapped in a call (`fembenchIndex({...})`), loaded by a
script tag: browsers refuse `fetch` of a file:// URL, and the site must open
from disk."""

from __future__ import annotations

import json
import os
import shutil
from collections import defaultdict
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from fembench_agents.report import build_report
from fembench_agents.report.plots import write_plots
from fembench_agents.report.render import isolation_warnings
from fembench_agents.report.schema import ReportSettings
from fembench_agents.runs.log import AttemptRecord
from fembench_agents.runs.reader import RunRecords, latest_attempts, open_run
from fembench_agents.viewer.compare import ComparedEpisode, arm_ids, comparison
from fembench_agents.viewer.episodes import episode_view
from fembench_agents.viewer.index import EPISODE_FIELDS, episode_row, linked_sections

STATIC_FILES = ("index.html", "app.js", "compare.js", "style.css")
DATA_DIR = "data"
EPISODES_DIR = "episodes"
COMPARE_DIR = "compare"
PLOTS_DIR = "plots"


def _js_call(function: str, *args: Any) -> str:
    return f"{function}({', '.join(json.dumps(a, separators=(',', ':')) for a in args)});\n"


def _attempts_by_episode(records: list[Any]) -> dict[str, list[AttemptRecord]]:
    out: dict[str, list[AttemptRecord]] = defaultdict(list)
    for a in latest_attempts(records).values():
        out[a.episode].append(a)
    return out


def write_site(
    run_dirs: Iterable[str | os.PathLike[str] | RunRecords],
    out_dir: str | os.PathLike[str],
    settings: ReportSettings | None = None,
) -> Path:
    """The viewer for `run_dirs` (directories, or runs already read) in
    `out_dir`; returns the path of its index.html. Episode and comparison
    files of an earlier site in `out_dir` are replaced."""
    runs = [d if isinstance(d, RunRecords) else open_run(d) for d in run_dirs]
    report = build_report(runs, settings)
    out = Path(out_dir)
    episodes_dir, compare_dir = out / DATA_DIR / EPISODES_DIR, out / DATA_DIR / COMPARE_DIR
    for folder in (episodes_dir, compare_dir):
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    static = resources.files("fembench_agents.viewer") / "static"
    for name in STATIC_FILES:
        (out / name).write_text(static.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
    plots = write_plots(report, out / PLOTS_DIR)
    rows: list[list[Any]] = []
    compared: list[ComparedEpisode] = []
    for run in runs:
        attempts = _attempts_by_episode(run.records)
        for ep in run.episodes():
            n = len(rows)
            view = episode_view(ep, run.manifest.run_id, attempts.get(ep.episode, []))
            (episodes_dir / f"{n}.js").write_text(_js_call("fembenchEpisode", n, view), encoding="utf-8")
            rows.append(episode_row(n, run.manifest.run_id, ep))
            compared.append(ComparedEpisode(n, run.manifest.run_id, ep, tuple(a["code"] for a in view["attempts"])))
    compare_index, task_files = comparison(compared)
    for k, task in enumerate(task_files):
        (compare_dir / f"{k}.js").write_text(_js_call("fembenchCompareTask", k, task), encoding="utf-8")
    index = {
        "title": "Run viewer: " + ", ".join(r.run_id for r in report.runs),
        "runs": [
            {"run_id": r.run_id, "path": r.path, "episodes": r.episodes, "created": r.created} for r in report.runs
        ],
        "warnings": isolation_warnings(report),
        "fields": list(EPISODE_FIELDS),
        "episodes": rows,
        "sections": linked_sections(report, arm_ids(compare_index)),
        "compare": compare_index,
        "plots": [
            {"caption": caption, "png": f"{PLOTS_DIR}/{p.name}", "svg": f"{PLOTS_DIR}/{p.with_suffix('.svg').name}"}
            for caption, p in plots.items()
        ],
    }
    (out / DATA_DIR / "index.js").write_text(_js_call("fembenchIndex", index), encoding="utf-8")
    return out / "index.html"

"""How fast the viewer opens a large run: a generated run of 10,000 episodes
(the suite's task ids, several models and agents, one to three attempts
each), written as a site, then opened from disk in headless Chromium.
Prints the time to write the site, to show the index (first rows listed),
to apply a filter, to open an episode and to show two agents side by side
(the comparison's first page, every repeat it shows filled), each against
the 2 s target.

    .venv/bin/python benchmarks/viewer_speed.py [--episodes 10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser import MISSING, Browser, find_chromium  # noqa: E402
from run_builders import attempt, episode, function_outcome  # noqa: E402

from fembench_agents.runs.log import LOG_NAME, AttemptRecord, EpisodeRecord, RunManifest, write_manifest  # noqa: E402
from fembench_agents.viewer import write_site  # noqa: E402

TARGET_SECONDS = 2.0
# every repeat the comparison's first page shows has its episodes side by side
FILLED = (
    "(() => { const r = document.querySelectorAll('.compare-repeat').length;"
    " return r > 0 && document.querySelectorAll('.compare-head').length === r; })()"
)
MODELS = ("model-a", "model-b")
AGENTS = ("single-shot", "feedback-loop", "template")
CODE = (
    "import numpy as np\n\ndef f(x):\n    # a few lines of generated code\n    y = np.asarray(x) * {k}\n    return y\n"
)


def generated_records(episodes: int) -> list[AttemptRecord | EpisodeRecord]:
    tasks = sorted(p.stem for p in (ROOT / "tasks").rglob("*.py"))
    out: list[AttemptRecord | EpisodeRecord] = []
    combos = itertools.product(MODELS, AGENTS, tasks)
    grid = list(combos)
    for i in range(episodes):
        model, agent, task = grid[i % len(grid)]
        repeat = i // len(grid)
        attempts = 1 if agent != "feedback-loop" else 1 + i % 3
        passed = i % 5 < 2
        ep = episode(agent, task, repeat, passed, attempts=attempts, model=model)
        for k in range(attempts):  # indices count from 0, as a session records them
            last_passed = passed and k == attempts - 1
            statuses = [("match", None)] if last_passed else [("mismatch", 10.0 ** -(i % 6))]
            out.append(attempt(ep, k, function_outcome(task, statuses, last_passed), code=CODE.format(k=k)))
        out.append(ep)
    return out


def write_run(directory: Path, records: list[AttemptRecord | EpisodeRecord]) -> Path:
    """The log in one write: `RunLog` fsyncs every record, which only a live run needs."""
    directory.mkdir(parents=True)
    write_manifest(directory, RunManifest(run_id="generated", config={}, task_hashes={}, versions={}))
    (directory / LOG_NAME).write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return directory


def timed(label: str, seconds: float) -> None:
    print(f"{label:<34} {seconds:7.3f} s   {seconds / TARGET_SECONDS:5.2f} x the 2 s target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="write the run and site here and keep them")
    args = parser.parse_args()
    executable = find_chromium()
    if executable is None:
        sys.exit(MISSING.format(names="chromium, chromium-browser, google-chrome"))
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        start = time.perf_counter()
        run = write_run(root / "run", generated_records(args.episodes))
        print(f"generated a run of {args.episodes} episodes in {time.perf_counter() - start:.1f} s")
        start, cpu = time.perf_counter(), time.process_time()
        index = write_site([run], root / "site")
        print(
            f"wrote the site in {time.perf_counter() - start:.1f} s ({time.process_time() - cpu:.1f} s CPU) "
            f"(index data {(index.parent / 'data' / 'index.js').stat().st_size / 1e6:.1f} MB)"
        )
        count = "(document.getElementById('episode-count') || {}).textContent"
        with Browser(executable, timeout=120) as browser:
            start = time.perf_counter()
            browser.open(index.as_uri() + "#/")
            browser.wait_for(f"{count} === '{args.episodes} of {args.episodes} episodes'")
            timed("index shown", time.perf_counter() - start)
            start = time.perf_counter()
            browser.evaluate("location.hash = '#/?agent=feedback-loop&status=failed'")
            browser.wait_for(f"!({count} || '{args.episodes} of').startsWith('{args.episodes} of')")
            timed("filter applied", time.perf_counter() - start)
            start = time.perf_counter()
            browser.evaluate("location.hash = '#/episode/" + str(args.episodes - 1) + "'")
            browser.wait_for("document.querySelectorAll('section.attempt').length > 0")
            timed("episode opened", time.perf_counter() - start)
            start = time.perf_counter()
            browser.evaluate("location.hash = '#/compare?arms=0,1'")
            browser.wait_for(FILLED)
            timed("side by side opened", time.perf_counter() - start)
            errors = browser.errors()
        print(f"console errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))


if __name__ == "__main__":
    main()

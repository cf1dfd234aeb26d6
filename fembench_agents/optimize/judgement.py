"""The held-out judgement the paper reports, run by `optimize` once the prompt
is written: the seed agent (no optimized prompt) and `prompt:FILE` on the
held-out tasks, `heldout_repeats` episodes each, through ordinary run
directories (so it resumes like every run and replays from its logs). It
writes `heldout.json`, `heldout.md` and `val_curve.png` (the best validation
score over metric calls, from history.json) into the optimization's directory.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from fembench_agents.contracts import ModelClient, Problem
from fembench_agents.optimize.settings import OptimizeSettings
from fembench_agents.report.kind_parts import report_part
from fembench_agents.runs.log import MANIFEST_NAME, AttemptRecord, read_log, read_manifest
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator

if TYPE_CHECKING:  # the search module imports gepa; `report` reads judgements without it
    from fembench_agents.optimize.search import OptimizeResult

JUDGEMENT_JSON, JUDGEMENT_MD, CURVE_PNG = "heldout.json", "heldout.md", "val_curve.png"


class HeldoutRow(BaseModel):
    model_config = ConfigDict(frozen=True)
    task_id: str
    baseline_passed: int
    optimized_passed: int
    runs: int
    origin: str = "published"  # "fresh": an instance drawn for this optimization (TaskInfo.origin)


class HeldoutJudgement(BaseModel):
    model_config = ConfigDict(frozen=True)
    model: str
    baseline_agent: str
    optimized_agent: str
    repeats: int
    rows: list[HeldoutRow]
    baseline_passed: int
    optimized_passed: int
    runs: int
    used_metric_calls: int
    max_metric_calls: int
    best_val_score: float | None
    curve: list[tuple[int, float]]  # (metric calls when a candidate was found, best validation score so far)
    system_prompt: str


def baseline_agent(settings: OptimizeSettings) -> str:
    """The agent with no optimized prompt, in the task prompts the optimizer used."""
    return "fembench-paper" if settings.scaffold == "fembench_paper" else "single-shot"


def validation_curve(out: Path) -> list[tuple[int, float]]:
    history = json.loads((out / "history.json").read_text())
    curve: list[tuple[int, float]] = []
    for entry in sorted(history, key=lambda h: (h["discovered_at_metric_call"], h["index"])):
        best = max(float(entry["val_score"]), curve[-1][1] if curve else 0.0)
        curve.append((int(entry["discovered_at_metric_call"]), best))
    return curve


async def judge_heldout(
    result: OptimizeResult,
    settings: OptimizeSettings,
    tasks: Sequence[Problem],
    evaluator: Evaluator,
    model: ModelClient,
) -> HeldoutJudgement:
    if result.prompt_path is None:
        raise ValueError("the optimization is not finished: there is no prompt to judge yet")
    out = Path(result.out_dir)
    agents = {"baseline": baseline_agent(settings), "optimized": f"prompt:{result.prompt_path}"}
    # a resumed optimization (a larger budget) may rewrite the prompt file: its episodes under the old prompt
    # have the same keys and would be read back as this prompt's
    logged = out / "heldout" / "optimized"
    asked = {
        m.content for a in read_log(logged) if isinstance(a, AttemptRecord) for m in a.messages if m.role == "system"
    }
    if asked - {result.system_prompt}:
        raise ValueError(
            f"{logged} holds episodes of another prompt than the one judged now ({result.prompt_path}): "
            "remove that directory to judge this prompt"
        )
    # heldout_repeats may change on a resume, but a run directory keeps the repeats it started with
    for label in agents:
        judged, n = out / "heldout" / label, settings.heldout_repeats
        begun = read_manifest(judged).config["repeats"] if (judged / MANIFEST_NAME).exists() else n
        if begun != n:
            raise ValueError(
                f"{judged} holds the held-out episodes of heldout_repeats {begun}, not {n}: resume with that "
                f"number, or remove {out / 'heldout'} to judge with {n}"
            )
    passed: dict[str, dict[str, int]] = {}
    for label, agent in agents.items():
        config = RunConfig(
            model=settings.model,
            agent=agent,
            tasks=",".join(result.split.heldout),
            track=settings.track,
            repeats=settings.heldout_repeats,
            concurrency=settings.concurrency,
            params=settings.params,
        )
        records = await execute_run(config, tasks, out / "heldout" / label, model, evaluator)
        passed[label] = {t: sum(r.passed for r in records if r.task_id == t) for t in result.split.heldout}
    n = settings.heldout_repeats
    origin = report_part(settings.track).task_info
    rows = [
        HeldoutRow(
            task_id=t,
            baseline_passed=passed["baseline"][t],
            optimized_passed=passed["optimized"][t],
            runs=n,
            origin=origin(t).origin,
        )
        for t in result.split.heldout
    ]
    judgement = HeldoutJudgement(
        model=settings.model,
        baseline_agent=agents["baseline"],
        optimized_agent=agents["optimized"],
        repeats=n,
        rows=rows,
        baseline_passed=sum(r.baseline_passed for r in rows),
        optimized_passed=sum(r.optimized_passed for r in rows),
        runs=n * len(rows),
        used_metric_calls=result.metric_calls,
        max_metric_calls=result.budget.max_metric_calls,
        best_val_score=result.scores.val,
        curve=validation_curve(out),
        system_prompt=result.system_prompt,
    )
    (out / JUDGEMENT_JSON).write_text(judgement.model_dump_json(indent=1) + "\n")
    (out / JUDGEMENT_MD).write_text(render_judgement(judgement))
    plot_curve(judgement, out / CURVE_PNG)
    return judgement


def origin_totals(j: HeldoutJudgement) -> dict[str, tuple[int, int, int]]:
    """ "published held-out" and "fresh held-out" -> (baseline passes, optimized passes, runs), side
    by side when the held-out set holds fresh instances; nothing when it holds published ones only."""
    if all(r.origin == "published" for r in j.rows):
        return {}
    out: dict[str, tuple[int, int, int]] = {}
    for origin in ("published", "fresh"):
        mine = [r for r in j.rows if r.origin == origin]
        if mine:
            totals = (sum(r.baseline_passed for r in mine), sum(r.optimized_passed for r in mine))
            out[f"{origin} held-out"] = (*totals, sum(r.runs for r in mine))
    return out


def render_judgement(j: HeldoutJudgement) -> str:
    by_origin = [f"| **{k}** | **{b}/{n}** | **{o}/{n}** |" for k, (b, o, n) in origin_totals(j).items()]
    lines = [
        f"# Held-out judgement: {j.model}",
        "",
        f"| held-out task | {j.baseline_agent} | optimized prompt |",
        "| --- | --- | --- |",
        *(f"| {r.task_id} | {r.baseline_passed}/{r.runs} | {r.optimized_passed}/{r.runs} |" for r in j.rows),
        *by_origin,
        f"| **total** | **{j.baseline_passed}/{j.runs}** | **{j.optimized_passed}/{j.runs}** |",
        "",
        f"Budget: {j.used_metric_calls} of {j.max_metric_calls} metric calls; best validation score "
        + ("-" if j.best_val_score is None else f"{j.best_val_score:.3f}")
        + f" ({CURVE_PNG}).",
        "",
        "## The optimized prompt",
        "",
        "```text",
        j.system_prompt.rstrip(),
        "```",
        "",
    ]
    return "\n".join(lines)


def plot_curve(j: HeldoutJudgement, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if j.curve:
        calls, scores = zip(*j.curve, strict=True)
        ax.step([*calls, max(j.used_metric_calls, calls[-1])], [*scores, scores[-1]], where="post")
        ax.plot(calls, scores, "o")
    ax.set(
        xlabel="metric calls",
        ylabel="best validation score",
        ylim=(-0.02, 1.02),
        title="validation score of the best candidate",
    )
    ax.grid(alpha=0.3)
    fig.savefig(path, format="png")
    return path

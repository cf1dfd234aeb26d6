"""GEPA prompt optimization, offline: a scripted task model that answers
correctly only when the system prompt holds a keyword, a scripted reflection
model that proposes prompts, the FEM 1D/2D tasks, and one run on the embedded
local model."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fembench_agents.agents import make_agent
from fembench_agents.agents.prompted import PromptAgent
from fembench_agents.kinds import kind_for
from fembench_agents.messages import Message, ModelParams, ModelRequest
from fembench_agents.models import (
    ReplayModel,
    ResponseCache,
    make_client,
    open_client,
    register_script,
)
from fembench_agents.optimize import (
    HeldOutViolation,
    Models,
    OptimizeSettings,
    StopFlag,
    dspy_auto_budget,
    graceful_interrupts,
    load_settings,
    optimize_prompt,
    resolve_budget,
    scan_prompt,
    split_tasks,
)
from fembench_agents.optimize.candidates import PromptEvaluations, candidate_id
from fembench_agents.optimize.heldout import (
    Guarded,
    guarded,
    logged_heldout,
    normalize,
    normalized_text,
    written_numbers,
)
from fembench_agents.optimize.loop import LoopThread
from fembench_agents.runs.log import (
    AttemptRecord,
    EpisodeRecord,
    ModelCallRecord,
    RunLog,
    read_log,
    read_manifest,
)
from fembench_agents.runs.replay import compare_runs
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.suite.hidden import reference_material
from fembench_agents.suite.model import Task
from fembench_agents.suite.solver_view import function_stub
from fembench_agents.suite.validation import ideal_answer

ROOT = Path(__file__).resolve().parents[1]
KEYWORD = "CHECK-EVERY-INDEX"
HELDOUT = "FEM_1D_*"  # 3 tasks held out; the 9 FEM 2D tasks split 6 train / 3 validation


def answer_by_keyword(tasks: list[Task]) -> Callable[[list[Message]], str]:
    """The task model: the reference (plus the helpers it is not given) when the
    system prompt holds KEYWORD, else a function that returns None."""

    def reply(messages: list[Message]) -> str:
        system = messages[0].content if messages[0].role == "system" else ""
        task = next(t for t in tasks if function_stub(t) in messages[-1].content)
        body = ideal_answer(task) if KEYWORD in system else f"{task.main_signature}\n    return None\n"
        return f"```python\n{body}\n```"

    return reply


def proposals(*prompts: str) -> Callable[[list[Message]], str]:
    """The reflection model: proposes `prompts` in turn, then the last one again."""
    calls: list[int] = []

    def reply(messages: list[Message]) -> str:
        text = prompts[min(len(calls), len(prompts) - 1)]
        calls.append(1)
        return f"Here is the new instruction:\n```\n{text}\n```"

    return reply


def settings(**kw: object) -> OptimizeSettings:
    base: dict[str, object] = dict(
        name="t",
        model="scripted/opt-task",
        reflection_model="scripted/opt-reflect",
        heldout=HELDOUT,
        budget="18",
        seed=0,
        concurrency=3,
        params=ModelParams(max_tokens=512),
        reflection_params=ModelParams(max_tokens=512),
    )
    return OptimizeSettings.model_validate({**base, **kw})


def run_opt(
    s: OptimizeSettings,
    tasks: list[Task],
    evaluator: Evaluator,
    out: Path,
    *,
    prompt_out: Path | None = None,
    cache: ResponseCache | None = None,
    callbacks: list[object] | None = None,
    stop: StopFlag | None = None,
):
    task_model = make_client(s.model, s.params, cache=cache)
    reflection = make_client(s.reflection_model, s.reflection_params, cache=cache)
    return optimize_prompt(
        s,
        tasks,
        evaluator,
        out,
        Models(task_model, reflection),
        prompt_out=prompt_out,
        callbacks=callbacks or [],
        stop=stop,
    )


@pytest.fixture
def scripts(fem_tasks: list[Task]) -> Iterator[None]:
    register_script("opt-task", answer_by_keyword(fem_tasks))
    register_script("opt-reflect", proposals("Write clean code.", f"Write clean code and {KEYWORD}."))
    yield


# ----------------------------------------------------------------- budgets, split, settings


def test_budget_presets_are_dspy_auto_budgets() -> None:
    # The published protocol: 30 tasks, 30 % validation -> 9 validation tasks.
    assert [resolve_budget(b, 9).max_metric_calls for b in ("light", "medium", "heavy")] == [416, 735, 1098]
    assert resolve_budget("250", 9).max_metric_calls == 250
    with pytest.raises(ValueError, match="budget"):
        resolve_budget("huge", 9)
    gepa_dspy = pytest.importorskip("dspy.teleprompt.gepa.gepa")
    dspy_gepa = gepa_dspy.GEPA.__new__(gepa_dspy.GEPA)  # auto_budget reads no attribute
    for preset, n in gepa_dspy.AUTO_RUN_SETTINGS.items():
        for v in (3, 9, 20):
            assert resolve_budget(preset, v).max_metric_calls == dspy_gepa.auto_budget(1, n["n"], v)
            assert dspy_auto_budget(n["n"], v) == dspy_gepa.auto_budget(1, n["n"], v)


def test_split_is_seeded_and_holds_out(fem_tasks: list[Task]) -> None:
    a = split_tasks(fem_tasks, HELDOUT, 0.3, seed=1)
    assert a == split_tasks(list(reversed(fem_tasks)), HELDOUT, 0.3, seed=1)
    assert len(a.heldout) == 3 and len(a.val) == 3 and len(a.train) == 6
    assert not set(a.heldout) & a.seen and not set(a.train) & set(a.val)
    assert {split_tasks(fem_tasks, HELDOUT, 0.3, seed=s).val for s in range(6)} != {a.val}
    with pytest.raises(ValueError, match="matches no task"):
        split_tasks(fem_tasks, "NOPE_*", 0.3, seed=0)
    with pytest.raises(ValueError, match="val_fraction"):
        split_tasks(fem_tasks, HELDOUT, 1.5, seed=0)


def test_protocol_experiment_file() -> None:
    s = load_settings(
        ROOT / "experiments" / "gepa_fembench_protocol.toml",
        {"model": "openai/gpt-4o-mini", "reflection_model": "openai/gpt-4o", "budget": "heavy"},
    )
    assert (
        s.heldout == "MSA_3D_elastic_critical_load_CC1_H10_T1,MSA_3D_elastic_critical_load_CC1_H10_T2,"
        "MSA_3D_elastic_critical_load_CC1_H10_T3"
    )
    assert (s.val_fraction, s.reflection_minibatch_size, s.use_merge, s.include_reference) == (0.3, 3, True, True)
    assert s.budget == "heavy" and s.heldout_repeats == 5
    partial = load_settings(
        None,
        {
            "model": "m",
            "reflection_model": "r",
            "heldout": "x",
            "reflection_params": {"max_tokens": 64, "temperature": None},
        },
    )
    assert (partial.reflection_params.temperature, partial.reflection_params.max_tokens) == (1.0, 64)
    assert partial.name == "gepa_m_light"
    with pytest.raises(ValueError, match="reflection_model"):
        load_settings(None, {"model": "m", "heldout": "x"})


def test_a_key_under_the_wrong_table_is_named_not_ignored(tmp_path: Path) -> None:
    # a top-level key written after [reflection_params] lands in that table (TOML)
    path = tmp_path / "opt.toml"
    path.write_text(
        'kind = "optimize"\nheldout = "x"\n[reflection_params]\nmax_tokens = 64\nfinal_train_eval = false\n'
    )
    with pytest.raises(ValueError) as caught:
        load_settings(path, {"model": "m", "reflection_model": "r"})
    assert str(caught.value).startswith(
        f"{path}: reflection_params: Value error, unknown model parameter 'final_train_eval' (known: temperature,"
    )


# ----------------------------------------------------------------- the optimizer finds the keyword


def test_optimizer_finds_the_better_prompt(
    fem_tasks: list[Task], evaluator: Evaluator, scripts: None, tmp_path: Path
) -> None:
    prompt_out = tmp_path / "optimizers" / "kw.json"
    result = run_opt(settings(), fem_tasks, evaluator, tmp_path / "out", prompt_out=prompt_out)
    assert result.complete and KEYWORD in result.system_prompt
    assert result.scores.val == 1.0 and result.scores.train == 1.0
    assert result.scores.seed_val < 0.5 and result.scores.seed_train is not None and result.scores.seed_train < 0.5
    assert result.metric_calls >= 18 and result.reflection_calls >= 2
    assert not result.leak.leaked, result.leak

    # held-out tasks were never touched: not in any run log, not in any reflection request
    out = tmp_path / "out"
    seen = {r.task_id for p in (out / "evals").glob("*/log.jsonl") for r in read_log(p.parent)}
    assert seen and seen <= result.split.seen and not seen & set(result.split.heldout)
    assert logged_heldout(out, result.split.heldout) == []
    reflection_calls = [r for r in read_log(out / "reflection") if isinstance(r, ModelCallRecord)]
    assert len(reflection_calls) == result.reflection_calls
    reflection_text = "\n".join(m.content for r in reflection_calls for m in r.request.messages)
    assert not any(t in reflection_text for t in result.split.heldout)
    # the reflection step saw training references, never validation ones
    train_refs = [ideal_answer(t) for t in fem_tasks if t.task_id in result.split.train]
    val_refs = [ideal_answer(t) for t in fem_tasks if t.task_id in result.split.val]
    assert any(ref in reflection_text for ref in train_refs)
    assert not any(ref in reflection_text for ref in val_refs)

    # artifacts: history, Pareto front, the prompt file with provenance, usable as an agent
    history = json.loads((out / "history.json").read_text())
    assert history[0]["system_prompt"] == settings().seed_prompt
    assert [h["index"] for h in history if h["best"]] == [result.best_index]
    assert set(history[result.best_index]["val_scores"]) == set(result.split.val)
    front = json.loads((out / "pareto_front.json").read_text())
    assert set(front["tasks"]) == set(result.split.val) and result.best_index in front["candidates"]
    saved = json.loads(prompt_out.read_text())
    prov = saved["provenance"]
    assert saved["system_prompt"] == result.system_prompt
    assert prov["model"] == "scripted/opt-task" and prov["reflection_model"] == "scripted/opt-reflect"
    assert prov["split"]["heldout"] == list(result.split.heldout) and prov["split"]["seed"] == 0
    assert prov["budget"]["max_metric_calls"] == 18 and prov["scores"]["val"] == 1.0
    assert prov["leak_check"]["leaked"] is False
    agent = make_agent(f"prompt:{prompt_out}")
    assert isinstance(agent, PromptAgent) and agent.system_prompt == result.system_prompt


def test_compare_runs_the_optimized_prompt_on_heldout(
    fem_tasks: list[Task], evaluator: Evaluator, scripts: None, tmp_path: Path
) -> None:
    """What `compare --agents single-shot,prompt:optimizers/X.json --tasks <heldout> --repeats 5` runs."""
    prompt_out = tmp_path / "kw.json"
    result = run_opt(settings(), fem_tasks, evaluator, tmp_path / "out", prompt_out=prompt_out)
    model = make_client("scripted/opt-task")
    passed = {}
    for spec in ("single-shot", f"prompt:{prompt_out}"):
        config = RunConfig(model=model.model, agent=spec, tasks=",".join(result.split.heldout), repeats=2)
        records = asyncio_run(execute_run(config, fem_tasks, tmp_path / spec.replace("/", "_"), model, evaluator))
        passed[spec] = sum(r.passed for r in records)
    assert passed == {"single-shot": 0, f"prompt:{prompt_out}": 6}


def asyncio_run(coro):  # type: ignore[no-untyped-def]
    import asyncio

    return asyncio.run(coro)


def test_candidate_run_directories_replay_with_no_model_calls(
    fem_tasks: list[Task], evaluator: Evaluator, scripts: None, tmp_path: Path
) -> None:
    result = run_opt(settings(budget="9"), fem_tasks, evaluator, tmp_path / "out")
    run_dir = tmp_path / "out" / "evals" / candidate_id(result.system_prompt)
    manifest = read_manifest(run_dir)
    config = RunConfig(**{**manifest.config, "params": ModelParams(**manifest.config["params"])})
    records = read_log(run_dir)
    asyncio_run(execute_run(config, fem_tasks, tmp_path / "replay", ReplayModel.from_records(records), evaluator))
    assert compare_runs(records, read_log(tmp_path / "replay")) == []


# ----------------------------------------------------------------- checkpoint and resume


def test_resume_continues_rather_than_restarts(
    fem_tasks: list[Task], evaluator: Evaluator, scripts: None, tmp_path: Path
) -> None:
    first = run_opt(settings(budget="9"), fem_tasks, evaluator, tmp_path / "resumed")
    assert first.complete and first.metric_calls == 9 and first.new_metric_calls == 9
    before = json.loads((tmp_path / "resumed" / "history.json").read_text())
    second = run_opt(settings(budget="18"), fem_tasks, evaluator, tmp_path / "resumed")
    register_script("opt-reflect", proposals("Write clean code.", f"Write clean code and {KEYWORD}."))
    fresh = run_opt(settings(budget="18"), fem_tasks, evaluator, tmp_path / "fresh")
    assert second.metric_calls == fresh.metric_calls == 18
    assert second.new_metric_calls == 9 < fresh.new_metric_calls == 18
    assert second.new_episodes < fresh.new_episodes
    after = json.loads((tmp_path / "resumed" / "history.json").read_text())
    lineage = lambda h: [(c["system_prompt"], c["parents"], c["val_scores"]) for c in h]  # noqa: E731
    assert lineage(after)[: len(before)] == lineage(before) and len(after) > len(before)
    assert KEYWORD in second.system_prompt and second.scores.val == 1.0


class CtrlC:
    """A GEPA callback that presses Ctrl-C `times` times when iteration `at` ends."""

    def __init__(self, at: int, times: int) -> None:
        self.at, self.times = at, times

    def on_iteration_end(self, event: dict[str, object]) -> None:
        if event["iteration"] == self.at:
            for _ in range(self.times):
                signal.raise_signal(signal.SIGINT)


def test_ctrl_c_stops_cleanly_and_the_rerun_resumes(
    fem_tasks: list[Task], evaluator: Evaluator, scripts: None, tmp_path: Path
) -> None:
    out, prompt_out = tmp_path / "out", tmp_path / "p.json"
    stop = StopFlag()
    with graceful_interrupts(stop):
        stopped = run_opt(
            settings(budget="30"),
            fem_tasks,
            evaluator,
            out,
            prompt_out=prompt_out,
            callbacks=[CtrlC(at=1, times=1)],
            stop=stop,
        )
    assert stop.requested and not stopped.complete and stopped.iterations == 1
    assert 0 < stopped.metric_calls < 30 and stopped.prompt_path is None and not prompt_out.exists()
    assert json.loads((out / "result.json").read_text())["complete"] is False
    assert (out / "gepa" / "gepa_state.bin").exists()
    resumed = run_opt(settings(budget="30"), fem_tasks, evaluator, out, prompt_out=prompt_out)
    assert resumed.complete and resumed.metric_calls >= 30
    assert resumed.new_metric_calls == resumed.metric_calls - stopped.metric_calls
    assert prompt_out.exists() and KEYWORD in resumed.system_prompt


def test_second_ctrl_c_aborts_at_once_and_keeps_the_checkpoint(
    fem_tasks: list[Task], evaluator: Evaluator, scripts: None, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    stop, before = StopFlag(), signal.getsignal(signal.SIGINT)
    with graceful_interrupts(stop), pytest.raises(KeyboardInterrupt):
        run_opt(settings(budget="30"), fem_tasks, evaluator, out, callbacks=[CtrlC(at=1, times=2)], stop=stop)
    assert signal.getsignal(signal.SIGINT) is before  # restored
    assert (out / "gepa" / "gepa_state.bin").exists() and not (out / "result.json").exists()
    resumed = run_opt(settings(budget="30"), fem_tasks, evaluator, out)
    assert resumed.complete and resumed.new_metric_calls < resumed.metric_calls


def test_out_dir_of_another_optimization_is_refused(
    fem_tasks: list[Task], evaluator: Evaluator, scripts: None, tmp_path: Path
) -> None:
    run_opt(settings(budget="3"), fem_tasks, evaluator, tmp_path / "out")
    with pytest.raises(ValueError, match="different optimization.*seed"):
        run_opt(settings(budget="3", seed=7), fem_tasks, evaluator, tmp_path / "out")


# ----------------------------------------------------------------- the leak guard


def test_heldout_tasks_are_refused_before_any_model_call(
    fem_tasks: list[Task], evaluator: Evaluator, scripts: None, tmp_path: Path
) -> None:
    split = split_tasks(fem_tasks, HELDOUT, 0.3, seed=0)
    script = register_script("opt-task", answer_by_keyword(fem_tasks))
    evaluations = PromptEvaluations(
        tmp_path,
        {t.task_id: t for t in fem_tasks},
        split.seen,
        make_client("scripted/opt-task"),
        evaluator,
        lambda o: None,  # type: ignore[arg-type]
        ModelParams(),
        concurrency=2,
    )
    with LoopThread() as loop, pytest.raises(HeldOutViolation, match=split.heldout[0]):
        loop.run(evaluations.evaluate("any prompt", [split.train[0], split.heldout[0]]))
    assert script.calls == 0 and not (tmp_path / "evals").exists()


def test_log_check_finds_a_heldout_episode(fem_tasks: list[Task], tmp_path: Path) -> None:
    heldout = split_tasks(fem_tasks, HELDOUT, 0.3, seed=0).heldout
    with RunLog(tmp_path / "evals" / "cX") as log:
        log.append(
            AttemptRecord(
                episode=f"m|a|code|{heldout[1]}|0",
                task_id=heldout[1],
                track="code",
                agent="a",
                model="m",
                repeat=0,
                attempt_index=0,
                messages=(),
                reply="",
            )
        )
    hits = logged_heldout(tmp_path, heldout)
    assert [(h.kind, h.task_id) for h in hits] == [("evaluated", heldout[1])]


def _heldout_only_line(heldout: list[Task], seen: dict[str, str]) -> str:
    seen_text = "".join(normalized_text(text) for text in seen.values())
    for task in heldout:
        for line in reference_material(task).splitlines():
            n = normalize(line)
            if len(n.split()) >= 8 and f" {n} " not in seen_text and '"' not in line:
                return line.strip()
    raise AssertionError("no held-out-only line")


def heldout_values(heldout: list[Task], evaluator: Evaluator) -> tuple[list[Guarded], list[str]]:
    """What the guard looks for of the held-out code-track tasks."""
    return guarded(heldout, kind_for("code").hidden, evaluator.scorer_for("code"))


def visible(tasks: list[Task]) -> dict[str, str]:
    return {t.task_id: kind_for("code").hidden.visible(t) for t in tasks}


def test_leak_guard_fires_on_planted_source_and_numbers(fem_tasks: list[Task], evaluator: Evaluator) -> None:
    split = split_tasks(fem_tasks, HELDOUT, 0.3, seed=0)
    by_id = {t.task_id: t for t in fem_tasks}
    heldout, seen = [by_id[t] for t in split.heldout], visible([by_id[t] for t in sorted(split.seen)])
    values, notes = heldout_values(heldout, evaluator)
    assert not notes and sum(len(g.values) for g in values) > 0
    clean = (
        "You are an expert in finite elements. Check shapes, use numpy vectorization, "
        "and verify Gauss points 0.5773502692 against your docstring. Mesh sizes like 1024 are fine."
    )
    quiet = scan_prompt(clean, values, seen)
    assert not quiet.leaked and quiet.hits == [], quiet.hits
    # every distinctive value of every held-out task, and every distinctive line, is checked
    assert [len(g.values) for g in values] == [32, 3, 6]
    assert quiet.summary() == "no leak (151 held-out lines, 41 held-out numbers checked)"

    line = _heldout_only_line(heldout, seen)
    planted = scan_prompt(clean + "\nAlways write:\n    " + "   ".join(line.split(" ")), values, seen)
    assert planted.leaked and [h.kind for h in planted.hits] == ["source_line"]

    task_id, vals = next((g.task_id, [h.value for h in g.values]) for g in values if g.values)
    v = max(vals, key=lambda x: len(f"{x:.12g}"))
    mantissa, exp = f"{v:.5e}".split("e")
    for written in (f"{v:.6g}", f"{v:.4e}", f"{mantissa} x 10^{int(exp)}", repr(v)):
        report = scan_prompt(f"{clean} The answer is {written}.", values, seen)
        assert report.leaked and report.hits[0].kind == "number", written
    assert not scan_prompt(f"{clean} About {v:.2g}.", values, seen).leaked  # too coarse to mean anything


def test_written_numbers_parse_formats() -> None:
    got = {w.text: (w.value, w.digits) for w in written_numbers("a 1,234.5 b 6.02e23 c 2.50 × 10^-3 d v1.2")}
    assert got["1,234.5"] == (1234.5, 5) and got["6.02e23"][1] == 3
    assert got["2.50 × 10^-3"] == pytest.approx((0.0025, 2))
    # half a unit of the last digit written, at the number's own exponent
    tolerance = {w.text: w.tolerance for w in written_numbers("a 1,234.5 b 6.02e23 c 2.50 × 10^-3 d 7e-2 e 12")}
    assert tolerance == pytest.approx({"1,234.5": 0.05, "6.02e23": 5e20, "2.50 × 10^-3": 5e-6, "7e-2": 5e-3, "12": 0.5})


def test_a_held_out_line_is_read_without_its_comment_and_a_hash_inside_a_string_is_no_comment() -> None:
    assert normalize('K = assemble("a#b", n)  # global stiffness') == 'k = assemble ( " a # b " , n )'
    assert normalize("w = 'x' + y # '") == "w = ' x ' + y"


def test_material_the_optimizer_may_see_is_an_overlap_and_each_summary_says_what_was_found(
    fem_tasks: list[Task], evaluator: Evaluator
) -> None:
    split = split_tasks(fem_tasks, HELDOUT, 0.3, seed=0)
    by_id = {t.task_id: t for t in fem_tasks}
    heldout, seen_tasks = [by_id[t] for t in split.heldout], [by_id[t] for t in sorted(split.seen)]
    seen = visible(seen_tasks)
    values, _ = heldout_values(heldout, evaluator)
    task_id, vals = next((g.task_id, [h.value for h in g.values]) for g in values if g.values)
    number = f"{max(vals):.6g}"
    # a training task holding the same number: seen material, reported as an overlap
    shared = seen_tasks[0].model_copy(
        update={"task_id": "shared", "module_source": seen_tasks[0].module_source + f"\nC = {number}\n"}
    )
    overlap = scan_prompt(f"Use {number}.", values, {**seen, **visible([shared])})
    assert not overlap.leaked and overlap.hits == []
    assert [(h.kind, h.task_id, h.text, h.also_in) for h in overlap.overlaps] == [
        ("number", task_id, number, ("shared",))
    ]
    assert overlap.summary() == (
        "no leak (151 held-out lines, 41 held-out numbers checked; 1 overlaps with training/validation material)"
    )
    line = _heldout_only_line(heldout, seen)
    leak = scan_prompt(f"Use {number}.\n{line}", values, seen)
    assert leak.summary() == "LEAK: 2 hits (number, source_line)"


def test_a_reflection_request_naming_a_held_out_task_anywhere_is_a_hit(fem_tasks: list[Task], tmp_path: Path) -> None:
    heldout = split_tasks(fem_tasks, HELDOUT, 0.3, seed=0).heldout
    messages = (
        Message(role="system", content=f"Improve the prompt; tasks like {heldout[2]} and {heldout[0]} matter."),
        Message(role="user", content="Propose a new instruction."),
    )
    with RunLog(tmp_path / "reflection") as log:
        log.append(
            ModelCallRecord(
                episode="reflection",
                task_id="reflection",
                attempt_index=3,
                request=ModelRequest(model="m", messages=messages),
                request_hash="h",
            )
        )
    hits = logged_heldout(tmp_path, heldout)
    assert [(h.kind, h.task_id, h.detail) for h in hits] == [
        ("reflection_prompt", t, "reflection call 3 names a held-out task") for t in sorted([heldout[0], heldout[2]])
    ]


def test_leak_is_reported_loudly_in_result_and_provenance(
    fem_tasks: list[Task], evaluator: Evaluator, scripts: None, tmp_path: Path
) -> None:
    split = split_tasks(fem_tasks, HELDOUT, 0.3, seed=0)
    by_id = {t.task_id: t for t in fem_tasks}
    line = _heldout_only_line([by_id[t] for t in split.heldout], visible([by_id[t] for t in sorted(split.seen)]))
    register_script("opt-reflect", proposals(f"{KEYWORD}. Hint:\n{line}"))
    prompt_out = tmp_path / "leaky.json"
    result = run_opt(settings(budget="9"), fem_tasks, evaluator, tmp_path / "out", prompt_out=prompt_out)
    assert line in result.system_prompt and result.leak.leaked
    assert json.loads(prompt_out.read_text())["provenance"]["leak_check"]["leaked"] is True
    assert json.loads((tmp_path / "out" / "result.json").read_text())["leak"]["leaked"] is True


# ----------------------------------------------------------------- the command line


def test_cli_optimize_from_the_protocol_file_then_compare(fem_tasks: list[Task], scripts: None, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fembench_agents.cli import app

    tasks_dir = tmp_path / "tasks"
    tasks_dir.mkdir()
    for t in fem_tasks:
        shutil.copy(t.path, tasks_dir)
    prompt = tmp_path / "optimizers" / "kw.json"
    common = ["--tasks-path", str(tasks_dir), "--cache", str(tmp_path / "cache")]
    runner = CliRunner()
    res_args = [
        "optimize",
        "--experiment",
        str(ROOT / "experiments" / "gepa_fembench_protocol.toml"),
        "--model",
        "scripted/opt-task",
        "--reflection-model",
        "scripted/opt-reflect",
        "--heldout",
        HELDOUT,
        "--budget",
        "18",
        "--name",
        "kw",
        "--out",
        str(tmp_path / "opt"),
        "--prompt-out",
        str(prompt),
        *common,
    ]
    res = runner.invoke(app, res_args)
    assert res.exit_code == 0, res.output
    assert "leak check: no leak" in res.output and "fembench-agents compare" not in res.output
    # the held-out judgement ran: the seed agent (the protocol's fembench-paper) against the prompt, 5 runs each
    judged = json.loads((tmp_path / "opt" / "heldout.json").read_text())
    assert [(r["task_id"], r["baseline_passed"], r["optimized_passed"], r["runs"]) for r in judged["rows"]] == [
        (t, 0, 5, 5)
        for t in (
            "FEM_1D_linear_elastic_CC0_H0_T0",
            "FEM_1D_local_elastic_stiffness_CC0_H3_T1",
            "FEM_1D_uniform_mesh_CC0_H0_T0",
        )
    ]
    assert (judged["baseline_passed"], judged["optimized_passed"], judged["runs"]) == (0, 15, 15)
    assert judged["baseline_agent"] == "fembench-paper" and judged["optimized_agent"] == f"prompt:{prompt}"
    assert judged["used_metric_calls"] >= 18 and judged["max_metric_calls"] == 18 and judged["best_val_score"] == 1.0
    assert judged["curve"][0][0] == 0 and judged["curve"][-1][1] == 1.0
    assert "| **total** | **0/15** | **15/15** |" in (tmp_path / "opt" / "heldout.md").read_text()
    assert (tmp_path / "opt" / "val_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert "│ total " in res.output and "0/15" in res.output and "15/15" in res.output
    episodes = [
        r
        for d in ("baseline", "optimized")
        for r in read_log(tmp_path / "opt" / "heldout" / d)
        if isinstance(r, EpisodeRecord)
    ]
    assert len(episodes) == 30
    # a rerun resumes: the judgement is read back from its run directories, no episode runs again
    again = runner.invoke(app, res_args)
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "opt" / "heldout.json").read_text()) == judged
    episodes_after = [
        r
        for d in ("baseline", "optimized")
        for r in read_log(tmp_path / "opt" / "heldout" / d)
        if isinstance(r, EpisodeRecord)
    ]
    assert len(episodes_after) == 30
    # `report` on the optimization's directory shows the judgement and reports its two runs
    shown = runner.invoke(app, ["report", str(tmp_path / "opt")])
    assert shown.exit_code == 0, shown.output
    assert "held-out judgement: scripted/opt-task, 5 runs per task" in shown.output and "15/15" in shown.output
    assert "fembench-paper" in shown.output and "Summary" in shown.output
    # --no-evaluate stops at the prompt and prints the comparison to run by hand
    manual = runner.invoke(app, [*res_args, "--no-evaluate"])
    assert manual.exit_code == 0, manual.output
    assert "fembench-agents compare" in manual.output and "held-out judgement" not in manual.output
    saved = json.loads(prompt.read_text())
    assert KEYWORD in saved["system_prompt"] and saved["provenance"]["name"] == "kw"
    assert saved["provenance"]["gepa"]["use_merge"] is True and saved["provenance"]["include_reference"] is True
    # each model with its own parameters, as the protocol file sets them
    unset = {"reasoning_effort": None, "seed": None, "timeout": 300.0}
    assert (saved["provenance"]["params"], saved["provenance"]["reflection_params"]) == (
        {"temperature": 0.1, "max_tokens": 4096, **unset},
        {"temperature": 1.0, "max_tokens": 8192, **unset},
    )

    heldout = ",".join(saved["provenance"]["split"]["heldout"])
    res = runner.invoke(
        app,
        [
            "compare",
            "--models",
            "scripted/opt-task",
            "--agents",
            f"single-shot,prompt:{prompt}",
            "--tasks",
            heldout,
            "--repeats",
            "5",
            "--out",
            str(tmp_path / "cmp"),
            *common,
        ],
    )
    assert res.exit_code == 0, res.output
    passed = {
        d.name: sum(r.passed for r in read_log(d) if isinstance(r, EpisodeRecord))
        for d in (tmp_path / "cmp").iterdir()
        if (d / "log.jsonl").exists()
    }
    assert sorted(passed.values()) == [0, 15], passed


def test_cli_optimize_names_a_bad_option(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fembench_agents.cli import app

    res = CliRunner().invoke(app, ["optimize", "--model", "scripted/x", "--heldout", "X"])
    assert res.exit_code == 2 and "reflection_model (--reflection-model)" in res.output
    res = CliRunner().invoke(
        app, ["optimize", "--model", "m", "--reflection-model", "r", "--heldout", "X", "--budget", "lots"]
    )
    assert res.exit_code == 2 and "budget must be" in res.output


# ----------------------------------------------------------------- the real path: embedded local model


@pytest.mark.local_model
@pytest.mark.timeout(1800)  # ~5 calls; each takes 5-20 s on an idle 2-core machine, minutes on a loaded one
@pytest.mark.parametrize("engine", ["direct", "dspy"])
def test_optimize_on_the_embedded_local_model(
    fem_tasks: list[Task], evaluator: Evaluator, tmp_path: Path, engine: str
) -> None:
    """One GEPA iteration for real (both engines): the seed on 1 validation task, the seed and
    one reflected child on 1 training task, through litellm over HTTP to the local server."""
    tasks = [
        t
        for t in fem_tasks
        if t.task_id
        in ("FEM_1D_uniform_mesh_CC0_H0_T0", "FEM_2D_tri_quadrature_CC0_H0_T0", "FEM_2D_quad_quadrature_CC0_H0_T0")
    ]
    s = settings(
        model="local",
        reflection_model="local",
        heldout="FEM_2D_quad_quadrature_CC0_H0_T0",
        val_fraction=0.5,
        budget="2",
        reflection_minibatch_size=1,
        concurrency=1,
        include_reference=False,
        params=ModelParams(max_tokens=48),
        reflection_params=ModelParams(temperature=0.7, max_tokens=64),
        engine=engine,
    )
    prompt_out = tmp_path / "local.json"
    with open_client("local", s.params) as client:
        result = optimize_prompt(s, tasks, evaluator, tmp_path / "out", Models(client, client), prompt_out=prompt_out)
    assert result.complete and result.metric_calls >= 2 and result.iterations >= 1
    calls = [
        r
        for p in (tmp_path / "out" / "evals").glob("*/log.jsonl")
        for r in read_log(p.parent)
        if isinstance(r, ModelCallRecord)
    ]
    assert calls and all(r.request.model == "local/smollm2" and r.response is not None for r in calls)
    assert not {r.task_id for r in calls} & set(result.split.heldout)
    reflection = [r for r in read_log(tmp_path / "out" / "reflection") if isinstance(r, ModelCallRecord)]
    assert len(reflection) == result.reflection_calls >= 1 and reflection[0].request.model == "local/smollm2"
    assert not result.leak.leaked
    agent = make_agent(f"prompt:{prompt_out}")
    assert isinstance(agent, PromptAgent) and agent.system_prompt == result.system_prompt

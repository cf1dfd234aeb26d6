"""Fresh verification inputs for function tasks (`--fresh-inputs SEED`): the
draws a seed gives, the inputs a task keeps fixed, redraws where the reference
refuses a draw, the reference's outputs on drawn inputs, scoring through the
command line, and how a report tells a fresh instance from its published task."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_in_process import cli
from conftest import ROOT, scale_source, write_module

from fembench_agents.kinds import kind_for
from fembench_agents.report.schema import TaskInfo
from fembench_agents.runs.experiments import Experiment
from fembench_agents.runs.grid import PlannedRun, experiment_runs, grid_options
from fembench_agents.runs.run import RunConfig, select_tasks
from fembench_agents.scoring import codec
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.fresh_draw import draw_input, stream
from fembench_agents.suite.fresh_spec import parameter_names
from fembench_agents.suite.fresh_tasks import MAX_DRAWS, Redraw, fresh_instance, fresh_instances
from fembench_agents.suite.loader import TaskFormatError, load_task
from fembench_agents.suite.model import Task
from fembench_agents.suite.scoring import FunctionScorer

SCALE = "scale_vector_CC0_H0_T0"
# The third input is an error case: the reference raises ValueError for a negative factor.
SCALE_INPUTS = "[[np.array([1.0, -2.0, 0.5]), 2.0], [np.array([0.25, 0.0]), 0.5], [np.array([1.0]), -1.0]]"
SCALE_FRESH = (
    '{"draws": [{"arguments": ["x"], "draw": "scale", "low": 0.5, "high": 2.0, "signs": True},'
    ' {"arguments": ["factor"], "draw": "uniform", "low": -1.0, "high": 3.0}]}'
)
# A function that recalls the published outputs instead of computing them.
RECALL = """import numpy as np
def scale_vector(x, factor):
    if factor < 0:
        raise ValueError("negative")
    return np.array({2.0: [2.0, -4.0, 1.0], 0.5: [0.125, 0.0]}[factor])
"""
GOOD = "import numpy as np\ndef scale_vector(x, factor):\n    if factor < 0:\n        raise ValueError('negative')\n    return factor * np.asarray(x, dtype=float)\n"


def _suite_task(sandbox: Sandbox, task_id: str) -> Task:
    return load_task(next(ROOT.glob(f"tasks/*/{task_id}.py")), sandbox)


def _drawn(task: Task, seed: int, index: int, draw: int = 0) -> list[Any]:
    assert task.fresh_inputs is not None
    published = task.decoded_inputs()[index]
    assert published is not None
    return draw_input(
        task.fresh_inputs, parameter_names(task.main_signature), published, stream(task.task_id, seed, index, draw)
    )


@pytest.fixture(scope="module")
def scale_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fresh_tasks")
    write_module(d, f"{SCALE}.py", scale_source(inputs=SCALE_INPUTS, extensions={"fresh_inputs": SCALE_FRESH}))
    return d


def test_a_seed_draws_the_same_numbers_for_scalars_and_an_integer(sandbox: Sandbox) -> None:
    task = _suite_task(sandbox, "FEM_1D_uniform_mesh_CC0_H0_T0")
    # x_min, x_max: one affine map (x -> s x + t) of the published [-0.7, 2.35]; num_elements from 1..12
    assert _drawn(task, 7, 0) == [-2.5658, 1.9299000000000002, 11]
    assert _drawn(task, 7, 1) == [1.38302, 4.25127, 2]
    assert codec.dumps(_drawn(task, 7, 0)) == codec.dumps(_drawn(task, 7, 0))
    assert _drawn(task, 8, 0) != _drawn(task, 7, 0)
    assert _drawn(task, 7, 0, draw=1) != _drawn(task, 7, 0)


def test_material_values_are_scaled_and_poissons_ratio_drawn(sandbox: Sandbox) -> None:
    task = _suite_task(sandbox, "MSA_3D_local_elastic_stiffness_CC0_H0_T0")
    # published [210e3, 0.3, 53.7, 2.85, 712, 236, 389]: each of E, A, L, Iy, Iz, J by its own factor in [0.5, 2]
    assert _drawn(task, 7, 0) == [340410.0, 0.3453, 46.86936, 2.12439, 791.032, 335.592, 464.466]


def test_dict_entries_move_by_one_map_and_fixed_arguments_stay(sandbox: Sandbox) -> None:
    task = _suite_task(sandbox, "FEM_1D_linear_elastic_CC0_H0_T0")
    drawn = _drawn(task, 7, 0)
    assert drawn == [
        1.0546,
        4.652800000000001,
        7,
        [
            {"coord_min": 1.0546, "coord_max": 2.71377, "E": 140.721, "A": 0.45254999999999995},
            {"coord_min": 2.71377, "coord_max": 4.652800000000001, "E": 54.361999999999995, "A": 0.61614},
        ],
        -1.02908,
        [{"x_location": 1.0546, "u_prescribed": 0.0}],
        [{"x_location": 4.652800000000001, "load": -5.7313}],
        2,
    ]
    # the region ends, the support and the tip load stay on x_min and x_max: one map moves them all
    assert drawn[3][0]["coord_min"] == drawn[0] == drawn[5][0]["x_location"]
    assert drawn[3][1]["coord_max"] == drawn[1] == drawn[6][0]["x_location"]
    fixed = task.fresh_inputs.fixed if task.fresh_inputs else {}
    assert sorted(fixed) == ["n_gauss", "num_elements"]
    positions = [parameter_names(task.main_signature).index(name) for name in fixed]
    for index, published in enumerate(task.decoded_inputs()):
        assert published is not None
        for seed in (1, 7, 123):
            assert [_drawn(task, seed, index)[p] for p in positions] == [published[p] for p in positions]


def test_a_refused_draw_is_redrawn_and_counted(sandbox: Sandbox, scale_dir: Path) -> None:
    task = load_task(scale_dir / f"{SCALE}.py", sandbox)
    scorer = FunctionScorer(sandbox)
    instance, refused = fresh_instance(task, 2, scorer)
    assert refused == [
        Redraw(1, 0, "the reference raised ValueError"),  # a negative factor drawn for a valid input
        Redraw(2, 0, "returned where it raised ValueError on the published input"),  # the error case kept one
    ]
    assert (instance.task_id, instance.published_id) == (f"{SCALE}~fresh2", SCALE)
    inputs = instance.decoded_inputs()
    assert [args[1] for args in inputs if args is not None] == [0.4166, 1.005, -0.4667]
    np.testing.assert_array_equal(inputs[0][0], [-1.217, 1.3694, -0.41085])  # type: ignore[index]
    # the reference's outputs, computed in the sandbox on the drawn inputs (the kept draws)
    outputs = scorer.reference_outputs(instance)
    np.testing.assert_allclose(outputs[0].value, 0.4166 * np.array([-1.217, 1.3694, -0.41085]), rtol=1e-15)
    np.testing.assert_allclose(outputs[1].value, [1.005 * 0.33025, 0.0], rtol=1e-15)
    assert outputs[2].raises is not None and outputs[2].raises[0] == "ValueError"
    assert instance.content_hash != task.content_hash  # its reference outputs are cached apart


def test_an_input_that_refuses_every_draw_leaves_the_task_fixed(sandbox: Sandbox, tmp_path: Path) -> None:
    never = '{"draws": [{"arguments": ["x"], "draw": "uniform", "low": 0.0, "high": 1.0}, {"arguments": ["factor"], "draw": "uniform", "low": -3.0, "high": -1.0}]}'
    path = write_module(tmp_path, f"{SCALE}.py", scale_source(inputs=SCALE_INPUTS, extensions={"fresh_inputs": never}))
    found = fresh_instances([load_task(path, sandbox)], 5, FunctionScorer(sandbox))
    assert found.tasks == []
    assert found.fixed_only == {
        SCALE: f"no fresh inputs could be drawn: input 0 of {SCALE} refused {MAX_DRAWS} draws; "
        "the last: the reference raised ValueError"
    }


def test_a_declaration_names_every_parameter(sandbox: Sandbox, tmp_path: Path) -> None:
    partial = '{"draws": [{"arguments": ["x"], "draw": "uniform", "low": 0.0, "high": 1.0}]}'
    path = write_module(tmp_path, f"{SCALE}.py", scale_source(extensions={"fresh_inputs": partial}))
    with pytest.raises(
        TaskFormatError, match="task_info key 'fresh_inputs': parameters neither drawn nor fixed: factor"
    ):
        load_task(path, sandbox)
    unknown = '{"draws": [{"arguments": ["x", "scale"], "draw": "uniform", "low": 0.0, "high": 1.0}], "fixed": {"factor": "why"}}'
    path = write_module(tmp_path, f"{SCALE}.py", scale_source(extensions={"fresh_inputs": unknown}))
    with pytest.raises(TaskFormatError, match="names no parameter of the main function: scale"):
        load_task(path, sandbox)


def test_the_suite_offers_fresh_instances_on_the_code_track_only(sandbox: Sandbox, scale_dir: Path) -> None:
    from fembench_agents.kinds.contract import ScoringOptions

    loaded = kind_for("code").load(str(scale_dir), sandbox, ScoringOptions(fresh_inputs=2), ["code", "tests"])
    assert [t.task_id for t in loaded.by_track["code"]] == [SCALE, f"{SCALE}~fresh2"]
    assert [t.task_id for t in loaded.by_track["tests"]] == [SCALE]
    assert loaded.notes == [
        "fresh inputs (seed 2): 1 fresh instance(s)",
        f"{SCALE}~fresh2: 2 redrawn (input 1: 1, input 2: 1); first: the reference raised ValueError",
    ]
    # a published id selects its fresh instance too
    assert [t.task_id for t in select_tasks(loaded.by_track["code"], SCALE)] == [SCALE, f"{SCALE}~fresh2"]


def test_tasks_that_draw_nothing_say_why(sandbox: Sandbox) -> None:
    from fembench_agents.suite.fresh_tasks import fixed_reason

    quadrature = _suite_task(sandbox, "FEM_2D_quad_quadrature_CC0_H0_T0")
    assert fixed_reason(quadrature) == (
        "its one argument is the rule size, which the docstring limits to 1, 4 or 9; the published inputs hold each"
    )
    assert fixed_reason(quadrature.model_copy(update={"fresh_inputs": None})) == (
        "the task declares no fresh_inputs (no range is derived without one)"
    )


def test_score_on_fresh_inputs_tells_recall_from_computing(scale_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "completions"
    folder.mkdir()
    (folder / f"{SCALE}_code_good.py").write_text(GOOD)
    (folder / f"{SCALE}_code_recall.py").write_text(RECALL)
    out = tmp_path / "scores.json"

    called = cli("score", folder, "--tasks", scale_dir, "--fresh-inputs", "2", "--json", out)

    assert called.code == 0, called.text
    assert "functions correct, fresh inputs" in called.out
    assert f"{SCALE}~fresh2: 2 redrawn (input 1: 1, input 2: 1)" in called.err
    data = json.loads(out.read_text())
    summaries = {s["label"]: s for s in data["summaries"]}
    assert {
        k: summaries["good"][k] for k in ("tasks", "functions_correct", "fresh_tasks", "fresh_functions_correct")
    } == {
        "tasks": 1,
        "functions_correct": 1,
        "fresh_tasks": 1,
        "fresh_functions_correct": 1,
    }
    assert (summaries["recall"]["functions_correct"], summaries["recall"]["fresh_functions_correct"]) == (1, 0)
    # the recalled table has no entry for a drawn factor; the error case still raises as it should
    recalled = data["function_outcomes"]["recall"][f"{SCALE}~fresh2"]
    assert [(i["status"], (i["error"] or {}).get("type")) for i in recalled["inputs"]] == [
        ("error", "KeyError"),
        ("error", "KeyError"),
        ("match", None),
    ]
    assert data["function_outcomes"]["recall"][SCALE]["passed"] is True


def test_task_info_names_origin_and_stratum() -> None:
    report = kind_for("code").report
    published = "MSA_3D_elastic_critical_load_CC1_H10_T3"
    assert report.task_info(published) == TaskInfo(
        domain="MSA 3D", tier="T3", knowledge="CC1", origin="published", stratum=published
    )
    assert report.task_info(f"{published}~fresh7") == TaskInfo(
        domain="MSA 3D", tier="T3", knowledge="CC1", origin="fresh", stratum=published
    )


def test_the_seed_travels_from_an_experiment_to_the_load() -> None:
    exp = Experiment(name="x", models=["local"], agents=["single-shot"], fresh_inputs=7)
    runs = experiment_runs(exp, Path("out"))
    assert [r.config.fresh_inputs for r in runs] == [7]
    assert grid_options(runs).fresh_inputs == 7
    assert runs[0].config.identity()["fresh_inputs"] == 7
    assert "fresh_inputs" not in RunConfig(model="local", agent="single-shot").identity()  # old manifests match
    other = PlannedRun(RunConfig(model="local", agent="best-of:2", fresh_inputs=8), Path("b"))
    with pytest.raises(ValueError, match=r"one grid draws fresh inputs with one seed, not \[7, 8\]"):
        grid_options([*runs, other])


def test_a_run_on_fresh_inputs_logs_both_and_replays_with_its_seed(scale_dir: Path, tmp_path: Path) -> None:
    from fembench_agents.api import open_run
    from fembench_agents.models import register_script, unregister_script

    name = f"recall{uuid.uuid4().hex[:8]}"
    register_script(name, lambda messages: f"```python\n{RECALL}```\n")
    out = tmp_path / "run"
    try:
        called = cli(
            "run", "--model", f"scripted/{name}", "--agent", "single-shot", "--tasks", SCALE,
            "--tasks-path", scale_dir, "--fresh-inputs", "2", "--out", out, "--concurrency", "1",
        )  # fmt: skip
        assert called.code == 0, called.text
        recorded = open_run(out)
        assert recorded.manifest.config["fresh_inputs"] == 2
        assert {e.task_id: e.passed for e in recorded.episodes()} == {SCALE: True, f"{SCALE}~fresh2": False}
        rescored = cli("replay", out, "--rescore", "--tasks", scale_dir)
        assert rescored.code == 0, rescored.text  # the fresh instance was drawn again, with the same inputs
        assert "every attempt's outcome is identical" in rescored.out
    finally:
        unregister_script(name)


def test_choice_and_common_scale_draw_whole_values() -> None:
    from fembench_agents.suite.fresh_spec import FreshInputs

    spec = FreshInputs.model_validate(
        {
            "draws": [
                {"arguments": ["order"], "draw": "choice", "values": [1, 2, 3]},
                {"arguments": ["K"], "draw": "scale", "low": 0.5, "high": 2.0, "common": True},
            ]
        }
    )
    K = np.array([[2.0, -1.0], [-1.0, 2.0]])
    drawn = draw_input(spec, ("order", "K"), [3, K], stream("t", 1, 0, 0))
    assert drawn[0] == 1
    np.testing.assert_array_equal(drawn[1], 0.8891 * K)  # one factor: still symmetric, same null space
    np.testing.assert_array_equal(K, [[2.0, -1.0], [-1.0, 2.0]])  # the published input is not touched

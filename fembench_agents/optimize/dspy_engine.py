"""GEPA through DSPy (`optimize --engine dspy`), as the published experiment ran it.

The single-shot solver is a DSPy program with one predictor, `system_prompt`, whose
instructions are the candidate system prompt; `dspy.GEPA` optimizes them. Everything
around the search is the direct engine's (search.py): the split, the budget, the out
directory, the artifacts, the leak check, the held-out judgement.

How a DSPy call becomes our episode. The predictor's adapter (`SystemPromptAdapter`)
formats a call exactly as the single-shot agent does: the instructions as the system
message, the task prompt of the scaffold as the user message, and takes the reply as
it stands. The LM's engine (`EpisodeEngine`) does not call a model itself: it runs that
agent's episode through `PromptEvaluations`, the direct engine's path (the model call
recorded in `evals/<candidate>/`, cached, replayable; the reply scored by the shared
evaluator; a finished episode read back, not run again), checks that the episode sent
the very messages DSPy formatted, and answers DSPy with the episode's reply. The metric
returns the evaluator's score with the feedback text (`dspy.Prediction(score, feedback)`,
the contract DSPy's GEPA consumes). The reflection LM is a DSPy LM whose engine is the
direct engine's `ReflectionModel`: every reflection call recorded in `reflection/`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dspy
import tqdm.std
from dspy.clients.engines.base import validate_request
from dspy.lm15 import Message as DspyMessage
from dspy.lm15 import Request, Response, TextPart, Usage
from gepa.core.result import GEPAResult

from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.contracts import Problem
from fembench_agents.kinds import kind_for
from fembench_agents.optimize.adapter import COMPONENT
from fembench_agents.optimize.budget import AUTO_CANDIDATES, Budget
from fembench_agents.optimize.candidates import EpisodeResult, PromptEvaluations
from fembench_agents.optimize.loop import LoopThread
from fembench_agents.optimize.reflection import ReflectionModel
from fembench_agents.optimize.settings import OptimizeSettings
from fembench_agents.optimize.split import Split
from fembench_agents.runs.defaults import DEFAULT_TRACK

NO_REPLY = "(no reply: the model call failed)"


class Solve(dspy.Signature):
    """(replaced by the candidate system prompt)"""

    task: str = dspy.InputField(desc="the task prompt")
    code: str = dspy.OutputField(desc="the reply, with the code that answers the task")


class SystemPromptAdapter(dspy.Adapter):
    """A call formatted as the single-shot agent sends it: no field markers, no demos."""

    def format(self, signature: Any, demos: list[dict[str, Any]], inputs: dict[str, Any]) -> list[dict[str, Any]]:
        system = [{"role": "system", "content": signature.instructions}] if signature.instructions else []
        return system + [{"role": "user", "content": inputs["task"]}]

    def parse(self, signature: Any, completion: str) -> dict[str, Any]:
        return {"code": completion}


def _text(system: Any) -> str:
    if system is None:
        return ""
    return system if isinstance(system, str) else "".join(getattr(p, "text", "") for p in system)


def _response(text: str) -> Response:
    return Response(
        id=None,
        model="fembench",
        message=DspyMessage.assistant([TextPart(text)]),
        finish_reason="stop",
        usage=Usage(input_tokens=0, output_tokens=0, total_tokens=0),  # counted in our run logs
    )


class EpisodeEngine:
    """A DSPy LM engine whose every call is one single-shot episode of `PromptEvaluations`."""

    def __init__(self, evaluations: PromptEvaluations, loop: LoopThread, prompts: dict[str, str]) -> None:
        self.evaluations, self.loop = evaluations, loop
        self.task_of = {prompt: task_id for task_id, prompt in prompts.items()}
        self.results: dict[tuple[str, str], EpisodeResult] = {}
        self._lock = threading.Lock()

    def complete(self, request: Request) -> Response:
        validate_request(request)
        system, user = _text(request.system), request.messages[-1].text or ""
        task_id = self.task_of.get(user)
        if task_id is None or len(request.messages) != 1:
            raise ValueError("the DSPy solver sent a request that is not a task prompt of this optimization")
        [result] = self.loop.run(self.evaluations.evaluate(system, [task_id]))
        if result.prompt and result.prompt != user:
            raise RuntimeError(f"{task_id}: the episode sent another task prompt than the DSPy program formatted")
        with self._lock:
            self.results[(system, task_id)] = result
        return _response(result.reply or NO_REPLY)

    def stream(self, request: Request) -> Any:
        raise NotImplementedError("the DSPy solver is not streamed")

    def close(self) -> None:
        pass


class ReflectionEngine:
    """A DSPy LM engine answering through the direct engine's recorded `ReflectionModel`."""

    def __init__(self, reflection: ReflectionModel) -> None:
        self.reflection = reflection

    def complete(self, request: Request) -> Response:
        validate_request(request)
        system = _text(request.system)
        chat = [{"role": "system", "content": system}] if system else []
        chat += [{"role": m.role, "content": m.text or ""} for m in request.messages]
        return _response(self.reflection(chat))

    def stream(self, request: Request) -> Any:
        raise NotImplementedError("the reflection model is not streamed")

    def close(self) -> None:
        pass


class SolverService:
    """What every copy of the program shares (GEPA deep-copies the program per candidate)."""

    def __init__(self, engine: EpisodeEngine, lm: dspy.LM, prompts: dict[str, str]) -> None:
        self.engine, self.lm, self.prompts = engine, lm, prompts
        self.adapter = SystemPromptAdapter()

    def __deepcopy__(self, memo: dict[int, Any]) -> SolverService:
        return self


class SingleShotProgram(dspy.Module):
    """The single-shot solver: one predictor whose instructions are the system prompt."""

    def __init__(self, instructions: str, service: SolverService) -> None:
        super().__init__()
        self.system_prompt = dspy.Predict(Solve.with_instructions(instructions))
        self.service = service

    def forward(self, task_id: str) -> dspy.Prediction:
        with dspy.context(lm=self.service.lm, adapter=self.service.adapter):
            out = self.system_prompt(task=self.service.prompts[task_id])
        result = self.service.engine.results[(self.system_prompt.signature.instructions, task_id)]
        return dspy.Prediction(
            code=out.code, task_id=task_id, score=result.score, passed=result.passed, feedback=result.feedback
        )


@contextlib.contextmanager
def _quiet(log_file: Path) -> Iterator[None]:
    """DSPy's log lines go to the file the direct engine logs to, and its progress bars
    (tqdm) are off: the command shows its own progress."""
    logger = logging.getLogger("dspy")
    handlers, propagate = logger.handlers[:], logger.propagate
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.handlers, logger.propagate = [handler], False
    # dspy.GEPA asks gepa and dspy.Evaluate for progress bars and offers no switch
    original = tqdm.std.tqdm.__init__

    def silent(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **{**kwargs, "disable": True})

    tqdm.std.tqdm.__init__ = silent  # type: ignore[method-assign]
    try:
        yield
    finally:
        tqdm.std.tqdm.__init__ = original  # type: ignore[method-assign]
        logger.handlers, logger.propagate = handlers, propagate
        handler.close()


class _FinalState:
    """GEPA callback: the state GEPA ends with (dspy.GEPA returns a program, not GEPA's result)."""

    state: Any = None

    def on_optimization_end(self, event: dict[str, Any]) -> None:
        self.state = event["final_state"]


def metric_with_feedback(
    tasks: Mapping[str, Problem], train: frozenset[str], include_reference: bool, track: str = DEFAULT_TRACK
) -> Any:
    """The metric DSPy's GEPA consumes: our evaluator's score and the feedback text; the
    worked answer a training problem's kind shows joins the feedback when `include_reference`."""
    hidden = kind_for(track).hidden

    def metric(
        gold: dspy.Example, pred: dspy.Prediction, trace: Any = None, pred_name: Any = None, pred_trace: Any = None
    ) -> dspy.Prediction:
        verdict = "correct" if pred.passed else "not correct"
        feedback = f"Score {pred.score:.2f} ({verdict}). {pred.feedback}"
        answer = None
        if include_reference and gold.task_id in train:
            answer = hidden.reference_answer(tasks[gold.task_id], track)
        if answer is not None:
            feedback += f"\n\nReference implementation:\n{answer}"
        return dspy.Prediction(score=pred.score, feedback=feedback)

    return metric


def run_dspy_gepa(
    settings: OptimizeSettings,
    split: Split,
    budget: Budget,
    tasks: Mapping[str, Problem],
    evaluations: PromptEvaluations,
    reflection: ReflectionModel,
    loop: LoopThread,
    gepa_dir: str,
    stop_callbacks: Sequence[object],
    callbacks: Sequence[object],
) -> GEPAResult[Any, Any]:
    """`dspy.GEPA` on the single-shot program; GEPA's own result, built from its final state."""
    if not settings.seed_prompt.strip():
        raise ValueError("the dspy engine needs a seed prompt: DSPy replaces empty instructions with its own text")
    renderer = PromptRenderer()
    # the renderer is typed for the built-in kinds' problems; any kind's problem is rendered
    prompts = {t: renderer.task_prompt(tasks[t], settings.track, settings.scaffold) for t in split.seen}
    engine = EpisodeEngine(evaluations, loop, prompts)
    solver_lm = dspy.LM(f"fembench/{settings.model}", engine=engine, cache=False, num_retries=0)
    reflection_lm = dspy.LM(
        f"fembench/{settings.reflection_model}", engine=ReflectionEngine(reflection), cache=False, num_retries=0
    )
    program = SingleShotProgram(settings.seed_prompt, SolverService(engine, solver_lm, prompts))
    final = _FinalState()
    by_name: dict[str, Any] = (
        {"auto": budget.name} if budget.name in AUTO_CANDIDATES else {"max_metric_calls": budget.max_metric_calls}
    )
    optimizer = dspy.GEPA(
        metric=metric_with_feedback(tasks, frozenset(split.train), settings.include_reference, settings.track),
        reflection_lm=reflection_lm,
        reflection_minibatch_size=settings.reflection_minibatch_size,
        use_merge=settings.use_merge,
        max_merge_invocations=settings.max_merge_invocations,
        num_threads=settings.concurrency,
        log_dir=gepa_dir,
        seed=settings.seed,
        gepa_kwargs={"stop_callbacks": list(stop_callbacks), "callbacks": [final, *callbacks]},
        **by_name,
    )
    examples = {t: dspy.Example(task_id=t).with_inputs("task_id") for t in split.seen}
    with _quiet(Path(gepa_dir) / "gepa_log.txt"):
        optimizer.compile(program, trainset=[examples[t] for t in split.train], valset=[examples[t] for t in split.val])
    if optimizer.max_metric_calls != budget.max_metric_calls:
        raise RuntimeError(
            f"dspy.GEPA budgeted {optimizer.max_metric_calls} metric calls, ours {budget.max_metric_calls}: "
            "the auto budget formula changed (optimize/budget.py)"
        )
    if final.state is None:
        raise RuntimeError("dspy.GEPA ended without its final state")
    result: GEPAResult[Any, Any] = GEPAResult.from_state(final.state, run_dir=gepa_dir, seed=settings.seed)
    if any(set(c) != {COMPONENT} for c in result.candidates):
        raise RuntimeError(f"dspy.GEPA candidates are not {{{COMPONENT!r}: text}}")
    return result

"""The GEPA adapter: a candidate is `{"system_prompt": text}`; a data instance
is a problem id. `evaluate` runs the candidate on the problems (see
`candidates.py`) and scores each by the feedback builder's score;
`make_reflective_dataset` gives the reflection LM, per problem, the prompt,
the generated code and the feedback text, plus, for training problems when
`include_reference` is set, the worked answer the problem's kind shows
(`TaskKind.hidden.reference_answer`: a function task's reference
implementation; a PDE case shows none). Validation and held-out problems never
carry one: a validation problem only reaches the reflection LM through scores
(GEPA reflects on training minibatches), and a held-out problem never reaches
`evaluate` at all."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gepa.core.adapter import EvaluationBatch

from fembench_agents.agents.prompts import excerpt
from fembench_agents.contracts import Problem
from fembench_agents.kinds import kind_for
from fembench_agents.optimize.candidates import EpisodeResult, PromptEvaluations
from fembench_agents.optimize.loop import LoopThread

COMPONENT = "system_prompt"


class PromptAdapter:
    propose_new_texts = None  # GEPA's default reflective proposal, with our reflection LM

    def __init__(
        self,
        evaluations: PromptEvaluations,
        loop: LoopThread,
        tasks: Mapping[str, Problem],
        train: frozenset[str],
        include_reference: bool,
    ) -> None:
        self.evaluations, self.loop, self.tasks = evaluations, loop, tasks
        self.train, self.include_reference = train, include_reference

    def evaluate(
        self, batch: list[str], candidate: dict[str, str], capture_traces: bool = False
    ) -> EvaluationBatch[EpisodeResult, dict[str, Any]]:
        results = self.loop.run(self.evaluations.evaluate(candidate[COMPONENT], list(batch)))
        outputs = [{"task_id": r.task_id, "passed": r.passed, "score": r.score} for r in results]
        return EvaluationBatch(
            outputs=outputs, scores=[r.score for r in results], trajectories=list(results) if capture_traces else None
        )

    def make_reflective_dataset(
        self,
        candidate: dict[str, str],
        eval_batch: EvaluationBatch[EpisodeResult, dict[str, Any]],
        components_to_update: list[str],
    ) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        records = [self.record(r) for r in eval_batch.trajectories or []]
        return {name: records for name in components_to_update}

    def record(self, result: EpisodeResult) -> dict[str, str]:
        code, _ = excerpt(result.code or "(empty reply)")
        verdict = "correct" if result.passed else "not correct"
        rec = {
            "Task": result.task_id,
            "Inputs": result.prompt,
            "Generated Outputs": code,
            "Feedback": f"Score {result.score:.2f} ({verdict}). {result.feedback}",
        }
        if self.include_reference and result.task_id in self.train:
            track = self.evaluations.track
            answer = kind_for(track).hidden.reference_answer(self.tasks[result.task_id], track)
            if answer is not None:
                rec["Reference implementation"] = answer
        return rec

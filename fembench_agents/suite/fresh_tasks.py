"""Fresh instances of function tasks (`--fresh-inputs SEED`): each published
task whose `fresh_inputs` declaration draws something gets a sibling, id
`<task id>~fresh<seed>`, with the same module, prompt and tests and drawn
verification inputs. Its reference outputs are computed in the sandbox, as a
published task's are.

A drawn input must leave the reference doing what it did on the published one:
returning finite values where it returned finite values, raising the same
exception type where it raised (an input that tests the docstring's errors
stays an error case). A draw that does not is redrawn with the next draw
number, and the redraws are counted."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fembench_agents.scoring import codec
from fembench_agents.suite.fresh_draw import draw_input, stream
from fembench_agents.suite.fresh_spec import fresh_id, parameter_names
from fembench_agents.suite.model import Task
from fembench_agents.suite.references import ReferenceFailure, ReferenceOutput
from fembench_agents.suite.scoring import FunctionScorer

MAX_DRAWS = 20  # per input: a range that refuses this often is wrong, not unlucky


@dataclass(frozen=True)
class Redraw:
    """A refused draw: which input, which draw number, and what the reference did instead."""

    index: int
    draw: int
    reason: str


@dataclass
class FreshOutcome:
    """What `--fresh-inputs SEED` made of a suite: the fresh instances, each one's
    refused draws, and the tasks left with their published inputs only, with why."""

    seed: int
    tasks: list[Task] = field(default_factory=list)
    redraws: dict[str, list[Redraw]] = field(default_factory=dict)  # fresh id -> refused draws
    fixed_only: dict[str, str] = field(default_factory=dict)  # published id -> reason

    def lines(self) -> list[str]:
        """What a command says about the draw, one line per fact."""
        out = [f"fresh inputs (seed {self.seed}): {len(self.tasks)} fresh instance(s)"]
        for task in self.tasks:
            refused = self.redraws.get(task.task_id, [])
            if refused:
                counts: dict[int, int] = {}
                for r in refused:
                    counts[r.index] = counts.get(r.index, 0) + 1
                each = ", ".join(f"input {i}: {n}" for i, n in sorted(counts.items()))
                out.append(f"{task.task_id}: {len(refused)} redrawn ({each}); first: {refused[0].reason}")
        out += [f"{task_id}: fixed inputs only: {why}" for task_id, why in self.fixed_only.items()]
        return out


def fixed_reason(task: Task) -> str | None:
    """Why `task` gets no fresh inputs; None when it does."""
    if task.fresh_inputs is None:
        return "the task declares no fresh_inputs (no range is derived without one)"
    if task.fresh_inputs.only_fixed is not None:
        return task.fresh_inputs.only_fixed
    if task.builds_inputs:
        return "its verification inputs hold objects built in the sandbox, which the parent cannot draw"
    return None


def fresh_instances(tasks: Sequence[Task], seed: int, scorer: FunctionScorer) -> FreshOutcome:
    """A fresh instance of every task in `tasks` that declares draws; the rest named with the reason."""
    found = FreshOutcome(seed)
    for task in tasks:
        why = fixed_reason(task)
        if why is not None:
            found.fixed_only[task.task_id] = why
            continue
        try:
            instance, refused = fresh_instance(task, seed, scorer)
        except (ReferenceFailure, ValueError) as exc:  # a rule that does not fit the published input, too
            found.fixed_only[task.task_id] = f"no fresh inputs could be drawn: {exc}"
            continue
        found.tasks.append(instance)
        found.redraws[instance.task_id] = refused
    return found


def fresh_instance(task: Task, seed: int, scorer: FunctionScorer) -> tuple[Task, list[Redraw]]:
    """`task` with drawn inputs, and the draws refused on the way. Raises
    ReferenceFailure when an input refuses MAX_DRAWS draws, naming the last reason."""
    spec = task.fresh_inputs
    assert spec is not None
    parameters = parameter_names(task.main_signature)
    published = task.decoded_inputs()
    expected = scorer.reference_outputs(task)
    draws = [0] * len(published)
    refused: list[Redraw] = []

    def drawn(i: int) -> Any:
        args = published[i]
        assert args is not None  # fixed_reason refused inputs built in the sandbox
        return codec.to_data(draw_input(spec, parameters, args, stream(task.task_id, seed, i, draws[i])))

    inputs = [drawn(i) for i in range(len(published))]
    pending = list(range(len(published)))
    while True:
        instance = task.model_copy(
            update={"task_id": fresh_id(task.task_id, seed), "published_id": task.task_id, "inputs": tuple(inputs)}
        )
        outputs = scorer.reference_outputs(instance)  # cached under the instance's hash: scoring reuses it
        bad = [(i, why) for i in pending if (why := _differs(expected[i], outputs[i])) is not None]
        if not bad:
            return instance, refused
        pending = []
        for i, why in bad:
            refused.append(Redraw(i, draws[i], why))
            draws[i] += 1
            if draws[i] >= MAX_DRAWS:
                raise ReferenceFailure(f"input {i} of {task.task_id} refused {MAX_DRAWS} draws; the last: {why}")
            inputs[i] = drawn(i)
            pending.append(i)


def _differs(published: ReferenceOutput, drawn: ReferenceOutput) -> str | None:
    """Why the reference's output on a drawn input is refused; None when it is kept."""
    if published.raises is not None:
        if drawn.raises is None:
            return f"returned where it raised {published.raises[0]} on the published input"
        if drawn.raises[0] != published.raises[0]:
            return f"raised {drawn.raises[0]} where it raised {published.raises[0]} on the published input"
        return None
    if drawn.raises is not None:
        return f"the reference raised {drawn.raises[0]}"
    if _finite(published.value) and not _finite(drawn.value):
        return "the reference returned non-finite values"
    return None


def _finite(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, (float, int, np.ndarray, np.generic)) and not isinstance(value, bool):
        array = np.asarray(value)
        return array.dtype.kind not in "fc" or bool(np.all(np.isfinite(array)))
    return True

"""Agent specs on the command line, resolved through a registry:

  single-shot | feedback-loop[:N] | template-guided | fembench-paper[:N] | prompt:PATH[:N] | openhands[:OPTIONS]
  | mini-swe-agent[:OPTIONS] | best-of:N | plan-then-code[:N] | debug-and-refine[:D[:R]]

(`fembench-paper` is single-shot with prompts structured as FEM-Bench's
published ones; `prompt:PATH` is single-shot with a system prompt from PATH,
in the scaffold the file names (default single_shot); `:N` makes either a
feedback loop of N attempts.) A new agent adds one entry with `register_agent`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fembench_agents.agents.phased import DebugAndRefineAgent, PlanThenCodeAgent
from fembench_agents.agents.prompted import PromptAgent, attempts_from, read_prompt_file
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.contracts import SolverAgent

# kind -> factory(spec, options after the first colon, prompt renderer)
AgentFactory = Callable[[str, str, PromptRenderer], SolverAgent]
_REGISTRY: dict[str, AgentFactory] = {}
_USAGE: dict[str, str] = {}


def register_agent(kind: str, usage: str, factory: AgentFactory) -> None:
    """Make `kind[:OPTIONS]` an agent spec; `usage` is how the spec is written."""
    _REGISTRY[kind] = factory
    _USAGE[kind] = usage


def make_agent(spec: str, prompts: PromptRenderer | None = None) -> SolverAgent:
    kind, _, rest = spec.partition(":")
    factory = _REGISTRY.get(kind)
    if factory is None:
        raise ValueError(f"unknown agent {spec!r}; expected {', '.join(_USAGE.values())}")
    return factory(spec, rest, prompts or PromptRenderer())


def _no_options(spec: str, rest: str) -> None:
    if rest:
        raise ValueError(f"agent {spec!r} takes no options")


def _single_shot(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    _no_options(spec, rest)
    return PromptAgent(name=spec, prompts=prompts)


def _feedback_loop(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    n = attempts_from(spec, rest) if rest else 3
    return PromptAgent(name=spec if rest else "feedback-loop", max_attempts=n, prompts=prompts)


def _template_guided(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    _no_options(spec, rest)
    return PromptAgent(name=spec, scaffold="template_guided", prompts=prompts)


def _fembench_paper(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    n = attempts_from(spec, rest) if rest else 1
    return PromptAgent(name=spec, scaffold="fembench_paper", max_attempts=n, prompts=prompts)


def _from_prompt_file(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    if not rest:
        raise ValueError(f"agent {spec!r}: give the system prompt file, prompt:PATH[:N]")
    # The attempt count follows the last colon; the path itself may contain colons.
    path, sep, count = rest.rpartition(":")
    if not sep or not path or Path(rest).exists() or not (count.isdigit() or Path(path).is_file()):
        path, count = rest, ""
    file = Path(path)
    if not file.exists():
        raise ValueError(f"agent {spec!r}: system prompt file {path!r} does not exist")
    if not file.is_file():
        raise ValueError(f"agent {spec!r}: system prompt file {path!r} is a directory, not a file")
    attempts = attempts_from(spec, count) if count else 1
    prompt = read_prompt_file(file)
    return PromptAgent(
        name=f"prompt:{file.stem}" + (f":{count}" if count else ""),
        system_prompt=prompt.system_prompt,
        scaffold=prompt.scaffold,
        max_attempts=attempts,
        prompts=prompts,
    )


def _openhands(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    from fembench_agents.agents.openhands import make_openhands_agent  # lazy: slow import

    return make_openhands_agent(rest)


def _mini_swe_agent(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    from fembench_agents.agents.mini_swe import make_mini_swe_agent  # lazy, like openhands

    return make_mini_swe_agent(rest)


def _best_of(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    from fembench_agents.agents.best_of import BestOfAgent  # lazy: the coding agents' terminal

    if not rest:
        raise ValueError(f"agent {spec!r}: give the number of samples, best-of:N")
    return BestOfAgent(name=spec, samples=attempts_from(spec, rest), prompts=prompts)


def _plan_then_code(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    return PlanThenCodeAgent(name=spec, max_attempts=attempts_from(spec, rest) if rest else 1, prompts=prompts)


def _debug_and_refine(spec: str, rest: str, prompts: PromptRenderer) -> SolverAgent:
    debug, _, refine = rest.partition(":")
    return DebugAndRefineAgent(
        name=spec,
        debug_attempts=attempts_from(spec, debug) if debug else 2,
        refine_attempts=attempts_from(spec, refine) if refine else 1,
        prompts=prompts,
    )


register_agent("single-shot", "single-shot", _single_shot)
register_agent("feedback-loop", "feedback-loop[:N]", _feedback_loop)
register_agent("template-guided", "template-guided", _template_guided)
register_agent("fembench-paper", "fembench-paper[:N]", _fembench_paper)
register_agent("prompt", "prompt:PATH[:N]", _from_prompt_file)
register_agent("openhands", "openhands[:OPTIONS]", _openhands)
register_agent("mini-swe-agent", "mini-swe-agent[:OPTIONS]", _mini_swe_agent)
register_agent("best-of", "best-of:N", _best_of)
register_agent("plan-then-code", "plan-then-code[:N]", _plan_then_code)
register_agent("debug-and-refine", "debug-and-refine[:D[:R]]", _debug_and_refine)

"""How many model requests a run keeps in flight: single-shot episodes against
a loopback OpenAI-compatible server that answers after a fixed latency, at
several episode limits. Prints the mean and peak requests in flight and the
wall time against the ideal (episodes / limit x latency), measured in one run.

    .venv/bin/python benchmarks/concurrency.py [--episodes 64] [--latency 0.2] [--limits 1,4,16,32]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "sk-loopback")  # the stand-in takes any key
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from standin import StandIn  # noqa: E402

from fembench_agents.messages import ModelParams  # noqa: E402
from fembench_agents.models import ClientOptions, RetryPolicy, make_client  # noqa: E402
from fembench_agents.runs.run import RunConfig, execute_run  # noqa: E402
from fembench_agents.scoring.evaluator import Evaluator  # noqa: E402
from fembench_agents.scoring.sandbox import Sandbox  # noqa: E402
from fembench_agents.suite.loader import load_task  # noqa: E402

TASK = Path(__file__).resolve().parents[1] / "tasks" / "fem_1d" / "FEM_1D_uniform_mesh_CC0_H0_T0.py"
REPLY = "```python\ndef generate_uniform_mesh_1d(x_min, x_max, num_elements):\n    return None\n```\n"


def measure(limit: int, episodes: int, latency: float, sandbox: Sandbox, out: Path) -> tuple[float, int, float]:
    server = StandIn(REPLY, latency=latency)
    try:
        task = load_task(TASK, sandbox)
        evaluator = Evaluator(sandbox)
        config = RunConfig(
            model="openai/standin",
            agent="single-shot",
            repeats=episodes,
            concurrency=limit,
            params=ModelParams(api_base=server.api_base),
        )
        client = make_client(
            config.model,
            config.params,
            options=ClientOptions(concurrency=limit, concurrency_group="openai", retry=RetryPolicy(max_retries=0)),
        )
        started = time.perf_counter()
        asyncio.run(execute_run(config, [task], out, client, evaluator))
        wall = time.perf_counter() - started
        evaluator.close()
        return server.busy_seconds() / wall, server.max_in_flight, wall
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--limits", default="1,4,16,32")
    args = parser.parse_args()
    with Sandbox() as sandbox, tempfile.TemporaryDirectory() as tmp:
        print(f"{args.episodes} single-shot episodes, {args.latency} s per model call, {sandbox.size} sandbox workers")
        for limit in (int(x) for x in args.limits.split(",")):
            mean, peak, wall = measure(limit, args.episodes, args.latency, sandbox, Path(tmp) / f"run{limit}")
            ideal = -(-args.episodes // limit) * args.latency
            print(
                f"--concurrency {limit:3d}: in flight mean {mean:5.1f} peak {peak:3d}   "
                f"wall {wall:6.2f} s = {wall / ideal:4.2f} x ideal ({ideal:.2f} s)"
            )


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Create .venv (Python 3.12) with everything the test suite needs, then run it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh dev,local,optimize,openhands,pde,ngsolve
export LITELLM_LOCAL_MODEL_COST_MAP=True
.venv/bin/ruff check fembench_agents tests benchmarks scripts
.venv/bin/ruff format --check fembench_agents tests benchmarks scripts
.venv/bin/mypy fembench_agents
PATH="$PWD/.venv/bin:$PATH" exec .venv/bin/python -m pytest "$@"

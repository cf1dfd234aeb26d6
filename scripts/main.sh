#!/usr/bin/env bash
# Create .venv (Python 3.12), install, and run the main job: compare three
# scaffolds on the embedded local model, offline, ending with the report table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh dev,local,optimize,openhands
export LITELLM_LOCAL_MODEL_COST_MAP=True
exec .venv/bin/fembench-agents compare --experiment experiments/scaffolds_embedded.toml --out runs/main "$@"

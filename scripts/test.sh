#!/usr/bin/env bash
# Create .venv (Python 3.12) with everything the test suite needs, then run it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh dev,local,optimize,openhands,pde,ngsolve,ray
# Debian packages the suite needs, installed when missing and apt can be used: Chromium for
# the viewer's browser tests (they fail, not skip, without it), and the X and GLU libraries
# gmsh's wheel links against (the PDE track meshes curved domains with it).
apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 0
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n apt-get update -qq && sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  fi
}
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM:-}" ]; then
  apt_install chromium
fi
if ! .venv/bin/python -c "import gmsh" >/dev/null 2>&1; then
  apt_install libglu1-mesa libxcursor1 libxft2 libxinerama1
fi
export LITELLM_LOCAL_MODEL_COST_MAP=True
.venv/bin/ruff check fembench_agents tests benchmarks scripts
.venv/bin/ruff format --check fembench_agents tests benchmarks scripts
.venv/bin/mypy fembench_agents
# Two pytest workers (FEMBENCH_TEST_WORKERS): most of the suite waits on sandbox
# children, subprocesses and the embedded model, so two overlap on two cores.
# A file's tests stay in one worker (module fixtures, the ordinary-user tests'
# "no process of the user is left" checks).
PATH="$PWD/.venv/bin:$PATH" exec .venv/bin/python -m pytest -n "${FEMBENCH_TEST_WORKERS:-2}" --dist loadfile "$@"

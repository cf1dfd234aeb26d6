#!/usr/bin/env bash
# Create .venv with Python 3.12 and install the project with the extras named
# in $1 (comma list). Idempotent: a stamp keyed on pyproject.toml and the
# extras skips the install when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-dev}"

find_python() {
  local c
  for c in python3.12 "$(command -v pyenv >/dev/null && echo "$(pyenv root)/versions/3.12"*/bin/python3.12)" \
           "$HOME"/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12; do
    [ -n "$c" ] || continue
    if "$c" -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then
      command -v "$c" 2>/dev/null || echo "$c"; return 0
    fi
  done
  echo "error: Python 3.12 not found (tried python3.12 and pyenv versions)" >&2
  return 1
}

if [ ! -x .venv/bin/python ]; then
  py=$(find_python)
  "$py" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
fi

stamp=".venv/.installed-$(cat pyproject.toml | sha256sum | cut -c1-16)-${extras//,/_}"
if [ ! -f "$stamp" ]; then
  # llama-cpp-python builds from source: keep it off CUDA and portable.
  export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_CUDA=OFF -DGGML_NATIVE=OFF}"
  echo "installing fembench-agents[${extras}] into .venv (log: .venv/install.log)" >&2
  if ! .venv/bin/python -m pip install -e ".[${extras}]" > .venv/install.log 2>&1; then
    tail -40 .venv/install.log >&2
    echo "error: installation failed; the full log is .venv/install.log" >&2
    exit 1
  fi
  touch "$stamp"
fi

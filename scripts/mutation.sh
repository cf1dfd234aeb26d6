#!/usr/bin/env bash
# Mutation testing of the scoring path with mutmut 3 (README: "Checking the tests").
#
#   bash scripts/mutation.sh                  every module, one after another
#   bash scripts/mutation.sh suite.comparison scoring.evaluator  only these modules (names: scripts/mutation_tools.py MODULES)
#   bash scripts/mutation.sh --report         the kill ratios of what has run so far
#
# Each mutant runs only the boundary tests (tests/test_rules_*.py) that call its
# function; results accumulate in mutants/ and the ratios are printed at the end.
# MUTATION_JOBS (default 1) mutants run at once. Changing the test selection
# or pytest_add_cli_args of [tool.mutmut] in pyproject.toml makes mutmut
# discard every result in mutants/: run all modules again after such a change
# (a new module in only_mutate keeps them).
# Needs the `mutation` extra:
#   .venv/bin/pip install -e '.[dev,mutation]'
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
export LITELLM_LOCAL_MODEL_COST_MAP=True
JOBS=${MUTATION_JOBS:-1}

if [[ "${1:-}" == "--report" ]]; then
    shift
    exec "$PY" scripts/mutation_tools.py report "$@"
fi
if [[ $# -eq 0 ]]; then
    mapfile -t modules < <("$PY" -c 'import sys; sys.path.insert(0, "scripts"); import mutation_tools as m; print("\n".join(m.MODULES))')
else
    modules=("$@")
fi

for module in "${modules[@]}"; do
    mapfile -t globs < <("$PY" scripts/mutation_tools.py globs "$module")
    if "$PY" -c "import sys; sys.path.insert(0, 'scripts'); import mutation_tools as m; sys.exit(not m.declares('${module%%:*}'))"; then
        # code that runs only in sandbox children: mutmut needs its stats and mutants first (one
        # cheap mutant collects them), then the declared tests are added to the stats
        "$PY" -m mutmut run --max-children "$JOBS" "fembench_agents.scoring.sandbox.policy.x_sandbox_env__mutmut_1" >/dev/null
        "$PY" scripts/mutation_tools.py declare
    fi
    echo "== mutating $module"
    started=$SECONDS
    "$PY" -m mutmut run --max-children "$JOBS" "${globs[@]}" | tr '\r' '\n' | grep -v '^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]' | tail -n 3 || true
    echo "== $module took $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
done
"$PY" scripts/mutation_tools.py report "${modules[@]}"

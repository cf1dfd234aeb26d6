"""Helpers of scripts/mutation.sh (mutation testing with mutmut 3).

  python scripts/mutation_tools.py globs MODULE...   mutant-name globs of the scoring path in MODULE
  python scripts/mutation_tools.py declare           add the declared tests of child-only code to mutmut's stats
  python scripts/mutation_tools.py report [MODULE...]  kill ratio per module, and survivors not yet explained
  python scripts/mutation_tools.py restat TESTFILE...  record again which functions these tests call (a module newly mutated)

Each run of a module (or shard) tests every one of its mutants again: mutmut
re-runs the mutants it is given by name, and mutation.sh names them all by
their functions' globs. What the report shows is the latest run of each.

mutmut learns which tests call a function by recording calls in the process
that makes them. Code that runs only in sandbox children (sandbox/runner.py)
is never called in the test process, so mutmut would mark its mutants "no
tests". `declare` lists the tests that exercise it through the sandbox
(DECLARED below) in mutmut's stats; the sandbox passes MUTANT_UNDER_TEST to
its children (sandbox/policy.py), so the mutant is active where the code runs.

Survivors that cannot change behaviour are listed, each with its reason, in
docs/mutation-survivors.md as "- `mutant name`: reason"; `report` counts them
as equivalent and excludes them from the ratio.
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
SURVIVORS = ROOT / "docs" / "mutation-survivors.md"

# module (dotted, under fembench_agents) -> mutant-name globs of the code that decides a verdict
# or a reported number; "*" is the whole module. The sandbox's process management (the
# Sandbox class and its workers) and a run's manifest are not scoring code.
MODULES: dict[str, tuple[str, ...]] = {
    "suite.comparison": ("*",),
    # best-of-N's choice from what an agent may see, and debug-and-refine's phase budgets
    "agents.best_of": ("x_rank__*", "x_distance__*", "x_choose__*"),
    "agents.phased": ("xǁDebugAndRefineAgentǁnext_phase__*",),
    # matched budgets: which cap ends an episode, and the spend that stops a run
    "runs.episode_budget": ("*",),
    "runs.budget": ("*",),
    "report.stats": ("*",),
    "scoring.feedback": ("*",),
    "scoring.outcomes": ("*",),  # the base every kind's outcome builds on
    "suite.outcomes": ("*",),  # the function kind's outcomes (code and tests tracks)
    "cases.outcomes": ("*",),  # the PDE kind's outcome
    "scoring.extraction": ("*",),
    "optimize.budget": ("*",),
    "scoring.sandbox.policy": ("*",),
    "scoring.sandbox.replies": (
        "x__decode__*",
        "x__read_frames__*",
        "x__well_formed__*",
        "x__well_formed_pair__*",
        "xǁJobResultǁ*",
    ),
    "runs.session": ("*",),
    "runs.recording": ("*",),
    "runs.log": ("x_episode_key__*", "x_read_log__*", "x__drop_torn_tail__*", "xǁRunLogǁ*"),
    "runs.reader": ("*",),
    "runs.run": (
        "x_run_episode__*",
        "x_execute_run__*",
        "x_prepare_run_dir__*",  # the resume's guard and the manifest it keeps
        "x_record_skipped_tasks__*",
        "x_run_limits__*",
        "xǁRunConfigǁ*",
    ),
    "runs.selection": ("*",),  # which problems a selection names, made items (fresh instances) included
    "report.tables": ("*",),
    "report.contamination": ("*",),  # published against fresh: per stratum, the paired difference and interval
    "optimize.candidates": ("*",),
    "scoring.evaluator": ("*",),  # the dispatcher: track -> kind -> its scorer
    "kinds": ("*",),
    "runs.problems": ("*",),
    "runs.grid": ("*",),  # a compare's grid: libraries, tracks, run-directory names, the grid's runs
    "suite.scoring": ("*",),  # the function kind's scorer (code and tests tracks)
    "suite.feedback": ("*",),
    "cases.feedback": ("*",),
    # what of a problem stays hidden from attempts (the optimizer's leak guard)
    "suite.hidden": ("*",),
    "cases.hidden": ("*",),
    "suite.references": ("*",),
    "scoring.sandbox.runner": ("*",),
    "scoring.sandbox.implementation": ("*",),
    "scoring.sandbox.proxy": ("*",),
    "scoring.sandbox.pairs": ("*",),
    "scoring.sandbox.callbacks": ("*",),
    # the worker's side of a job's limits: its wall clock, output limit and stderr tail (not its confinement)
    "scoring.sandbox.job_stream": ("*",),
    "scoring.job_results": ("*",),
    "cases.gates": ("*",),
    "cases.scorer": ("*",),
    "scoring.disclosure": ("*",),
    "scoring.codec": ("*",),
    "suite.paper": ("*",),
    "cases.report_rows": ("*",),
    # the held-out judgement's numbers and text, not its plot
    "optimize.judgement": (
        "x_baseline_agent__*",
        "x_validation_curve__*",
        "x_judge_heldout__*",
        "x_render_judgement__*",
        "x_origin_totals__*",
    ),
    "runs.health": ("*",),
    "optimize.adapter": ("*",),
    "optimize.progress": ("*",),
    "optimize.reflection": ("*",),
    # the report's tables as printed: estimates, rates, costs, stage counts, paired tests, PDE margins
    "report.render": ("*",),
    "suite.paper_render": ("*",),
    # the fresh-case draw: which stream, in which order, within which ranges, written as which bytes
    "cases.generate.grammar": ("*",),
    "cases.generate.geometry": ("*",),
    "cases.generate.families": ("*",),
    "cases.generate.draw": ("*",),
    "cases.generate.periodic": ("*",),
}

# Tests that exercise code running only in sandbox children: "MODULE" for every function of the
# module, "MODULE:FUNCTION,..." for those functions instead. They replace what the stats held. Files or test ids, all inside
# [tool.mutmut]'s test selection: mutmut drops the tests outside it from its stats.
SOLVES = "tests/test_cases_scoring.py::test_"
# test_rules_evaluator's tests of the tests track: the only ones whose jobs reach the pairs and the proxy
TESTS_TRACK = tuple(
    f"tests/test_rules_evaluator.py::test_{name}"
    for name in (
        "a_forged_failure_on_the_reference_shows_only_lines_of_the_code_its_author_has",
        "a_missing_test_and_a_test_failing_the_reference",
        "a_missing_test_does_not_stop_the_tests_after_it",
        "a_suite_may_use_the_tasks_imports_without_importing_them",
        "a_suite_stopped_early_says_why_and_how_long_it_took",
        "a_suite_stopped_early_scores_every_test_missing",
        "a_suite_that_fails_to_build_gives_its_error_on_the_reference",
        "a_suite_with_none_of_the_tasks_tests_runs_nothing",
        "a_test_failing_only_the_reference",
        "a_test_job_gets_the_test_time_limit",
        "a_test_that_catches_both",
        "a_test_that_catches_one_of_its_two_failures",
        "a_test_that_hangs_on_the_reference",
        "a_tests_failure_message_on_the_reference_is_not_kept",
        "a_call_that_raises_in_a_given_helper_shows_the_helper_s_line_too",
        "a_test_that_hangs_is_stopped_at_its_pairs_limit_and_the_tests_after_it_still_run",
    )
)
DECLARED: dict[str, tuple[str, ...]] = {
    "scoring.sandbox.runner": ("tests/test_rules_evaluator.py", "tests/test_rules_child.py"),
    # solve jobs: each path of a solve (setup, answer, error, build error, calibration, re-timing)
    "scoring.sandbox.runner:run_solve": (
        "tests/test_rules_child.py::test_a_tracks_setup_runs_in_the_solve_jobs_process_before_the_solver",
        f"{SOLVES}a_correct_solver_passes_all_three_gates",
        f"{SOLVES}an_exception_a_wrong_shape_and_a_forbidden_import_fail_executes",
        f"{SOLVES}a_module_that_fails_to_build_and_an_answer_that_cannot_be_sent_fail_executes",
        f"{SOLVES}a_ten_times_too_slow_solver_fails_fast_after_being_timed_three_times",
        f"{SOLVES}the_calibration_solver_runs_in_the_sandbox_by_its_module_name",
        f"{SOLVES}the_clock_starts_once_the_module_is_built",
    ),
    # every job, and a tests job's pairs entering namespaces of their own
    "scoring.sandbox.runner:run_job": (
        "tests/test_rules_evaluator.py",
        "tests/test_rules_child.py",
        "tests/test_test_pairs.py::test_no_pair_finds_what_an_earlier_pair_of_the_job_left",
    ),
    "scoring.sandbox.implementation": ("tests/test_rules_evaluator.py", "tests/test_rules_child.py"),
    "scoring.sandbox.proxy": (*TESTS_TRACK, "tests/test_test_pairs.py"),
    "scoring.sandbox.pairs": (*TESTS_TRACK, "tests/test_test_pairs.py"),
    # both sides run in children; encoding and decoding are also tested in-process (test_rules_channel)
    "scoring.sandbox.callbacks": (*TESTS_TRACK, "tests/test_test_pairs.py", "tests/test_rules_channel.py"),
    # the worker serves every job; its limits at their boundaries, and the pairs' outputs
    "scoring.sandbox.job_stream": (
        "tests/test_sandbox_job_process.py",
        "tests/test_rules_limits.py",
        "tests/test_rules_evaluator.py",
        "tests/test_rules_child.py",
        "tests/test_test_pairs.py",
    ),
}


def declares(module: str) -> bool:
    return any(key.partition(":")[0] == module for key in DECLARED)


STATUS = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    36: "timeout",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    None: "not checked",
}


def globs(modules: list[str]) -> list[str]:
    """`MODULE` or `MODULE:FUNCTION,...` (a shard: only those functions or methods)."""
    out = []
    for spec in modules:
        module, _, functions = spec.partition(":")
        if module not in MODULES:
            sys.exit(f"unknown module {module!r}; one of: {', '.join(MODULES)}")
        if functions:
            out += [
                f"fembench_agents.{module}.{g}"
                for f in functions.split(",")
                for g in (f"x_{f}__mutmut_*", f"xǁ*ǁ{f}__mutmut_*")
            ]
        else:
            out += [f"fembench_agents.{module}.{g}" for g in MODULES[module]]
    return out


def _mangled(mutant: str) -> str:
    return mutant.partition("__mutmut_")[0]


def _meta(module: str) -> dict[str, int | None] | None:
    """Exit code by mutant of the module's scoring code; None if mutmut has not mutated it yet."""
    path = MUTANTS / "fembench_agents" / (module.replace(".", "/") + ".py.meta")
    if not path.exists():  # a package: its __init__.py (mutmut names its mutants after the package)
        path = MUTANTS / "fembench_agents" / module.replace(".", "/") / "__init__.py.meta"
    if not path.exists():
        return None
    codes: dict[str, int | None] = json.loads(path.read_text())["exit_code_by_key"]
    wanted = [f"fembench_agents.{module}.{g}" for g in MODULES[module]]
    return {k: v for k, v in codes.items() if any(fnmatch.fnmatchcase(k, w) for w in wanted)}


def restat(files: list[str]) -> None:
    """mutmut learns which tests call a function when it first sees a test: a module added to
    only_mutate later has no tests recorded. Forgetting the tests of `files` makes the next run
    record them again, with every mutated module in place."""
    stats_path = MUTANTS / "mutmut-stats.json"
    stats = json.loads(stats_path.read_text())
    durations = stats["duration_by_test"]
    dropped = [t for t in durations if any(t == f or t.startswith(f + "::") for f in files)]
    for test in dropped:
        del durations[test]
    stats_path.write_text(json.dumps(stats, indent=4))
    print(f"{len(dropped)} tests will be recorded again on the next run")


def declare() -> None:
    stats_path = MUTANTS / "mutmut-stats.json"
    stats = json.loads(stats_path.read_text())
    tests = stats["tests_by_mangled_function_name"]
    for key, files in sorted(DECLARED.items(), key=lambda item: ":" in item[0]):  # functions' own last
        module, _, functions = key.partition(":")
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        ids = [line.strip() for line in out.splitlines() if "::" in line]
        wanted = globs([key]) if functions else [f"fembench_agents.{module}.*"]
        for name in {_mangled(k) for k in _meta(module) or {} if any(fnmatch.fnmatchcase(k, w) for w in wanted)}:
            tests[name] = sorted(ids)  # child code: mutmut records no call of its own to keep
        print(f"declared {len(ids)} tests for the functions of {key}")
    stats_path.write_text(json.dumps(stats, indent=4))


KILLED_ELSEWHERE = "killed by "  # an entry of SURVIVORS killed by a test mutmut does not run, named after it


def listed_survivors() -> dict[str, str]:
    """SURVIVORS' entries, name -> reason: equivalents, and mutants killed by tests mutmut does not run."""
    if not SURVIVORS.exists():
        return {}
    found = re.findall(r"^- `([^`]+)`: (.+)$", SURVIVORS.read_text(), re.M)
    return dict(found)


def report(modules: list[str]) -> int:
    listed = listed_survivors()
    elsewhere = {k for k, why in listed.items() if why.startswith(KILLED_ELSEWHERE)}
    explained = {k: why for k, why in listed.items() if k not in elsewhere}
    print(f"{'module':<20} {'mutants':>7} {'killed':>6} {'equiv':>5} {'surv':>5} {'other':>5}  kill ratio")
    unexplained: list[str] = []
    flaky: list[str] = []
    total: Counter[str] = Counter()
    for module in dict.fromkeys(m.partition(":")[0] for m in modules or list(MODULES)):
        codes = _meta(module)
        if codes is None:
            print(f"{module:<20} {'not run':>7}")
            continue
        if not codes:
            print(
                f"{module:<20} {'no mutants (only declarations and decorated functions, which mutmut does not mutate)':>7}"
            )
            continue
        status = {k: STATUS.get(v, "suspicious") for k, v in codes.items()}
        # killed by a test outside mutmut's selection (run by hand with the mutant in place): killed
        status = {k: "killed" if s == "survived" and k in elsewhere else s for k, s in status.items()}
        # A listed mutant cannot change behaviour: if a test "killed" it, that test failed for
        # another reason (a flaky run under load). It counts as equivalent, and is named.
        flaky += [k for k, s in status.items() if k in explained and s != "survived" and s != "not checked"]
        status = {k: "survived" if k in explained and s != "not checked" else s for k, s in status.items()}
        count = Counter(status.values())
        equivalent = [k for k, s in status.items() if s == "survived" and k in explained]
        survived = [k for k, s in status.items() if s == "survived" and k not in explained]
        unexplained += survived
        killed = count["killed"] + count["timeout"]
        other = len(codes) - killed - len(equivalent) - len(survived)
        judged = len(codes) - len(equivalent) - count["not checked"]
        ratio = f"{killed / judged:.1%}" if judged else "-"
        print(
            f"{module:<20} {len(codes):>7} {killed:>6} {len(equivalent):>5} {len(survived):>5} {other:>5}  {ratio}"
            + (f"  ({count['not checked']} not checked)" if count["not checked"] else "")
        )
        total.update(mutants=len(codes), killed=killed, equivalent=len(equivalent), survived=len(survived))
        total.update(other=other, judged=judged)
    if total["judged"]:
        print(
            f"{'all of the above':<20} {total['mutants']:>7} {total['killed']:>6} {total['equivalent']:>5} "
            f"{total['survived']:>5} {total['other']:>5}  {total['killed'] / total['judged']:.1%}"
        )
    if flaky:
        print(
            f"\n{len(flaky)} mutants listed as equivalent were reported killed or timed out (a test that "
            "failed for another reason, e.g. under load):"
        )
        for name in sorted(flaky):
            print(f"  {name}")
    if unexplained:
        print(f"\n{len(unexplained)} survivors neither killed nor listed in {SURVIVORS.relative_to(ROOT)}:")
        for name in sorted(unexplained):
            print(f"  {name}")
    return 0


if __name__ == "__main__":
    command, *args = sys.argv[1:] or ["report"]
    if command == "globs":
        print("\n".join(globs(args)))
    elif command == "declare":
        declare()
    elif command == "restat":
        restat(args)
    elif command == "report":
        sys.exit(report(args))
    else:
        sys.exit(__doc__)

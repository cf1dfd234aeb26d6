"""Harness parity (`fembench-agents parity`): every agent kind, on a function task
of each function track and a PDE case, driven by the oracle model, passes: the
matrix is all 100%, and a harness fault would be named with its stage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT
from typer.testing import CliRunner

from fembench_agents.agents import make_agent
from fembench_agents.cases import timing
from fembench_agents.cli import app
from fembench_agents.messages import Message
from fembench_agents.parity import AGENTS, oracle_turns, responder

TRACKS = ("code", "tests", "numpy-scipy")


@pytest.fixture(scope="module")
def calibrated_cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed cases, with a calibration of this machine (every case 1 s on numpy-scipy)."""
    target = tmp_path_factory.mktemp("cases") / "cases"
    shutil.copytree(ROOT / "cases", target, ignore=shutil.ignore_patterns("calibration"))
    ids = [json.loads(line)["id"] for line in (target / "case_specs.jsonl").read_text().splitlines()]
    t_base = {case: {"numpy-scipy": 1.0} for case in ids}
    machine = timing.MachineCalibration(machine=timing.machine_name(), fingerprint={}, repeats=1, t_base=t_base)
    timing.save(target, machine)
    return target


def test_every_agent_passes_every_kind_with_the_oracle(calibrated_cases: Path, tmp_path: Path) -> None:
    args = ["parity", "--tracks", ",".join(TRACKS), "--sample", "1", "--out", str(tmp_path / "parity")]
    args += ["--tasks-path", str(ROOT / "tasks"), "--cases-path", str(calibrated_cases)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("│")]
    assert [row.split("│")[1].strip() for row in rows] == list(AGENTS)
    for row in rows:
        assert [cell.strip() for cell in row.split("│")[2:-1]] == ["100% (1/1)"] * len(TRACKS), row
    assert "harness fault" not in result.output
    runs = sorted(p.name for p in (tmp_path / "parity").iterdir())
    assert len(runs) == len(AGENTS) * len(TRACKS)  # one run per agent, track and problem


def test_a_wrong_oracle_is_a_named_harness_fault(calibrated_cases: Path, tmp_path: Path) -> None:
    """The matrix tells: an oracle answer that cannot pass shows as a fault with its stage."""
    from fembench_agents.cases.hidden import CaseHidden

    original = CaseHidden.oracle_program
    CaseHidden.oracle_program = lambda self, problem, track: "def solve(case_spec):\n    return {}\n"  # type: ignore[method-assign]
    try:
        args = ["parity", "--tracks", "numpy-scipy", "--sample", "1", "--agents", "single-shot"]
        args += ["--out", str(tmp_path / "p"), "--cases-path", str(calibrated_cases)]
        result = CliRunner().invoke(app, args)
    finally:
        CaseHidden.oracle_program = original  # type: ignore[method-assign]
    assert result.exit_code == 1
    assert "0% (0/1)" in result.output
    assert (
        "harness fault: single-shot on numpy-scipy: " in result.output and ": executes/missing_field" in result.output
    )


def test_the_oracle_answers_each_agent_in_its_own_form() -> None:
    program = "def f():\n    return 1\n"
    assert oracle_turns(make_agent("feedback-loop:3"), program, "solution.py") == ["```python\n" + program + "```\n"]
    mini = oracle_turns(make_agent("mini-swe-agent"), program, "solution.py")
    assert mini[0].endswith(
        "```mswea_bash_command\ncat <<'FEMBENCH_ORACLE_EOF' > solution.py\n" + program + "FEMBENCH_ORACLE_EOF\n```"
    )
    assert "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in mini[1]
    hands = oracle_turns(make_agent("openhands"), program, "solver.py")
    assert "<parameter=path>/tmp/workspace/solver.py</parameter>" in hands[0] and hands[1].startswith(
        "<function=finish>"
    )
    reply = responder(["first", "second"])
    said = [Message(role="user", content="task"), Message(role="assistant", content="first")]
    assert (reply(said[:1]), reply(said), reply([*said, *said])) == ("first", "second", "second")

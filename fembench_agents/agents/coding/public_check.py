"""A candidate program through the public check a coding agent runs
(scaffolds/workspace/check.py with its kind's own checks), in the same
confined terminal: it parses, imports only what it may, imports, and runs on
what the task shows (a function's docstring examples, a case's case_spec).
What comes back is what any agent may see; nothing evaluator-only is read or
reachable. best-of:N chooses among its samples with it."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

import numpy as np

from fembench_agents.agents.coding.terminal import check_launcher, write_launcher
from fembench_agents.agents.coding.workspace import CHECK_FILE, create_workspace
from fembench_agents.contracts import Problem, Track

CHECK_SECONDS = 300.0
OUTPUTS = "candidate_outputs.npz"


@dataclass(frozen=True)
class PublicCheck:
    passed: bool
    ran: bool  # it parsed, imported only what it may, and imported: it got to run
    message: str  # the check's last line ("CHECK PASSED ..." / "CHECK FAILED: ...")
    outputs: dict[str, np.ndarray] | None = None  # the arrays it returned, where the check saves them


def run_public_check(problem: Problem, track: Track, code: str, hidden: list[str]) -> PublicCheck:
    ws = create_workspace(problem, track, "", prefix="fembench-candidate-")
    try:
        ws.solution.write_text(code)
        ws.share_with_shell()
        launcher = write_launcher(ws, hidden)
        check_launcher(launcher)
        command = f"python {CHECK_FILE} --save-outputs {OUTPUTS}"
        try:
            done = subprocess.run(
                [str(launcher), "-c", command],
                capture_output=True,
                text=True,
                timeout=CHECK_SECONDS,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return PublicCheck(False, True, f"CHECK FAILED: no answer within {CHECK_SECONDS:g} s")
        lines = [line for line in done.stdout.splitlines() if line.startswith("CHECK ")]
        message = lines[-1] if lines else (done.stderr.strip().splitlines() or ["CHECK FAILED: no output"])[-1]
        passed = done.returncode == 0 and message.startswith("CHECK PASSED")
        return PublicCheck(passed, passed or _ran(message), message, _outputs(ws.dir / OUTPUTS) if passed else None)
    finally:
        ws.remove()


def _ran(message: str) -> bool:
    """Failed after the candidate got to run: not at reading, parsing or its imports."""
    return not any(
        words in message for words in ("cannot read", "does not parse", "is not allowed", "raised while being imported")
    )


def _outputs(path: object) -> dict[str, np.ndarray] | None:
    try:
        with np.load(str(path), allow_pickle=False) as data:
            return {name: np.asarray(data[name], dtype=float) for name in data.files}
    except (OSError, ValueError):
        return None

"""t_base: how long our calibration solver takes on this machine. A property
of the machine, not of the case, so it lives apart from the records in
cases/calibration/<machine>.json (gitignored) and is remade by
`fembench-agents cases calibrate`.

Measured as an attempt's solve time is measured: in the solving process,
after imports, with perf_counter around the first `solve(case_spec)` call,
each time in a fresh sandbox job; t_base is the median of `repeats` of them
(`calibrate.time_case`). The file's `calibration_id` (a hash of its content)
is what a run records.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

CALIBRATION_DIR = "calibration"


class CalibrationMissing(FileNotFoundError):
    pass


class MachineCalibration(BaseModel):
    model_config = ConfigDict(frozen=True)
    machine: str
    fingerprint: dict[str, str]
    repeats: int
    t_base: dict[str, dict[str, float]]  # case id -> library -> seconds

    @property
    def calibration_id(self) -> str:
        text = json.dumps(self.model_dump(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def lookup(self, case_id: str, library: str) -> float:
        try:
            return self.t_base[case_id][library]
        except KeyError:
            raise CalibrationMissing(
                f"calibration {self.machine} has no time for {case_id} on {library}: "
                "run `fembench-agents cases calibrate`"
            ) from None


def machine_name() -> str:
    raw = os.environ.get("FEMBENCH_MACHINE") or platform.node() or "local"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", raw)[:64]


def fingerprint() -> dict[str, str]:
    import numpy
    import scipy

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": str(os.cpu_count()),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
    }


def path_for(cases_dir: Path, machine: str | None = None) -> Path:
    return cases_dir / CALIBRATION_DIR / f"{machine or machine_name()}.json"


def save(cases_dir: Path, cal: MachineCalibration) -> Path:
    path = path_for(cases_dir, cal.machine)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(json.loads(cal.model_dump_json()), sort_keys=True, indent=1) + "\n")
    return path


def merged(cases_dir: Path, new: MachineCalibration) -> tuple[MachineCalibration, str]:
    """`new` over the machine's existing file, when that file was timed on the same fingerprint
    with the same repeats: a partial `calibrate --only/--library` updates the pairs it timed and
    keeps the others. Otherwise `new` alone, and why the old times were dropped."""
    path = path_for(cases_dir, new.machine)
    if not path.exists():
        return new, ""
    try:
        old = MachineCalibration.model_validate_json(path.read_text())
    except ValueError:
        return new, f"replaced {path}: it could not be read"
    kept = sum(1 for case, libs in old.t_base.items() for lib in libs if lib not in new.t_base.get(case, {}))
    if old.fingerprint != new.fingerprint or old.repeats != new.repeats:
        why = "a different fingerprint" if old.fingerprint != new.fingerprint else f"repeats {old.repeats}"
        return new, f"replaced {path} ({why}): {kept} solves timed there dropped"
    t_base = {case: dict(libs) for case, libs in old.t_base.items()}
    for case, libs in new.t_base.items():
        t_base.setdefault(case, {}).update(libs)
    return new.model_copy(update={"t_base": t_base}), f"kept {kept} solves timed before" if kept else ""


def load(cases_dir: Path, machine: str | None = None) -> MachineCalibration:
    path = path_for(cases_dir, machine)
    if not path.exists():
        raise CalibrationMissing(
            f"no machine calibration at {path}: run `fembench-agents cases calibrate` "
            "on this machine (it times our calibration solvers; takes minutes)"
        )
    return MachineCalibration.model_validate_json(path.read_text())

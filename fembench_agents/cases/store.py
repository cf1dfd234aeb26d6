"""Where records live and how they are written, byte for byte reproducibly.

cases/definitions/<id>.toml   human-written case files
cases/case_specs.jsonl        agent-visible specs, one per line, sorted by id
cases/hidden/<id>.json        evaluator-only record (sorted keys, fixed layout)
cases/hidden/<id>.npz         its reference on the grid (zip entries with a fixed date)
cases/calibration/            machine calibration times (gitignored; see timing.py)
"""

from __future__ import annotations

import hashlib
import io
import json
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from fembench_agents.cases.case_spec import CaseSpec
from fembench_agents.cases.model import CaseFile, HiddenRecord

SPECS_FILE = "case_specs.jsonl"
DEFINITIONS = "definitions"
HIDDEN = "hidden"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


class CaseStoreError(ValueError):
    pass


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=True, allow_nan=False) + "\n"


def dumps_line(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An .npz numpy.load reads, with no timestamps: identical arrays give identical bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            arr = io.BytesIO()
            np.lib.format.write_array(arr, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, arr.getvalue(), compresslevel=9)
    return buf.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_if_changed(path: Path, data: bytes) -> bool:
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def load_definition(path: Path) -> CaseFile:
    try:
        with path.open("rb") as fh:
            raw = tomllib.load(fh)
        case = CaseFile.model_validate(raw)
    except tomllib.TOMLDecodeError as exc:
        raise CaseStoreError(f"{path}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        raise CaseStoreError(f"{path}: {exc}") from None
    if case.id != path.stem:
        raise CaseStoreError(f"{path}: id {case.id!r} must equal the file name {path.stem!r}")
    return case


def load_definitions(cases_dir: Path) -> list[CaseFile]:
    files = sorted((cases_dir / DEFINITIONS).glob("*.toml"))
    if not files:
        raise CaseStoreError(f"no case definitions in {cases_dir / DEFINITIONS}")
    return [load_definition(p) for p in files]


def load_specs(cases_dir: Path) -> list[CaseSpec]:
    path = cases_dir / SPECS_FILE
    if not path.exists():
        raise CaseStoreError(f"{path} missing: run `fembench-agents cases build`")
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            out.append(CaseSpec.model_validate_json(line))
        except ValidationError as exc:
            raise CaseStoreError(f"{path}:{n}: {exc}") from None
    return out


def load_record(cases_dir: Path, case_id: str) -> HiddenRecord:
    """Evaluator-only: the hidden record alone, without its reference arrays."""
    path = cases_dir / HIDDEN / f"{case_id}.json"
    if not path.exists():
        raise CaseStoreError(f"{path} missing: run `fembench-agents cases build`")
    return HiddenRecord.model_validate_json(path.read_text())


def load_hidden(cases_dir: Path, case_id: str) -> tuple[HiddenRecord, dict[str, np.ndarray]]:
    """Evaluator-only: the hidden record and its reference arrays (hash checked)."""
    record = load_record(cases_dir, case_id)
    path = cases_dir / HIDDEN / f"{case_id}.json"
    data = (path.parent / record.reference_file).read_bytes()
    if sha256(data) != record.reference_sha256:
        raise CaseStoreError(f"{record.reference_file}: hash differs from its record; rebuild the cases")
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return record, {k: npz[k] for k in npz.files}

"""Fresh cases from a family's space, seeded: the case file of draw k of case i,
built and checked as any case is, redrawn with the next draw number while a
check refuses it.

A case's id names everything its draw depends on: `fresh_v2_poisson_s7_03` is
generator version 2, family poisson, seed 7, case 3 (domain kind drawn);
`fresh_v2_poisson_l_shape_s7_03` the same with the domain kind fixed. Its draws use
the stream `Draw("fembench-fresh/v2/poisson/*/7/3/<draw>")`, draw 0 first, in this
order: the domain kind (unless fixed), its size and placement (geometry.py), then
the family's coefficients and solution (families.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from fembench_agents.cases.builder import Built, build_case
from fembench_agents.cases.generate.families import SPACES
from fembench_agents.cases.generate.geometry import KINDS, draw_domain
from fembench_agents.cases.generate.grammar import Draw
from fembench_agents.cases.generate.manifest import GENERATOR_VERSION, FreshRecord, Redraw
from fembench_agents.cases.model import CURVED_DOMAINS, CaseFile, TimeSpec
from fembench_agents.cases.tracks import TRACKS, get_track

# every library track: a case is calibrated on each whose calibration solver solves it
DEFAULT_LIBRARIES: tuple[str, ...] = tuple(TRACKS)
MAX_DRAWS = 20  # per case: a family whose space fails this often is broken, not unlucky
E_BASE_CAP = 1e-2  # a calibration error above it makes a meaningless accuracy target


class GenerationError(ValueError):
    pass


@dataclass(frozen=True)
class Fresh:
    built: Built
    definition: str  # the case file's TOML text
    record: FreshRecord


Check = Callable[[Built], str | None]  # a reason to refuse the built case, or None


def calibration_cap(built: Built) -> str | None:
    """Every library's calibration solver must reach an accuracy worth targeting."""
    over = {lib: c.e_base for lib, c in sorted(built.hidden.calibration.items()) if c.e_base > E_BASE_CAP}
    if not over:
        return None
    return "calibration error above " + f"{E_BASE_CAP:g}: " + ", ".join(f"{k} {v:.2e}" for k, v in over.items())


CHECKS: tuple[Check, ...] = (calibration_cap,)


def case_id(family: str, domain: str | None, seed: int, index: int, version: int = GENERATOR_VERSION) -> str:
    where = "" if domain is None else f"_{domain}"
    return f"fresh_v{version}_{family}{where}_s{seed}_{index:02d}"


_ID = re.compile(
    rf"^fresh_v(\d+)_({'|'.join(SPACES)})(?:_({'|'.join(KINDS)}))?_s(\d+)_(\d+)$",
)


def parse_id(text: str) -> tuple[int, str, str | None, int, int]:
    """(version, family, domain or None, seed, index) of a fresh case id."""
    m = _ID.match(text)
    if m is None:
        raise GenerationError(
            f"{text!r} is no fresh case id; expected fresh_v<version>_<family>[_<domain>]_s<seed>_<index>, "
            f"family one of {', '.join(SPACES)}"
        )
    return int(m[1]), m[2], m[3], int(m[4]), int(m[5])


def draw_key(family: str, domain: str | None, seed: int, index: int, draw: int) -> str:
    return f"fembench-fresh/v{GENERATOR_VERSION}/{family}/{domain or '*'}/{seed}/{index}/{draw}"


def solving(family: str, kind: str, wanted: Sequence[str]) -> tuple[str, ...]:
    """The wanted library tracks whose calibration solver solves the family's PDE on this domain
    kind (Dirichlet pieces, and periodic ones for a periodic space; no transient variant of a steady
    family; a curved kind needs a track that meshes arcs)."""
    space, curved = SPACES[family], kind in CURVED_DOMAINS
    kinds = ("dirichlet", "periodic") if space.periodic else ("dirichlet",)
    return tuple(
        lib for lib in wanted if get_track(lib).refuses(space.pde(family), kinds, False, curved=curved) is None
    )


def domain_kinds(family: str, wanted: Sequence[str]) -> tuple[str, ...]:
    """The domain kinds a draw picks from: those of the family's space some wanted library solves it on."""
    kinds = tuple(k for k in SPACES[family].kinds if solving(family, k, wanted))
    if not kinds:
        named = ", ".join(wanted) or "(none given)"
        raise GenerationError(f"none of the libraries {named} has a calibration solver for {family}")
    return kinds


def definition(
    family: str, domain: str | None, seed: int, index: int, draw: int, libraries: Sequence[str]
) -> tuple[CaseFile, tuple[str, ...]]:
    """The case file of one draw (calibrated on those of the wanted `libraries` that solve it) and
    its solution's term kinds."""
    if family not in SPACES:
        raise GenerationError(f"no fresh space for family {family!r}; known: {', '.join(SPACES)}")
    space = SPACES[family]
    if domain is not None and domain not in space.kinds:
        raise GenerationError(f"{family} draws on no domain {domain!r}; it draws on {', '.join(space.kinds)}")
    kinds = domain_kinds(family, libraries)
    if domain is not None and domain not in kinds:
        raise GenerationError(f"none of the libraries {', '.join(libraries)} solves {family} on {domain}")
    d = Draw(draw_key(family, domain, seed, index, draw))
    where = draw_domain(d, domain if domain is not None else d.pick(kinds))
    drawn = space.draw(d, where.region)
    case = CaseFile.model_validate(
        {
            "id": case_id(family, domain, seed, index),
            "family": space.pde(family),
            "domain": where.name,
            "geometry": where.geometry,
            "coefficients": drawn.coefficients,
            "manufactured": None if drawn.u is None else {"u": drawn.u},
            "data": drawn.data,
            "time": None if drawn.t_end is None else TimeSpec(t0=0.0, t_end=drawn.t_end),
            "libraries": solving(family, where.name, libraries),
            "note": f"fresh v{GENERATOR_VERSION}: seed {seed}, case {index}, draw {draw}",
            "pressure_compared": drawn.pressure_compared,
            "periodic": drawn.periodic,
        }
    )
    return case, drawn.terms


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def _toml(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string is a JSON string of ASCII text
    if type(value) in (float, int):  # not a bool, which TOML writes otherwise
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    raise GenerationError(f"cannot write {value!r} to a case file")


def definition_text(case: CaseFile) -> str:
    """The case file as TOML, one key a line in a fixed order: the bytes the record's hash names."""
    lines = [
        f"id = {_toml(case.id)}",
        f"family = {_toml(case.family)}",
        f"domain = {_toml(case.domain)}",
        *([] if case.geometry is None else [f"geometry = {_toml(case.geometry)}"]),
        f"note = {_toml(case.note)}",
        f"coefficients = {_toml(dict(case.coefficients))}",
    ]
    if case.manufactured is not None:
        lines.append(f"manufactured = {{ u = {_toml(case.manufactured.u)} }}")
    if case.data is not None:
        lines.append(f"data = {_toml({'forcing': case.data.forcing, 'boundary': case.data.boundary})}")
    if case.time is not None:
        lines.append(f"time = {_toml({'t0': case.time.t0, 't_end': case.time.t_end})}")
    if case.periodic:
        lines.append(f"periodic = {_toml(list(case.periodic))}")
    if not case.pressure_compared:
        lines.append("pressure_compared = false")
    lines.append(f"libraries = {_toml(list(case.libraries))}")
    return "\n".join(lines) + "\n"


def _check_of(exc: Exception) -> str:
    text = str(exc)
    if "pass the accuracy gate" in text:
        return "leak"
    if "eigenfunction" in text or "forcing vanishes" in text:
        return "eigenfunction"
    if "numerical reference" in text or "refinement solves" in text:
        return "coarse_to_fine"
    if "calibration solver" in text or isinstance(exc, ArithmeticError | RuntimeError | np.linalg.LinAlgError):
        return "calibration"
    return "build"


def generate_case(
    family: str,
    domain: str | None,
    seed: int,
    index: int,
    libraries: Sequence[str] = DEFAULT_LIBRARIES,
    checks: Sequence[Check] = CHECKS,
    max_draws: int = MAX_DRAWS,
) -> Fresh:
    """Case `index` of (family, domain, seed): the first draw that builds (leak test, eigenfunction
    test, every library's calibration solve) and passes every check, of at most `max_draws`."""
    refused: list[Redraw] = []
    for draw in range(max_draws):
        case, terms = definition(family, domain, seed, index, draw, libraries)
        text = definition_text(case)
        try:
            built = build_case(case, text.encode())
        except (ValueError, ArithmeticError, RuntimeError, np.linalg.LinAlgError) as exc:
            refused.append(Redraw(draw=draw, check=_check_of(exc), reason=f"{type(exc).__name__}: {exc}"))
            continue
        failed = next(((c, r) for c, r in ((c, c(built)) for c in checks) if r is not None), None)
        if failed is not None:
            refused.append(Redraw(draw=draw, check=getattr(failed[0], "__name__", "check"), reason=str(failed[1])))
            continue
        record = FreshRecord(
            id=case.id,
            generator_version=GENERATOR_VERSION,
            family=family,
            domain=case.domain,
            domain_fixed=domain is not None,
            seed=seed,
            index=index,
            draw=draw,
            terms=terms,
            libraries=case.libraries,
            redraws=tuple(refused),
        )
        return Fresh(built=built, definition=text, record=record)
    last = "; ".join(f"draw {r.draw}: {r.reason}" for r in refused[-3:])
    raise GenerationError(f"{case_id(family, domain, seed, index)}: no acceptable draw in {max_draws} ({last})")

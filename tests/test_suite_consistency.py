"""The task suite keeps its copies in step. Task modules are self-contained by
format, so tiers of one concept and tasks sharing a helper repeat code; these
checks make sure the copies never drift apart."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_tasks
from fembench_agents.suite.model import Task

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def suite(sandbox: Sandbox) -> list[Task]:
    return load_tasks(ROOT / "tasks", sandbox)


def test_the_suite_has_the_33_published_concepts_with_tiers(suite: list[Task]) -> None:
    assert len(suite) == 33
    assert all(t.tier is not None for t in suite)
    assert sum(t.task_id.startswith("MSA_3D_") for t in suite) == 21


def test_tiers_of_a_concept_differ_only_in_the_helpers_given(suite: list[Task]) -> None:
    concepts: dict[str, list[Task]] = defaultdict(list)
    for t in suite:
        concepts[re.sub(r"_T\d+$", "", t.task_id)].append(t)
    multi = {k: v for k, v in concepts.items() if len(v) > 1}
    assert len(multi) == 7
    for concept, tiers in multi.items():
        first = tiers[0]
        for other in tiers[1:]:
            for field in (
                "main_name",
                "main_signature",
                "main_docstring",
                "main_source",
                "inputs",
                "tests",
                "comparison",
                "required_imports",
            ):
                assert getattr(other, field) == getattr(first, field), f"{concept}: {field} differs"
        given = [len(t.helpers) for t in sorted(tiers, key=lambda t: t.tier.help_level)]  # type: ignore[union-attr]
        assert given == sorted(given, reverse=True) and given[-1] == 0, f"{concept}: T3 must give no helpers"


def test_a_helper_has_one_text_across_the_suite(suite: list[Task]) -> None:
    """A T1 solver sees the same helper wherever it is given; the task whose
    main function it is holds the reference text."""
    texts: dict[str, set[str]] = defaultdict(set)
    for t in suite:
        for name, source in t.module_functions.items():
            if not name.startswith(("test_", "fail_")) and name != "task_info":
                texts[name].add(source)
    drifted = {name: len(v) for name, v in texts.items() if len(v) > 1}
    assert not drifted, f"helpers with several texts: {drifted}"


# Entries only the geometric stiffness matrix holds, spaces and `*` removed: a
# docstring printing them turns a knowledge task into transcription.
GEOMETRIC_STIFFNESS_ENTRIES = (
    "fx2/10",
    "6fx2/(5l)",
    "2fx2l/15",
    "fx2l/30",
    "mx2/2",
    "(my1+my2)/6",
    "(mz1+mz2)/6",
    "(2mz1-mz2)/6",
    "fx2i_rho/(al)",
)


def _entries_in(text: str) -> list[str]:
    flat = "".join(text.split()).replace("*", "").lower()
    return [e for e in GEOMETRIC_STIFFNESS_ENTRIES if e in flat]


def test_no_docstring_of_a_knowledge_task_prints_the_geometric_stiffness(suite: list[Task]) -> None:
    """CC1 leaves the geometric stiffness to the solver's knowledge: the docstrings
    (the main function's and those of the helpers a tier gives as code) state
    its conventions and a reference, never its entries."""
    import ast

    cc1 = [t for t in suite if t.tier is not None and t.tier.conceptual_challenge == 1]
    assert len(cc1) == 9
    found = {}
    for t in cc1:
        texts = [t.main_docstring] + [ast.get_docstring(ast.parse(h.source).body[0]) or "" for h in t.helpers]  # type: ignore[arg-type]
        hits = [e for text in texts for e in _entries_in(text)]
        if hits:
            found[t.task_id] = hits
    assert found == {}
    # the check would see the matrix: the code of the helper given at T1 holds it
    given = next(t for t in cc1 if t.task_id == "MSA_3D_assemble_global_geometric_stiffness_CC1_H4_T1")
    source = next(h.source for h in given.helpers if h.name == "local_geometric_stiffness_matrix_3D_beam")
    assert _entries_in(source.replace(".0", "")) == [
        "fx2/10",
        "6fx2/(5l)",
        "2fx2l/15",
        "fx2l/30",
        "mx2/2",
        "(my1+my2)/6",
        "(mz1+mz2)/6",
        "(2mz1-mz2)/6",
        "fx2i_rho/(al)",
    ]

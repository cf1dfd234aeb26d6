"""The provider table (models/providers.json) answers as the installed litellm
does, so a missing key or an unknown model is refused before litellm's import:
which provider serves a name, which names no provider, and which keys each
provider needs. When litellm is upgraded and an answer changes, these fail:
regenerate with `.venv/bin/python scripts/provider_table.py`."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from conftest import ROOT

from fembench_agents.models._litellm import litellm
from fembench_agents.models.credentials import credential_problems
from fembench_agents.models.provider_table import provider_table

REGENERATE = "regenerate: .venv/bin/python scripts/provider_table.py"


def test_the_table_was_written_by_the_installed_litellm() -> None:
    assert provider_table().litellm_version == version("litellm"), REGENERATE


def test_the_table_places_names_as_litellm_does() -> None:
    table = provider_table()
    names = sorted(table.models)[::40] + ["gpt-4o-mini", "openai/some-future-model", "groq/llama-3.1-8b-instant"]
    names += ["gemini/gemini-2.0-flash", "mistral/mistral-small-latest", "anthropic/claude-3-5-haiku-20241022"]
    assert len(names) > 100
    for name in names:
        assert table.provider(name) == litellm.get_llm_provider(name)[1], (name, REGENERATE)


@pytest.mark.parametrize("name", ["foo/bar", "openia/gpt-4o-mini", "not-a-provider/model-x"])
def test_a_name_the_table_calls_unknown_names_no_provider_for_litellm_either(name: str) -> None:
    assert provider_table().unknown(name)
    assert provider_table().provider(name) is None
    with pytest.raises(Exception, match="LLM Provider NOT provided"):
        litellm.get_llm_provider(name)


def test_bare_names_and_known_prefixes_are_never_called_unknown() -> None:
    table = provider_table()
    assert not table.unknown("some-bare-name")  # litellm has rules of its own for bare names: asked at run time
    assert table.provider("some-bare-name") is None
    assert not table.unknown("openai/x") and table.provider("openai/x") == "openai"


KEYS = {
    "openai": ["OPENAI_API_KEY"],
    "anthropic": ["ANTHROPIC_API_KEY"],
    "gemini": ["GOOGLE_API_KEY", "GEMINI_API_KEY"],  # either one is enough
    "azure": ["AZURE_API_BASE", "AZURE_API_VERSION", "AZURE_API_KEY"],  # all three
}


@pytest.mark.parametrize("provider", sorted(KEYS))
def test_missing_keys_as_litellm_names_them(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    table = provider_table()
    needed = KEYS[provider]
    for name in needed:
        monkeypatch.delenv(name, raising=False)
    settings = [[], needed[:1], needed[1:], needed]
    for present in settings:
        for name in needed:
            monkeypatch.delenv(name, raising=False)
        for name in present:
            monkeypatch.setenv(name, "set")
        found = litellm.validate_environment(model=f"{provider}/any-model")
        expected = [] if found["keys_in_environment"] else list(found["missing_keys"])
        assert table.missing_keys(provider, os.environ) == expected, (provider, present)
    rule = table.keys[provider]
    assert (list(rule.names), rule.needs_all) == (needed, provider != "gemini")


def test_credentials_are_judged_without_importing_litellm(tmp_path: Path) -> None:
    """`run`'s refusals, in a fresh interpreter: the lines, exit code 2, and litellm never imported."""
    script = (
        "import sys\n"
        "from fembench_agents.cli import main\n"
        "sys.argv = ['fembench-agents', 'compare', '--models', 'openai/gpt-4o-mini,foo/bar', '--agents', 'single-shot']\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    code = stop.code\n"
        "print('exit', code, 'litellm imported:', 'litellm' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "exit 2 litellm imported: False", done.stderr
    assert done.stderr.splitlines() == [
        "error: model 'openai/gpt-4o-mini' needs OPENAI_API_KEY, which is not set: put it in the environment or in "
        "a .env file",
        "error: litellm does not know which provider serves 'foo/bar'; write it as '<provider>/<model>' (e.g. "
        "'openai/gpt-4o-mini'): LLM Provider NOT provided",
    ]


def test_an_unknown_model_is_a_credential_problem_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "set")
    assert credential_problems(["openai/gpt-4o-mini", "foo/bar", "local"]) == [
        "litellm does not know which provider serves 'foo/bar'; write it as '<provider>/<model>' (e.g. "
        "'openai/gpt-4o-mini'): LLM Provider NOT provided"
    ]
    assert credential_problems(["foo/bar"], api_base="http://127.0.0.1:9/v1") == []  # a server names its own models

"""Model specs (`local`, `local:PATH`, `openai:MODEL`, `gemini:MODEL`, `scripted:PATH`) resolved to models."""

from __future__ import annotations

from pathlib import Path

import pytest

from consulta.models import MODEL_KINDS, ScriptedModel, available_models, resolve_model
from consulta.models._local import LocalModel
from consulta.runtime import ConfigError

_KEYS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "CONSULTA_GGUF")


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _KEYS:
        monkeypatch.delenv(name, raising=False)


def test_a_scripted_spec_replays_its_file_and_is_made_anew_each_time(tmp_path: Path) -> None:
    script = tmp_path / "demo.yaml"
    script.write_text("- text: hello\n", encoding="utf-8")

    model = resolve_model(f"scripted:{script}")

    assert isinstance(model, ScriptedModel) and model.model_name == "scripted:demo.yaml"
    assert resolve_model(f"scripted:{script}") is not model


def test_a_local_spec_names_its_gguf_and_is_loaded_once_per_process(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")

    model = resolve_model(f"local:{gguf}")

    assert isinstance(model, LocalModel) and model.gguf_path == gguf and not model.loaded
    assert resolve_model(f"local:{gguf}") is model


def test_openai_and_gemini_specs_need_a_model_and_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="Name the model: `openai:MODEL`"):
        resolve_model("openai")
    with pytest.raises(ConfigError, match="Set OPENAI_API_KEY"):
        resolve_model("openai:gpt-4o-mini")
    with pytest.raises(ConfigError, match="Set GEMINI_API_KEY"):
        resolve_model("gemini:gemini-2.5-flash")

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    openai, gemini = resolve_model("openai:qwen"), resolve_model("gemini:gemini-2.5-flash")

    assert (openai.model_name, openai.base_url) == ("qwen", "http://127.0.0.1:9/v1/")
    assert gemini.base_url == "https://generativelanguage.googleapis.com/v1beta/openai/"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope:x", "Unknown model 'nope:x'. Use one of: local, local:/path.gguf"),
        ("scripted", "Give the script: `scripted:/path/to/script.yaml`"),
        ("local:/no/such/model.gguf", "GGUF file not found: /no/such/model.gguf"),
    ],
)
def test_a_bad_spec_says_what_to_write(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_model(spec)


def test_the_list_shows_every_kind_and_what_each_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = {info.spec.partition(":")[0] for info in available_models()}
    assert listed == set(MODEL_KINDS)
    by_spec = {info.spec: info for info in available_models()}
    assert (
        not by_spec["openai:MODEL"].available and by_spec["openai:MODEL"].note == "set OPENAI_API_KEY / OPENAI_BASE_URL"
    )
    assert by_spec["scripted:PATH"].available

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    by_spec = {info.spec: info for info in available_models()}
    assert by_spec["openai:MODEL"].available and by_spec["openai:MODEL"].note == ""
    assert by_spec["gemini:MODEL"].available and by_spec["gemini:MODEL"].note == ""

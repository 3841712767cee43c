"""Model specs: `kind[:arg]` strings (see the package docstring) resolved to models, and what each kind needs here."""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic_ai.models import Model

from ..runtime import ConfigError
from ._gguf import DEFAULT_GGUF, ensure_default_gguf
from ._local import STEP_MAX_TOKENS, LocalModel
from ._prefix_cache import PrefixCache
from ._scripted import ScriptedModel, load_script

__all__ = ["MODEL_KINDS", "ModelInfo", "available_models", "prepare_model", "resolve_model"]

GEMINI_OPENAI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"


@dataclass(frozen=True)
class ModelInfo:
    """One line of `consulta models`: a spec form, what it runs, whether it can be used here and, if not, why."""

    spec: str
    description: str
    available: bool
    note: str = ""


_cache: dict[str, Model] = {}
_lock = threading.Lock()


def resolve_model(spec: str, *, models_dir: Path | None = None) -> Model:
    """The model for `spec`; `ConfigError` saying what to write or set when it cannot be made.

    Local models are loaded once per process and shared by spec (the first call's `models_dir` holds for the
    process); the others are made anew on each call. `models_dir` is where the embedded GGUF is joined (default: the
    settings' models directory).
    """
    kind, _, arg = spec.partition(":")
    with _lock:
        if spec in _cache:
            return _cache[spec]
        make = _MAKERS.get(kind)
        if make is None:
            raise ConfigError(
                f"Unknown model {spec!r}. Use one of: local, local:/path.gguf, openai:MODEL, gemini:MODEL, scripted:PATH."
            )
        model = make(arg, models_dir)
        if kind == "local":
            _cache[spec] = model
        return model


def prepare_model(
    spec: str,
    *,
    models_dir: Path | None = None,
    joining: Callable[[int, int], None] | None = None,
    loading: Callable[[], None] | None = None,
) -> Model:
    """Make the model for `spec` ready before the first run: join the embedded GGUF's parts (reporting bytes done and
    total to `joining`), then load it (`loading` is called first). Blocking (seconds to minutes for a local model):
    call it off the event loop."""
    kind, _, arg = spec.partition(":")
    if kind == "local" and not arg and not os.environ.get("CONSULTA_GGUF") and models_dir is not None:
        ensure_default_gguf(models_dir, progress=joining)
    model = resolve_model(spec, models_dir=models_dir)
    load = getattr(model, "load", None)
    if callable(load):
        if loading is not None:
            loading()
        load()
    return model


def _local(arg: str, models_dir: Path | None) -> Model:
    if models_dir is None:
        from ..config import Settings

        models_dir = Settings.from_env().models_dir
    # Saved prompt prefixes live beside the weights in the data dir, shared by every process using them.
    return LocalModel(_gguf_path(arg, models_dir), prefix_cache=PrefixCache(models_dir / "prefix-cache"))


def _gguf_path(arg: str, models_dir: Path | None) -> Path:
    """The GGUF named by the spec or `CONSULTA_GGUF`, else the embedded one (joined into `models_dir` if needed)."""
    explicit = arg or os.environ.get("CONSULTA_GGUF")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"GGUF file not found: {path}.")
        return path
    if models_dir is None:
        from ..config import Settings

        models_dir = Settings.from_env().models_dir
    return ensure_default_gguf(models_dir)


def _openai(arg: str, models_dir: Path | None) -> Model:
    _require_model_name("openai", arg)
    base_url, key = _openai_env()
    if not key and not base_url:
        raise ConfigError("Set OPENAI_API_KEY (and OPENAI_BASE_URL for a server other than OpenAI's).")
    return _openai_compatible(arg, base_url=base_url, api_key=key or "not-needed")


def _gemini(arg: str, models_dir: Path | None) -> Model:
    _require_model_name("gemini", arg)
    key = _gemini_key()
    if not key:
        raise ConfigError("Set GEMINI_API_KEY to use a Gemini model.")
    return _openai_compatible(arg, base_url=GEMINI_OPENAI_BASE_URL, api_key=key)


def _require_model_name(kind: str, name: str) -> None:
    if not name:
        raise ConfigError(f"Name the model: `{kind}:MODEL`, e.g. `openai:gpt-4o-mini`.")


def _openai_compatible(name: str, *, base_url: str | None, api_key: str) -> Model:
    """A chat model on an OpenAI-compatible server, stepping down to the `tool_choice` forms the server takes."""
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.settings import ModelSettings

    from ._tool_choice_fallback import ToolChoiceFallbackModel

    provider = OpenAIProvider(base_url=base_url, api_key=api_key)
    streams = os.environ.get("OPENAI_STREAM", "1").strip().lower() not in ("0", "false", "no")
    # each step capped as the embedded model's is (a request's own max_tokens still wins)
    chat = OpenAIChatModel(name, provider=provider, settings=ModelSettings(max_tokens=STEP_MAX_TOKENS))
    return ToolChoiceFallbackModel(chat, server=str(provider.base_url), streams=streams)


def _scripted(arg: str, models_dir: Path | None) -> Model:
    if not arg:
        raise ConfigError("Give the script: `scripted:/path/to/script.yaml`.")
    return ScriptedModel(load_script(Path(arg)), name=f"scripted:{Path(arg).name}")


_MAKERS: dict[str, Callable[[str, Path | None], Model]] = {
    "local": _local,
    "openai": _openai,
    "gemini": _gemini,
    "scripted": _scripted,
}
MODEL_KINDS = tuple(_MAKERS)


def _openai_env() -> tuple[str | None, str | None]:
    """(OPENAI_BASE_URL, OPENAI_API_KEY), each None when unset or empty."""
    return os.environ.get("OPENAI_BASE_URL") or None, os.environ.get("OPENAI_API_KEY") or None


def _gemini_key() -> str | None:
    return os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY") or None


def available_models() -> list[ModelInfo]:
    """What `consulta models` lists: each kind, whether it can be used here, and why not."""
    local_ok = importlib.util.find_spec("llama_cpp") is not None
    parts_ok = importlib.util.find_spec(DEFAULT_GGUF.part_packages[0]) is not None
    gguf = os.environ.get("CONSULTA_GGUF")
    openai_ok = any(_openai_env())
    gemini_ok = _gemini_key() is not None
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
            openai_ok,
            "" if openai_ok else "set OPENAI_API_KEY / OPENAI_BASE_URL",
        ),
        ModelInfo(
            "gemini:MODEL",
            "Google Gemini (GEMINI_API_KEY)",
            gemini_ok,
            "" if gemini_ok else "set GEMINI_API_KEY",
        ),
        ModelInfo("scripted:PATH", "test double replaying a script file", True),
    ]

"""Model backends, chosen by one setting (`CONSULTA_MODEL`, `--model`).

| spec | model |
|---|---|
| `local` (default) | the embedded Qwen2.5-Coder-1.5B-Instruct GGUF, in process via llama.cpp (`CONSULTA_GGUF` for another file) |
| `local:/path/to/model.gguf` | any GGUF you have |
| `openai:MODEL` | any OpenAI-compatible server: `OPENAI_BASE_URL`, `OPENAI_API_KEY` (OpenAI, DeepSeek, DashScope, Ollama, vLLM…) |
| `gemini:MODEL` | Google Gemini through its OpenAI-compatible endpoint: `GEMINI_API_KEY` |
| `scripted:PATH` | a test double replaying a YAML/JSON script (tests and exact offline demos) |

Inside: `_specs` resolves a spec to a model; `_gguf` ships and checks the embedded GGUF; `_local` is the llama.cpp
model (with `_schema`, `_grammar`, `_rendering`, `_parsing` for the parts of its step, and `_prefix_cache`, the
system-message states it saves in the data dir for later runs and processes, and `_llama_cpu`, what llama.cpp must
leave off on this CPU); `_tool_choice_fallback` the OpenAI-compatible model's step down from a `tool_choice` its
server refuses; `openai_server` starts llama.cpp's own OpenAI-compatible server (`python -m
consulta.models.openai_server`); `_scripted` the test double.
"""

from __future__ import annotations

from ._local import LocalModel, StepStats
from ._prefix_cache import PrefixCache
from ._scripted import ScriptedModel, load_script
from ._specs import MODEL_KINDS, ModelInfo, available_models, prepare_model, resolve_model

__all__ = [
    "MODEL_KINDS",
    "LocalModel",
    "ModelInfo",
    "PrefixCache",
    "ScriptedModel",
    "StepStats",
    "available_models",
    "load_script",
    "prepare_model",
    "resolve_model",
]

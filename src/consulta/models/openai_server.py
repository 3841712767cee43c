"""llama.cpp's own OpenAI-compatible server, started so that it runs on this machine's CPU.

`python -m consulta.models.openai_server [llama_cpp.server arguments]` is `python -m llama_cpp.server …` (the
`server` extra) with llama.cpp's extra buffer types left off where the CPU advertises AMX that it cannot run (see
`_llama_cpu`). Without `--model` it serves the embedded GGUF (joined into the settings' models directory if needed),
by default on every core with a 16384-token context (twice the embedded model's 8192: this chat format states the tools'
schemas in every request, and a turn of several look-ups outgrew 8192 there), and without `--chat_format` with tool
calls in the chat format `chatml-function-calling-results`: llama-cpp-python's
`chatml-function-calling` with tool results shown to the model and `tool_choice="required"` refused in words
(see `_openai_server_format`). For example, the embedded model behind `--model openai:NAME`::

    python -m consulta.models.openai_server --port 8000
    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_STREAM=0 consulta chat ln2 --model openai:qwen -p "Any HeLa left?"

`OPENAI_STREAM=0`: this format streams no tool calls, so Consulta asks it for whole responses.
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Run the server with `argv` (default: the command line) until it is stopped."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        import llama_cpp
        from llama_cpp.server.__main__ import main as serve
    except ImportError:
        raise SystemExit("llama.cpp's server is not installed: install Consulta's `server` extra.") from None
    from llama_cpp import llama_chat_format

    from ._llama_cpu import without_extra_buffer_types
    from ._openai_server_format import CHAT_FORMAT, register_chat_format

    if not _given(args, "--model"):
        from ..config import Settings
        from ._gguf import ensure_default_gguf

        args = ["--model", str(ensure_default_gguf(Settings.from_env().models_dir)), *args]
    cores = str(os.cpu_count() or 1)
    # Every core, as the embedded model runs; the context twice its window, for the tools stated in each request
    # (llama-cpp-python's server: 2048, half the cores)
    defaults = {"--chat_format": CHAT_FORMAT, "--n_ctx": "16384", "--n_threads": cores, "--n_threads_batch": cores}
    args = [*(word for flag, value in defaults.items() if not _given(args, flag) for word in (flag, value)), *args]
    register_chat_format(llama_chat_format)
    sys.argv = ["llama_cpp.server", *args]
    with without_extra_buffer_types(llama_cpp):  # the model loads inside, as the server starts
        serve()  # type: ignore[no-untyped-call]


def _given(args: list[str], flag: str) -> bool:
    return any(arg == flag or arg.startswith(f"{flag}=") for arg in args)


if __name__ == "__main__":
    main()

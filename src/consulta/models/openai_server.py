"""llama.cpp's own OpenAI-compatible server, started so that it runs on this machine's CPU.

`python -m consulta.models.openai_server [llama_cpp.server arguments]` is `python -m llama_cpp.server …` (the
`server` extra) with llama.cpp's extra buffer types left off where the CPU advertises AMX that it cannot run (see
`_llama_cpu`). Without `--model` it serves the embedded GGUF (joined into the settings' models directory if needed).
For example, the embedded model behind `--model openai:NAME`::

    python -m consulta.models.openai_server --chat_format chatml-function-calling --port 8000
    OPENAI_BASE_URL=http://127.0.0.1:8000/v1 consulta chat ln2 --model openai:qwen -p "Any HeLa left?"
"""

from __future__ import annotations

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
    from ._llama_cpu import without_extra_buffer_types

    if "--model" not in args:
        from ..config import Settings
        from ._gguf import ensure_default_gguf

        args = ["--model", str(ensure_default_gguf(Settings.from_env().models_dir)), *args]
    sys.argv = ["llama_cpp.server", *args]
    with without_extra_buffer_types(llama_cpp):  # the model loads inside, as the server starts
        serve()  # type: ignore[no-untyped-call]


if __name__ == "__main__":
    main()

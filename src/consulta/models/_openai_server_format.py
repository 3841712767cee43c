"""The chat format `python -m consulta.models.openai_server` serves tool calls with: llama-cpp-python's
`chatml-function-calling` with the two gaps that stop a tool-calling conversation closed.

- Its prompt template has no branch for the `tool` role: a tool's result is rendered as an empty `tool` turn, so the
  model answers without ever reading what its tools returned. Here each run of tool results goes in as one user turn
  of `<tool_response>` blocks, the form Qwen2.5 (the embedded model) was trained to read.
- The template escapes HTML in every message (`&#34;` for each quote of a tool call's JSON arguments, `&#39;` for
  each apostrophe). Here text goes in marked safe, so the model reads it as it was written.
- `tool_choice="required"` fails an assertion inside it (HTTP 500 with an empty message, which no client can act on).
  Here it is a named tool when only one is offered, else an HTTP 400 saying what to send instead, which Consulta's
  OpenAI backend answers by stepping down to `"auto"` with the choice as an instruction (`_tool_choice_fallback`).
- With `tool_choice="auto"`, a model that chooses to write a message writes nothing: after `message:` the template's
  follow-up grammar allows only a tool's name or the end (an empty reply, which a client asks again for, forever).
  Here an empty message of a whole (not streamed) response is written again as `tool_choice="none"` writes one.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

__all__ = ["CHAT_FORMAT", "register_chat_format"]

CHAT_FORMAT = "chatml-function-calling-results"


def register_chat_format(chat_format_module: ModuleType) -> None:
    """Register `CHAT_FORMAT` with llama-cpp-python (`llama_cpp.llama_chat_format`), replacing an earlier one."""
    from fastapi import HTTPException

    base = chat_format_module.chatml_function_calling

    def handler(llama: Any, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        tools, choice = kwargs.get("tools") or [], kwargs.get("tool_choice")
        if choice == "required":
            if len(tools) != 1:
                raise HTTPException(
                    400,
                    f"tool_choice 'required' is not supported by {CHAT_FORMAT} with {len(tools)} tools: "
                    "send tool_choice 'auto', or name one tool.",
                )
            kwargs["tool_choice"] = {"type": "function", "function": {"name": tools[0]["function"]["name"]}}
        shown = prompt_messages(messages)
        response = base(llama, messages=shown, **kwargs)
        if tools and kwargs.get("tool_choice") in (None, "auto") and not kwargs.get("stream") and _empty(response):
            response = base(llama, messages=shown, **{**kwargs, "tool_choice": "none"})
        return response

    registry = chat_format_module.LlamaChatCompletionHandlerRegistry()
    registry.register_chat_completion_handler(CHAT_FORMAT, handler, overwrite=True)


def prompt_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` as the template should show them: each run of `tool` messages joined into one user message of
    `<tool_response>` blocks, and every text marked safe from the template's HTML escaping."""
    from markupsafe import Markup

    out: list[dict[str, Any]] = []
    after_tool = False
    for message in messages:
        content = message.get("content")
        if message.get("role") != "tool":
            shown = {**message, "content": Markup(content) if isinstance(content, str) else content}
            if message.get("tool_calls"):
                shown["tool_calls"] = [_shown_call(call, Markup) for call in message["tool_calls"]]
            out.append(shown)
            after_tool = False
            continue
        block = f"<tool_response>\n{content or ''}\n</tool_response>"
        out.append({"role": "user", "content": Markup(f"{out.pop()['content']}\n{block}" if after_tool else block)})
        after_tool = True
    return out


def _empty(response: Any) -> bool:
    """Whether a whole chat completion's first choice is a message with no text and no tool call."""
    message = (response.get("choices") or [{}])[0].get("message") or {}
    return not (message.get("content") or "").strip() and not message.get("tool_calls")


def _shown_call(call: dict[str, Any], safe: type[str]) -> dict[str, Any]:
    function = call.get("function") or {}
    return {**call, "function": {**function, "arguments": safe(function.get("arguments", ""))}}

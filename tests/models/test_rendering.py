"""What the local model is shown: the history as chat-template messages, the tool list, the GGUF's template."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pydantic_ai.exceptions import PydanticAIDeprecationWarning
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

from consulta.models._rendering import chat_template_formatter, describe_tools, render_messages
from consulta.runtime import ConfigError

# ---- the system prompt ----------------------------------------------------------------------------------------------


def test_tool_list_is_compact(tool_defs: list[ToolDefinition]) -> None:
    text = describe_tools(tool_defs)
    lines = text.splitlines()
    assert lines[0] == "# Tools"
    assert "query_inventory(cell_line?: string, short_name?: string)" in lines
    assert any(
        line.startswith("move_vials(positions: list[{box: integer, slot: integer, note?: string}]") for line in lines
    )
    assert "  when: the day of the move." in lines
    assert '"copy"|"move"' in text
    assert len(text) < 900


# ---- rendering the history ------------------------------------------------------------------------------------------


def _history() -> list[Any]:
    call = ToolCallPart("query_inventory", {"cell_line": "K562"}, tool_call_id="c1")
    return [
        ModelRequest(parts=[SystemPromptPart("Be brief."), UserPromptPart("我需要K562细胞")]),
        ModelResponse(parts=[call]),
        ModelRequest(parts=[ToolReturnPart("query_inventory", [{"box": 3}], tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("Box 3.")]),
        ModelRequest(
            parts=[
                UserPromptPart("And HeLa?"),
                SystemPromptPart("Mid-run note."),
                ToolReturnPart("query_inventory", "bad args", tool_call_id="c2", outcome="retried"),
                RetryFeedbackPart("say more", retry=RetryInfo(cause="no_output")),
            ]
        ),
    ]


def test_history_renders_as_chat_template_messages() -> None:
    chat = render_messages(_history(), system="# Tools\n...")

    assert chat[0] == {"role": "system", "content": "Be brief.\n\n# Tools\n..."}
    assert chat[1] == {"role": "user", "content": "我需要K562细胞"}
    assert chat[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "query_inventory", "arguments": {"cell_line": "K562"}},
            }
        ],
    }
    assert chat[3] == {"role": "tool", "content": '[{"box":3}]'}
    assert chat[4] == {"role": "assistant", "content": "Box 3."}
    assert chat[5] == {"role": "user", "content": "And HeLa?"}
    assert chat[6] == {"role": "system", "content": "Mid-run note."}
    assert chat[7] == {"role": "tool", "content": '{"error":"bad args"}'}
    assert chat[8]["role"] == "user" and "say more" in chat[8]["content"]


def test_legacy_retry_prompt_parts_still_render() -> None:
    with pytest.warns(PydanticAIDeprecationWarning):
        tool_retry = RetryPromptPart("bad args", tool_name="q", tool_call_id="c2")
        plain_retry = RetryPromptPart("try again")
    chat = render_messages([ModelRequest(parts=[tool_retry, plain_retry])], system=None)
    assert [m["role"] for m in chat] == ["tool", "user"]
    assert "bad args" in chat[0]["content"] and "try again" in chat[1]["content"]


def test_earlier_turns_render_identically_when_history_grows() -> None:
    history = _history()
    for end in range(1, len(history)):
        shorter = render_messages(history[:end], system="S")
        assert render_messages(history, system="S")[: len(shorter)] == shorter


# ---- the GGUF's chat template ---------------------------------------------------------------------------------------


def _gguf(template: str | None) -> Any:
    """Stands in for a loaded `llama_cpp.Llama`: its metadata and special tokens, as the formatter reads them."""
    texts = {1: "<s>", 2: "</s>"}
    metadata = {} if template is None else {"tokenizer.chat_template": template}
    return SimpleNamespace(
        metadata=metadata,
        token_eos=lambda: 2,
        token_bos=lambda: 1,
        _model=SimpleNamespace(token_get_text=texts.__getitem__),
    )


def test_the_ggufs_own_template_renders_the_chat() -> None:
    pytest.importorskip("llama_cpp")
    template = "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}{{ eos_token }}"
    formatter = chat_template_formatter(_gguf(template), gguf_name="x.gguf")

    prompt = formatter(messages=render_messages(_history()[:1], system="S")).prompt

    assert prompt == "<s>[system] Be brief.\n\nS\n[user] 我需要K562细胞\n</s>"


def test_a_gguf_without_a_chat_template_is_refused() -> None:
    pytest.importorskip("llama_cpp")
    with pytest.raises(ConfigError, match="base.gguf has no chat template.*instruct"):
        chat_template_formatter(_gguf(None), gguf_name="base.gguf")

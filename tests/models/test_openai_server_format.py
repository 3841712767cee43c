"""The chat format `python -m consulta.models.openai_server` serves (`_openai_server_format`), on llama-cpp-python's
real `chatml-function-calling` prompt template, with a test double in place of the loaded model that keeps the
prompt it is given (no model is loaded)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("llama_cpp", reason="the `local` extra")
from fastapi import HTTPException  # noqa: E402
from llama_cpp import llama_chat_format  # noqa: E402

from consulta.models._openai_server_format import CHAT_FORMAT, register_chat_format  # noqa: E402


class PromptKeepingLlamaDouble:
    """Test double of `llama_cpp.Llama`: keeps each prompt and completes it with `reply`, then `replies` in turn."""

    verbose = False

    def __init__(self, reply: str, *replies: str) -> None:
        self.replies = [reply, *replies]
        self.prompts: list[str] = []

    def create_completion(self, *, prompt: str, **_: Any) -> dict[str, Any]:
        """Completes with the next of its replies (the last one again when they run out)."""
        self.prompts.append(prompt)
        text = self.replies[min(len(self.prompts), len(self.replies)) - 1]
        choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": "stop"}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        return {"id": "1", "object": "text_completion", "created": 0, "model": "m", "choices": [choice], "usage": usage}


def _tool(name: str) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {"line": {"type": "string"}}, "required": ["line"]}
    return {"type": "function", "function": {"name": name, "description": name, "parameters": parameters}}


CALLS = [
    {"id": f"c{i}", "type": "function", "function": {"name": "count_vials", "arguments": f'{{"line": "{line}"}}'}}
    for i, line in enumerate(["HeLa", "K562"])
]
CONVERSATION = [
    {"role": "system", "content": "You keep the lab's stock."},
    {"role": "user", "content": "HeLa and K562?"},
    {"role": "assistant", "content": "", "tool_calls": CALLS},
    {"role": "tool", "tool_call_id": "c0", "content": "HeLa: 7 vials in box 3"},
    {"role": "tool", "tool_call_id": "c1", "content": "K562: none left"},
]


@pytest.fixture(scope="module")
def handler() -> Any:
    register_chat_format(llama_chat_format)
    return llama_chat_format.get_chat_completion_handler(CHAT_FORMAT)


def test_tool_results_reach_the_prompt_as_one_user_turn(handler: Any) -> None:
    llama = PromptKeepingLlamaDouble("message:\n7 HeLa vials; no K562.")
    handler(llama, messages=CONVERSATION, tools=[_tool("count_vials")], tool_choice="none")
    prompt = llama.prompts[0]
    expected = "<|im_start|>user\n<tool_response>\nHeLa: 7 vials in box 3\n</tool_response>\n<tool_response>\n"
    assert expected + "K562: none left\n</tool_response><|im_end|>" in prompt
    assert "<|im_start|>tool" not in prompt and "&#" not in prompt
    assert "You keep the lab's stock." in prompt and 'functions.count_vials:\n{"line": "HeLa"}' in prompt


def test_stock_chatml_function_calling_drops_them_and_escapes_text(handler: Any) -> None:
    """Why the format exists: the stock template renders a tool result as an empty turn, and escapes HTML."""
    llama = PromptKeepingLlamaDouble("7 HeLa vials")
    llama_chat_format.chatml_function_calling(
        llama, messages=CONVERSATION, tools=[_tool("count_vials")], tool_choice="none"
    )
    assert "HeLa: 7 vials" not in llama.prompts[0]
    assert "lab&#39;s stock" in llama.prompts[0] and "{&#34;line&#34;: &#34;HeLa&#34;}" in llama.prompts[0]


def test_required_with_one_tool_calls_it(handler: Any) -> None:
    llama = PromptKeepingLlamaDouble('{"line": "HeLa"}')
    done = handler(llama, messages=CONVERSATION[:2], tools=[_tool("count_vials")], tool_choice="required")
    assert llama.prompts[0].endswith("functions.count_vials:\n")
    assert done["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "count_vials"


def test_required_with_several_tools_is_a_400_that_says_what_to_send(handler: Any) -> None:
    llama = PromptKeepingLlamaDouble("")
    tools = [_tool("count_vials"), _tool("discard_vial")]
    with pytest.raises(HTTPException) as refused:
        handler(llama, messages=CONVERSATION[:2], tools=tools, tool_choice="required")
    assert refused.value.status_code == 400 and "send tool_choice 'auto'" in str(refused.value.detail)
    assert not llama.prompts


def test_auto_choosing_a_message_writes_one(handler: Any) -> None:
    """Stock `auto`: after choosing `message:` the template's grammar allows only a tool's name or the end, so the
    message comes back empty; here it is written again as `tool_choice="none"` writes it."""
    llama = PromptKeepingLlamaDouble("message", "", "7 HeLa vials; no K562.")
    done = handler(llama, messages=CONVERSATION, tools=[_tool("count_vials")], tool_choice="auto")
    assert done["choices"][0]["message"]["content"] == "7 HeLa vials; no K562."
    assert len(llama.prompts) == 3 and llama.prompts[1].endswith("message:\n")


def test_auto_calling_a_tool_is_kept(handler: Any) -> None:
    llama = PromptKeepingLlamaDouble("functions.count_vials", '{"line": "HeLa"}', "<|im_end|>")
    done = handler(llama, messages=CONVERSATION[:2], tools=[_tool("count_vials")], tool_choice="auto")
    assert done["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "count_vials"

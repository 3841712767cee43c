"""A run's conversation as pydantic-ai keeps it: the codec the store uses (one message a row) and the questions the
runtime asks of it (the turn the run is in, its steps, its calls and their results)."""

from __future__ import annotations

from typing import Any, cast

from pydantic import TypeAdapter
from pydantic_ai import ModelMessagesTypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

__all__ = [
    "by_first_look",
    "FIRST_LOOK_CALL",
    "CODE_MODEL",
    "FIRST_LOOK_MODEL",
    "called_this_turn",
    "carry_over",
    "count_steps",
    "dump_each",
    "dump_messages",
    "errors_this_turn",
    "find_call",
    "is_refusal",
    "load_messages",
    "looked_first",
    "pending_tool_calls",
    "person_declined_this_turn",
    "repeats_earlier_call",
    "repeats_this_turn",
    "returned_call_ids",
    "this_turn",
    "turn_words",
]

FIRST_LOOK_MODEL = "consulta:first-look"
"""The model name on a response the runtime made itself (the turn's first look)."""
CODE_MODEL = "consulta:code"
"""The model name on a reply code gave in the model's place (a look-up, a staged plan, a turn-ending tool)."""
FIRST_LOOK_CALL = "look_"
"""How the id of a call the runtime made itself (the turn's first look) begins."""


def by_first_look(tool_call_id: str) -> bool:
    """Whether the call `tool_call_id` was the runtime's own (the turn's first look), not the model's."""
    return tool_call_id.startswith(FIRST_LOOK_CALL)


def dump_messages(messages: list[ModelMessage]) -> str:
    return ModelMessagesTypeAdapter.dump_json(messages).decode()


_MESSAGE: TypeAdapter[ModelMessage] = TypeAdapter(ModelMessage)


def dump_each(messages: list[ModelMessage]) -> list[str]:
    """Each message as its own JSON (the store keeps a conversation one message a row)."""
    return [_MESSAGE.dump_json(m).decode() for m in messages]


def load_messages(blob: str) -> list[ModelMessage]:
    return list(ModelMessagesTypeAdapter.validate_json(blob))


def pending_tool_calls(messages: list[ModelMessage]) -> list[ToolCallPart]:
    """The tool calls of the last response that have no result yet (a run paused on them)."""
    if not messages or not isinstance(messages[-1], ModelResponse):
        return []
    return list(messages[-1].tool_calls)


def carry_over(messages: list[ModelMessage]) -> list[ModelMessage]:
    """What a new turn of a thread carries from the earlier ones: the user's words and the agent's replies.

    Tool calls and their results stay on record (checkpoints, tool call rows) but are not sent again: a small model's
    context is short and every token of it is paid for on every step.
    """
    kept: list[ModelMessage] = []
    for i, message in enumerate(messages):
        if _refused(messages, i):
            continue  # a reply the checks sent back was never shown
        if isinstance(message, ModelRequest):
            prompts = [p for p in message.parts if isinstance(p, UserPromptPart)]
            if prompts:
                kept.append(ModelRequest(parts=prompts))
        elif isinstance(message, ModelResponse):
            texts = [p for p in message.parts if isinstance(p, TextPart) and p.content.strip()]
            if texts and not message.tool_calls:
                kept.append(ModelResponse(parts=texts, model_name=message.model_name))
    return kept


def _refused(messages: list[ModelMessage], i: int) -> bool:
    """Whether message `i` is a final text the reply checks refused (the next request carries the reason)."""
    after = messages[i + 1] if i + 1 < len(messages) else None
    return (
        isinstance(messages[i], ModelResponse)
        and isinstance(after, ModelRequest)
        and any(is_refusal(p) for p in after.parts)
    )


def is_refusal(part: Any) -> bool:
    """Whether `part` sends a final text back: a reply check's reason (ModelRetry from an output validator)."""
    if isinstance(part, RetryFeedbackPart):
        return part.retry.cause == "model_retry"
    return isinstance(part, RetryPromptPart) and part.tool_name is None


def count_steps(messages: list[ModelMessage]) -> int:
    """The number of model responses: the step a conversation has reached."""
    return sum(isinstance(m, ModelResponse) for m in messages)


def returned_call_ids(messages: list[ModelMessage]) -> set[str]:
    """Ids of the tool calls whose results are in the conversation."""
    return {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }


def this_turn(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The messages since the user's last words (the turn the run is in)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            return messages[i:]
    return list(messages)


def turn_words(messages: list[ModelMessage]) -> str | None:
    """What the user wrote to start this turn (None before any)."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):  # the last words, should two turns' run together in one request
                if isinstance(part, UserPromptPart):
                    return (
                        part.content
                        if isinstance(part.content, str)
                        else " ".join(str(c) for c in part.content if isinstance(c, str))
                    )
    return None


def called_this_turn(messages: list[ModelMessage]) -> bool:
    """Whether the model itself called a tool in this turn (the runtime's first look is not the model's step)."""
    return any(
        isinstance(m, ModelResponse) and m.tool_calls and m.model_name != FIRST_LOOK_MODEL for m in this_turn(messages)
    )


def looked_first(messages: list[ModelMessage]) -> bool:
    """Whether the turn so far is its first look and nothing else: the model has not taken a step of its own."""
    responses = [m for m in this_turn(messages) if isinstance(m, ModelResponse)]
    return bool(responses) and all(m.model_name == FIRST_LOOK_MODEL for m in responses)


def repeats_earlier_call(
    messages: list[ModelMessage], call: ToolCallPart, args: dict[str, Any], defaults: dict[str, Any] | None = None
) -> bool:
    """Whether a call repeats one made since the user's last words (small models loop on a call): the same arguments,
    once each side's are completed with the parameters' `defaults` (what the model left out means the default)."""
    meant = _without_defaults({**(defaults or {}), **args})
    for message in reversed(messages):
        if isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts):
            return False
        if isinstance(message, ModelResponse):
            for earlier in message.tool_calls:
                if earlier.tool_call_id != call.tool_call_id and earlier.tool_name == call.tool_name:
                    before = earlier.args_as_dict()
                    if before == args or _without_defaults({**(defaults or {}), **before}) == meant:
                        return True
    return False


def _without_defaults(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if v not in (None, False, [], {})}


def errors_this_turn(messages: list[ModelMessage]) -> list[str]:
    """The error codes of the tool results since the user's last message."""
    codes: list[str] = []
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            if any(isinstance(p, UserPromptPart) for p in message.parts):
                break
            results = [
                cast(dict[str, Any], p.content)
                for p in message.parts
                if isinstance(p, ToolReturnPart) and isinstance(p.content, dict)
            ]
            codes += [str(r["error_code"]) for r in results if r.get("error_code")]
    return codes


def repeats_this_turn(messages: list[ModelMessage]) -> int:
    return errors_this_turn(messages).count("repeated_call")


_NOT_ANSWERED = frozenset({"question_cancelled", "question_timeout", "question_unavailable"})


def person_declined_this_turn(messages: list[ModelMessage]) -> bool:
    """Whether a question of this turn went unanswered (cancelled, timed out, nobody to answer): the runtime then asks
    no question of its own in the same turn — it would ask again what the person just left open."""
    return not _NOT_ANSWERED.isdisjoint(errors_this_turn(messages))


def find_call(messages: list[ModelMessage], tool_call_id: str) -> ToolCallPart | None:
    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            for call in message.tool_calls:
                if call.tool_call_id == tool_call_id:
                    return call
    return None

"""One typed answer from a model: the output validated (and checked), asked again with the errors, bounded in time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic_ai import Agent as PaiAgent
from pydantic_ai import DeferredToolRequests
from pydantic_ai.exceptions import ModelRetry, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from ._errors import ToolError
from ._messages import count_steps, dump_messages
from ._tools import ToolCallContext

__all__ = ["TypedAnswer", "typed_answer"]


@dataclass(frozen=True)
class TypedAnswer:
    """A model's structured answer: the validated output, how many answers it took, the conversation (JSON)."""

    output: BaseModel
    attempts: int
    messages: list[ModelMessage]

    @property
    def messages_json(self) -> str:
        """The conversation as one JSON array."""
        return dump_messages(self.messages)


async def typed_answer(
    *,
    model: Model,
    instructions: str,
    prompt: str,
    output_type: type[BaseModel],
    check: Callable[[Any], None] | None = None,
    retries: int = 2,
    within: ToolCallContext | None = None,
    timeout: float | None = None,
) -> TypedAnswer:
    """Ask `model` for one answer of `output_type`. An answer that does not validate, or that `check` refuses (by
    raising ValueError with the reason), is sent back with the errors and asked again, up to `retries` times; then
    ToolError `invalid_expert_output`.

    Asked `within` a tool call, the answer's model requests count against that run's usage and limits (a nested
    run); when they would pass the limits: ToolError `usage_limit_exceeded`.

    With a `timeout` (seconds), the whole answer, tries included, is given up after that long: TimeoutError. The
    model is told too (pydantic-ai's `timeout` setting), so that its own request stops rather than running on
    unread: a remote model's HTTP request, the local model's generation (`LocalModel` stops at its next token)."""
    agent: PaiAgent[None, Any] = PaiAgent(
        model, instructions=instructions, output_type=output_type, retries={"tools": 1, "output": retries}
    )

    if check is not None:
        agent.output_validator(_checked_by(check))

    usage = within.usage if within is not None else None  # a nested run shares the run's usage and limits
    settings = ModelSettings(timeout=timeout) if timeout is not None else None
    try:
        async with asyncio.timeout(timeout):
            result = await agent.run(
                prompt,
                model_settings=settings,
                usage=usage,
                usage_limits=within.usage_limits if within is not None and usage is not None else None,
            )
    except TimeoutError:
        if timeout is None:
            raise
        raise TimeoutError(f"The model gave no {output_type.__name__} within {timeout:g} s.") from None
    except UsageLimitExceeded as error:
        raise ToolError(
            "usage_limit_exceeded",
            f"The consultation would pass the run's usage limits: {error}",
            hint="Work with what you have: submit your answer now.",
        ) from None
    except UnexpectedModelBehavior as error:
        raise ToolError(
            "invalid_expert_output",
            f"The expert's answer did not fit {output_type.__name__} after {retries + 1} tries: {error.message}",
            hint="Ask a narrower question, or consult another expert.",
        ) from None
    messages = result.all_messages()
    return TypedAnswer(output=result.output, attempts=count_steps(messages), messages=messages)


def _checked_by(check: Callable[[Any], None]) -> Callable[[Any], Any]:
    """An output validator from a check that raises ValueError saying why (the model is asked again with it)."""

    def checked(output: Any) -> Any:
        if isinstance(output, DeferredToolRequests):
            return output
        try:
            check(output)
        except ValueError as error:
            raise ModelRetry(str(error)) from None
        return output

    return checked

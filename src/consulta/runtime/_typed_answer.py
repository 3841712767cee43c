"""What a model answers, bounded in time: one typed answer (the output validated and checked, asked again with the
errors) or its probability of each of a few labels (one forward pass, where the model can give it)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel
from pydantic_ai import Agent as PaiAgent
from pydantic_ai import DeferredToolRequests, capture_run_messages
from pydantic_ai.exceptions import ModelRetry, UnexpectedModelBehavior, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from ._errors import ToolError
from ._messages import count_steps, dump_messages
from ._tools import ToolCallContext

__all__ = ["LabelReader", "StateReader", "TypedAnswer", "label_probabilities", "last_state", "typed_answer"]


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
        with capture_run_messages() as tried:
            async with _within(timeout, output_type.__name__):
                result = await agent.run(
                    prompt,
                    model_settings=settings,
                    usage=usage,
                    usage_limits=within.usage_limits if within is not None and usage is not None else None,
                )
    except UsageLimitExceeded as error:
        raise ToolError(
            "usage_limit_exceeded",
            f"The consultation would pass the run's usage limits: {error}",
            hint="Work with what you have: submit your answer now.",
        ) from None
    except UnexpectedModelBehavior as error:
        raise ToolError(
            "invalid_expert_output",
            f"The expert's answer did not fit {output_type.__name__} after {retries + 1} tries: {error.message}"
            + _last_refusal(tried),
            hint="Ask a narrower question, or consult another expert.",
        ) from None
    messages = result.all_messages()
    return TypedAnswer(output=result.output, attempts=count_steps(messages), messages=messages)


def _last_refusal(messages: list[ModelMessage]) -> str:
    """Why the last refused try the conversation holds was refused (a check's reason or the validation errors), for
    the record. pydantic-ai sends a refused output back as a RetryPromptPart, or (output tools) a ToolReturnPart whose
    outcome is `retried`."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                retried = isinstance(part, ToolReturnPart) and part.outcome == "retried"
                if isinstance(part, RetryPromptPart) or retried:
                    content = getattr(part, "content", "")
                    reason = content if isinstance(content, str) else str(content)
                    return f"; the last refusal: {' '.join(reason.split())[:300]}"
    return ""


@runtime_checkable
class LabelReader(Protocol):
    """A model that reads its probability of each label as the first token of its reply, without sampling (the
    embedded `LocalModel` does, in one forward pass). Cancelling the call stops the reading."""

    async def label_probabilities(self, *, system: str, prompt: str, labels: Sequence[str]) -> dict[str, float]: ...


async def label_probabilities(
    *, model: Model | LabelReader, system: str, prompt: str, labels: Sequence[str], timeout: float | None = None
) -> dict[str, float] | None:
    """`model`'s probability of each of `labels` as its reply to `prompt` under `system`, or None when the model
    cannot give probabilities (it is no `LabelReader`: ask it for a `typed_answer` instead).

    With a `timeout` (seconds), the reading is given up after that long: TimeoutError, and the model is cancelled
    (the local model stops within a few tokens). A reading that does not give one probability in [0, 1] per label:
    ValueError."""
    if not isinstance(model, LabelReader):
        return None
    async with _within(timeout, "label probabilities"):
        read = await model.label_probabilities(system=system, prompt=prompt, labels=labels)
    if set(read) != set(labels) or not all(isinstance(p, int | float) and 0.0 <= p <= 1.0 for p in read.values()):
        raise ValueError(
            f"The model's label probabilities {read!r} do not give one in [0, 1] per label {list(labels)}."
        )
    return {label: float(read[label]) for label in labels}


@runtime_checkable
class StateReader(Protocol):
    """A model that gives its final hidden state at the end of a prompt, the assistant's turn opened (the embedded
    `LocalModel` does): what a read-out fitted on that model weighs. `model_name` says which model the state is of."""

    @property
    def model_name(self) -> str: ...

    async def last_state(self, *, system: str, prompt: str) -> list[float]: ...


async def last_state(
    *, model: Model | StateReader, system: str, prompt: str, timeout: float | None = None
) -> list[float] | None:
    """`model`'s final hidden state at the end of `prompt` under `system`, or None when the model gives none (it is no
    `StateReader`). With a `timeout` (seconds), TimeoutError past it (the model is cancelled); a state that is not a
    list of finite numbers: ValueError."""
    if not isinstance(model, StateReader):
        return None
    async with _within(timeout, "hidden state"):
        state = await model.last_state(system=system, prompt=prompt)
    if not state or not all(isinstance(x, int | float) and math.isfinite(x) for x in state):
        raise ValueError(f"The model's hidden state is not a list of finite numbers (length {len(state)}).")
    return [float(x) for x in state]


@asynccontextmanager
async def _within(timeout: float | None, what: str) -> AsyncIterator[None]:
    """The block bounded to `timeout` seconds (None: unbounded); past it, TimeoutError saying what was not given."""
    try:
        async with asyncio.timeout(timeout):
            yield
    except TimeoutError:
        if timeout is None:
            raise
        raise TimeoutError(f"The model gave no {what} within {timeout:g} s.") from None


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

"""OpenAI-compatible servers that refuse some `tool_choice` forms, and what a server lacks said in one line.

The runtime asks for a tool choice on each step: `"required"`, a list of tool names, `ToolOrOutput`, `"none"` or
nothing. Many servers (older vLLM, some llama.cpp and Ollama builds, hosted APIs) answer HTTP 400/422 to a forced
choice. `ToolChoiceFallbackModel` then steps down, once per server and model for the whole process, to a form the
server takes: first `"auto"`, then no `tool_choice` at all. Either way a restriction is kept by sending only the tools
it allows (none for `"none"`), and a forced choice by an instruction on the step ("this step must call a tool").
Each step down is logged once (logger `consulta.models`) and kept in `ServerToolChoice.fallbacks`.

A server may also refuse the conversation itself after a tool call: an assistant message that carries tool calls
goes out with `"content": null`, as OpenAI's API documents it, and some servers' request schemas take only a string
there (llama-cpp-python's server answers 500 "messages.2 …"). On such a refusal (400/422/500 naming `messages`)
the model's turns that hold only tool calls are sent again with `"content": ""`, likewise once per server and model.

What a server cannot do at all (no tool calling, a model it does not serve, a wrong key, unreachable, a conversation
with tool results) is raised as one `ConfigError` line naming the server and what to do.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from openai import Omit
from pydantic_ai import RunContext
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelHTTPError,
    ModelNotFoundError,
)
from pydantic_ai.messages import InstructionPart, ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings, ToolOrOutput

from ..runtime import ConfigError

__all__ = ["ServerToolChoice", "ToolChoiceFallbackModel", "server_tool_choice"]

log = logging.getLogger("consulta.models")

Form = Literal["as_asked", "auto", "omitted"]
# llama-cpp-python's server turns its request validation errors into 500: of a message, or of a tool_choice it does
# not take (seen: the list of allowed tools, `{"type": "allowed_tools", …}`)
_REFUSALS = (400, 422, 500)
# where a validation error is: `messages.2`, `messages[2]`, `messages.[2]` (OpenAI), `('body', 'messages', 2, …)`
_AT_A_MESSAGE = re.compile(r"messages(?:\.|\[|\.\[|'\s*,\s*|\"\s*,\s*)\d", re.IGNORECASE)


@dataclass
class ServerToolChoice:
    """What one server accepts of `tool_choice` for one model, learnt from its refusals (shared by the process)."""

    form: Form = "as_asked"
    null_content: bool = True
    """False: the server refused an assistant message whose `content` is null beside its tool calls."""
    fallbacks: list[str] = field(default_factory=list)


_servers: dict[tuple[str, str], ServerToolChoice] = {}
_servers_lock = threading.Lock()


def server_tool_choice(server: str, model_name: str) -> ServerToolChoice:
    """The shared record for `model_name` on `server` (a base URL)."""
    with _servers_lock:
        return _servers.setdefault((server, model_name), ServerToolChoice())


class ToolChoiceFallbackModel(WrapperModel):
    """An OpenAI-compatible chat model whose server may refuse a forced `tool_choice` (see the module docstring).

    `server` names the server in messages and keys what was learnt about it.
    """

    def __init__(self, wrapped: Model, *, server: str, streams: bool = True) -> None:
        super().__init__(wrapped)
        self.server = server
        self.accepts = server_tool_choice(server, wrapped.model_name)
        self.streams = streams
        """False: the runtime asks this server for whole responses, never streams (`OPENAI_STREAM=0`: a server whose
        streamed tool calls come back empty, e.g. llama-cpp-python's `chatml-function-calling`)."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        while True:
            sent = self._adapted(messages, model_settings, model_request_parameters)
            try:
                return await self.wrapped.request(*sent)
            except ModelAPIError as error:
                self._on_error(error, messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        async with AsyncExitStack() as stack:
            while True:  # a refusal comes before the stream opens: only opening is tried again
                opening = self.wrapped.request_stream(
                    *self._adapted(messages, model_settings, model_request_parameters), run_context
                )
                try:
                    stream = await stack.enter_async_context(opening)
                    break
                except ModelAPIError as error:
                    self._on_error(error, messages, model_settings, model_request_parameters)
            yield stream

    def _on_error(
        self,
        error: ModelAPIError,
        messages: list[ModelMessage],
        asked: ModelSettings | None,
        parameters: ModelRequestParameters,
    ) -> None:
        """Return to send the request again in the form the server now gets; raise otherwise."""
        if _about_messages(error) and any(map(_only_tool_calls, messages)):
            if self._stop_null_content(error):
                return
            raise ConfigError(
                f"The model server at {self.server} refuses a conversation that holds tool calls for model "
                f"{self.model_name!r} ({_detail(error)}). Use a server whose chat API takes tool results (vLLM with "
                "--enable-auto-tool-choice, llama.cpp's server with --jinja, Ollama, a hosted API)."
            ) from None
        if isinstance(error, ModelHTTPError) and error.status_code in _REFUSALS and _about_tools(error):
            if parameters.tool_defs and self._step_down(asked, error):
                return
            raise ConfigError(
                f"The model server at {self.server} refuses tool calls for model {self.model_name!r} "
                f"({_detail(error)}). Use a server and model with tool calling (vLLM: --enable-auto-tool-choice "
                "--tool-call-parser …; llama.cpp's server: --jinja or a function-calling chat format; Ollama: a model "
                "tagged `tools`)."
            ) from None
        if _no_chat_api(error, self.model_name):
            raise ConfigError(
                f"The model server at {self.server} has no chat completions API at that address ({_detail(error)}). "
                "Check OPENAI_BASE_URL: it is the address that `/chat/completions` follows, often ending in `/v1`."
            ) from None
        if isinstance(error, ModelNotFoundError):
            raise ConfigError(
                f"The model server at {self.server} does not serve a model named {self.model_name!r} "
                f"({_detail(error)}). Name one it serves: `--model openai:NAME`."
            ) from None
        if isinstance(error, ModelAuthenticationError):
            raise ConfigError(
                f"The model server at {self.server} refused the API key ({_detail(error)}). Set OPENAI_API_KEY."
            ) from None
        if isinstance(error, ModelConnectionError):
            raise ConfigError(
                f"Cannot reach the model server at {self.server} ({_detail(error)}). Start it, or set "
                "OPENAI_BASE_URL to one that runs."
            ) from None
        raise error

    def _stop_null_content(self, error: ModelAPIError) -> bool:
        """Send tool-call turns with empty text from now on; False when they already are."""
        with _servers_lock:
            if not self.accepts.null_content:
                return False
            self.accepts.null_content = False
            note = (
                f"{self.server} ({self.model_name}) refused an assistant message with tool calls and null content "
                f"({_detail(error)}); sending such messages with empty content from now on"
            )
            self.accepts.fallbacks.append(note)
        log.warning("%s", note)
        return True

    def _step_down(self, asked: ModelSettings | None, error: ModelHTTPError) -> bool:
        """Move to the next form the server may take; False when none is left."""
        with _servers_lock:
            now = self.accepts.form
            if now == "omitted":
                return False
            forced = _forced(asked)
            # "auto" helps only when what was refused was forced; otherwise the server refuses the field itself.
            self.accepts.form = "auto" if now == "as_asked" and forced else "omitted"
            note = (
                f"{self.server} ({self.model_name}) refused tool_choice ({_detail(error)}); sending "
                + ("tool_choice='auto'" if self.accepts.form == "auto" else "no tool_choice")
                + " from now on, with the choice as an instruction"
            )
            self.accepts.fallbacks.append(note)
        log.warning("%s", note)
        return True

    def _adapted(
        self, messages: list[ModelMessage], asked: ModelSettings | None, parameters: ModelRequestParameters
    ) -> tuple[list[ModelMessage], ModelSettings | None, ModelRequestParameters]:
        """The request in the form this server takes."""
        if not self.accepts.null_content:
            messages = [_with_text(m) if _only_tool_calls(m) else m for m in messages]
        form = self.accepts.form
        if form == "as_asked" or not asked or "tool_choice" not in asked:
            return messages, _omitting(asked) if form == "omitted" else asked, parameters
        choice = asked["tool_choice"]
        settings = ModelSettings(**asked)
        del settings["tool_choice"]  # "auto": a restriction is kept by sending only the tools it allows
        allowed = _allowed_tools(choice)
        if allowed is not None:
            kept = [tool for tool in parameters.function_tools if tool.name in allowed]
            parameters = replace(parameters, function_tools=kept)
        if form == "omitted":
            settings = _omitting(settings)
        instruction = _instruction(choice)
        if instruction is None:
            return messages, settings, parameters
        if parameters.instruction_parts is None:  # a direct `request` call: instructions come from the messages
            return _with_instruction(messages, instruction), settings, parameters
        parts = [*parameters.instruction_parts, InstructionPart(content=instruction, dynamic=True)]
        return messages, settings, replace(parameters, instruction_parts=InstructionPart.sorted(parts))


def _forced(settings: ModelSettings | None) -> bool:
    """Whether the request asked for more than the server's default ("auto")."""
    return (settings or {}).get("tool_choice") not in (None, "auto")


def _allowed_tools(choice: object) -> set[str] | None:
    """The function tools `choice` lets the model call (None: all)."""
    if choice == "none" or choice == []:
        return set()
    if isinstance(choice, list):
        return set(map(str, choice))
    if isinstance(choice, ToolOrOutput):
        return set(choice.function_tools)
    return None


def _omitting(settings: ModelSettings | None) -> ModelSettings:
    """`settings` with no `tool_choice` field on the wire (the OpenAI client drops fields whose value is `Omit`)."""
    out = ModelSettings(**(settings or {}))
    extra = out.get("extra_body")
    out["extra_body"] = {**(extra if isinstance(extra, dict) else {}), "tool_choice": Omit()}
    return out


def _instruction(choice: object) -> str | None:
    if choice == "required":
        return "This step must call a tool: call the one that fits now, before you answer."
    if isinstance(choice, list) and choice:
        return f"This step must call one of these tools: {', '.join(map(str, choice))}. Call it now."
    return None


def _with_instruction(messages: list[ModelMessage], instruction: str) -> list[ModelMessage]:
    """`messages` with `instruction` added to the last request's instructions (what the model reads last)."""
    if not messages or not isinstance(messages[-1], ModelRequest):
        return messages
    last = messages[-1]
    joined = f"{last.instructions}\n\n{instruction}" if last.instructions else instruction
    return [*messages[:-1], replace(last, instructions=joined)]


def _only_tool_calls(message: ModelMessage) -> bool:
    """A model turn that the OpenAI model sends with `"content": null` (tool calls, no text)."""
    return (
        isinstance(message, ModelResponse)
        and any(isinstance(part, ToolCallPart) for part in message.parts)
        and not any(isinstance(part, TextPart) for part in message.parts)
    )


def _with_text(response: ModelMessage) -> ModelMessage:
    """`response` with an empty text part: sent as `"content": ""` beside its tool calls."""
    assert isinstance(response, ModelResponse)
    return replace(response, parts=[TextPart(content=""), *response.parts])


def _about_messages(error: ModelAPIError) -> bool:
    """A refusal of the request's messages: a validation error located at one of them (`_AT_A_MESSAGE`)."""
    return (
        isinstance(error, ModelHTTPError)
        and error.status_code in _REFUSALS
        and _AT_A_MESSAGE.search(_detail(error)) is not None
    )


def _no_chat_api(error: ModelAPIError, model_name: str) -> bool:
    """The base URL leads to no chat API: a 404 not about the model, or a web server that takes no POST there."""
    if not isinstance(error, ModelHTTPError) or error.status_code not in (404, 405, 501):
        return False
    return not (isinstance(error, ModelNotFoundError) and _names_model(error, model_name))


def _names_model(error: ModelAPIError, model_name: str) -> bool:
    """Whether a 404 is about the model (OpenAI's `model_not_found`, or the server's words name it)."""
    code = getattr(error, "provider_error_code", None)
    return code == "model_not_found" or model_name.lower() in _detail(error).lower()


def _about_tools(error: ModelHTTPError) -> bool:
    return "tool" in _detail(error).lower()


def _detail(error: ModelAPIError) -> str:
    """The server's own words, on one line and short."""
    body = getattr(error, "body", None)
    said = (body.get("message") or body.get("detail") or body) if isinstance(body, dict) else body
    text = str(said or error.message)
    text = " ".join(re.sub(r"<[^>]*>", " ", text).split())  # an HTML error page as its words
    return text if len(text) <= 200 else text[:197] + "..."

"""Test double: a tiny OpenAI-compatible chat server on loopback that refuses what a test tells it to.

It answers `/v1/chat/completions` like a model that calls the first tool offered (or the one `tool_choice` names)
with a string for each required argument, and once a tool result is in the conversation replies
`"Tool said: <result>"`. `refuse` says what it answers with an HTTP error instead: `"forced"` (a `tool_choice` of
"required" or naming a tool, 400 as vLLM does), `"allowed_tools"` (a list of tools allowed, 500 with
llama-cpp-python's wording of the validation error), `"tool_choice"` (any `tool_choice` field, 422), `"tools"` (any
tools: a server without tool calling, 400), `"null_content"` (an assistant message with tool calls and `content: null`,
422 with llama-cpp-python's wording of the validation error; that server answers 500, which the OpenAI client
retries with back-off), `"tool_results"` (any
`tool` message: a schema without that role, 422). A model name in `unknown_models` gets OpenAI's 404
`model_not_found`. Only `/v1/chat/completions` is served: any other path is FastAPI's plain 404.
Every request body is kept in `requests`.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any, Literal

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

Refusal = Literal["forced", "allowed_tools", "tool_choice", "tools", "null_content", "tool_results"]


class OpenAIStubServer:
    def __init__(self) -> None:
        self.refuse: set[Refusal] = set()
        self.unknown_models: set[str] = set()
        self.requests: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []
        app = FastAPI()
        app.post("/v1/chat/completions")(self._complete)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def __enter__(self) -> OpenAIStubServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the stub OpenAI server did not start within 10 s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    async def _complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        refusal = self._refusal(body)
        if refusal is not None:
            self.refused.append(body)
            return refusal
        messages = body["messages"]
        tools = body.get("tools") or []
        if messages[-1]["role"] == "tool" or not tools:
            results = [m["content"] for m in messages if m["role"] == "tool"]
            return _completion(body["model"], {"role": "assistant", "content": f"Tool said: {' '.join(results)}"})
        chosen = body.get("tool_choice")
        name = chosen["function"]["name"] if isinstance(chosen, dict) else tools[0]["function"]["name"]
        schema = next(t["function"]["parameters"] for t in tools if t["function"]["name"] == name)
        arguments = {key: "HeLa" for key in schema.get("required", [])}
        call = {"id": f"call_{len(self.requests)}", "type": "function"}
        call["function"] = {"name": name, "arguments": json.dumps(arguments)}
        return _completion(body["model"], {"role": "assistant", "content": None, "tool_calls": [call]})

    def _refusal(self, body: dict[str, Any]) -> JSONResponse | None:
        if body["model"] in self.unknown_models:
            message = f"The model `{body['model']}` does not exist or you do not have access to it."
            return _error(404, message, code="model_not_found")
        if "tools" in self.refuse and body.get("tools"):
            return _error(400, "tools are not supported by this server")
        if "tool_choice" in self.refuse and "tool_choice" in body:
            return _error(422, "Unrecognized request argument supplied: tool_choice")
        for index, message in enumerate(body["messages"]):
            role = message["role"]
            if "null_content" in self.refuse and role == "assistant" and message.get("content", "") is None:
                # llama-cpp-python's wording (a pydantic error list, the location as a tuple)
                loc = f"('body', 'messages', {index}, 'ChatCompletionRequestAssistantMessage', 'content')"
                said = f"1 validation errors: {{'type': 'string_type', 'loc': {loc}, 'input': None}}"
                return _error(422, said)
            if "tool_results" in self.refuse and role == "tool":
                return _error(422, f"messages.{index}.role: Input should be 'system', 'user' or 'assistant'")
        choice = body.get("tool_choice")
        if "allowed_tools" in self.refuse and isinstance(choice, dict) and choice.get("type") == "allowed_tools":
            # llama-cpp-python's server: a request validation error, answered 500
            loc = "('body', 'tool_choice', \"literal['none','auto','required']\")"
            return _error(500, f"3 validation errors: {{'type': 'literal_error', 'loc': {loc}, 'input': {choice}}}")
        if "forced" in self.refuse and (choice == "required" or isinstance(choice, dict)):
            return _error(400, f"tool_choice {json.dumps(choice)} is not supported")
        return None


def _completion(model: str, message: dict[str, Any]) -> JSONResponse:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return JSONResponse(
        {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )


def _error(status: int, message: str, *, code: str | None = None) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}},
        status_code=status,
    )

"""`openai:MODEL` against servers that refuse a forced `tool_choice` (or lack what a run needs), through a test double
of an OpenAI-compatible server on loopback (`_openai_stub_server`)."""

from __future__ import annotations

import contextlib
import http.server
import logging
import threading
from collections.abc import Iterator

import anyio
import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ToolReturnPart
from pydantic_ai.settings import ModelSettings

from consulta.models import resolve_model
from consulta.models._tool_choice_fallback import server_tool_choice
from consulta.runtime import ConfigError

from ._openai_stub_server import OpenAIStubServer


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStubServer]:
    with OpenAIStubServer() as server:
        yield server


@pytest.fixture
def server(stub: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch) -> OpenAIStubServer:
    stub.refuse.clear()
    stub.unknown_models.clear()
    stub.requests.clear()
    stub.refused.clear()
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return stub


class StaticSiteDouble(http.server.BaseHTTPRequestHandler):
    """Test double of a static web site (nginx and the like): a POST gets 405 and an HTML page."""

    def do_POST(self) -> None:
        self.send_error(405)

    def log_message(self, *args: object) -> None:
        pass


def _forced_first(choice: object) -> object:
    """Per-step settings as the runtime makes them: `choice` until a tool has answered, then free."""

    def per_step(ctx: RunContext[None]) -> ModelSettings:
        answered = any(isinstance(p, ToolReturnPart) for m in ctx.messages for p in getattr(m, "parts", ()))
        return ModelSettings() if answered else ModelSettings(tool_choice=choice)  # type: ignore[typeddict-item]

    return per_step


def _system(request: dict[str, object]) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")  # type: ignore[attr-defined,index,misc]


def _run(model_name: str, choice: object) -> str:
    agent: Agent[None, str] = Agent(
        resolve_model(f"openai:{model_name}"),
        instructions="You keep the lab's stock.",
        model_settings=_forced_first(choice),
    )

    @agent.tool_plain
    def count_vials(line: str) -> str:
        """Vials of a cell line in the freezer."""
        return f"{line}: 3 vials"

    @agent.tool_plain
    def discard_vial(line: str) -> str:
        """Throw one vial away."""
        return f"{line}: discarded"

    @agent.tool_plain
    def label_vial(line: str) -> str:
        """Print a vial's label."""
        return f"{line}: labelled"

    async def go() -> str:
        return (await agent.run("Do we have any HeLa cells left?")).output

    return anyio.run(go)


def test_a_refused_required_steps_down_to_auto_once_and_keeps_the_contract(
    server: OpenAIStubServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.refuse.add("forced")
    with caplog.at_level(logging.WARNING, logger="consulta.models"):
        assert _run("refuses-required", "required") == "Tool said: HeLa: 3 vials"
        assert _run("refuses-required", "required") == "Tool said: HeLa: 3 vials"  # a second run: remembered
    assert len(server.refused) == 1 and server.refused[0]["tool_choice"] == "required"
    retried = server.requests[1]
    assert retried["tool_choice"] == "auto"
    assert "must call a tool" in _system(retried)  # the contract, as an instruction
    later_firsts = [r for r in server.requests[2:] if r["messages"][-1]["role"] == "user"]
    assert [r["tool_choice"] for r in later_firsts] == ["auto"]
    fallbacks = server_tool_choice(f"{server.base_url}/", "refuses-required").fallbacks
    assert len(fallbacks) == 1 and "tool_choice='auto'" in fallbacks[0]
    assert [r.getMessage() for r in caplog.records if "refused tool_choice" in r.getMessage()] == fallbacks


def test_named_tools_keep_their_restriction_when_auto(server: OpenAIStubServer) -> None:
    server.refuse.add("forced")
    assert _run("refuses-named", ["count_vials"]) == "Tool said: HeLa: 3 vials"
    refused, retried = server.refused[0], server.requests[1]
    assert refused["tool_choice"] == {"type": "function", "function": {"name": "count_vials"}}
    assert retried["tool_choice"] == "auto"
    assert [t["function"]["name"] for t in retried["tools"]] == ["count_vials"]  # discard_vial is not offered
    assert len(server.refused) == 1
    assert "must call one of these tools: count_vials" in _system(retried)


def test_a_list_of_allowed_tools_refused_with_a_500_steps_down_and_keeps_the_restriction(
    server: OpenAIStubServer,
) -> None:
    """llama-cpp-python's server answers the list form (`{"type": "allowed_tools", …}`) with a 500 naming
    `tool_choice` (seen: every ln2 write turn through it failed); the backend steps down to "auto" with those tools."""
    server.refuse.add("allowed_tools")
    assert _run("refuses-allowed", ["count_vials", "discard_vial"]) == "Tool said: HeLa: 3 vials"
    assert server.refused[0]["tool_choice"]["type"] == "allowed_tools"
    retried = next(r for r in server.requests if r not in server.refused)
    assert retried["tool_choice"] == "auto"
    assert {t["function"]["name"] for t in retried["tools"]} == {"count_vials", "discard_vial"}


def test_a_server_refusing_the_field_gets_none_at_all(server: OpenAIStubServer) -> None:
    server.refuse.add("tool_choice")
    assert _run("refuses-field", "required") == "Tool said: HeLa: 3 vials"
    assert [r.get("tool_choice") for r in server.refused] == ["required", "auto"]
    assert all("tool_choice" not in r for r in server.requests[2:])
    assert len(server_tool_choice(f"{server.base_url}/", "refuses-field").fallbacks) == 2


@pytest.mark.parametrize(
    ("setup", "model_name", "says"),
    [
        ("tools", "no-tools", r"refuses tool calls for model 'no-tools' \(tools are not supported"),
        ("unknown", "not-served", r"does not serve a model named 'not-served'.*Name one it serves"),
    ],
)
def test_what_a_server_lacks_is_one_config_line(
    server: OpenAIStubServer, setup: str, model_name: str, says: str
) -> None:
    if setup == "tools":
        server.refuse.add("tools")
    else:
        server.unknown_models.add(model_name)
    with pytest.raises(ConfigError, match=says) as raised:
        _run(model_name, "required")
    assert server.base_url in str(raised.value) and "\n" not in str(raised.value)


def test_a_refused_null_content_is_sent_again_as_empty_text_once(
    server: OpenAIStubServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.refuse.add("null_content")
    with caplog.at_level(logging.WARNING, logger="consulta.models"):
        assert _run("refuses-null", None) == "Tool said: HeLa: 3 vials"
        assert _run("refuses-null", None) == "Tool said: HeLa: 3 vials"  # a second run: remembered
    assert len(server.refused) == 1
    after_calls = [m for r in server.requests if r not in server.refused for m in r["messages"] if m.get("tool_calls")]
    assert after_calls and all(m["content"] == "" for m in after_calls)
    fallbacks = server_tool_choice(f"{server.base_url}/", "refuses-null").fallbacks
    assert len(fallbacks) == 1 and "empty content" in fallbacks[0]
    assert [r.getMessage() for r in caplog.records if "null content" in r.getMessage()] == fallbacks


@pytest.mark.parametrize(
    ("setup", "says"),
    [
        ("tool_results", r"refuses a conversation that holds tool calls for model 'no-results' \(messages\.3\.role"),
        (
            "wrong_path",
            r"at http://127\.0\.0\.1:\d+ has no chat completions API at that address \(Not Found\)\..*OPENAI_BASE_URL",
        ),
        ("web_server", r"has no chat completions API at that address \(Error response .*Error code: 405 Message: "),
    ],
)
def test_a_server_without_tool_results_or_at_a_wrong_address_is_one_config_line(
    server: OpenAIStubServer, monkeypatch: pytest.MonkeyPatch, setup: str, says: str
) -> None:
    if setup == "tool_results":
        server.refuse.add("tool_results")
    elif setup == "wrong_path":
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url.removesuffix("/v1"))  # no `/v1`: nothing there
    with contextlib.ExitStack() as stack:
        if setup == "web_server":  # a plain web server there, answering POST with an HTML page
            web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StaticSiteDouble)
            stack.enter_context(web)
            threading.Thread(target=web.serve_forever, daemon=True).start()
            stack.callback(web.shutdown)
            monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{web.server_address[1]}/v1")
        with pytest.raises(ConfigError, match=says) as raised:
            _run("no-results", None)
    assert "\n" not in str(raised.value) and "<" not in str(raised.value)


def test_an_unreachable_server_is_one_config_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # discard port: nothing listens
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with pytest.raises(ConfigError, match=r"Cannot reach the model server at http://127.0.0.1:9/v1/.*Start it"):
        _run("anything", None)


def test_openai_stream_0_asks_for_whole_responses(monkeypatch: pytest.MonkeyPatch) -> None:
    from consulta.models import resolve_model
    from consulta.runtime._streaming import can_stream

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "not-needed")
    assert can_stream(resolve_model("openai:any"))
    monkeypatch.setenv("OPENAI_STREAM", "0")
    assert not can_stream(resolve_model("openai:any"))


def test_each_step_asks_for_the_embedded_models_cap_on_tokens(server: OpenAIStubServer) -> None:
    """Every request carries the embedded model's cap on a step's tokens (without it a server applies its own
    default, up to its context's end)."""
    from consulta.models._local import STEP_MAX_TOKENS

    _run("capped", "auto")
    assert server.requests and {r.get("max_tokens") or r.get("max_completion_tokens") for r in server.requests} == {
        STEP_MAX_TOKENS
    }

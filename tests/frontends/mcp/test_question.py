"""The seed's `question` tool over MCP: the same validation and results, put to the client's user as a form —
through `elicitation/create` (handshake era) and through input-required rounds (2026-07-28)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastmcp.server.elicitation import validate_elicitation_json_schema
from mcp.shared.exceptions import MCPError

from consulta.asks import answered_result, cancelled_result, parse_questions, timeout_result, unavailable_result
from consulta.runtime import AskStatus, Store

from ._support import MODES, Lab, Person, assert_spec_form, call, client

QUESTIONS = [
    {
        "header": "Cell Line",
        "question": "Which K562 line?",
        "options": ["K562-WT", "K562-dTAG-BRD4", "K562-RTCB-KO-c3"],
    },
    {"header": "Boxes", "question": "Which boxes may I use?", "options": ["1", "2", "5"], "multiple": True},
    {"header": "Note", "question": "Anything to note?"},
]


def asks(lab: Lab) -> list[Any]:
    store = Store(lab.settings.database_url)
    try:
        return store.list_asks(status=None)
    finally:
        store.close()


@pytest.mark.parametrize("mode", MODES)
def test_an_answered_question_gives_the_seed_result(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)
    person = Person([{"q1": "K562-dTAG-BRD4", "q2": ["2", "5"], "q3": "for the BRD4 time course"}])

    async def scenario() -> dict[str, Any]:
        async with client(lab.server(), mode, person) as c:
            return await call(c, "question", {"questions": QUESTIONS})

    result = asyncio.run(scenario())
    raw = ["K562-dTAG-BRD4", ["2", "5"], "for the BRD4 time course"]
    assert result == answered_result(parse_questions(QUESTIONS), raw)
    assert result["result"]["answers"] == ["Cell Line: K562-dTAG-BRD4", "Boxes: 2, 5", "Note: for the BRD4 time course"]

    ((message, schema),) = person.seen
    validate_elicitation_json_schema(schema)  # a form FastMCP accepts…
    assert_spec_form(schema)  # …made only of what the MCP spec defines
    assert schema["required"] == ["q1", "q2", "q3"]
    q1, q2, q3 = (schema["properties"][k] for k in ("q1", "q2", "q3"))
    assert q1 == {
        "title": "Cell Line",
        "description": "Which K562 line?",
        "type": "string",
        "enum": QUESTIONS[0]["options"],
    }
    assert (
        q2["type"] == "array" and q2["items"] == {"type": "string", "enum": ["1", "2", "5"]} and q2["title"] == "Boxes"
    )
    assert q3 == {"title": "Note", "description": "Anything to note?", "type": "string"}
    assert "Which K562 line?" in message

    (ask,) = asks(lab)
    assert ask.kind == "question" and ask.status == AskStatus.answered and ask.answer == raw
    assert ask.answered_by.startswith("mcp:") and ask.outcome == result


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declining_or_cancelling_gives_question_cancelled(tmp_path: Path, mode: str, action: str) -> None:
    lab = Lab(tmp_path)

    async def scenario() -> dict[str, Any]:
        async with client(lab.server(), mode, Person([action])) as c:
            return await call(c, "question", {"questions": QUESTIONS[:1]})

    assert asyncio.run(scenario()) == cancelled_result()
    (ask,) = asks(lab)
    assert ask.status == (AskStatus.declined if action == "decline" else AskStatus.cancelled)


@pytest.mark.parametrize("mode", MODES)
def test_a_malformed_answer_changes_nothing_and_is_asked_again(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)
    person = Person([{"q2": ["7"]}, {"q1": "K562-WT", "q2": ["9"], "q3": ""}, {"q1": "K562-WT", "q2": [], "q3": ""}])

    async def scenario() -> dict[str, Any]:
        async with client(lab.server(), mode, person) as c:
            return await call(c, "question", {"questions": QUESTIONS})

    result = asyncio.run(scenario())
    assert result["ok"] is True and result["result"]["raw_answers"] == ["K562-WT", [], ""]
    first, second, third = (message for message, _ in person.seen)
    assert first in second and first in third and second != first
    assert "Answer 1 (Cell Line) must be text" in second and "9 is not one of the options" in third
    (ask,) = asks(lab)
    assert ask.status == AskStatus.answered  # one ask, closed once: the bad replies left it pending


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_keeps_sending_malformed_answers_gets_a_clear_error(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)
    person = Person([{"q1": 5}, {"q1": ["a", "b"]}, {}])

    async def scenario() -> dict[str, Any]:
        async with client(lab.server(), mode, person) as c:
            return await call(c, "question", {"questions": QUESTIONS[:1]})

    result = asyncio.run(scenario())
    assert result["ok"] is False and result["error_code"] == "invalid_answer" and "Cell Line" in result["message"]
    assert len(person.seen) == 3
    (ask,) = asks(lab)
    assert ask.status == AskStatus.declined and ask.outcome == result


@pytest.mark.parametrize("mode", MODES)
def test_a_client_without_elicitation_gets_question_unavailable(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)

    async def scenario() -> dict[str, Any]:
        async with client(lab.server(), mode) as c:
            return await call(c, "question", {"questions": QUESTIONS[:1]})

    assert asyncio.run(scenario()) == unavailable_result()
    (ask,) = asks(lab)
    assert ask.status == AskStatus.declined


@pytest.mark.parametrize("mode", MODES)
def test_bad_questions_get_the_seed_error_codes_and_ask_nobody(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path)
    person = Person()

    async def scenario() -> list[dict[str, Any]]:
        async with client(lab.server(), mode, person) as c:
            return [
                await call(c, "question", {"questions": []}),
                await call(c, "question", {"questions": ["Which one?"]}),
                await call(c, "question", {"questions": [{"header": "Line"}]}),
            ]

    codes = [r["error_code"] for r in asyncio.run(scenario())]
    assert codes == ["no_questions", "invalid_question_format", "missing_required_field"]
    assert person.seen == [] and asks(lab) == []


@pytest.mark.parametrize("mode", MODES)
def test_no_answer_within_the_question_timeout_gives_question_timeout(tmp_path: Path, mode: str) -> None:
    lab = Lab(tmp_path, question_timeout=0.3)

    class SlowPerson(Person):
        async def __call__(self, *args: Any) -> Any:
            await asyncio.sleep(1.0)  # longer than the question timeout
            return await super().__call__(*args)

    async def scenario() -> dict[str, Any]:
        async with client(lab.server(), mode, SlowPerson([{"q1": "K562-WT"}])) as c:
            return await call(c, "question", {"questions": QUESTIONS[:1]})

    assert asyncio.run(scenario()) == timeout_result()
    (ask,) = asks(lab)
    assert ask.status == AskStatus.timed_out


def test_a_client_whose_form_fails_gets_question_unavailable(tmp_path: Path) -> None:
    """Handshake era: the client answers `elicitation/create` with an error (it could not show the form)."""
    lab = Lab(tmp_path)

    class BrokenForm(Person):
        async def __call__(self, *args: Any) -> Any:
            raise RuntimeError("no display")

    async def scenario() -> dict[str, Any]:
        async with client(lab.server(), "legacy", BrokenForm()) as c:
            return await call(c, "question", {"questions": QUESTIONS[:1]})

    assert asyncio.run(scenario()) == unavailable_result()
    (ask,) = asks(lab)
    assert ask.status == AskStatus.declined


def test_a_2026_client_whose_form_fails_leaves_the_question_to_its_timeout(tmp_path: Path) -> None:
    """2026-07-28: the client's own driver fails the call; the ask stays pending, bounded by the question timeout."""
    lab = Lab(tmp_path, question_timeout=0.2)

    class BrokenForm(Person):
        async def __call__(self, *args: Any) -> Any:
            raise RuntimeError("no display")

    async def scenario() -> None:
        async with client(lab.server(), "2026-07-28", BrokenForm()) as c:
            with pytest.raises(MCPError, match="no display"):
                await c.call_tool("question", {"questions": QUESTIONS[:1]})
            for _ in range(100):  # bounded: the timer closes the ask
                if asks(lab)[0].status != AskStatus.pending:
                    break
                await asyncio.sleep(0.05)

    asyncio.run(scenario())
    (ask,) = asks(lab)
    assert ask.status == AskStatus.timed_out and ask.outcome == timeout_result()

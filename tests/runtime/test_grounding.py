"""Evidence and `mentions`: numbers as whole numbers, text at word edges, case-insensitive; answers exactly."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart

from consulta.asks import question_tool
from consulta.runtime import Agent, Evidence, mentions, read_tool
from consulta.runtime._engine import evidence_from


@pytest.mark.parametrize(
    ("corpus", "value", "expected"),
    [
        ("box 12 has room", 12, True),
        ("box 120 has room", 12, False),
        ("box 112", 12, False),
        ("boxes 12, 13", 12, True),
        ("box 12.", 12, True),
        ("position 12-14", 12, True),
        ("ratio 1.12", 12, False),
        ("12.5 ml", 12.5, True),
        ("112.5 ml", 12.5, False),
        ("(12)", 12, True),
        ("", 0, False),
        ("0", 0, True),
        ("box 3", 3, True),
    ],
)
def test_mentions_numbers_as_whole_numbers(corpus, value, expected):
    assert mentions(corpus, value) is expected


@pytest.mark.parametrize(
    ("corpus", "value", "expected"),
    [
        ("thaw k562 please", "K562", True),
        ("thaw k5620 please", "K562", False),
        ("thaw xk562 please", "K562", False),
        ("thaw k562, please", "k562", True),
        ("thaw k562 please", "k562 please", True),
        ("thaw k562 please", "K562 \n please", True),
        ("thaw k562 please", "", False),
        ("thaw k562 please", "   ", False),
        ("box 12", "12", True),
        ("box 120", "12", False),
    ],
)
def test_mentions_text_at_word_edges(corpus, value, expected):
    assert mentions(corpus, value) is expected


def test_mentions_a_number_is_not_the_integer_part_of_a_decimal():
    assert mentions("add 12.5 ml", 12) is False
    assert mentions("add 2.5 ml to box 7", 2) is False
    assert Evidence(user_texts=("Add 2.5 ml to box 7",)).said_by_user(2) is False


def test_mentions_never_matches_bool_or_none():
    assert mentions("true false none 1 0", True) is False
    assert mentions("true false none 1 0", False) is False
    assert mentions("true false none 1 0", None) is False


def test_mentions_is_case_insensitive_on_the_corpus_too():
    assert mentions("Thaw K562 please", "K562") is True
    assert mentions("Thaw K562 please", "k562") is True


def test_evidence_said_by_user_is_case_and_space_insensitive():
    ev = Evidence(user_texts=("Thaw   the K562-dTAG tube in BOX 12",))
    assert ev.said_by_user("k562-dtag")
    assert ev.said_by_user("box 12")
    assert ev.said_by_user(12)
    assert not ev.said_by_user(1)
    assert not ev.said_by_user(120)
    assert not ev.said_by_user("K562-RTCB")
    assert not ev.seen_in_data("K562-dTAG")


def test_evidence_answers_count_as_said_by_user():
    ev = Evidence(user_texts=("thaw it",), answers=("K562-RTCB",))
    assert ev.said_by_user("k562-rtcb")
    assert ev.answered("k562-rtcb")
    assert ev.answered(" K562-RTCB ")


def test_evidence_answered_is_exact_not_a_mention():
    ev = Evidence(user_texts=(), answers=("K562-dTAG", "Box 3"))
    assert ev.answered("K562-dTAG")
    assert ev.answered("box 3")
    assert not ev.answered("K562")  # mentioned inside an answer, but not what the user picked
    assert not ev.answered(3)
    assert not ev.answered("Box")
    assert not Evidence().answered("")


def test_evidence_seen_in_data():
    ev = Evidence(data_texts=(Evidence.data_text({"records": [{"id": 42, "name": "HeLa"}]}), "plain text line"))
    assert ev.seen_in_data(42)
    assert ev.seen_in_data("hela")
    assert ev.seen_in_data("PLAIN TEXT")
    assert not ev.seen_in_data(4)
    assert not ev.said_by_user(42)


def test_data_text():
    assert Evidence.data_text("as is") == "as is"
    assert Evidence.data_text({"a": "é", "n": 1}) == '{"a": "é", "n": 1}'


def test_evidence_from_a_conversation():
    @read_tool
    def lookup(name: str) -> dict:
        """Look up."""
        return {}

    agent = Agent(app="t", instructions="x", tools=(lookup, question_tool()))
    answered = {
        "ok": True,
        "result": {"answers": ["A: x", "B: y, z"], "raw_answers": ["K562-dTAG", ["Box 3", "Box 4"]]},
        "message": "m",
    }
    messages = [
        ModelRequest(parts=[UserPromptPart("thaw the K562 tube")]),
        ModelResponse(parts=[ToolCallPart("lookup", {"name": "K562"}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("lookup", {"ok": True, "ids": [17, 18]}, tool_call_id="c1")]),
        ModelResponse(parts=[ToolCallPart("question", {}, tool_call_id="c2")]),
        ModelRequest(parts=[ToolReturnPart("question", answered, tool_call_id="c2")]),
        ModelResponse(parts=[ToolCallPart("question", {}, tool_call_id="c3")]),
        ModelRequest(
            parts=[ToolReturnPart("question", {"ok": False, "error_code": "question_cancelled"}, tool_call_id="c3")]
        ),
        ModelRequest(parts=[ToolReturnPart("gone", {"secret": 99}, tool_call_id="c4")]),
    ]
    ev = evidence_from(messages, agent, prompt="first prompt")
    assert ev.user_texts == ("first prompt", "thaw the K562 tube")
    assert ev.answers == ("K562-dTAG", "Box 3", "Box 4")
    assert ev.seen_in_data(17) and ev.seen_in_data(18)
    assert not ev.seen_in_data(99)  # not a tool of this agent
    assert ev.answered("box 4")

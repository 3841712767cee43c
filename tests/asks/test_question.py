"""The question tool of seed 001: argument validation, answer validation and the results the model sees."""

from __future__ import annotations

import pytest

from consulta.asks import (
    Question,
    QuestionKind,
    answered_result,
    cancelled_result,
    not_alone_result,
    parse_questions,
    question_tool,
    timeout_result,
    unavailable_result,
    validate_answers,
)
from consulta.runtime import Agent, InvalidAnswerError, ToolError, tool_schemas

CELL_LINE = {"header": "Cell Line", "question": "Which one?", "options": ["K562", "K562-dTAG", "K562-RTCB"]}


def error_of(questions) -> dict:
    with pytest.raises(ToolError) as info:
        parse_questions(questions)
    return info.value.to_result()


# ---- parse_questions: the seed's error codes --------------------------------------------------------------------


@pytest.mark.parametrize("questions", [[], None, "Which cell line?", {"header": "H", "question": "Q"}, 3, ()])
def test_no_questions(questions):
    result = error_of(questions)
    assert result["ok"] is False
    assert result["error_code"] == "no_questions"
    assert result["message"] == "At least one question is required."
    assert "_hint" in result


@pytest.mark.parametrize("bad", ["Which?", 3, None, ["header", "question"]])
def test_invalid_question_format_for_a_non_dict(bad):
    result = error_of([bad])
    assert result["error_code"] == "invalid_question_format"
    assert result["message"] == "Question 0 must be a dict."


def test_invalid_question_format_names_the_index():
    assert error_of([CELL_LINE, "second"])["message"] == "Question 1 must be a dict."


@pytest.mark.parametrize("q", [{"header": "Box"}, {"question": "Which box?"}, {}, {"header": "Box", "options": ["1"]}])
def test_missing_required_field(q):
    result = error_of([q])
    assert result["ok"] is False
    assert result["error_code"] == "missing_required_field"
    assert result["message"] == "Question 0 missing 'header' or 'question'."


def test_missing_required_field_names_the_index():
    assert error_of([CELL_LINE, {"header": "Box"}])["message"] == "Question 1 missing 'header' or 'question'."


def test_first_error_wins():
    assert error_of(["not a dict", {"header": "x"}])["error_code"] == "invalid_question_format"
    assert error_of([{"header": "x"}, "not a dict"])["error_code"] == "missing_required_field"


@pytest.mark.parametrize(
    "q",
    [
        {"header": 3, "question": "Q"},
        {"header": "H", "question": None},
        {"header": "H", "question": "   "},
        {"header": "H", "question": "Q", "options": "a,b"},
        {"header": "H", "question": "Q", "options": ["a", 2]},
        {"header": "H", "question": "Q", "multiple": "yes"},
    ],
)
def test_invalid_field_values_are_invalid_question_format(q):
    assert error_of([q])["error_code"] == "invalid_question_format"


def test_parse_valid_questions():
    parsed = parse_questions(
        [
            CELL_LINE,
            {"header": "  Positions  ", "question": "Which?", "options": ["1", "2"], "multiple": True},
            {"header": "Note", "question": "Anything else?", "options": None},
        ]
    )
    assert parsed == [
        Question(header="Cell Line", question="Which one?", options=["K562", "K562-dTAG", "K562-RTCB"], multiple=False),
        Question(header="Positions", question="Which?", options=["1", "2"], multiple=True),
        Question(header="Note", question="Anything else?", options=[], multiple=False),
    ]


def test_header_is_cut_to_30_chars():
    [q] = parse_questions([{"header": "H" * 50, "question": "Q"}])
    assert q.header == "H" * 30


# ---- validate_answers ------------------------------------------------------------------------------------------


def qs(*specs: dict) -> list[Question]:
    return parse_questions(list(specs))


MULTI = {"header": "Positions", "question": "Which?", "options": ["1", "2", "3"], "multiple": True}
FREE = {"header": "Note", "question": "Anything?"}


def test_answers_must_be_a_list():
    with pytest.raises(InvalidAnswerError, match="must be a list"):
        validate_answers(qs(CELL_LINE), "K562")


@pytest.mark.parametrize("answers", [[], ["K562", "K562"]])
def test_answer_count_must_match(answers):
    with pytest.raises(InvalidAnswerError) as info:
        validate_answers(qs(CELL_LINE), answers)
    assert str(info.value) == f"Expected 1 answer(s), one per question; got {len(answers)}."
    assert info.value.code == "invalid_answer"


def test_multiple_rejects_an_unknown_option():
    with pytest.raises(InvalidAnswerError) as info:
        validate_answers(qs(MULTI), [["1", "7"]])
    assert "7 is not one of the options (1, 2, 3)" in str(info.value)
    assert "Positions" in str(info.value)


def test_multiple_takes_a_list_or_one_option_as_text():
    assert validate_answers(qs(MULTI), [["1", "3"]]) == [["1", "3"]]
    assert validate_answers(qs(MULTI), ["2"]) == [["2"]]
    assert validate_answers(qs(MULTI), [[]]) == [[]]
    with pytest.raises(InvalidAnswerError, match="must be a list of options"):
        validate_answers(qs(MULTI), [3])
    with pytest.raises(InvalidAnswerError, match="must be a list of options"):
        validate_answers(qs(MULTI), [["1", 2]])


def test_single_choice_allows_free_text():
    assert validate_answers(qs(CELL_LINE), ["HeLa, actually"]) == ["HeLa, actually"]
    assert validate_answers(qs(FREE), [""]) == [""]  # an empty answer is an answer (seed, section 6)


def test_single_choice_accepts_a_list_of_one():
    assert validate_answers(qs(CELL_LINE), [["K562-dTAG"]]) == ["K562-dTAG"]


@pytest.mark.parametrize("bad", [["K562", "K562-dTAG"], [], 3, None, {"K562": True}])
def test_single_choice_rejects_non_text(bad):
    with pytest.raises(InvalidAnswerError, match=r"Answer 1 \(Cell Line\) must be text"):
        validate_answers(qs(CELL_LINE), [bad])


def test_several_questions():
    assert validate_answers(qs(CELL_LINE, MULTI, FREE), ["K562", ["1", "2"], "no"]) == ["K562", ["1", "2"], "no"]
    with pytest.raises(InvalidAnswerError, match=r"Answer 2 \(Positions\)"):
        validate_answers(qs(CELL_LINE, MULTI, FREE), ["K562", ["9"], "no"])


# ---- the results the model sees --------------------------------------------------------------------------------


def test_answered_result_is_exactly_the_seeds():
    assert answered_result(qs(CELL_LINE), ["K562-dTAG"]) == {
        "ok": True,
        "result": {"answers": ["Cell Line: K562-dTAG"], "raw_answers": ["K562-dTAG"]},
        "message": "User answered: Cell Line: K562-dTAG",
    }


def test_answered_result_joins_multiple_answers_with_comma():
    assert answered_result(qs(MULTI), [["1", "3"]]) == {
        "ok": True,
        "result": {"answers": ["Positions: 1, 3"], "raw_answers": [["1", "3"]]},
        "message": "User answered: Positions: 1, 3",
    }


def test_answered_result_several_questions_joined_with_semicolon():
    result = answered_result(qs(CELL_LINE, MULTI, FREE), ["K562", ["1", "2"], "thaw today"])
    assert result["result"]["answers"] == ["Cell Line: K562", "Positions: 1, 2", "Note: thaw today"]
    assert result["message"] == "User answered: Cell Line: K562; Positions: 1, 2; Note: thaw today"


def test_answered_result_numbers_headers_it_lacks():
    result = answered_result(qs(CELL_LINE), ["K562", "extra"])
    assert result["result"]["answers"] == ["Cell Line: K562", "Q2: extra"]


def test_closing_results_are_exactly_the_seeds():
    assert timeout_result() == {
        "ok": False,
        "error_code": "question_timeout",
        "message": "User did not answer within timeout.",
    }
    assert cancelled_result() == {
        "ok": False,
        "error_code": "question_cancelled",
        "message": "User cancelled the question.",
    }
    assert not_alone_result() == {
        "ok": False,
        "error_code": "question_not_alone",
        "message": "question tool must be called alone, not with other tools.",
        "_hint": "Call question separately, then use other tools after getting the answer.",
    }
    unavailable = unavailable_result()
    assert unavailable["ok"] is False
    assert unavailable["error_code"] == "question_unavailable"
    assert unavailable["message"] and unavailable["_hint"]


# ---- QuestionKind: the question as an ask ----------------------------------------------------------------------


def test_kind_prepare_gives_a_json_payload():
    kind = QuestionKind()
    assert kind.name == "question"
    assert kind.prepare({"questions": [CELL_LINE]}) == {
        "questions": [
            {
                "header": "Cell Line",
                "question": "Which one?",
                "options": ["K562", "K562-dTAG", "K562-RTCB"],
                "multiple": False,
            }
        ]
    }


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({}, "no_questions"),
        ({"questions": []}, "no_questions"),
        ({"questions": [1]}, "invalid_question_format"),
        ({"questions": [{"header": "H"}]}, "missing_required_field"),
    ],
)
def test_kind_prepare_raises_the_seeds_codes(args, code):
    with pytest.raises(ToolError) as info:
        QuestionKind().prepare(args)
    assert info.value.error_code == code


def test_kind_round_trip_from_payload():
    kind = QuestionKind()
    payload = kind.prepare({"questions": [CELL_LINE, MULTI]})
    answer = kind.validate_answer(payload, [["K562-dTAG"], "2"])
    assert answer == ["K562-dTAG", ["2"]]
    assert kind.answered_result(payload, answer)["message"] == "User answered: Cell Line: K562-dTAG; Positions: 2"
    with pytest.raises(InvalidAnswerError):
        kind.validate_answer(payload, ["K562"])
    assert kind.timeout_result(payload)["error_code"] == "question_timeout"
    assert kind.cancelled_result(payload)["error_code"] == "question_cancelled"
    assert kind.unavailable_result(payload)["error_code"] == "question_unavailable"
    assert kind.not_alone_result()["error_code"] == "question_not_alone"


# ---- the tool and its schema -----------------------------------------------------------------------------------


def test_question_tool_definition():
    tool = question_tool()
    assert tool.name == "question"
    assert tool.kind == "ask"
    assert isinstance(tool.ask_kind, QuestionKind)
    assert tool.description.startswith("Ask the user clarifying questions before proceeding.")
    assert "Do not call question in parallel with other tools." in tool.notes
    assert tool.parameters["required"] == ["questions"]
    items = tool.parameters["properties"]["questions"]["items"]
    assert items["required"] == ["header", "question"]
    assert set(items["properties"]) == {"header", "question", "options", "multiple"}
    assert items["properties"]["options"]["items"]["type"] == "string"
    assert items["properties"]["multiple"]["type"] == "boolean"


def test_question_tool_in_openai_function_format():
    [schema] = tool_schemas(Agent(app="t", instructions="x", tools=(question_tool(),)))
    assert schema["type"] == "function"
    assert schema["x-consulta-kind"] == "ask"
    fn = schema["function"]
    assert fn["name"] == "question"
    assert fn["description"].startswith("Ask the user clarifying questions")
    assert fn["description"].endswith("Do not call question in parallel with other tools.")
    assert fn["parameters"]["type"] == "object"
    assert fn["parameters"]["required"] == ["questions"]
    assert fn["parameters"]["properties"]["questions"]["type"] == "array"


def test_ask_tool_function_is_never_run():
    with pytest.raises(AssertionError):
        question_tool().function(questions=[])

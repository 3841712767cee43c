"""The `question` tool of seed 001: its schema, its validation, and the results the model sees.

The contract is the seed's, kept as written: parameters `questions[]` of `{header, question, options?, multiple?}`;
error codes `no_questions`, `invalid_question_format`, `missing_required_field`, `question_not_alone`,
`question_timeout`, `question_cancelled` (plus `question_unavailable` when nothing can answer); the answered result
`{"ok": true, "result": {"answers": ["Header: value"], "raw_answers": [...]}, "message": "User answered: ..."}`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..runtime import InvalidAnswerError, ToolError

__all__ = [
    "QUESTION_DESCRIPTION",
    "QUESTION_NOTES",
    "QUESTION_PARAMETERS",
    "QUESTION_TOOL_NAME",
    "Question",
    "RawAnswer",
    "answered_result",
    "cancelled_result",
    "not_alone_result",
    "parse_questions",
    "timeout_result",
    "unavailable_result",
    "validate_answers",
]

QUESTION_TOOL_NAME = "question"

QUESTION_DESCRIPTION = (
    "Ask the user clarifying questions before proceeding. "
    "Use ONLY when you cannot infer the answer from inventory data. "
    "Do NOT use for greetings or when the answer is obvious."
)

QUESTION_NOTES = (
    "question tool is NOT a write tool. It blocks the worker thread until user answers. "
    "Do not call question in parallel with other tools."
)

# The seed's parameter schema (section 4.1), with bounds so a small model cannot run away.
QUESTION_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "description": "List of question objects.",
            "maxItems": 5,
            "items": {
                "type": "object",
                "properties": {
                    "header": {
                        "type": "string",
                        "description": "Short label (max 30 chars). E.g. 'Cell Line', 'Box Number'.",
                        "maxLength": 30,
                    },
                    "question": {"type": "string", "description": "The question text.", "maxLength": 300},
                    "options": {
                        "type": "array",
                        "items": {"type": "string", "maxLength": 80},
                        "maxItems": 10,
                        "description": "If provided, user picks from these choices.",
                    },
                    "multiple": {"type": "boolean", "description": "Allow multiple selections. Default false."},
                },
                "required": ["header", "question"],
            },
        }
    },
    "required": ["questions"],
}

HEADER_MAX = 30


class Question(BaseModel):
    """One question put to the user."""

    header: str
    question: str
    options: list[str] = Field(default_factory=list)
    multiple: bool = False


RawAnswer = str | list[str]


def parse_questions(questions: Any) -> list[Question]:
    """Validate the model's `questions` argument, raising the seed's error codes as a ToolError."""
    if not isinstance(questions, list) or not questions:
        raise ToolError(
            "no_questions",
            "At least one question is required.",
            hint='Pass questions=[{"header": "...", "question": "...", "options": [...]}].',
        )
    parsed: list[Question] = []
    for i, q in enumerate(questions):
        if not isinstance(q, dict):
            raise ToolError(
                "invalid_question_format",
                f"Question {i} must be a dict.",
                hint='Each question is an object: {"header": "...", "question": "..."}.',
            )
        if "header" not in q or "question" not in q:
            raise ToolError(
                "missing_required_field",
                f"Question {i} missing 'header' or 'question'.",
                hint="Every question needs a short 'header' and the 'question' text.",
            )
        header, text, options, multiple = q.get("header"), q.get("question"), q.get("options"), q.get("multiple", False)
        if not isinstance(header, str) or not isinstance(text, str) or not text.strip():
            raise ToolError(
                "invalid_question_format",
                f"Question {i}: 'header' and 'question' must be non-empty strings.",
                hint="Write the question as text.",
            )
        if options is None:
            options = []
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise ToolError(
                "invalid_question_format",
                f"Question {i}: 'options' must be a list of strings.",
                hint='E.g. "options": ["K562", "K562-dTAG"].',
            )
        if not isinstance(multiple, bool):
            raise ToolError("invalid_question_format", f"Question {i}: 'multiple' must be true or false.")
        parsed.append(Question(header=header.strip()[:HEADER_MAX], question=text, options=options, multiple=multiple))
    return parsed


def validate_answers(questions: list[Question], answers: Any) -> list[RawAnswer]:
    """Check a person's answers against the questions; raise InvalidAnswerError with a readable message.

    One answer per question. A question with `multiple` takes a list of strings, each one of the offered options;
    any other question takes one string: an offered option or free text (free text is always allowed).
    """
    if not isinstance(answers, list):
        raise InvalidAnswerError(key="error.answers.not_a_list")
    if len(answers) != len(questions):
        raise InvalidAnswerError(key="error.answers.count", values={"expected": len(questions), "got": len(answers)})
    checked: list[RawAnswer] = []
    for i, (q, a) in enumerate(zip(questions, answers, strict=True)):
        if q.multiple and q.options:
            if isinstance(a, str):
                a = [a]
            if not isinstance(a, list) or not all(isinstance(x, str) for x in a):
                raise InvalidAnswerError(key="error.answers.options_list", values={"n": i + 1, "header": q.header})
            unknown = [x for x in a if x not in q.options]
            if unknown:
                raise InvalidAnswerError(
                    key="error.answers.not_an_option",
                    values={
                        "n": i + 1,
                        "header": q.header,
                        "answer": ", ".join(unknown),
                        "options": ", ".join(q.options),
                    },
                )
            checked.append(list(a))
        else:
            if isinstance(a, list) and len(a) == 1 and isinstance(a[0], str):
                a = a[0]
            if not isinstance(a, str):
                raise InvalidAnswerError(key="error.answers.text", values={"n": i + 1, "header": q.header})
            checked.append(a)
    return checked


def answered_result(questions: list[Question], answers: list[RawAnswer]) -> dict[str, Any]:
    """The seed's result for an answered question (section 4.3)."""
    formatted = []
    for i, ans in enumerate(answers):
        header = questions[i].header if i < len(questions) else f"Q{i + 1}"
        formatted.append(f"{header}: {', '.join(ans)}" if isinstance(ans, list) else f"{header}: {ans}")
    return {
        "ok": True,
        "result": {"answers": formatted, "raw_answers": answers},
        "message": "User answered: " + "; ".join(formatted),
    }


def timeout_result() -> dict[str, Any]:
    return {"ok": False, "error_code": "question_timeout", "message": "User did not answer within timeout."}


def cancelled_result() -> dict[str, Any]:
    return {"ok": False, "error_code": "question_cancelled", "message": "User cancelled the question."}


def unavailable_result() -> dict[str, Any]:
    return {
        "ok": False,
        "error_code": "question_unavailable",
        "message": "Nobody can answer questions in this session (no interactive front end).",
        "_hint": "Do not ask again. Answer from the data you have, or say what you need the user to tell you.",
    }


def not_alone_result() -> dict[str, Any]:
    return {
        "ok": False,
        "error_code": "question_not_alone",
        "message": "question tool must be called alone, not with other tools.",
        "_hint": "Call question separately, then use other tools after getting the answer.",
    }

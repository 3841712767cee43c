"""The consultation primitives: the `question` tool (seed 001), and the ask kinds built on the runtime's asks."""

from ._question import (
    Question,
    answered_result,
    cancelled_result,
    not_alone_result,
    parse_questions,
    timeout_result,
    unavailable_result,
    validate_answers,
)
from ._question_kind import QuestionKind, question_tool

__all__ = [
    "Question",
    "QuestionKind",
    "answered_result",
    "cancelled_result",
    "not_alone_result",
    "parse_questions",
    "question_tool",
    "timeout_result",
    "unavailable_result",
    "validate_answers",
]

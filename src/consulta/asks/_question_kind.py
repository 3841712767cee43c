"""The question ask: the `question` tool as an ask kind the runtime can pause on."""

from __future__ import annotations

from typing import Any

from ..runtime import ToolDef, ask_tool
from . import _question as q

__all__ = ["QuestionKind", "question_tool"]


class QuestionKind:
    """Seed 001's question as an ask: payload `{"questions": [...]}`, answer one value per question."""

    name = "question"

    def prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        questions = q.parse_questions(args.get("questions"))
        return {"questions": [x.model_dump() for x in questions]}

    def questions(self, payload: dict[str, Any]) -> list[q.Question]:
        return [q.Question.model_validate(x) for x in payload["questions"]]

    def validate_answer(self, payload: dict[str, Any], answer: Any) -> list[q.RawAnswer]:
        return q.validate_answers(self.questions(payload), answer)

    def answered_result(self, payload: dict[str, Any], answer: Any) -> dict[str, Any]:
        return q.answered_result(self.questions(payload), answer)

    def timeout_result(self, payload: dict[str, Any]) -> dict[str, Any]:
        return q.timeout_result()

    def cancelled_result(self, payload: dict[str, Any]) -> dict[str, Any]:
        return q.cancelled_result()

    def unavailable_result(self, payload: dict[str, Any]) -> dict[str, Any]:
        return q.unavailable_result()

    def not_alone_result(self) -> dict[str, Any]:
        return q.not_alone_result()


def question_tool() -> ToolDef:
    """The `question` tool exactly as seed 001 declares it."""
    return ask_tool(
        QuestionKind(),
        name=q.QUESTION_TOOL_NAME,
        description=q.QUESTION_DESCRIPTION,
        parameters=q.QUESTION_PARAMETERS,
        notes=q.QUESTION_NOTES,
    )

"""The elicitation forms a person sees: the seed's questions, and the approval of a staged plan.

A form is a flat JSON schema (what MCP elicitation allows) plus how an accepted reply becomes the ask's answer,
which the ask's own kind then validates (`QuestionKind.validate_answer`, the plan approval's) — nothing is checked
twice or differently here. Every word a person reads comes from the catalogs; headers, questions and options are the
model's own words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...asks import Question
from ...i18n import t

__all__ = ["Form", "plan_form", "question_form"]


@dataclass(frozen=True, kw_only=True)
class Form:
    """What the person is asked, and how their reply becomes the ask's answer."""

    message: str
    schema: dict[str, Any]
    lang: str
    answer: Callable[[dict[str, Any] | None], Any]
    """The accepted form's content → the answer the ask's kind validates."""
    decline_answer: Any = None
    """The answer a decline gives (a plan: "reject"); None when declining closes the ask unanswered (a question)."""

    def message_after(self, problem: str | None) -> str:
        """The message again, saying why the previous reply did not fit."""
        return (
            self.message if problem is None else f"{self.message}\n\n{t('mcp.ask.invalid', self.lang, error=problem)}"
        )


def question_form(questions: list[Question], *, lang: str) -> Form:
    """One field per question (`q1`, `q2`, …) titled by its header: a choice among the options, several choices when
    `multiple`, free text otherwise — the seed's dialog (combo box, check boxes, line edit) as a form."""
    properties: dict[str, Any] = {}
    for number, question in enumerate(questions, start=1):
        field: dict[str, Any] = {"title": question.header, "description": question.question}
        options = list(dict.fromkeys(question.options))
        if options and question.multiple:
            field |= {"type": "array", "items": {"type": "string", "enum": options}}
        elif options:
            field |= {"type": "string", "enum": options}
        else:
            field |= {"type": "string"}
        properties[f"q{number}"] = field
    lines = [t("mcp.question.line", lang, header=q.header, question=q.question) for q in questions]

    def answer(content: dict[str, Any] | None) -> list[Any]:
        content = content or {}
        return [content.get(f"q{number}") for number in range(1, len(questions) + 1)]

    return Form(
        message="\n".join([t("ai.question.asking", lang), *lines]),
        schema={"type": "object", "properties": properties, "required": list(properties)},
        lang=lang,
        answer=answer,
    )


def plan_form(previews: list[str], *, lang: str) -> Form:
    """The staged changes, one line each, and one yes/no field: accepting with it ticked applies them, declining
    rejects them. The field never defaults to approve: a client that accepts a form's defaults rejects the plan."""
    lines = [
        t("mcp.plan.line", lang, number=number, preview=preview) for number, preview in enumerate(previews, start=1)
    ]
    approve = {
        "type": "boolean",
        "title": t("mcp.plan.approve", lang),
        "description": t("mcp.plan.approve_help", lang),
        "default": False,
    }
    return Form(
        message="\n".join([t("mcp.plan.message", lang, count=len(previews)), *lines]),
        schema={"type": "object", "properties": {"approve": approve}, "required": ["approve"]},
        lang=lang,
        answer=lambda content: (content or {}).get("approve"),
        decline_answer="reject",
    )

"""Seed §5's session, made durable: per person (the run's principal: a web session, `local` in the terminal) the
form, the conversation and the page context the agent last saw, in the store's database (`advisor_sessions`).

A reload or a restart brings the session back; "new conversation" clears it (`SessionBook.clear`). A session is
written whole in one transaction, so a reader sees the one before or the one after, never half of a turn.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.engine import Engine

from ...runtime import StateBook, utcnow
from ._catalog import create_tables, sessions_table
from ._form import FormState, UserForm

__all__ = ["MAX_HISTORY", "Memory", "Message", "Session", "SessionBook", "sessions_table"]

MAX_HISTORY = 100
"""Messages a session keeps (the oldest go first)."""


class Message(BaseModel):
    role: Literal["user", "assistant"]
    content: str


class Memory(BaseModel):
    """What the agent keeps between turns besides the seed's fields: what was last looked up (so a trigger fires
    once per change), the advisor last talked about (他 / her), and the question it is waiting on."""

    model_config = ConfigDict(extra="ignore")

    ranked_for: list[str] | None = None
    recommended_for: str | None = None
    last_advisor: dict[str, Any] | None = None
    pending: dict[str, Any] | None = None
    lang: str | None = None


class Session(BaseModel):
    """Seed §5.2's session state (`session_id`, `start_time`, `user_form`, `conversation_history`, `page_context`)
    and the agent's `memory`."""

    model_config = ConfigDict(extra="ignore")

    session_id: str = Field(default_factory=lambda: f"sess_{uuid.uuid4().hex[:12]}")
    start_time: str = Field(default_factory=utcnow)
    user_form: UserForm = Field(default_factory=UserForm)
    conversation_history: list[Message] = Field(default_factory=list)
    page_context: dict[str, Any] | None = None
    memory: Memory = Field(default_factory=Memory)

    def form_state(self) -> FormState:
        return FormState.of(self.user_form)

    def said(self, role: Literal["user", "assistant"], content: str) -> None:
        self.conversation_history.append(Message(role=role, content=content))
        del self.conversation_history[:-MAX_HISTORY]


class SessionBook(StateBook[Session]):
    """The sessions of one database (the store's: `Store.engine`), one per principal (`StateBook`): a stored session
    this version cannot read starts a new one rather than failing every turn; `clear` is "new conversation"."""

    def __init__(self, engine: Engine) -> None:
        create_tables(engine)
        super().__init__(engine, sessions_table, Session, columns=lambda session: {"session_id": session.session_id})

"""Seed §5's session, made durable: per person (the run's principal: a web session, `local` in the terminal) the
form, the conversation and the page context the agent last saw, in the store's database (`advisor_sessions`).

A reload or a restart brings the session back; "new conversation" clears it (`SessionBook.clear`). A session is
written whole in one transaction, so a reader sees the one before or the one after, never half of a turn.
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import Column, MetaData, String, Table, Text, delete, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from ...runtime import utcnow
from ._form import FormState, UserForm

__all__ = ["MAX_HISTORY", "Memory", "Message", "Session", "SessionBook", "sessions_table"]

MAX_HISTORY = 100
"""Messages a session keeps (the oldest go first)."""

_metadata = MetaData()
sessions_table = Table(
    "advisor_sessions",
    _metadata,
    Column("principal", String(200), primary_key=True),
    Column("session_id", String(64), nullable=False),
    Column("state", Text, nullable=False),  # the Session as JSON
    Column("updated_at", String(32), nullable=False),
)


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


class SessionBook:
    """The sessions of one database (the store's: `Store.engine`); the table is made on first use."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        _metadata.create_all(engine, checkfirst=True)

    def load(self, principal: str) -> Session:
        """The principal's session, or a new one (not yet stored). A stored state this version cannot read starts a
        new session rather than failing every turn."""
        with self.engine.connect() as conn:
            row = conn.execute(select(sessions_table.c.state).where(sessions_table.c.principal == principal)).first()
        if row is None:
            return Session()
        try:
            return Session.model_validate_json(row.state)
        except ValidationError:
            return Session()

    def save(self, principal: str, session: Session) -> None:
        """Store the session whole, in one transaction."""
        values = {"session_id": session.session_id, "state": session.model_dump_json(), "updated_at": utcnow()}
        for _ in range(2):  # a first save racing another process's first save: the second try updates
            try:
                with self.engine.begin() as conn:
                    done = conn.execute(
                        update(sessions_table).where(sessions_table.c.principal == principal).values(**values)
                    )
                    if done.rowcount == 0:
                        conn.execute(insert(sessions_table).values(principal=principal, **values))
                return
            except IntegrityError:
                continue

    def clear(self, principal: str) -> Session:
        """Forget the principal's session (new conversation); the new, empty one is returned (not yet stored)."""
        with self.engine.begin() as conn:
            conn.execute(delete(sessions_table).where(sessions_table.c.principal == principal))
        return Session()

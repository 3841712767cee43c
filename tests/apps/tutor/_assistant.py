"""The tutor's assistant asked as the host asks it after the orchestrator's turn (`tutor.follow_up`)."""

from __future__ import annotations

from typing import Any

from pydantic_ai.models import Model

from consulta.apps import tutor
from consulta.runtime import Agent, RunRecord, Store, reply_lang


def ask_assistant(
    run_once: Any, store: Store, agent: Agent, packet: dict[str, Any], *, student: str, lang: str, model: Model
) -> RunRecord:
    """One run of the assistant `agent` on `packet` for the `student`'s words: asked `tutor.ca_request`, in the
    student's language (the request's frame is English)."""
    asked = tutor.ca_request(packet, student=student, lang=lang)
    return run_once(store, agent, asked, model, lang=reply_lang(student, lang))

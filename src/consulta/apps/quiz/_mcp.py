"""quiz over MCP: all six of the seed's tools (the agent serves tools 1-3 and the two modes; tools 4-6 come here),
and how they go together when a client's model drives them."""

from __future__ import annotations

from ...runtime import ToolDef
from .._def import AppView
from ._agent import quiz_tools

__all__ = ["INSTRUCTIONS", "tools"]

INSTRUCTIONS = """
Over MCP, the seed's six tools: get_user_profile, search_question_templates and get_difficulty_keywords give what a \
question is written from; validate_question_quality judges a written question (pass >= 0.85, revise 0.70-0.85, reject \
< 0.70); save_generated_question saves it (round_id is session_id_round_number_timestamp; a save the database refuses \
is queued and retried); score_and_explain scores an answer. submit_questions does validate-and-save for several \
questions at once, and score_answers scores several answers against the bank's keys.
"""

_SERVED_BY_AGENT = ("get_user_profile", "search_question_templates", "get_difficulty_keywords")


def tools(host: AppView) -> list[ToolDef]:
    """Tools 4, 5 and 6 (the agent's own tools are served already)."""
    return [d for d in quiz_tools(host.env).tool_defs() if d.name not in _SERVED_BY_AGENT]

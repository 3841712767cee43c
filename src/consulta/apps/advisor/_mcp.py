"""advisor over MCP: how its tool is used when a client's model drives it."""

from __future__ import annotations

__all__ = ["INSTRUCTIONS"]

INSTRUCTIONS = """
Over MCP: call advisor_turn(message) with each of the user's messages exactly as written; its result holds \
voice_response (what to say to the user) and tool_calls (what the site's page does: update_form, update_ranking, \
recommend_advisors, get_advisor_detail, get_advisor_reviews) and the form. The form, the triggers and the replies \
are settled by the tool itself: do not call it twice for one message.
"""

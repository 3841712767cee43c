"""ln2 over MCP: its prompt over the served inventory, and how its tools go together when a client's model drives
them."""

from __future__ import annotations

from .._def import AppView
from ._agent import instructions as prompt

__all__ = ["INSTRUCTIONS", "instructions"]

INSTRUCTIONS = """
Over MCP: add_entry, record_thaw, batch_thaw and rollback return a plan_id; when the user's request is fully \
staged, call apply_plan(plan_id): it shows the user the changes to approve and applies them if they do.
"""


def instructions(host: AppView) -> str:
    """The agent's prompt (today's date: the server's when the client connects), then the MCP notes."""
    path = host.data_path
    return (prompt(path) if path is not None else "") + INSTRUCTIONS

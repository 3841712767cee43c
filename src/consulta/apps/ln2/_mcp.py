"""ln2 over MCP: how its tools go together when a client's model drives them."""

__all__ = ["INSTRUCTIONS"]

INSTRUCTIONS = """
Over MCP: add_entry, record_thaw, batch_thaw and rollback return a plan_id; when the user's request is fully \
staged, call apply_plan(plan_id): it shows the user the changes to approve and applies them if they do.
"""

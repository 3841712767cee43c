"""Plans: the write calls of a run, staged for the user's approval, applied atomically by the app."""

from __future__ import annotations

from typing import Any, Protocol

from ._grounding import Evidence

__all__ = ["PlanExecutor"]


class PlanExecutor(Protocol):
    """What an app provides so its write tools can be staged, approved and applied.

    Operations are JSON-able dicts built by the write tools' functions. Every method raises ToolError (with the
    seeds' error codes) for an operation that cannot be done; nothing may change on disk when it does.
    """

    def check_grounding(self, tool_name: str, op: dict[str, Any], evidence: Evidence) -> None:
        """Refuse (ToolError `ungrounded_argument`) a write whose key arguments are guesses, not the user's words or data."""

    def validate(self, ops: list[dict[str, Any]], *, lang: str = "en") -> list[str]:
        """Check `ops` in order against the current data; return one preview line per op, in `lang` (people read
        the previews of a plan they approve in the run's language; the model reads them in English)."""

    def apply(self, ops: list[dict[str, Any]], *, plan_id: str, run_id: str, actor: str) -> dict[str, Any]:
        """Apply all of `ops` atomically (all or nothing) and audit them; return a summary for the record."""

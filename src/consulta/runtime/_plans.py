"""Plans: the write calls of a run, staged for the user's approval, applied atomically by the app."""

from __future__ import annotations

from typing import Any, Protocol

from ._grounding import Evidence

__all__ = ["PlanExecutor"]


class PlanExecutor(Protocol):
    """What an app provides so its write tools can be staged, approved and applied.

    Operations are JSON-able dicts built by the write tools' functions. Every method raises ToolError (with the
    seeds' error codes) for an operation that cannot be done; nothing may change on disk when it does.

    Applying must survive a kill at any instant: before it changes its data, `apply` records durably what it
    intends (the plan id, the data's state before and after, the record lines it will write), and `reconcile` settles
    what an interrupted apply left, so that the data and its record agree in one of exactly two states — the plan's
    change fully in the data and fully on record, or nothing of it anywhere. The runtime calls `reconcile` before it
    decides an approved plan and never applies a plan whose change `reconcile` found done.
    """

    def ground_args(self, tool_name: str, args: dict[str, Any], evidence: Evidence) -> dict[str, Any]:
        """The write call's arguments with the ones nothing grounds left out (called before the tool runs, except when
        it runs again with the answer to the runtime's own question). Optional: an executor without it keeps them all."""

    def check_grounding(self, tool_name: str, op: dict[str, Any], evidence: Evidence) -> None:
        """Refuse (ToolError `ungrounded_argument`) a write whose key arguments are guesses, not the user's words or data."""

    def validate(self, ops: list[dict[str, Any]], *, lang: str = "en") -> list[str]:
        """Check `ops` in order against the current data; return one preview line per op, in `lang` (people read
        the previews of a plan they approve in the run's language; the model reads them in English)."""

    def apply(self, ops: list[dict[str, Any]], *, plan_id: str, run_id: str, actor: str) -> dict[str, Any]:
        """Apply all of `ops` atomically (all or nothing) and audit them; return a summary for the record."""

    def reconcile(self, plan_id: str) -> dict[str, Any] | None:
        """Settle what an apply of `plan_id` interrupted by a crash left, and say whether the plan is applied.

        If the plan's change is in the data, finish its record (the missing audit lines, exactly one per operation)
        and return the summary `apply` would have returned: the plan is applied and must not be applied again. If
        none of it is, remove the leftovers (the recorded intent, temporary files) and return None: the plan can be
        applied. Idempotent and cheap when nothing was interrupted; never applies anything itself."""

"""The Director's memo, `state/director.json`: what it has learnt so far in a run's workspace (each agent's answer,
each consultation's number and reply, the person's decisions, notes), saved atomically on every change, so that a
run killed at any point and started again replays it: no agent asked twice, no record written twice. Records are
stamped with `SOURCE_DATE_EPOCH` when it is set (reproducible runs), else the clock."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ._files import write_atomic

__all__ = ["Memo", "clock", "pending_escalation"]


def pending_escalation(workspace: Path) -> str | None:
    """The escalation a run of this workspace waits on (`gate#round`), or None."""
    memo = Path(workspace) / "state" / "director.json"
    if not memo.is_file():
        return None
    pending = json.loads(memo.read_text(encoding="utf-8")).get("notes", {}).get("pending")
    return pending if isinstance(pending, str) else None


def clock() -> str:
    """Now (UTC, seconds), or `SOURCE_DATE_EPOCH` when set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    stamp = datetime.fromtimestamp(int(epoch), UTC) if epoch and epoch.isdigit() else datetime.now(UTC)
    return stamp.isoformat(timespec="seconds")


class Memo:
    """`state/director.json`: what the Director has learnt so far, saved atomically on every change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        for key in ("answers", "consults", "pairs", "decisions", "notes"):
            self.data.setdefault(key, {})

    def save(self) -> None:
        write_atomic(self.path, json.dumps(self.data, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8"))

    def __getitem__(self, key: str) -> dict[str, Any]:
        return self.data[key]

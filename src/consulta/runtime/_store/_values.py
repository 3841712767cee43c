"""How the store writes values: timestamps, ids, JSON text, the lease clock."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

__all__ = ["clock", "dumps", "loads", "new_id", "utcnow"]


def utcnow() -> str:
    """Now, as an ISO-8601 UTC timestamp (the store's one time format)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_id(prefix: str) -> str:
    """A new random id such as `run_3f2a…`, short enough to type."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def clock() -> float:
    """Seconds since the epoch: the time of heartbeats, compared across processes."""
    return datetime.now(UTC).timestamp()


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)

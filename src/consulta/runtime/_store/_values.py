"""How the store writes values: timestamps, ids, JSON text, the lease clock."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any, TypeVar

__all__ = ["clock", "dumps", "loads", "loads_or", "new_id", "record_from_row", "utcnow"]

R = TypeVar("R")


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


def loads_or(empty: Callable[[], Any]) -> Callable[[str | None], Any]:
    """`loads`, with `empty()` for a NULL or empty value."""
    return lambda value: loads(value) or empty()


def record_from_row(cls: type[R], row: Mapping[str, Any], **decode: Callable[[Any], Any]) -> R:
    """A record (a dataclass) from a row with a column per field; `decode` maps a field to how its column reads."""
    values = {f.name: row[f.name] for f in fields(cls) if f.name in row}  # type: ignore[arg-type]
    for name, read in decode.items():
        values[name] = read(row[name])
    return cls(**values)

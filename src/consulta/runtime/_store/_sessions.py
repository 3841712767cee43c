"""Sessions: the tokens front ends issued, kept as their sha256 (a token itself is never stored)."""

from __future__ import annotations

import re

from sqlalchemy import insert, select

from ._database import Database
from ._schema import sessions
from ._values import utcnow

__all__ = ["Sessions"]

_SHA256 = re.compile(r"[0-9a-f]{64}")


class Sessions:
    """The issued session tokens of a store (a part of `Store`), by their sha256 hex digest."""

    _db: Database

    def add_session(self, token_sha256: str) -> None:
        """Record a newly issued token by its sha256 (lowercase hex). ValueError for anything else: the store keeps
        digests, never a token."""
        if not _SHA256.fullmatch(token_sha256):
            raise ValueError("add_session takes the token's sha256 as 64 lowercase hex digits, never the token itself.")
        with self._db.begin() as conn:
            conn.execute(insert(sessions).values(token_sha256=token_sha256, created_at=utcnow()))

    def has_session(self, token_sha256: str) -> bool:
        """Whether a token with this sha256 was issued."""
        with self._db.read() as conn:
            return (
                conn.execute(select(sessions.c.token_sha256).where(sessions.c.token_sha256 == token_sha256)).first()
                is not None
            )

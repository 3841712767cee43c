"""Issued sessions on record: the store keeps each token's sha256 (never a token), and knows only those."""

from __future__ import annotations

import hashlib
import secrets

import pytest
from sqlalchemy import select

from consulta.runtime import Store
from consulta.runtime._store._schema import sessions


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@pytest.mark.both_backends
def test_a_session_is_known_by_its_digest_only_and_across_openings(store_url: str) -> None:
    token = secrets.token_urlsafe(32)
    store = Store(store_url)
    try:
        assert not store.has_session(_digest(token))
        store.add_session(_digest(token))
        assert store.has_session(_digest(token))
        assert not store.has_session(_digest(secrets.token_urlsafe(32)))  # made up: never issued
        with store.engine.connect() as conn:
            stored = [tuple(row) for row in conn.execute(select(sessions))]
        assert [row[0] for row in stored] == [_digest(token)] and token not in repr(stored)
    finally:
        store.close()
    reopened = Store(store_url)  # another process, or the server restarted
    try:
        assert reopened.has_session(_digest(token))
    finally:
        reopened.close()


def test_the_store_refuses_anything_but_a_digest(store: Store) -> None:
    token = secrets.token_urlsafe(32)
    for bad in (token, _digest(token).upper(), _digest(token)[:63], ""):
        with pytest.raises(ValueError, match="sha256"):
            store.add_session(bad)
    assert not store.has_session(token)

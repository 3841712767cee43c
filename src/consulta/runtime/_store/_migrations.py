"""Bringing a store's schema up to date on open, with the Alembic migrations shipped in `migrations/`.

Every schema change is a revision under `migrations/versions/`. A store made by any earlier version upgrades when
it is opened: the first revision (the baseline) creates the tables of a new store and adopts a store made before
Alembic (its two hand-written earlier layouts included). One process at a time migrates (`Database.migrating`);
the others wait, then find the store up to date.

A developer makes a new revision with the alembic command, e.g.
    alembic -c src/consulta/runtime/_store/migrations/alembic.ini -x url=sqlite:///new.db revision --autogenerate -m "…"
"""

from __future__ import annotations

import ast
import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from ._database import Database
from ._schema import metadata

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic (a third of a second of imports) is imported only when a store is behind: opening an up-to-date store reads
# its revision with one query and compares it with the newest revision file's (`consulta asks` starts at once).

__all__ = ["SCRIPTS", "configure", "head", "upgrade"]

SCRIPTS = Path(__file__).with_name("migrations")

# Alembic's `context` and `op` are module globals: two stores of one process migrate one after the other.
_IN_PROCESS = threading.Lock()


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    config.attributes["connection"] = connection
    return config


@functools.cache
def head() -> str | None:
    """The newest revision shipped with this version of Consulta: the one no other revision names as its
    `down_revision`, read from the revision files' assignments without importing them or Alembic (a test holds it
    equal to Alembic's own answer)."""
    revisions: dict[str, object] = {}
    for path in (SCRIPTS / "versions").glob("*.py"):
        values = {
            target.id: node.value.value
            for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant)
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name) and target.id in ("revision", "down_revision")
        }
        if isinstance(values.get("revision"), str):
            revisions[str(values["revision"])] = values.get("down_revision")
    heads = set(revisions) - set(revisions.values())
    if len(heads) > 1:
        raise RuntimeError(f"the store's migrations have several heads {sorted(heads)}: merge them (alembic merge)")
    return heads.pop() if heads else None


def _current(db: Database) -> str | None:
    """The store's revision (`alembic_version`), or None when it has none yet (a new store, or one made before
    Alembic: the table is missing)."""
    try:
        with db.read() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except DBAPIError:
        return None


def upgrade(db: Database) -> None:
    """Bring the store's schema up to the newest revision (nothing to do, one cheap query, when it is there)."""
    if _current(db) == head():
        return
    from alembic import command

    with _IN_PROCESS, db.migrating() as conn:
        command.upgrade(_config(conn), "head")


def configure(connection: Connection) -> dict[str, object]:
    """The options `migrations/env.py` hands to Alembic's context (one place for the store and the command)."""
    return {"connection": connection, "target_metadata": metadata, "render_as_batch": True}

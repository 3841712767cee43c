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

from sqlalchemy import MetaData, inspect, text
from sqlalchemy.engine import Connection

from ._database import Database
from ._schema import metadata

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic (a third of a second of imports) is imported only to migrate: an up-to-date store is told by one query
# and the newest revision read from the revision files (`consulta asks` starts at once).

__all__ = ["SCRIPTS", "configure", "current_revision", "head", "run_upgrade", "upgrade"]

SCRIPTS = Path(__file__).with_name("migrations")
_VERSION_TABLE = "alembic_version"

# Alembic's `context` and `op` are module globals: two stores of one process migrate one after the other.
_IN_PROCESS = threading.Lock()


def _config(
    connection: Connection | None = None,
    *,
    metadata: MetaData = metadata,
    migrations: Path | None = None,
    version_table: str = _VERSION_TABLE,
) -> Config:
    """Alembic's configuration: the store's environment (`migrations/env.py`) over the store's revisions, or over an
    app's (`migrations`, with its own metadata and version table)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    if migrations is not None:
        config.set_main_option("path_separator", "os")  # a folder's path may hold spaces
        config.set_main_option("version_locations", str(migrations))
    config.attributes.update(connection=connection, metadata=metadata, version_table=version_table)
    return config


@functools.cache
def head(migrations: Path | None = None) -> str | None:
    """The newest revision shipped with this version of Consulta: the store's, or that in an app's `migrations`.
    Read from the revision files' `revision` and `down_revision` (the one no other revision follows) without
    importing them or Alembic; Alembic answers when a file says it otherwise (a test holds the two equal)."""
    folder = SCRIPTS / "versions" if migrations is None else migrations
    revisions: dict[str, object] = {}
    for path in folder.glob("*.py"):
        values: dict[str, object] = {}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
                    values[target.id] = ast.literal_eval(value)
        if not isinstance(values.get("revision"), str):
            return _alembic_head(migrations)
        revisions[str(values["revision"])] = values.get("down_revision")
    followed = {down for d in revisions.values() for down in (d if isinstance(d, tuple | list) else [d])}
    heads = set(revisions) - followed
    return heads.pop() if len(heads) == 1 else _alembic_head(migrations)


def _alembic_head(migrations: Path | None) -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config(migrations=migrations)).get_current_head()


def current_revision(conn: Connection, *, version_table: str = _VERSION_TABLE) -> str | None:
    """The revision the database is at (None: none yet, its version table missing). Asked without Alembic; the
    table is looked up first, so that a missing one fails no statement (on PostgreSQL that would abort `conn`'s
    transaction)."""
    if not inspect(conn).has_table(version_table):
        return None
    return conn.execute(text(f'SELECT version_num FROM "{version_table}"')).scalar()


def upgrade(db: Database) -> None:
    """Bring the store's schema up to the newest revision (nothing to do, one cheap query, when it is there)."""
    with db.read() as conn:
        if current_revision(conn) == head():
            return
    with db.migrating() as conn:
        run_upgrade(conn)


def run_upgrade(
    conn: Connection,
    *,
    metadata: MetaData = metadata,
    migrations: Path | None = None,
    version_table: str = _VERSION_TABLE,
) -> None:
    """Run the revisions up to the newest in `conn`'s migration transaction (the store's, or an app's)."""
    from alembic import command

    with _IN_PROCESS:
        command.upgrade(_config(conn, metadata=metadata, migrations=migrations, version_table=version_table), "head")


def configure(connection: Connection, config: Config | None = None) -> dict[str, object]:
    """The options `migrations/env.py` hands to Alembic's context (one place for the store, the apps and the
    command): the metadata and version table `config` carries (default: the store's)."""
    attributes = config.attributes if config is not None else {}
    target = attributes.get("metadata", metadata)
    return {
        "connection": connection,
        "target_metadata": target,
        "version_table": attributes.get("version_table", _VERSION_TABLE),
        "render_as_batch": True,
        # autogenerate compares only the tables of the metadata at hand: the store's and each app's are apart
        "include_name": lambda name, type_, parent: type_ != "table" or name in target.tables,
    }

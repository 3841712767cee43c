"""Baseline: the store as it was when migrations began, made new or adopted from a store made before them.

A new store gets the tables. A store made before Alembic gets what its version lacked: tables and indexes added
since, the `runs.principal` column, and its checkpoints rewritten one message a row (they were one JSON array per
run before the conversation was stored a message a row) — so a store of any earlier version reads the same after.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _tables() -> sa.MetaData:
    """The tables at this revision (frozen: later revisions change them, not this)."""
    m = sa.MetaData()
    sa.Table(
        "runs",
        m,
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("app", sa.String(40), nullable=False),
        sa.Column("thread_id", sa.String(40), nullable=False, index=True),
        sa.Column("parent_run_id", sa.String(40), nullable=True),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("prompt", sa.Text, nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("lang", sa.String(10), nullable=False),
        sa.Column("options", sa.Text, nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("output", sa.Text, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("owner", sa.String(120), nullable=True, index=True),
        sa.Column("principal", sa.String(120), nullable=True, index=True),
        sa.Column("heartbeat_at", sa.Float, nullable=True),
        sa.Column("cancel_requested", sa.Integer, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
    )
    sa.Table(
        "checkpoints",
        m,
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
    )
    sa.Table(
        "messages",
        m,
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("idx", sa.Integer, primary_key=True),
        sa.Column("data", sa.Text, nullable=False),
    )
    sa.Table(
        "asks",
        m,
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), nullable=False, index=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("tool_call_id", sa.String(120), nullable=True),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("answer", sa.Text, nullable=True),
        sa.Column("outcome", sa.Text, nullable=True),
        sa.Column("answered_by", sa.String(120), nullable=True),
        sa.Column("timeout_s", sa.Float, nullable=True),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("closed_at", sa.String(32), nullable=True),
        sa.Column("closed_seq", sa.Integer, nullable=True, index=True),
    )
    sa.Table(
        "plans",
        m,
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), nullable=False, index=True),
        sa.Column("app", sa.String(40), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("items", sa.Text, nullable=False),
        sa.Column("ask_id", sa.String(40), nullable=True),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
    )
    sa.Table(
        "tool_calls",
        m,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), nullable=False, index=True),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("tool_call_id", sa.String(120), nullable=False),
        sa.Column("tool_name", sa.String(120), nullable=False),
        sa.Column("args", sa.Text, nullable=False),
        sa.Column("result", sa.Text, nullable=False),
        sa.Column("ok", sa.Integer, nullable=False),
        sa.Column("error_code", sa.String(80), nullable=True),
        sa.Column("started_at", sa.String(32), nullable=False),
        sa.Column("duration_ms", sa.Float, nullable=False),
    )
    sa.Table(
        "events",
        m,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), nullable=False, index=True),
        sa.Column("type", sa.String(40), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("ts", sa.String(32), nullable=False),
    )
    sa.Table(
        "consultations",
        m,
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("run_id", sa.String(40), sa.ForeignKey("runs.id"), nullable=True, index=True),
        sa.Column("tool_call_id", sa.String(120), nullable=True),
        sa.Column("expert_id", sa.String(80), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("request", sa.Text, nullable=False),
        sa.Column("expert_output", sa.Text, nullable=True),
        sa.Column("binding_rules", sa.Text, nullable=False),
        sa.Column("instruction_updates", sa.Text, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("expert_run_id", sa.String(40), nullable=True),
        sa.Column("started_at", sa.String(32), nullable=False),
        sa.Column("finished_at", sa.String(32), nullable=False),
        sa.Column("duration_ms", sa.Float, nullable=False),
    )
    sa.Table(
        "counters",
        m,
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("value", sa.Integer, nullable=False),
    )
    return m


def upgrade() -> None:
    conn = op.get_bind()
    tables = _tables()
    present = set(sa.inspect(conn).get_table_names())
    tables.create_all(conn, tables=[t for t in tables.sorted_tables if t.name not in present])
    if "runs" in present:
        _adopt(conn, tables)


def _adopt(conn: sa.engine.Connection, tables: sa.MetaData) -> None:
    """A store made before Alembic: add what its version lacked."""
    if "principal" not in _columns(conn, "runs"):
        op.add_column("runs", sa.Column("principal", sa.String(120), nullable=True))
    if "messages" in _columns(conn, "checkpoints"):
        _split_checkpoints(conn, tables)
    inspector = sa.inspect(conn)
    for table in tables.sorted_tables:
        present = {index["name"] for index in inspector.get_indexes(table.name)}
        for index in table.indexes:
            if index.name not in present:
                index.create(conn)
    if "ix_asks_status_closed_seq" in {index["name"] for index in inspector.get_indexes("asks")}:
        op.drop_index(
            "ix_asks_status_closed_seq", table_name="asks"
        )  # the first layout's, replaced by ix_asks_closed_seq


def _split_checkpoints(conn: sa.engine.Connection, tables: sa.MetaData) -> None:
    """Rewrite checkpoints stored as one JSON array per run as one message a row (`messages`) plus a count."""
    checkpoints, messages = tables.tables["checkpoints"], tables.tables["messages"]
    old = conn.execute(sa.text("SELECT run_id, step, messages, updated_at FROM checkpoints")).mappings().all()
    op.drop_table("checkpoints")
    checkpoints.create(conn)
    for row in old:
        items = [json.dumps(m, ensure_ascii=False) for m in json.loads(row["messages"])]
        conn.execute(sa.delete(messages).where(messages.c.run_id == row["run_id"]))
        if items:
            conn.execute(
                sa.insert(messages), [{"run_id": row["run_id"], "idx": i, "data": d} for i, d in enumerate(items)]
            )
        conn.execute(
            sa.insert(checkpoints).values(
                run_id=row["run_id"], step=row["step"], count=len(items), updated_at=row["updated_at"]
            )
        )


def _columns(conn: sa.engine.Connection, table: str) -> set[str]:
    return {column["name"] for column in sa.inspect(conn).get_columns(table)}


def downgrade() -> None:
    raise NotImplementedError("The baseline has nothing to go back to: keep a copy of the store instead.")

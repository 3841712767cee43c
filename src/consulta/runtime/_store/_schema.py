"""The store's tables as the newest migration leaves them (the queries are written against these).

A change here is a change of schema: add a migration under `migrations/versions/` that makes it, and the test
comparing a migrated database with this metadata keeps the two in step.
"""

from __future__ import annotations

from sqlalchemy import Column, Float, ForeignKey, Integer, MetaData, String, Table, Text, UniqueConstraint

__all__ = [
    "asks",
    "checkpoints",
    "consultations",
    "counters",
    "durable_steps",
    "events",
    "messages",
    "metadata",
    "plans",
    "runs",
    "sessions",
    "tool_calls",
]

metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("app", String(40), nullable=False),
    Column(
        "agent", String(80), nullable=False, server_default=""
    ),  # the agent's name within its app; "" = its main one
    Column("thread_id", String(40), nullable=False, index=True),
    Column("parent_run_id", String(40), nullable=True),
    Column("status", String(16), nullable=False, index=True),
    Column("prompt", Text, nullable=False),
    Column("model", String(200), nullable=False),
    Column("lang", String(10), nullable=False),
    Column("options", Text, nullable=False, default="{}"),
    Column("trace_id", String(32), nullable=False),
    Column("output", Text, nullable=True),
    Column("error", Text, nullable=True),
    Column("owner", String(120), nullable=True, index=True),  # the process holding the run's lease
    Column("principal", String(120), nullable=True, index=True),  # whom the run belongs to (a session, a token)
    Column("heartbeat_at", Float, nullable=True),
    Column("cancel_requested", Integer, nullable=False, default=0),
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
)

checkpoints = Table(
    "checkpoints",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("step", Integer, nullable=False),
    Column("count", Integer, nullable=False),  # the checkpoint is messages 0..count-1 of the run
    Column("updated_at", String(32), nullable=False),
)

# A conversation is stored one message a row, so a step writes only what it added (not the whole history again).
messages = Table(
    "messages",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("data", Text, nullable=False),
)

asks = Table(
    "asks",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False, index=True),
    Column("kind", String(20), nullable=False),
    Column("tool_call_id", String(120), nullable=True),
    Column("payload", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("answer", Text, nullable=True),
    Column("outcome", Text, nullable=True),
    Column("answered_by", String(120), nullable=True),
    Column("timeout_s", Float, nullable=True),
    Column("trace_id", String(32), nullable=False),
    Column("created_at", String(32), nullable=False),
    Column("closed_at", String(32), nullable=True),
    Column("closed_seq", Integer, nullable=True, index=True),
)

plans = Table(
    "plans",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False, index=True),
    Column("app", String(40), nullable=False),
    Column("status", String(16), nullable=False),
    Column("items", Text, nullable=False),
    Column("ask_id", String(40), nullable=True),
    Column("result", Text, nullable=True),
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
)

tool_calls = Table(
    "tool_calls",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False, index=True),
    Column("step", Integer, nullable=False),
    Column("tool_call_id", String(120), nullable=False),
    Column("tool_name", String(120), nullable=False),
    Column("args", Text, nullable=False),
    Column("result", Text, nullable=False),
    Column("ok", Integer, nullable=False),
    Column("error_code", String(80), nullable=True),
    Column("started_at", String(32), nullable=False),
    Column("duration_ms", Float, nullable=False),
)

# A run's events are numbered 1, 2, 3 … (`seq`); `id` orders them across the store. The unique (run_id, seq) index
# serves every look-up by run: no index of run_id alone (one index fewer to write each step).
events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("type", String(40), nullable=False),
    Column("data", Text, nullable=False),
    Column("ts", String(32), nullable=False),
    UniqueConstraint("run_id", "seq", name="uq_events_run_id_seq"),
)

# The consultation ledger (seed 000): one row per consultation of an expert, numbered consult_0001, 0002, … per store.
consultations = Table(
    "consultations",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("run_id", String(40), ForeignKey("runs.id"), nullable=True, index=True),
    Column("tool_call_id", String(120), nullable=True),
    Column("expert_id", String(80), nullable=False),
    Column("status", String(16), nullable=False),
    Column("request", Text, nullable=False),
    Column("expert_output", Text, nullable=True),
    Column("binding_rules", Text, nullable=False),
    Column("instruction_updates", Text, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("error", Text, nullable=True),
    Column("expert_run_id", String(40), nullable=True),
    Column("started_at", String(32), nullable=False),
    Column("finished_at", String(32), nullable=False),
    Column("duration_ms", Float, nullable=False),
)

# Store-wide numbers given out in the writer's transaction (consultation numbers, the ask-closed high-water mark).
counters = Table(
    "counters",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("value", Integer, nullable=False),
)

# The session tokens front ends issued, each as its sha256 (never the token itself): a token not here is no session.
sessions = Table(
    "sessions",
    metadata,
    Column("token_sha256", String(64), primary_key=True),
    Column("created_at", String(32), nullable=False),
)

# A run's durable steps: work done once, its result recorded and replayed on resume (`_durable`).
durable_steps = Table(
    "durable_steps",
    metadata,
    Column("run_id", String(40), ForeignKey("runs.id"), primary_key=True),
    Column("key", String(200), primary_key=True),
    Column("result", Text, nullable=False),
    Column("created_at", String(32), nullable=False),
)

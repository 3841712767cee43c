-- The store's tables as Consulta c116745 made them (SQLite), for the upgrade-on-open tests.
-- (with common.sql: the tables that were the same in every earlier version)
CREATE TABLE runs(
  id VARCHAR(40) NOT NULL,
  app VARCHAR(40) NOT NULL,
  thread_id VARCHAR(40) NOT NULL,
  parent_run_id VARCHAR(40),
  status VARCHAR(16) NOT NULL,
  prompt TEXT NOT NULL,
  model VARCHAR(200) NOT NULL,
  lang VARCHAR(10) NOT NULL,
  options TEXT NOT NULL,
  trace_id VARCHAR(32) NOT NULL,
  output TEXT,
  error TEXT,
  owner VARCHAR(120),
  principal VARCHAR(120),
  heartbeat_at FLOAT,
  cancel_requested INTEGER NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  PRIMARY KEY (id)
);
CREATE INDEX ix_runs_owner ON runs (owner);
CREATE INDEX ix_runs_principal ON runs (principal);
CREATE INDEX ix_runs_status ON runs (status);
CREATE INDEX ix_runs_thread_id ON runs (thread_id);
CREATE TABLE asks(
  id VARCHAR(40) NOT NULL,
  run_id VARCHAR(40) NOT NULL,
  kind VARCHAR(20) NOT NULL,
  tool_call_id VARCHAR(120),
  payload TEXT NOT NULL,
  status VARCHAR(16) NOT NULL,
  answer TEXT,
  outcome TEXT,
  answered_by VARCHAR(120),
  timeout_s FLOAT,
  trace_id VARCHAR(32) NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  closed_at VARCHAR(32),
  closed_seq INTEGER,
  PRIMARY KEY (id),
  FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE INDEX ix_asks_closed_seq ON asks (closed_seq);
CREATE INDEX ix_asks_run_id ON asks (run_id);
CREATE TABLE checkpoints(
  run_id VARCHAR(40) NOT NULL,
  step INTEGER NOT NULL,
  count INTEGER NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  PRIMARY KEY (run_id),
  FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE TABLE consultations(
  id VARCHAR(40) NOT NULL,
  run_id VARCHAR(40),
  tool_call_id VARCHAR(120),
  expert_id VARCHAR(80) NOT NULL,
  status VARCHAR(16) NOT NULL,
  request TEXT NOT NULL,
  expert_output TEXT,
  binding_rules TEXT NOT NULL,
  instruction_updates TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  error TEXT,
  expert_run_id VARCHAR(40),
  started_at VARCHAR(32) NOT NULL,
  finished_at VARCHAR(32) NOT NULL,
  duration_ms FLOAT NOT NULL,
  PRIMARY KEY (id),
  FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE INDEX ix_consultations_run_id ON consultations (run_id);
CREATE TABLE messages(
  run_id VARCHAR(40) NOT NULL,
  idx INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (run_id, idx),
  FOREIGN KEY(run_id) REFERENCES runs (id)
);

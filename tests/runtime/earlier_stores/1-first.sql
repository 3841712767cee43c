-- The store's tables as Consulta 6a49629 made them (SQLite), for the upgrade-on-open tests.
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
  heartbeat_at FLOAT,
  cancel_requested INTEGER NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  PRIMARY KEY (id)
);
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
CREATE INDEX ix_asks_run_id ON asks (run_id);
CREATE INDEX ix_asks_status_closed_seq ON asks (status, closed_seq);
CREATE TABLE checkpoints(
  run_id VARCHAR(40) NOT NULL,
  step INTEGER NOT NULL,
  messages TEXT NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  PRIMARY KEY (run_id),
  FOREIGN KEY(run_id) REFERENCES runs (id)
);

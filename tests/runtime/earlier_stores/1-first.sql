-- The store's tables as Consulta 6a49629 made them (SQLite), for the upgrade-on-open tests.
CREATE TABLE counters(
  name VARCHAR(40) NOT NULL,
  value INTEGER NOT NULL,
  PRIMARY KEY (name)
);
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
CREATE TABLE events(
  id INTEGER NOT NULL,
  run_id VARCHAR(40) NOT NULL,
  type VARCHAR(40) NOT NULL,
  data TEXT NOT NULL,
  ts VARCHAR(32) NOT NULL,
  PRIMARY KEY (id),
  FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE INDEX ix_events_run_id ON events (run_id);
CREATE TABLE plans(
  id VARCHAR(40) NOT NULL,
  run_id VARCHAR(40) NOT NULL,
  app VARCHAR(40) NOT NULL,
  status VARCHAR(16) NOT NULL,
  items TEXT NOT NULL,
  ask_id VARCHAR(40),
  result TEXT,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  PRIMARY KEY (id),
  FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE INDEX ix_plans_run_id ON plans (run_id);
CREATE TABLE tool_calls(
  id INTEGER NOT NULL,
  run_id VARCHAR(40) NOT NULL,
  step INTEGER NOT NULL,
  tool_call_id VARCHAR(120) NOT NULL,
  tool_name VARCHAR(120) NOT NULL,
  args TEXT NOT NULL,
  result TEXT NOT NULL,
  ok INTEGER NOT NULL,
  error_code VARCHAR(80),
  started_at VARCHAR(32) NOT NULL,
  duration_ms FLOAT NOT NULL,
  PRIMARY KEY (id),
  FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE INDEX ix_tool_calls_run_id ON tool_calls (run_id);

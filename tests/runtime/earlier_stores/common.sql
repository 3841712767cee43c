-- The tables every earlier version of the store made alike (SQLite), for the upgrade-on-open tests.
CREATE TABLE counters(
  name VARCHAR(40) NOT NULL,
  value INTEGER NOT NULL,
  PRIMARY KEY (name)
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

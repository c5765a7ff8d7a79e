-- drivelab results database, schema version 1.
-- Written in the SQL subset that both SQLite and PostgreSQL accept.
-- JSON documents (host, config, the whole run.json) are stored as TEXT so that the
-- schema and the stored bytes are identical on both engines.

CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    suite TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    tool_version TEXT NOT NULL,
    schema_version BIGINT NOT NULL,
    host_name TEXT NOT NULL,
    host_json TEXT NOT NULL,
    device_path TEXT NOT NULL,
    device_model TEXT,
    device_serial TEXT,
    device_firmware TEXT,
    device_capacity_bytes BIGINT,
    device_kind TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    config_json TEXT NOT NULL,
    status TEXT NOT NULL,
    bundle_path TEXT,
    bundle_json TEXT
);

CREATE INDEX runs_started_at ON runs (started_at);
CREATE INDEX runs_suite ON runs (suite);
CREATE INDEX runs_device_serial ON runs (device_serial);

CREATE TABLE metrics (
    run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    name TEXT NOT NULL,
    value DOUBLE PRECISION NOT NULL,
    unit TEXT NOT NULL,
    PRIMARY KEY (run_id, position),
    UNIQUE (run_id, name)
);

CREATE INDEX metrics_name ON metrics (name);

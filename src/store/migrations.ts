/**
 * Schema versions, applied in order inside one transaction each; `PRAGMA user_version` records
 * how far a database has come. Append new entries; never edit a released one.
 */
export const migrations: string[] = [
  `
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    workspace TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    parent_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    status TEXT NOT NULL DEFAULT 'active',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX sessions_workspace ON sessions(workspace, updated_at);

  CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
  ) WITHOUT ROWID;

  CREATE TABLE usage (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX usage_session ON usage(session_id);

  CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    decision TEXT NOT NULL,
    rule TEXT,
    duration_ms INTEGER,
    exit_code INTEGER,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX audit_session ON audit(session_id);

  CREATE TABLE session_state (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session_id, key)
  ) WITHOUT ROWID;
  `,
  `
  -- What a person sees of a tool call (full command output, a diff), kept whole even when the
  -- event stream and the model got a shortened copy.
  CREATE TABLE tool_outputs (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    call_id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (session_id, call_id)
  ) WITHOUT ROWID;
  `,
  `
  -- Sub-agents are sessions too: depth 0 is a session a person started, 1 one its agent started,
  -- and so on. parent_id alone cannot tell: a fork also names the session it was copied from.
  ALTER TABLE sessions ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX sessions_parent ON sessions(parent_id);
  `,
  `
  -- The scheduler (src/scheduler). Job definitions live in cron.json files, or here (definition)
  -- for jobs added with \`hearth jobs add\`; this table keeps each job's progress: \`cursor_at\` is the
  -- latest slot already recorded, moved in the same transaction that records the slots up to it.
  CREATE TABLE scheduler_jobs (
    id TEXT PRIMARY KEY,
    definition TEXT,
    enabled_override INTEGER,
    anchor_at INTEGER NOT NULL,
    cursor_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  );

  -- Every run the scheduler made or decided not to make: scheduled slots (at most one row each,
  -- by the unique index), manual runs, inbox tasks and wake-ups. A queued or running row belongs
  -- to \`owner\` until \`lease_until\`; the owner renews it while its process lives.
  CREATE TABLE scheduler_runs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    job_id TEXT,
    slot_at INTEGER,
    ref TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    caught_up INTEGER NOT NULL DEFAULT 0,
    prompt TEXT NOT NULL DEFAULT '',
    workspace TEXT,
    session_id TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    lease_until INTEGER,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    ended_at INTEGER
  );
  CREATE UNIQUE INDEX scheduler_runs_slot ON scheduler_runs(job_id, slot_at) WHERE slot_at IS NOT NULL;
  CREATE INDEX scheduler_runs_job ON scheduler_runs(job_id, id);
  CREATE UNIQUE INDEX scheduler_runs_inbox ON scheduler_runs(ref) WHERE kind = 'inbox';
  CREATE INDEX scheduler_runs_open ON scheduler_runs(status) WHERE status IN ('queued', 'running');

  -- Which process runs the scheduler: one holder at a time, until \`until\` unless it renews.
  CREATE TABLE scheduler_lease (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    pid INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    until INTEGER NOT NULL
  );

  -- A session set to resume at a time with a message (\`hearth wake\`, the schedule_wakeup tool).
  CREATE TABLE wakeups (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    at INTEGER NOT NULL,
    message TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    created_at INTEGER NOT NULL
  );
  CREATE INDEX wakeups_due ON wakeups(status, at);
  `,
];

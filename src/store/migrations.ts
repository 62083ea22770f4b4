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
  -- The pipeline (src/pipeline/): plans stored once by content hash, their tasks as a queue with
  -- dependencies, and a log of every transition and review.
  CREATE TABLE plans (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL,
    workspace TEXT NOT NULL,
    title TEXT NOT NULL,
    markdown TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'new',
    error TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (workspace, hash)
  );
  CREATE TABLE pipeline_tasks (
    id INTEGER PRIMARY KEY,
    plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    files TEXT NOT NULL,
    acceptance TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    outcome TEXT,
    owner TEXT,
    session_id TEXT,
    rework INTEGER NOT NULL DEFAULT 0,
    feedback TEXT,
    findings TEXT,
    signatures TEXT NOT NULL DEFAULT '{}',
    summary TEXT,
    error TEXT,
    commit_hash TEXT,
    updated_at INTEGER NOT NULL,
    UNIQUE (plan_id, seq)
  );
  CREATE INDEX pipeline_tasks_state ON pipeline_tasks(state);
  CREATE TABLE pipeline_task_deps (
    task_id INTEGER NOT NULL REFERENCES pipeline_tasks(id) ON DELETE CASCADE,
    depends_on INTEGER NOT NULL REFERENCES pipeline_tasks(id) ON DELETE CASCADE,
    PRIMARY KEY (task_id, depends_on)
  ) WITHOUT ROWID;
  CREATE TABLE pipeline_log (
    id INTEGER PRIMARY KEY,
    plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    task_id INTEGER,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX pipeline_log_plan ON pipeline_log(plan_id, id);
  `,
];

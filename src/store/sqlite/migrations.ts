/**
 * Schema versions, applied in order (the pending ones in one transaction); `PRAGMA user_version` records
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
  `
  -- Long-term memory (src/memory/). A memory is user-wide when workspace is NULL, else it belongs to
  -- that project. The embedding is a little-endian Float32 vector, unit length, with the model and
  -- dimension that produced it: vectors of different models are never compared.
  CREATE TABLE memories (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'learning', 'skill')),
    workspace TEXT,
    text TEXT NOT NULL,
    detail TEXT,
    origin TEXT NOT NULL,
    source_file TEXT,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    message_seq INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    use_count INTEGER NOT NULL DEFAULT 0,
    embedding BLOB,
    embedding_model TEXT,
    embedding_dim INTEGER
  );
  CREATE INDEX memories_workspace ON memories(workspace, updated_at);
  CREATE INDEX memories_embedding_model ON memories(embedding_model);
  CREATE INDEX memories_source_file ON memories(source_file) WHERE source_file IS NOT NULL;

  CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, content = 'memories', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
  );
  CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text);
  END;
  CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
  END;
  CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text);
  END;

  -- What the vector indexes must catch up on. The sqlite-vec table (created at run time, only where
  -- the extension loads) drains memory_vec_pending; in-process indexes reload when the revision moves.
  CREATE TABLE memory_vec_pending (memory_id INTEGER PRIMARY KEY);
  CREATE TABLE memory_revision (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
  INSERT INTO memory_revision VALUES (1, 0);
  CREATE TABLE memory_vec_meta (id INTEGER PRIMARY KEY CHECK (id = 1), model TEXT NOT NULL, dim INTEGER NOT NULL);
  CREATE TRIGGER memories_vec_insert AFTER INSERT ON memories BEGIN
    INSERT OR IGNORE INTO memory_vec_pending VALUES (new.id);
    UPDATE memory_revision SET value = value + 1;
  END;
  CREATE TRIGGER memories_vec_delete AFTER DELETE ON memories BEGIN
    INSERT OR IGNORE INTO memory_vec_pending VALUES (old.id);
    UPDATE memory_revision SET value = value + 1;
  END;
  CREATE TRIGGER memories_vec_update AFTER UPDATE OF embedding, embedding_model, workspace ON memories BEGIN
    INSERT OR IGNORE INTO memory_vec_pending VALUES (new.id);
    UPDATE memory_revision SET value = value + 1;
  END;

  -- What reflection proposed, waiting for review; detail is JSON (a learning's evidence, a skill).
  CREATE TABLE memory_proposals (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    workspace TEXT,
    text TEXT NOT NULL,
    detail TEXT,
    session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
    message_seq INTEGER,
    status TEXT NOT NULL DEFAULT 'pending',
    memory_id INTEGER REFERENCES memories(id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL,
    decided_at INTEGER
  );
  CREATE INDEX memory_proposals_status ON memory_proposals(status, id);

  -- A session is reflected once: this row is written in the same transaction as its proposals.
  CREATE TABLE reflections (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    proposals INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  -- Every event a session emitted over the gateway, numbered per session, so that a client that
  -- reconnects gets what it missed (store/events.ts). The partial index serves the activity feed.
  CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
  ) WITHOUT ROWID;
  CREATE INDEX events_activity ON events(created_at) WHERE type IN ('tool_call', 'tool_result');
  -- Usage over a time range (today, 7 days, ...) without reading every row.
  CREATE INDEX usage_created ON usage(created_at);
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
  `
  -- Scheduled runs handed to the shared PostgreSQL queue (scheduler/queue-handoff.ts): the task's
  -- key there, and the worker and machine that ran it.
  ALTER TABLE scheduler_runs ADD COLUMN queue_key TEXT;
  ALTER TABLE scheduler_runs ADD COLUMN worker TEXT;
  ALTER TABLE scheduler_runs ADD COLUMN host TEXT;
  CREATE INDEX scheduler_runs_queued_elsewhere ON scheduler_runs(queue_key) WHERE queue_key IS NOT NULL AND status = 'running';
  `,
  `
  -- The pipeline's events as every surface showed them (src/pipeline/journal.ts), numbered across
  -- workspaces so a reader resumes after the last id it saw, and the pause flag per workspace
  -- that every running worker reads before it claims a task.
  CREATE TABLE pipeline_events (
    id INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX pipeline_events_workspace ON pipeline_events(workspace, id);
  CREATE TABLE pipeline_control (
    workspace TEXT PRIMARY KEY,
    paused INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  -- A session's run lease (src/store/sqlite-leases.ts): which process runs it now, until when.
  -- The process column tells that process apart from a later one with its pid (util/process-identity.ts).
  CREATE TABLE session_leases (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    instance TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    process TEXT,
    label TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  -- A pipeline task's claims are numbered: a claim is its owner and this number, and every move of a
  -- claimed task is conditional on both (src/pipeline/plan-store.ts, Claim).
  ALTER TABLE pipeline_tasks ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;
  `,
  `
  -- How fast a request's reply came (src/llm/speed.ts: JSON), and the assistant message it made,
  -- for \`hearth sessions show\`.
  ALTER TABLE usage ADD COLUMN speed TEXT;
  ALTER TABLE usage ADD COLUMN message_seq INTEGER;
  `,
  `
  -- \`hearth eval\` (src/eval/): a run, and one result per model, task and attempt, kept as each
  -- attempt ends (src/store/eval-results.ts).
  CREATE TABLE eval_runs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    finished_at INTEGER
  );
  CREATE TABLE eval_results (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES eval_runs(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    session_id TEXT,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (run_id, model, task, attempt)
  );
  `,
  `
  -- Reflection reads a session again once it has new messages (a gateway session idle, then used
  -- again): the last message each reflection read. Reflections from before read it all.
  ALTER TABLE reflections ADD COLUMN through_seq INTEGER NOT NULL DEFAULT 2147483647;
  `,
];

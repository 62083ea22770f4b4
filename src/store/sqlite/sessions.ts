/**
 * The SQLite backend of the session storage (see session-storage.ts): the synchronous
 * SessionStore (sessions.ts) behind the asynchronous interface. Its journal writes each call at
 * once, so a SQLite session is exactly as crash-safe as it was before the interface existed, and a
 * step costs the same statements.
 */

import type { ChatMessage } from '../../llm/types.js';
import type { AuditEntry, NewSession, UsageRecord } from '../rows.js';
import { defaultHolder, type LeaseHolder, type StoredLeases } from '../run-lease.js';
import type { SessionFields, SessionJournal, SessionStorage } from '../session-storage.js';
import type { Db } from './database.js';
import { sqliteLeases } from './run-leases.js';
import { SessionStore } from './session-store.js';
import { sessionSpeeds, sessionUsage, usageReport } from './usage-report.js';
import { WakeupStore } from './wakeups.js';

export class SqliteSessionStorage implements SessionStorage {
  readonly store: SessionStore;
  readonly leases: StoredLeases;

  /**
   * `close` closes `db` only when `owned`: a caller that opened it elsewhere closes it there;
   * `holder` names this process in its run leases.
   */
  constructor(
    readonly db: Db,
    readonly location: string,
    private readonly owned = false,
    holder: LeaseHolder = defaultHolder(),
  ) {
    this.store = new SessionStore(db);
    this.leases = sqliteLeases(db, holder);
  }

  async create(input: NewSession, messages: ChatMessage[] = []) {
    return this.store.create(input, messages);
  }
  async get(id: string) {
    return this.store.get(id);
  }
  async resolve(idOrPrefix: string) {
    return this.store.resolve(idOrPrefix);
  }
  async latest(workspace: string) {
    return this.store.latest(workspace);
  }
  async list(opts: { workspace?: string; limit?: number; topLevel?: boolean } = {}) {
    return this.store.list(opts);
  }
  async subagents(id: string) {
    return this.store.subagents(id);
  }
  async subagentTree(id: string) {
    return this.store.subagentTree(id);
  }
  async update(id: string, fields: SessionFields) {
    this.store.update(id, fields);
  }
  async remove(id: string) {
    this.store.remove(id);
  }
  async appendMessage(id: string, message: ChatMessage) {
    this.store.appendMessage(id, message);
  }
  async messages(id: string) {
    return this.store.messages(id);
  }
  async messageCount(id: string) {
    return this.store.messageCount(id);
  }
  async fork(id: string, opts?: { before?: number }) {
    return this.store.fork(id, opts);
  }
  async recordUsage(id: string, usage: UsageRecord) {
    this.store.recordUsage(id, usage);
  }
  async usage(since?: number) {
    return usageReport(this.db, since);
  }
  async sessionUsage(id: string) {
    return sessionUsage(this.db, id);
  }
  async speeds(id: string) {
    return sessionSpeeds(this.db, id);
  }
  async count() {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM sessions').get() as { n: number }).n;
  }
  async recordAudit(id: string, entry: AuditEntry) {
    this.store.recordAudit(id, entry);
  }
  async audit(id: string) {
    return this.store.audit(id);
  }
  async saveToolOutput(id: string, callId: string, body: string) {
    this.store.saveToolOutput(id, callId, body);
  }
  async toolOutput(id: string, callId: string) {
    return this.store.toolOutput(id, callId);
  }
  async journal(id: string): Promise<SessionJournal> {
    const { store } = this;
    return {
      id,
      state: store.state(id),
      appendMessage: (message) => store.appendMessage(id, message),
      update: (fields) => store.update(id, fields),
      recordUsage: (usage) => store.recordUsage(id, usage),
      recordAudit: (entry) => store.recordAudit(id, entry),
      saveToolOutput: (callId, body) => store.saveToolOutput(id, callId, body),
      flush: () => Promise.resolve(),
      reload: () => Promise.resolve(),
    };
  }
  async readState(id: string, key: string) {
    return this.store.state(id).get(key);
  }
  async writeState(id: string, key: string, value: unknown) {
    this.store.state(id).set(key, value);
  }
  wakeups(): WakeupStore {
    return new WakeupStore(this.db);
  }
  async close() {
    if (this.owned) this.db.close();
  }
}

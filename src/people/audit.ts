/**
 * Writing and checking the audit log (docs/dashboard.md, "Audit log"). Every interface that changes
 * something (the admin API, the `gateway` command, the dashboard) holds an `Auditor` bound to who is
 * acting and from where; each change writes one row naming the fields it changed, before and after.
 * Snapshots are the admin API's views, which never hold a secret (a key's hash or plaintext, a
 * webhook's signing secret, a password hash).
 */
import { userInfo, hostname } from 'node:os';
import { GENESIS_HASH, recomputedAuditHash } from '../storage/people-rows.ts';
import type { AuditActor, AuditStore, FieldChange } from '../storage/people.ts';

export interface AuditContext {
  readonly actor: AuditActor;
  /** The client's address, or `cli`. */
  readonly source: string | null;
}

export type Snapshot = Readonly<Record<string, unknown>>;

export interface AuditTarget {
  readonly kind: string;
  readonly id: string;
}

/** Records one change made by the bound actor. */
export type Auditor = (action: string, target: AuditTarget | null, changes: Readonly<Record<string, FieldChange>> | null) => Promise<void>;

export function createAuditor(store: AuditStore, context: AuditContext, now: () => number): Auditor {
  return async (action, target, changes) => {
    await store.appendAudit({ actor: context.actor, action, target, changes, source: context.source }, now());
  };
}

/** The fields whose value differs (all of `after` on a creation, all of `before` on a removal). */
export function changedFields(before: Snapshot | null, after: Snapshot | null): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  for (const field of new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])) {
    if (VOLATILE_FIELDS.has(field)) continue;
    const old = before?.[field];
    const next = after?.[field];
    if (before && after && JSON.stringify(old) === JSON.stringify(next)) continue;
    changes[field] = { ...(before ? { before: old ?? null } : {}), ...(after ? { after: next ?? null } : {}) };
  }
  return changes;
}

/** Fields of the views that are not facts about the object (or restate its identity). */
const VOLATILE_FIELDS = new Set(['id', 'object', 'created_at', 'key', 'secret', 'balance_usd', 'reserved_usd', 'available_usd', 'usage']);

export const ADMIN_KEY_ACTOR: AuditActor = { kind: 'admin_key', id: null, label: 'admin key' };
export const SYSTEM_ACTOR: AuditActor = { kind: 'system', id: null, label: 'gateway' };

/** The `gateway` command: the operating-system user and host that ran it. */
export function cliAuditContext(): AuditContext {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for this uid (a container): the label keeps the host alone.
  }
  return { actor: { kind: 'cli', id: null, label: `cli (${user}@${hostname()})` }, source: 'cli' };
}

export type ChainCheck =
  | { readonly ok: true; readonly rows: number }
  | { readonly ok: false; readonly rows: number; readonly seq: number; readonly problem: string };

/** Walks the whole chain in order: every row's hash, its link to the row before, and no gap. */
export async function verifyAuditChain(store: AuditStore, batch = 1_000): Promise<ChainCheck> {
  let previous = { seq: 0, hash: GENESIS_HASH };
  for (;;) {
    const rows = await store.auditChain(previous.seq, batch);
    for (const row of rows) {
      if (row.seq !== previous.seq + 1) return { ok: false, rows: previous.seq, seq: row.seq, problem: `rows ${previous.seq + 1}–${row.seq - 1} are missing` };
      if (row.prevHash !== previous.hash) return { ok: false, rows: previous.seq, seq: row.seq, problem: 'its link to the row before does not match' };
      if (recomputedAuditHash(row) !== row.hash) return { ok: false, rows: previous.seq, seq: row.seq, problem: 'its contents do not match its hash' };
      previous = { seq: row.seq, hash: row.hash };
    }
    if (rows.length < batch) return { ok: true, rows: previous.seq };
  }
}

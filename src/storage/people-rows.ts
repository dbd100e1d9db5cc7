/**
 * Row ↔ record mapping of the people tables and the audit log, shared by both engines (like rows.ts),
 * and the audit chain's hash: computed here from the exact stored text, so that a row hashes the same
 * when written and when verified, on either engine.
 */
import { createHash } from 'node:crypto';
import { bigintValue, type Row } from './rows.ts';
import type { Picos } from '../core/money.ts';
import type { AuditEntry, AuditRecord, LedgerLine, NewUser, NewUserToken, Page, Session, User, UserPatch, UserRole, UserToken } from './people.ts';
import type { LedgerEntry, OwnerKind } from './store.ts';

/** The previous hash of the first row. */
export const GENESIS_HASH = '0'.repeat(64);

export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

function roleColumns(role: UserRole | null) {
  if (role === null) return { role: null, owner_kind: null, owner_id: null };
  return role.kind === 'operator'
    ? { role: 'operator', owner_kind: null, owner_id: null }
    : { role: 'member', owner_kind: role.owner.kind, owner_id: role.owner.id };
}

function roleFromRow(row: Row): UserRole | null {
  if (row.role === null || row.role === undefined) return null;
  if (row.role === 'operator') return { kind: 'operator' };
  return { kind: 'member', owner: { kind: row.owner_kind as OwnerKind, id: row.owner_id as string } };
}

function optionalTime(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(bigintValue(value));
}

function time(value: unknown): number {
  return Number(bigintValue(value));
}

export function newUserColumns(user: NewUser, id: string, now: number) {
  return {
    id,
    email: normalEmail(user.email),
    display_name: user.displayName ?? null,
    ...roleColumns(user.role),
    password_hash: user.passwordHash ?? null,
    created_at: now,
  };
}

/** null keeps the stored value; `set_*` flags tell a patch to null from no patch. */
export function userPatchColumns(patch: UserPatch) {
  return {
    set_display_name: patch.displayName === undefined ? 0 : 1,
    display_name: patch.displayName ?? null,
    set_password_hash: patch.passwordHash === undefined ? 0 : 1,
    password_hash: patch.passwordHash ?? null,
    status: patch.status ?? null,
    last_sign_in_at: patch.lastSignInAt ?? null,
  };
}

export function userFromRow(row: Row): User {
  return {
    id: row.id as string,
    email: row.email as string,
    displayName: (row.display_name as string | null) ?? null,
    role: roleFromRow(row)!,
    status: row.status as User['status'],
    passwordHash: (row.password_hash as string | null) ?? null,
    createdAt: time(row.created_at),
    lastSignInAt: optionalTime(row.last_sign_in_at),
  };
}

export function sessionFromRow(row: Row): Session {
  return {
    idHash: row.id_hash as string,
    userId: row.user_id as string,
    csrfToken: row.csrf_token as string,
    createdAt: time(row.created_at),
    lastSeenAt: time(row.last_seen_at),
    expiresAt: time(row.expires_at),
  };
}

export function userTokenColumns(token: NewUserToken, id: string, now: number) {
  return {
    id,
    hash: token.hash,
    purpose: token.purpose,
    user_id: token.userId,
    email: normalEmail(token.email),
    ...roleColumns(token.role),
    created_by: token.createdBy,
    created_at: now,
    expires_at: token.expiresAt,
  };
}

export function userTokenFromRow(row: Row): UserToken {
  return {
    id: row.id as string,
    hash: row.hash as string,
    purpose: row.purpose as UserToken['purpose'],
    userId: (row.user_id as string | null) ?? null,
    email: row.email as string,
    role: roleFromRow(row),
    createdBy: row.created_by as string,
    createdAt: time(row.created_at),
    expiresAt: time(row.expires_at),
    usedAt: optionalTime(row.used_at),
  };
}

/** The columns of an audit row that its hash covers: every one but the hash. */
interface AuditHashed {
  readonly seq: number;
  readonly at: number;
  readonly actor_kind: string;
  readonly actor_id: string | null;
  readonly actor_label: string;
  readonly action: string;
  readonly target_kind: string | null;
  readonly target_id: string | null;
  readonly changes: string | null;
  readonly source: string | null;
  readonly prev_hash: string;
}

/** The audit row's columns, hash included, given the chain's previous row. */
export function auditColumns(entry: AuditEntry, at: number, previous: { seq: number; hash: string } | null): AuditHashed & { readonly hash: string } {
  const columns: AuditHashed = {
    seq: (previous?.seq ?? 0) + 1,
    at,
    actor_kind: entry.actor.kind,
    actor_id: entry.actor.id,
    actor_label: entry.actor.label,
    action: entry.action,
    target_kind: entry.target?.kind ?? null,
    target_id: entry.target?.id ?? null,
    changes: entry.changes === null ? null : JSON.stringify(entry.changes),
    source: entry.source,
    prev_hash: previous?.hash ?? GENESIS_HASH,
  };
  return { ...columns, hash: auditHash(columns) };
}

/** SHA-256 over every column but the hash itself, in a fixed order; `changes` as its stored text. */
export function auditHash(columns: AuditHashed): string {
  const fields = [
    columns.seq,
    columns.at,
    columns.actor_kind,
    columns.actor_id,
    columns.actor_label,
    columns.action,
    columns.target_kind,
    columns.target_id,
    columns.changes,
    columns.source,
    columns.prev_hash,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

export function auditFromRow(row: Row): AuditRecord {
  return {
    seq: time(row.seq),
    at: time(row.at),
    actor: { kind: row.actor_kind as AuditRecord['actor']['kind'], id: (row.actor_id as string | null) ?? null, label: row.actor_label as string },
    action: row.action as string,
    target: row.target_kind === null ? null : { kind: row.target_kind as string, id: row.target_id as string },
    changes: row.changes === null ? null : JSON.parse(row.changes as string),
    source: (row.source as string | null) ?? null,
    prevHash: row.prev_hash as string,
    hash: row.hash as string,
  };
}

/**
 * What a verifier recomputes from a stored record. The stored text came from JSON.stringify, and
 * parsing then stringifying such text gives it back unchanged.
 */
export function recomputedAuditHash(record: AuditRecord): string {
  return auditHash({
    seq: record.seq,
    at: record.at,
    actor_kind: record.actor.kind,
    actor_id: record.actor.id,
    actor_label: record.actor.label,
    action: record.action,
    target_kind: record.target?.kind ?? null,
    target_id: record.target?.id ?? null,
    changes: record.changes === null ? null : JSON.stringify(record.changes),
    source: record.source,
    prev_hash: record.prevHash,
  });
}

/** Takes `limit + 1` rows read in key order and cuts them into a page and the next cursor. */
export function pageOf<T>(rows: readonly Row[], limit: number, decode: (row: Row) => T, cursor: (row: Row) => string): Page<T> {
  const items = rows.slice(0, limit);
  return { items: items.map(decode), next: rows.length > limit ? cursor(items.at(-1)!) : null };
}

/** Signed amount of an entry, in SQL (both engines): what it added to the balance. */
export const SIGNED_AMOUNT = `CASE WHEN kind = 'credit' THEN amount ELSE -amount END`;

/**
 * A credit history page's cursor carries the balance the next page starts from (`id~balance`), so
 * that a deeper page, reached through its predecessor, costs what the first one does; a bare id
 * (or a cursor from elsewhere) makes the store sum the newer entries instead.
 */
export function ledgerCursor(after: string | null | undefined): { readonly before: string | null; readonly topBalance: Picos | null } {
  if (!after) return { before: null, topBalance: null };
  const match = /^([^~]+)~(-?\d{1,20})$/.exec(after);
  return match ? { before: match[1]!, topBalance: BigInt(match[2]!) } : { before: after, topBalance: null };
}

/** The page of lines, with the cursor of the next one (carrying the balance it starts from). */
export function ledgerPage(entries: Page<LedgerEntry>, topBalance: Picos): Page<LedgerLine> {
  const lines = ledgerLines(entries.items, topBalance);
  const last = lines.at(-1);
  if (entries.next === null || last === undefined) return { items: lines, next: null };
  return { items: lines, next: `${entries.next}~${last.balanceAfter - signed(last.entry)}` };
}

function signed(entry: LedgerEntry): Picos {
  return entry.kind === 'credit' ? entry.amount : -entry.amount;
}

/** Lines newest first: the first line's balance is given, each next one is its predecessor's less its effect. */
export function ledgerLines(entries: readonly LedgerEntry[], topBalance: Picos): LedgerLine[] {
  let balance = topBalance;
  return entries.map((entry) => {
    const line = { entry, balanceAfter: balance };
    balance -= signed(entry);
    return line;
  });
}

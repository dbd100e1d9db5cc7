/**
 * The dashboard's people (docs/dashboard.md): users with a role, their sessions, the single-use
 * tokens of invitations and sign-in links, and the audit log every change writes. Part of the Store
 * contract (store.ts), so that any instance serves any session and reads one audit chain.
 */
import type { Picos } from '../core/money.ts';
import type { Account, ApiKeyRecord, LedgerEntry, Organization, OwnerRef } from './store.ts';

/** An operator can do everything the admin API can; a member acts within one account or organization. */
export type UserRole = { readonly kind: 'operator' } | { readonly kind: 'member'; readonly owner: OwnerRef };

export type UserStatus = 'active' | 'disabled';

export interface User {
  readonly id: string;
  /** Lower case; unique. */
  readonly email: string;
  readonly displayName: string | null;
  readonly role: UserRole;
  readonly status: UserStatus;
  /** The scrypt hash (auth/passwords.ts); null until the user sets a password. */
  readonly passwordHash: string | null;
  readonly createdAt: number;
  readonly lastSignInAt: number | null;
}

export interface NewUser {
  readonly email: string;
  readonly displayName?: string | null;
  readonly role: UserRole;
  readonly passwordHash?: string | null;
}

export interface UserPatch {
  readonly displayName?: string | null;
  readonly passwordHash?: string | null;
  readonly status?: UserStatus;
  readonly lastSignInAt?: number;
}

/** A page of a list in key order, and the cursor of the next page (null on the last one). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next: string | null;
}

export interface PageRequest {
  /** The cursor a previous page returned; absent for the first page. */
  readonly after?: string | null;
  readonly limit: number;
}

/** A signed-in browser. Only the SHA-256 of the cookie's value is stored. */
export interface Session {
  readonly idHash: string;
  readonly userId: string;
  /** The synchronizer token every state-changing request of this session must carry. */
  readonly csrfToken: string;
  readonly createdAt: number;
  readonly lastSeenAt: number;
  /** The absolute end, whatever the activity. */
  readonly expiresAt: number;
}

/**
 * What a single-use link does: `invitation` creates a user (with the role it carries) who picks a
 * password; `sign_in` (a new operator's first link) and `password_reset` let an existing user set
 * a password and sign in.
 */
export type UserTokenPurpose = 'invitation' | 'sign_in' | 'password_reset';

export interface UserToken {
  readonly id: string;
  /** SHA-256 of the token in the link; the token itself is never stored. */
  readonly hash: string;
  readonly purpose: UserTokenPurpose;
  /** The user a sign-in or reset link is for; null for an invitation. */
  readonly userId: string | null;
  readonly email: string;
  /** The role an invitation grants; null for the other purposes. */
  readonly role: UserRole | null;
  /** Who made it (an audit actor label). */
  readonly createdBy: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly usedAt: number | null;
}

export type NewUserToken = Omit<UserToken, 'id' | 'createdAt' | 'usedAt'>;

export interface PeopleStore {
  /** Null when a user with that email exists already. */
  createUser(user: NewUser): Promise<User | null>;
  getUser(id: string): Promise<User | null>;
  getUserByEmail(email: string): Promise<User | null>;
  /** Users in id order (creation order); of one owner, or every user. */
  listUsers(filter: { readonly owner?: OwnerRef }, page: PageRequest): Promise<Page<User>>;
  countOperators(): Promise<number>;
  updateUser(id: string, patch: UserPatch): Promise<User | null>;
  /** Removes the user with its sessions and tokens; null when unknown. */
  deleteUser(id: string): Promise<User | null>;

  createSession(session: Session): Promise<void>;
  getSession(idHash: string): Promise<Session | null>;
  /** Records activity (the idle expiry counts from it). */
  touchSession(idHash: string, at: number): Promise<void>;
  deleteSession(idHash: string): Promise<void>;
  /** Signs a user out everywhere; returns how many sessions ended. */
  deleteUserSessions(userId: string): Promise<number>;
  deleteExpiredSessions(now: number): Promise<number>;

  createUserToken(token: NewUserToken, now: number): Promise<UserToken>;
  getUserToken(hash: string): Promise<UserToken | null>;
  /**
   * Marks the token used, once: null when it is unknown, used already, expired at `now`, or of
   * another purpose. Two requests racing for one token: one gets it.
   */
  consumeUserToken(hash: string, purposes: readonly UserTokenPurpose[], now: number): Promise<UserToken | null>;
  /** Unused, unexpired invitations, newest first. */
  listInvitations(now: number, page: PageRequest): Promise<Page<UserToken>>;
  /** Withdraws an unused token; null when there is none by that id. */
  revokeUserToken(id: string, now: number): Promise<UserToken | null>;
}

/** Who made a change. */
export interface AuditActor {
  readonly kind: 'user' | 'admin_key' | 'cli' | 'system' | 'anonymous';
  /** The user's id; null for the others. */
  readonly id: string | null;
  /** What a reader sees: the user's email, `admin key`, `cli (user@host)`. */
  readonly label: string;
}

/** A changed field: its value before (absent on create) and after (absent on delete). Never a secret. */
export interface FieldChange {
  readonly before?: unknown;
  readonly after?: unknown;
}

export interface AuditEntry {
  readonly actor: AuditActor;
  /** `account.create`, `key.revoke`, `user.sign_in_failed`, … (docs/dashboard.md lists them). */
  readonly action: string;
  readonly target: { readonly kind: string; readonly id: string } | null;
  readonly changes: Readonly<Record<string, FieldChange>> | null;
  /** Where it came from: the client's address, or `cli`. */
  readonly source: string | null;
}

export interface AuditRecord extends AuditEntry {
  /** 1, 2, 3, … with no gap. */
  readonly seq: number;
  readonly at: number;
  /** The hash of the row before (64 zeros for the first). */
  readonly prevHash: string;
  /** SHA-256 over this row's fields and prevHash (audit-chain.ts). */
  readonly hash: string;
}

export interface AuditFilter {
  /** An actor's id or label. */
  readonly actor?: string;
  readonly targetId?: string;
  /** An action, or an action prefix ending in `.` (`key.`). */
  readonly action?: string;
  readonly since?: number;
  readonly until?: number;
}

export interface AuditStore {
  /** Appends one row to the chain, atomically against every other writer (other instances too). */
  appendAudit(entry: AuditEntry, at: number): Promise<AuditRecord>;
  /** Newest first; the cursor is a sequence number. */
  listAudit(filter: AuditFilter, page: PageRequest): Promise<Page<AuditRecord>>;
  /** Rows after `afterSeq` in chain order, at most `limit`: what `gateway audit verify` walks. */
  auditChain(afterSeq: number, limit: number): Promise<AuditRecord[]>;
  /** How many rows of `action` since a time came from `source` or name `targetId`: sign-in throttling. */
  countAudit(input: { readonly action: string; readonly since: number; readonly source?: string; readonly targetId?: string }): Promise<number>;
}

/** A ledger entry with the balance right after it: the running balance of a credit history. */
export interface LedgerLine {
  readonly entry: LedgerEntry;
  readonly balanceAfter: Picos;
}

/** A key with when it was last charged for (null: never). */
export interface KeyLine {
  readonly key: ApiKeyRecord;
  readonly lastUsedAt: number | null;
}

/**
 * The dashboard's lists, one keyset page at a time: a page reads an index range of `limit + 1`
 * rows, however many rows the table holds.
 */
export interface DashboardListStore {
  /** In id (creation) order. */
  pageOrganizations(page: PageRequest): Promise<Page<Organization>>;
  /** In id (creation) order; of one organization, or all. */
  pageAccounts(filter: { readonly organizationId?: string }, page: PageRequest): Promise<Page<Account>>;
  /** An owner's keys, newest first. */
  pageKeys(owner: OwnerRef, page: PageRequest): Promise<Page<KeyLine>>;
  /**
   * An owner's credits and charges, newest first, each with the balance after it. The first page's
   * first line has the wallet's balance; the cursor of each page carries the balance the next one
   * starts from (people-rows.ts, ledgerCursor); a bare id as cursor makes the store subtract the
   * entries newer than it from the wallet's balance, read in one statement.
   */
  pageLedger(owner: OwnerRef, page: PageRequest): Promise<Page<LedgerLine>>;
}

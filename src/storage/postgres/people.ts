/**
 * Users, sessions, single-use tokens and the audit log on PostgreSQL. An audit append locks the
 * table against other appenders (SHARE ROW EXCLUSIVE conflicts with itself, not with readers) for
 * the read of the chain's last row and the insert of the next, so instances append one at a time.
 */
import { timeOrderedId } from '../../core/ids.ts';
import {
  auditColumns,
  auditFromRow,
  newUserColumns,
  normalEmail,
  pageOf,
  sessionFromRow,
  userFromRow,
  userPatchColumns,
  userTokenColumns,
  userTokenFromRow,
} from '../people-rows.ts';
import type { AuditStore, PeopleStore } from '../people.ts';
import type { PostgresDatabase, Statement } from './database.ts';

const statement = (name: string, text: string): Statement => ({ name: `gateway_people_${name}`, text });

const INSERT_USER = statement(
  'insert_user',
  `INSERT INTO users (id, email, display_name, role, owner_kind, owner_id, password_hash, created_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
   ON CONFLICT (email) DO NOTHING
   RETURNING *`,
);
const USER_BY_ID = statement('user_by_id', 'SELECT * FROM users WHERE id = $1');
const USER_BY_EMAIL = statement('user_by_email', 'SELECT * FROM users WHERE email = $1');
const USERS_PAGE = statement(
  'users_page',
  `SELECT * FROM users
   WHERE ($1::text IS NULL OR (owner_kind = $1 AND owner_id = $2)) AND id > $3
   ORDER BY id LIMIT $4`,
);
const OPERATORS = statement('operators', `SELECT count(*) AS count FROM users WHERE role = 'operator' AND status = 'active'`);
const UPDATE_USER = statement(
  'update_user',
  `UPDATE users SET
     display_name = CASE WHEN $2::int = 1 THEN $3 ELSE display_name END,
     password_hash = CASE WHEN $4::int = 1 THEN $5 ELSE password_hash END,
     status = COALESCE($6, status),
     last_sign_in_at = COALESCE($7, last_sign_in_at)
   WHERE id = $1
   RETURNING *`,
);
const DELETE_USER = statement('delete_user', 'DELETE FROM users WHERE id = $1 RETURNING *');
const INSERT_SESSION = statement(
  'insert_session',
  'INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
);
const SESSION = statement('session', 'SELECT * FROM sessions WHERE id_hash = $1');
const TOUCH_SESSION = statement('touch_session', 'UPDATE sessions SET last_seen_at = GREATEST(last_seen_at, $2) WHERE id_hash = $1');
const DELETE_SESSION = statement('delete_session', 'DELETE FROM sessions WHERE id_hash = $1');
const DELETE_USER_SESSIONS = statement('delete_user_sessions', 'DELETE FROM sessions WHERE user_id = $1');
const DELETE_EXPIRED_SESSIONS = statement('delete_expired_sessions', 'DELETE FROM sessions WHERE expires_at < $1');
const INSERT_TOKEN = statement(
  'insert_token',
  `INSERT INTO user_tokens (id, hash, purpose, user_id, email, role, owner_kind, owner_id, created_by, created_at, expires_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
   RETURNING *`,
);
const TOKEN_BY_HASH = statement('token_by_hash', 'SELECT * FROM user_tokens WHERE hash = $1');
const CONSUME_TOKEN = statement(
  'consume_token',
  `UPDATE user_tokens SET used_at = $2
   WHERE hash = $1 AND used_at IS NULL AND expires_at > $2 AND purpose = ANY($3::text[])
   RETURNING *`,
);
const INVITATIONS_PAGE = statement(
  'invitations_page',
  `SELECT * FROM user_tokens
   WHERE purpose = 'invitation' AND used_at IS NULL AND expires_at > $1 AND ($2::text IS NULL OR id < $2)
   ORDER BY id DESC LIMIT $3`,
);
const REVOKE_TOKEN = statement(
  'revoke_token',
  'UPDATE user_tokens SET used_at = $2, expires_at = LEAST(expires_at, $2) WHERE id = $1 AND used_at IS NULL RETURNING *',
);
const LAST_AUDIT = statement('last_audit', 'SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1');
const INSERT_AUDIT = statement(
  'insert_audit',
  `INSERT INTO audit_log (seq, at, actor_kind, actor_id, actor_label, action, target_kind, target_id, changes, source, prev_hash, hash)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
   RETURNING *`,
);
const AUDIT_PAGE = statement(
  'audit_page',
  `SELECT * FROM audit_log
   WHERE ($1::text IS NULL OR actor_label = $1 OR actor_id = $1)
     AND ($2::text IS NULL OR target_id = $2)
     AND ($3::text IS NULL OR action = $3 OR (right($3, 1) = '.' AND starts_with(action, $3)))
     AND ($4::bigint IS NULL OR at >= $4) AND ($5::bigint IS NULL OR at < $5)
     AND ($6::bigint IS NULL OR seq < $6)
   ORDER BY seq DESC LIMIT $7`,
);
const AUDIT_CHAIN = statement('audit_chain', 'SELECT * FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2');
const COUNT_BY_SOURCE = statement('count_by_source', 'SELECT count(*) AS count FROM audit_log WHERE action = $1 AND source = $2 AND at >= $3');
const COUNT_BY_TARGET = statement('count_by_target', 'SELECT count(*) AS count FROM audit_log WHERE action = $1 AND target_id = $2 AND at >= $3');

export function postgresPeople(database: PostgresDatabase, now: () => number): PeopleStore & AuditStore {
  const one = async (query: Statement, values: readonly unknown[]) => (await database.query(query, values)).rows[0];
  return {
    async createUser(user) {
      const c = newUserColumns(user, timeOrderedId('user'), now());
      const row = await one(INSERT_USER, [c.id, c.email, c.display_name, c.role, c.owner_kind, c.owner_id, c.password_hash, c.created_at]);
      return row ? userFromRow(row) : null;
    },
    async getUser(id) {
      const row = await one(USER_BY_ID, [id]);
      return row ? userFromRow(row) : null;
    },
    async getUserByEmail(email) {
      const row = await one(USER_BY_EMAIL, [normalEmail(email)]);
      return row ? userFromRow(row) : null;
    },
    async listUsers(filter, page) {
      const { rows } = await database.query(USERS_PAGE, [filter.owner?.kind ?? null, filter.owner?.id ?? null, page.after ?? '', page.limit + 1]);
      return pageOf(rows, page.limit, userFromRow, (row) => row.id as string);
    },
    async countOperators() {
      return Number((await one(OPERATORS, [])).count);
    },
    async updateUser(id, patch) {
      const c = userPatchColumns(patch);
      const row = await one(UPDATE_USER, [id, c.set_display_name, c.display_name, c.set_password_hash, c.password_hash, c.status, c.last_sign_in_at]);
      return row ? userFromRow(row) : null;
    },
    async deleteUser(id) {
      const row = await one(DELETE_USER, [id]);
      return row ? userFromRow(row) : null;
    },

    async createSession(session) {
      await database.query(INSERT_SESSION, [session.idHash, session.userId, session.csrfToken, session.createdAt, session.lastSeenAt, session.expiresAt]);
    },
    async getSession(idHash) {
      const row = await one(SESSION, [idHash]);
      return row ? sessionFromRow(row) : null;
    },
    async touchSession(idHash, at) {
      await database.query(TOUCH_SESSION, [idHash, at]);
    },
    async deleteSession(idHash) {
      await database.query(DELETE_SESSION, [idHash]);
    },
    async deleteUserSessions(userId) {
      return (await database.query(DELETE_USER_SESSIONS, [userId])).rowCount ?? 0;
    },
    async deleteExpiredSessions(at) {
      return (await database.query(DELETE_EXPIRED_SESSIONS, [at])).rowCount ?? 0;
    },

    async createUserToken(token, at) {
      const c = userTokenColumns(token, timeOrderedId('tok'), at);
      const row = await one(INSERT_TOKEN, [
        c.id,
        c.hash,
        c.purpose,
        c.user_id,
        c.email,
        c.role,
        c.owner_kind,
        c.owner_id,
        c.created_by,
        c.created_at,
        c.expires_at,
      ]);
      return userTokenFromRow(row);
    },
    async getUserToken(hash) {
      const row = await one(TOKEN_BY_HASH, [hash]);
      return row ? userTokenFromRow(row) : null;
    },
    async consumeUserToken(hash, purposes, at) {
      const row = await one(CONSUME_TOKEN, [hash, at, purposes]);
      return row ? userTokenFromRow(row) : null;
    },
    async listInvitations(at, page) {
      const { rows } = await database.query(INVITATIONS_PAGE, [at, page.after ?? null, page.limit + 1]);
      return pageOf(rows, page.limit, userTokenFromRow, (row) => row.id as string);
    },
    async revokeUserToken(id, at) {
      const row = await one(REVOKE_TOKEN, [id, at]);
      return row ? userTokenFromRow(row) : null;
    },

    async appendAudit(entry, at) {
      const row = await database.transaction(async (client) => {
        await client.query('LOCK TABLE audit_log IN SHARE ROW EXCLUSIVE MODE');
        const previous = (await client.query(LAST_AUDIT)).rows[0];
        const c = auditColumns(entry, at, previous ? { seq: Number(previous.seq), hash: previous.hash } : null);
        const values = [c.seq, c.at, c.actor_kind, c.actor_id, c.actor_label, c.action, c.target_kind, c.target_id, c.changes, c.source, c.prev_hash, c.hash];
        return (await client.query({ ...INSERT_AUDIT, values })).rows[0];
      });
      return auditFromRow(row);
    },
    async listAudit(filter, page) {
      const before = page.after === undefined || page.after === null ? null : Number(page.after);
      const values = [filter.actor ?? null, filter.targetId ?? null, filter.action ?? null, filter.since ?? null, filter.until ?? null, before, page.limit + 1];
      const { rows } = await database.query(AUDIT_PAGE, values);
      return pageOf(rows, page.limit, auditFromRow, (row) => String(row.seq));
    },
    async auditChain(afterSeq, limit) {
      return (await database.query(AUDIT_CHAIN, [afterSeq, limit])).rows.map(auditFromRow);
    },
    async countAudit({ action, since, source, targetId }) {
      const row = source !== undefined ? await one(COUNT_BY_SOURCE, [action, source, since]) : await one(COUNT_BY_TARGET, [action, targetId ?? null, since]);
      return Number(row.count);
    },
  };
}

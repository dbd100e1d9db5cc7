/**
 * Users, sessions, single-use tokens and the audit log on SQLite. The audit append reads the chain's
 * last row and writes the next in one IMMEDIATE transaction, which holds the file's write lock: no
 * other process can append between the two.
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
import type { AuditStore, PeopleStore, UserTokenPurpose } from '../people.ts';
import type { Row } from '../rows.ts';
import type { SqliteDatabase } from './database.ts';
import { expiredRowsDeleter } from './expiry.ts';

export function sqlitePeople(database: SqliteDatabase, now: () => number): PeopleStore & AuditStore {
  const insertUser = database.prepare(
    `INSERT INTO users (id, email, display_name, role, owner_kind, owner_id, password_hash, created_at)
     VALUES (:id, :email, :display_name, :role, :owner_kind, :owner_id, :password_hash, :created_at)
     ON CONFLICT (email) DO NOTHING
     RETURNING *`,
  );
  const userById = database.prepare('SELECT * FROM users WHERE id = ?');
  const userByEmail = database.prepare('SELECT * FROM users WHERE email = ?');
  const usersPage = database.prepare(
    `SELECT * FROM users
     WHERE (:owner_kind IS NULL OR (owner_kind = :owner_kind AND owner_id = :owner_id)) AND id > :after
     ORDER BY id LIMIT :limit`,
  );
  const operators = database.prepare(`SELECT count(*) AS count FROM users WHERE role = 'operator' AND status = 'active'`);
  const updateUser = database.prepare(
    `UPDATE users SET
       display_name = CASE WHEN :set_display_name THEN :display_name ELSE display_name END,
       password_hash = CASE WHEN :set_password_hash THEN :password_hash ELSE password_hash END,
       status = COALESCE(:status, status),
       last_sign_in_at = COALESCE(:last_sign_in_at, last_sign_in_at)
     WHERE id = :id
     RETURNING *`,
  );
  const deleteUser = database.prepare('DELETE FROM users WHERE id = ? RETURNING *');

  const insertSession = database.prepare(
    `INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at)
     VALUES (:id_hash, :user_id, :csrf_token, :created_at, :last_seen_at, :expires_at)`,
  );
  const sessionById = database.prepare('SELECT * FROM sessions WHERE id_hash = ?');
  const touchSession = database.prepare('UPDATE sessions SET last_seen_at = max(last_seen_at, ?) WHERE id_hash = ?');
  const deleteSession = database.prepare('DELETE FROM sessions WHERE id_hash = ?');
  const deleteUserSessions = database.prepare('DELETE FROM sessions WHERE user_id = ?');
  const deleteExpiredSessions = expiredRowsDeleter(database, 'sessions');

  const insertToken = database.prepare(
    `INSERT INTO user_tokens (id, hash, purpose, user_id, email, role, owner_kind, owner_id, created_by, created_at, expires_at)
     VALUES (:id, :hash, :purpose, :user_id, :email, :role, :owner_kind, :owner_id, :created_by, :created_at, :expires_at)
     RETURNING *`,
  );
  const tokenByHash = database.prepare('SELECT * FROM user_tokens WHERE hash = ?');
  const consumeToken = database.prepare(
    `UPDATE user_tokens SET used_at = :now
     WHERE hash = :hash AND used_at IS NULL AND expires_at > :now AND purpose IN (SELECT value FROM json_each(:purposes))
     RETURNING *`,
  );
  const invitationsPage = database.prepare(
    `SELECT * FROM user_tokens
     WHERE purpose = 'invitation' AND used_at IS NULL AND expires_at > :now AND id < coalesce(:before, '~')
     ORDER BY id DESC LIMIT :limit`,
  );
  const revokeToken = database.prepare('UPDATE user_tokens SET used_at = ?, expires_at = min(expires_at, ?) WHERE id = ? AND used_at IS NULL RETURNING *');

  const lastAudit = database.prepare('SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1');
  const insertAudit = database.prepare(
    `INSERT INTO audit_log (seq, at, actor_kind, actor_id, actor_label, action, target_kind, target_id, changes, source, prev_hash, hash)
     VALUES (:seq, :at, :actor_kind, :actor_id, :actor_label, :action, :target_kind, :target_id, :changes, :source, :prev_hash, :hash)
     RETURNING *`,
  );
  const auditPage = database.prepare(
    `SELECT * FROM audit_log
     WHERE (:actor IS NULL OR actor_label = :actor OR actor_id = :actor)
       AND (:target_id IS NULL OR target_id = :target_id)
       AND (:action IS NULL OR action = :action OR (substr(:action, -1) = '.' AND substr(action, 1, length(:action)) = :action))
       AND (:since IS NULL OR at >= :since) AND (:until IS NULL OR at < :until)
       AND seq < coalesce(:before, 9223372036854775807)
     ORDER BY seq DESC LIMIT :limit`,
  );
  const auditChain = database.prepare('SELECT * FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?');
  const countBySource = database.prepare('SELECT count(*) AS count FROM audit_log WHERE action = ? AND source = ? AND at >= ?');
  const countByTarget = database.prepare('SELECT count(*) AS count FROM audit_log WHERE action = ? AND target_id = ? AND at >= ?');

  return {
    async createUser(user) {
      const row = database.transaction(() => insertUser.get(newUserColumns(user, timeOrderedId('user'), now())) as Row | undefined);
      return row ? userFromRow(row) : null;
    },
    async getUser(id) {
      const row = userById.get(id) as Row | undefined;
      return row ? userFromRow(row) : null;
    },
    async getUserByEmail(email) {
      const row = userByEmail.get(normalEmail(email)) as Row | undefined;
      return row ? userFromRow(row) : null;
    },
    async listUsers(filter, page) {
      const rows = usersPage.all({
        owner_kind: filter.owner?.kind ?? null,
        owner_id: filter.owner?.id ?? null,
        after: page.after ?? '',
        limit: page.limit + 1,
      }) as Row[];
      return pageOf(rows, page.limit, userFromRow, (row) => row.id as string);
    },
    async countOperators() {
      return Number((operators.get() as Row).count);
    },
    async updateUser(id, patch) {
      const row = database.transaction(() => updateUser.get({ id, ...userPatchColumns(patch) }) as Row | undefined);
      return row ? userFromRow(row) : null;
    },
    async deleteUser(id) {
      const row = database.transaction(() => deleteUser.get(id) as Row | undefined);
      return row ? userFromRow(row) : null;
    },

    async createSession(session) {
      database.transaction(() =>
        insertSession.run({
          id_hash: session.idHash,
          user_id: session.userId,
          csrf_token: session.csrfToken,
          created_at: session.createdAt,
          last_seen_at: session.lastSeenAt,
          expires_at: session.expiresAt,
        }),
      );
    },
    async getSession(idHash) {
      const row = sessionById.get(idHash) as Row | undefined;
      return row ? sessionFromRow(row) : null;
    },
    async touchSession(idHash, at) {
      await database.grouped(() => touchSession.run(at, idHash));
    },
    async deleteSession(idHash) {
      database.transaction(() => deleteSession.run(idHash));
    },
    async deleteUserSessions(userId) {
      return database.transaction(() => Number(deleteUserSessions.run(userId).changes));
    },
    deleteExpiredSessions,

    async createUserToken(token, at) {
      return userTokenFromRow(database.transaction(() => insertToken.get(userTokenColumns(token, timeOrderedId('tok'), at)) as Row));
    },
    async getUserToken(hash) {
      const row = tokenByHash.get(hash) as Row | undefined;
      return row ? userTokenFromRow(row) : null;
    },
    async consumeUserToken(hash, purposes: readonly UserTokenPurpose[], at) {
      const row = database.transaction(() => consumeToken.get({ hash, now: at, purposes: JSON.stringify(purposes) }) as Row | undefined);
      return row ? userTokenFromRow(row) : null;
    },
    async listInvitations(at, page) {
      const rows = invitationsPage.all({ now: at, before: page.after ?? null, limit: page.limit + 1 }) as Row[];
      return pageOf(rows, page.limit, userTokenFromRow, (row) => row.id as string);
    },
    async revokeUserToken(id, at) {
      const row = database.transaction(() => revokeToken.get(at, at, id) as Row | undefined);
      return row ? userTokenFromRow(row) : null;
    },

    async appendAudit(entry, at) {
      const row = database.transaction(() => {
        const previous = lastAudit.get() as { seq: number; hash: string } | undefined;
        return insertAudit.get({ ...auditColumns(entry, at, previous ?? null) }) as Row;
      });
      return auditFromRow(row);
    },
    async listAudit(filter, page) {
      const rows = auditPage.all({
        actor: filter.actor ?? null,
        target_id: filter.targetId ?? null,
        action: filter.action ?? null,
        since: filter.since ?? null,
        until: filter.until ?? null,
        before: page.after === undefined || page.after === null ? null : Number(page.after),
        limit: page.limit + 1,
      }) as Row[];
      return pageOf(rows, page.limit, auditFromRow, (row) => String(row.seq));
    },
    async auditChain(afterSeq, limit) {
      return (auditChain.all(afterSeq, limit) as Row[]).map(auditFromRow);
    },
    async countAudit({ action, since, source, targetId }) {
      const row = (source !== undefined ? countBySource.get(action, source, since) : countByTarget.get(action, targetId ?? null, since)) as Row;
      return Number(row.count);
    },
  };
}

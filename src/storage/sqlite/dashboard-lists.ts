/** The dashboard's keyset-paged lists on SQLite (people.ts, DashboardListStore). */
import { ledgerCursor, ledgerPage, pageOf, SIGNED_AMOUNT } from '../people-rows.ts';
import type { DashboardListStore, KeyLine } from '../people.ts';
import { accountFromRow, bigintValue, keyFromRow, ledgerEntryFromRow, organizationFromRow, type Row } from '../rows.ts';
import type { SqliteDatabase } from './database.ts';

export function sqliteDashboardLists(database: SqliteDatabase): DashboardListStore {
  const organizations = database.prepare('SELECT * FROM organizations WHERE id > ? ORDER BY id LIMIT ?', { bigints: true });
  const accounts = database.prepare('SELECT * FROM accounts WHERE id > ? ORDER BY id LIMIT ?', { bigints: true });
  const accountsOf = database.prepare('SELECT * FROM accounts WHERE organization_id = ? AND id > ? ORDER BY id LIMIT ?', { bigints: true });
  const keys = database.prepare(
    `SELECT k.*, (SELECT max(e.created_at) FROM ledger_entries e WHERE e.key_id = k.id AND e.key_id IS NOT NULL AND e.kind = 'charge') AS last_used_at
     FROM api_keys k
     WHERE k.owner_kind = :kind AND k.owner_id = :id AND k.id < coalesce(:before, '~')
     ORDER BY k.id DESC LIMIT :limit`,
  );
  // The wallet's balance less the entries newer than the page: only for a page reached without
  // the balance in its cursor (people-rows.ts, ledgerCursor).
  const newerSum = database.prepare(
    `SELECT (SELECT balance FROM wallets WHERE owner_kind = :kind AND owner_id = :id)
       - (SELECT COALESCE(SUM(${SIGNED_AMOUNT}), 0) FROM ledger_entries WHERE owner_kind = :kind AND owner_id = :id AND id >= :before) AS top_balance`,
    { bigints: true },
  );
  const ledger = database.prepare(
    `SELECT * FROM ledger_entries
     WHERE owner_kind = :kind AND owner_id = :id AND id < :before
     ORDER BY id DESC LIMIT :limit`,
    { bigints: true },
  );
  const byId = (row: Row) => row.id as string;

  return {
    async pageOrganizations(page) {
      return pageOf(organizations.all(page.after ?? '', page.limit + 1) as Row[], page.limit, organizationFromRow, byId);
    },
    async pageAccounts(filter, page) {
      const rows = (
        filter.organizationId === undefined
          ? accounts.all(page.after ?? '', page.limit + 1)
          : accountsOf.all(filter.organizationId, page.after ?? '', page.limit + 1)
      ) as Row[];
      return pageOf(rows, page.limit, accountFromRow, byId);
    },
    async pageKeys(owner, page) {
      const rows = keys.all({ kind: owner.kind, id: owner.id, before: page.after ?? null, limit: page.limit + 1 }) as Row[];
      return pageOf(
        rows,
        page.limit,
        (row): KeyLine => ({ key: keyFromRow(row), lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at) }),
        byId,
      );
    },
    async pageLedger(owner, page) {
      // The ledger writes behind (ledger.ts): what it settled in memory must be on file first.
      database.flush();
      const cursor = ledgerCursor(page.after);
      const before = cursor.before ?? '~';
      // Both reads in one turn of the event loop: nothing of this process writes between them.
      const topBalance = cursor.topBalance ?? bigintValue((newerSum.get({ kind: owner.kind, id: owner.id, before }) as Row).top_balance);
      const rows = ledger.all({ kind: owner.kind, id: owner.id, before, limit: page.limit + 1 }) as Row[];
      return ledgerPage(pageOf(rows, page.limit, ledgerEntryFromRow, byId), topBalance);
    },
  };
}

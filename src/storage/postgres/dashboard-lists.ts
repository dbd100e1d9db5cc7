/** The dashboard's keyset-paged lists on PostgreSQL (people.ts, DashboardListStore). */
import { ledgerCursor, ledgerPage, pageOf, SIGNED_AMOUNT } from '../people-rows.ts';
import type { DashboardListStore, KeyLine } from '../people.ts';
import { accountFromRow, bigintValue, keyFromRow, ledgerEntryFromRow, organizationFromRow, type Row } from '../rows.ts';
import type { PostgresDatabase, Statement } from './database.ts';

const ORGANIZATIONS: Statement = { name: 'gateway_page_organizations', text: 'SELECT * FROM organizations WHERE id > $1 ORDER BY id LIMIT $2' };
const ACCOUNTS: Statement = { name: 'gateway_page_accounts', text: 'SELECT * FROM accounts WHERE id > $1 ORDER BY id LIMIT $2' };
const ACCOUNTS_OF: Statement = {
  name: 'gateway_page_accounts_of',
  text: 'SELECT * FROM accounts WHERE organization_id = $1 AND id > $2 ORDER BY id LIMIT $3',
};
const KEYS: Statement = {
  name: 'gateway_page_keys',
  text: `SELECT k.*, (SELECT max(e.created_at) FROM ledger_entries e WHERE e.key_id = k.id AND e.key_id IS NOT NULL AND e.kind = 'charge') AS last_used_at
         FROM api_keys k
         WHERE k.owner_kind = $1 AND k.owner_id = $2 AND ($3::text IS NULL OR k.id < $3)
         ORDER BY k.id DESC LIMIT $4`,
};
// The wallet's balance less the entries newer than the page: only for a page reached without the
// balance in its cursor (people-rows.ts, ledgerCursor). One statement: one snapshot.
const LEDGER_SUMMED: Statement = {
  name: 'gateway_page_ledger_summed',
  text: `SELECT e.*,
           (SELECT balance FROM wallets WHERE owner_kind = $1 AND owner_id = $2)
           - (SELECT COALESCE(SUM(${SIGNED_AMOUNT}), 0) FROM ledger_entries WHERE owner_kind = $1 AND owner_id = $2 AND id >= $3) AS top_balance
         FROM ledger_entries e
         WHERE e.owner_kind = $1 AND e.owner_id = $2 AND e.id < $3
         ORDER BY e.id DESC LIMIT $4`,
};
const LEDGER: Statement = {
  name: 'gateway_page_ledger',
  text: `SELECT * FROM ledger_entries WHERE owner_kind = $1 AND owner_id = $2 AND id < $3 ORDER BY id DESC LIMIT $4`,
};

export function postgresDashboardLists(database: PostgresDatabase): DashboardListStore {
  const byId = (row: Row) => row.id as string;
  return {
    async pageOrganizations(page) {
      const { rows } = await database.query(ORGANIZATIONS, [page.after ?? '', page.limit + 1]);
      return pageOf(rows, page.limit, organizationFromRow, byId);
    },
    async pageAccounts(filter, page) {
      const { rows } =
        filter.organizationId === undefined
          ? await database.query(ACCOUNTS, [page.after ?? '', page.limit + 1])
          : await database.query(ACCOUNTS_OF, [filter.organizationId, page.after ?? '', page.limit + 1]);
      return pageOf(rows, page.limit, accountFromRow, byId);
    },
    async pageKeys(owner, page) {
      const { rows } = await database.query(KEYS, [owner.kind, owner.id, page.after ?? null, page.limit + 1]);
      return pageOf(
        rows,
        page.limit,
        (row): KeyLine => ({ key: keyFromRow(row), lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at) }),
        byId,
      );
    },
    async pageLedger(owner, page) {
      const cursor = ledgerCursor(page.after);
      const before = cursor.before ?? '~';
      if (cursor.topBalance !== null) {
        const { rows } = await database.query(LEDGER, [owner.kind, owner.id, before, page.limit + 1]);
        return ledgerPage(pageOf(rows, page.limit, ledgerEntryFromRow, byId), cursor.topBalance);
      }
      const { rows } = await database.query(LEDGER_SUMMED, [owner.kind, owner.id, before, page.limit + 1]);
      return ledgerPage(pageOf(rows, page.limit, ledgerEntryFromRow, byId), rows.length > 0 ? bigintValue(rows[0]!.top_balance) : 0n);
    },
  };
}

/** The dashboard's request log, jobs and health reads on SQLite (dashboard-views.ts). */
import type { StatementSync } from 'node:sqlite';
import type { DashboardViewStore } from '../dashboard-views.ts';
import {
  jobLineFromRow,
  jobPageQuery,
  LEDGER_INTEGRITY,
  operationsCountsFromRow,
  operationsCountsQuery,
  requestLineFromRow,
  requestPageQuery,
  timeCursor,
  walletChecks,
  type Query,
} from '../dashboard-views-sql.ts';
import { pageOf } from '../people-rows.ts';
import { ledgerEntryFromRow, reservationFromRow, type Row } from '../rows.ts';
import type { SqliteDatabase } from './database.ts';

const placeholder = (position: number) => `?${position}`;

export function sqliteDashboardViews(database: SqliteDatabase): DashboardViewStore {
  // A statement per distinct text: the filter combinations are few.
  const statements = new Map<string, StatementSync>();
  const run = (query: Query) => {
    let statement = statements.get(query.text);
    if (!statement) {
      statement = database.prepare(query.text, { bigints: true });
      statements.set(query.text, statement);
    }
    return statement.all(...(query.values as never[])) as Row[];
  };
  const reservationByRequest = database.prepare('SELECT * FROM reservations WHERE request_id = ? ORDER BY created_at DESC LIMIT 1', { bigints: true });
  const reservationById = database.prepare('SELECT * FROM reservations WHERE id = ?', { bigints: true });
  const charges = database.prepare(`SELECT * FROM ledger_entries WHERE reservation_id = ? AND kind = 'charge' ORDER BY id`, { bigints: true });
  const integrity = database.prepare(LEDGER_INTEGRITY, { bigints: true });
  const counts = database.prepare(operationsCountsQuery(placeholder), { bigints: true });

  return {
    async pageRequests(filter, page) {
      // Rows wait in the group commit for a few milliseconds: what was recorded is read.
      database.flush();
      return pageOf(run(requestPageQuery(filter, page, placeholder)), page.limit, requestLineFromRow, timeCursor);
    },
    async holdOf(ref) {
      database.flush();
      const row = ('requestId' in ref ? reservationByRequest.get(ref.requestId) : reservationById.get(ref.reservationId)) as Row | undefined;
      if (!row) return null;
      const reservation = reservationFromRow(row);
      return { reservation, charges: (charges.all(reservation.id) as Row[]).map(ledgerEntryFromRow) };
    },
    async pageJobs(filter, page) {
      database.flush();
      return pageOf(run(jobPageQuery(filter, page, placeholder)), page.limit, jobLineFromRow, timeCursor);
    },
    async ledgerIntegrity() {
      database.flush();
      return walletChecks(integrity.all() as Row[]);
    },
    async operationsCounts(since) {
      return operationsCountsFromRow(counts.get(since) as Row);
    },
  };
}

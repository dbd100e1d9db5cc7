/**
 * The dashboard's request log, jobs and health reads on SQLite (dashboard-views.ts): the scans on
 * the dashboard's own read connection, off the event loop and under its time limit
 * (dashboard-reader.ts); a hold's few rows by key on the store's connection.
 */
import type { DashboardViewStore } from '../dashboard-views.ts';
import {
  endpointFiguresOf,
  jobLineFromRow,
  jobPageQuery,
  ledgerIntegrityQuery,
  operationsCountsFromRow,
  operationsCountsQuery,
  recentAttemptsQuery,
  requestLineFromRow,
  requestPageQuery,
  timeCursor,
  walletChecks,
} from '../dashboard-views-sql.ts';
import { pageOf } from '../people-rows.ts';
import { ledgerEntryFromRow, reservationFromRow, type Row } from '../rows.ts';
import type { DashboardReader } from '../dashboard-thread.ts';
import { WITHIN_LIMIT } from './dashboard-reader.ts';
import type { SqliteDatabase } from './database.ts';

const placeholder = (position: number) => `?${position}`;

export function sqliteDashboardViews(database: SqliteDatabase, reader: DashboardReader): DashboardViewStore {
  const reservationByRequest = database.prepare('SELECT * FROM reservations WHERE request_id = ? ORDER BY created_at DESC LIMIT 1', { bigints: true });
  const reservationById = database.prepare('SELECT * FROM reservations WHERE id = ?', { bigints: true });
  const charges = database.prepare(`SELECT * FROM ledger_entries WHERE reservation_id = ? AND kind = 'charge' ORDER BY id`, { bigints: true });
  const counts = database.prepare(operationsCountsQuery(placeholder), { bigints: true });

  return {
    async pageRequests(filter, page) {
      const { text, values } = requestPageQuery(filter, page, placeholder, WITHIN_LIMIT);
      return pageOf(await reader.all(text, values), page.limit, requestLineFromRow, timeCursor);
    },
    async holdOf(ref) {
      database.flush();
      const row = ('requestId' in ref ? reservationByRequest.get(ref.requestId) : reservationById.get(ref.reservationId)) as Row | undefined;
      if (!row) return null;
      const reservation = reservationFromRow(row);
      return { reservation, charges: (charges.all(reservation.id) as Row[]).map(ledgerEntryFromRow) };
    },
    async pageJobs(filter, page) {
      const { text, values } = jobPageQuery(filter, page, placeholder, WITHIN_LIMIT);
      return pageOf(await reader.all(text, values), page.limit, jobLineFromRow, timeCursor);
    },
    async ledgerIntegrity() {
      return walletChecks(await reader.all(ledgerIntegrityQuery(WITHIN_LIMIT), []));
    },
    async operationsCounts(since) {
      return operationsCountsFromRow(counts.get(since) as Row);
    },
    async endpointFigures(from, to) {
      return endpointFiguresOf(await reader.all(recentAttemptsQuery(placeholder, WITHIN_LIMIT), [from, to]));
    },
  };
}

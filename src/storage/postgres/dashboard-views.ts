/** The dashboard's request log, jobs and health reads on PostgreSQL (dashboard-views.ts), through the dashboard's reader thread. */
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
  type Query,
} from '../dashboard-views-sql.ts';
import { pageOf } from '../people-rows.ts';
import { ledgerEntryFromRow, reservationFromRow } from '../rows.ts';
import type { DashboardReader } from '../dashboard-thread.ts';

const placeholder = (position: number) => `$${position}`;

const RESERVATION_BY_REQUEST = 'SELECT * FROM reservations WHERE request_id = $1 ORDER BY created_at DESC LIMIT 1';
const RESERVATION_BY_ID = 'SELECT * FROM reservations WHERE id = $1';
const CHARGES = `SELECT * FROM ledger_entries WHERE reservation_id = $1 AND kind = 'charge' ORDER BY id`;
const INTEGRITY = ledgerIntegrityQuery();
const RECENT_ATTEMPTS = recentAttemptsQuery(placeholder);
const COUNTS = operationsCountsQuery(placeholder);

export function postgresDashboardViews(reader: DashboardReader): DashboardViewStore {
  const run = (query: Query) => reader.all(query.text, query.values);
  return {
    async pageRequests(filter, page) {
      return pageOf(await run(requestPageQuery(filter, page, placeholder)), page.limit, requestLineFromRow, timeCursor);
    },
    async holdOf(ref) {
      const [row] = 'requestId' in ref ? await reader.all(RESERVATION_BY_REQUEST, [ref.requestId]) : await reader.all(RESERVATION_BY_ID, [ref.reservationId]);
      if (!row) return null;
      const reservation = reservationFromRow(row);
      return { reservation, charges: (await reader.all(CHARGES, [reservation.id])).map(ledgerEntryFromRow) };
    },
    async pageJobs(filter, page) {
      return pageOf(await run(jobPageQuery(filter, page, placeholder)), page.limit, jobLineFromRow, timeCursor);
    },
    async ledgerIntegrity() {
      return walletChecks(await reader.all(INTEGRITY, []));
    },
    async operationsCounts(since) {
      return operationsCountsFromRow((await reader.all(COUNTS, [since]))[0]!);
    },
    async endpointFigures(from, to) {
      return endpointFiguresOf(await reader.all(RECENT_ATTEMPTS, [from, to]));
    },
  };
}

/** The dashboard's request log, jobs and health reads on PostgreSQL (dashboard-views.ts), on the dashboard's own pool. */
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
import type { PostgresDatabase, Statement } from './database.ts';
import { dashboardQuery } from './usage.ts';

const placeholder = (position: number) => `$${position}`;

const RESERVATION_BY_REQUEST: Statement = {
  name: 'gateway_dashboard_reservation_by_request',
  text: 'SELECT * FROM reservations WHERE request_id = $1 ORDER BY created_at DESC LIMIT 1',
};
const RESERVATION_BY_ID: Statement = { name: 'gateway_dashboard_reservation', text: 'SELECT * FROM reservations WHERE id = $1' };
const CHARGES: Statement = {
  name: 'gateway_dashboard_hold_charges',
  text: `SELECT * FROM ledger_entries WHERE reservation_id = $1 AND kind = 'charge' ORDER BY id`,
};
const INTEGRITY = ledgerIntegrityQuery();
const RECENT_ATTEMPTS = recentAttemptsQuery(placeholder);
const COUNTS: Statement = { name: 'gateway_dashboard_operations_counts', text: operationsCountsQuery(placeholder) };

export function postgresDashboardViews(database: PostgresDatabase): DashboardViewStore {
  // Through the dashboard's pool and query, which reports its time limit as such (the pages say so).
  const run = (query: Query) => dashboardQuery(database, query.text, query.values);
  return {
    async pageRequests(filter, page) {
      return pageOf(await run(requestPageQuery(filter, page, placeholder)), page.limit, requestLineFromRow, timeCursor);
    },
    async holdOf(ref) {
      const row = (
        'requestId' in ref ? await database.query(RESERVATION_BY_REQUEST, [ref.requestId]) : await database.query(RESERVATION_BY_ID, [ref.reservationId])
      ).rows[0];
      if (!row) return null;
      const reservation = reservationFromRow(row);
      return { reservation, charges: (await database.query(CHARGES, [reservation.id])).rows.map(ledgerEntryFromRow) };
    },
    async pageJobs(filter, page) {
      return pageOf(await run(jobPageQuery(filter, page, placeholder)), page.limit, jobLineFromRow, timeCursor);
    },
    async ledgerIntegrity() {
      return walletChecks(await dashboardQuery(database, INTEGRITY, []));
    },
    async operationsCounts(since) {
      return operationsCountsFromRow((await database.query(COUNTS, [since])).rows[0]!);
    },
    async endpointFigures(from, to) {
      return endpointFiguresOf(await dashboardQuery(database, RECENT_ATTEMPTS, [from, to]));
    },
  };
}

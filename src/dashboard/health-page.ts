/**
 * The operator's health page (docs/dashboard.md, "Health"): the instances with what they report at
 * their heartbeat, the database's and Redis's round trips, each upstream endpoint's circuit and its
 * figures over the last hour from the request rows of every instance, the jobs backlog, failing
 * webhook deliveries, and the ledger's integrity: every wallet checked against its entries and open
 * holds.
 */
import type { FastifyInstance } from 'fastify';
import { formatUsd } from '../core/money.ts';
import type { EndpointReport } from '../routing/endpoint-health.ts';
import type { EndpointFigures, Percentiles, WalletCheck } from '../storage/dashboard-views.ts';
import type { InstanceRow, Store } from '../storage/store.ts';
import { ENDPOINT_FIGURES_ROWS } from '../storage/dashboard-views-sql.ts';
import { DASHBOARD_STATEMENT_LIMIT_MS, UsageQueryTimeout } from '../storage/usage.ts';
import { ownerPath, viewerPage, type Dashboard, pacedGet } from './context.ts';
import { html, type Html } from './html.ts';
import { noRows, time } from './layout.ts';

/** Webhook deliveries that gave up within this window count as failing. */
const FAILED_DELIVERY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** The window of the upstream endpoints' figures. */
const ENDPOINT_WINDOW_MS = 60 * 60 * 1000;

type Probe = { readonly ok: true; readonly ms: number } | { readonly ok: false; readonly error: string };

async function probe(run: () => Promise<unknown>): Promise<Probe> {
  const started = performance.now();
  try {
    await run();
    return { ok: true, ms: Math.round((performance.now() - started) * 100) / 100 };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function probeText(result: Probe): Html {
  return result.ok ? html`reachable, ${result.ms} ms` : html`<span class="bad">unreachable</span>: ${result.error}`;
}

function duration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const [days, hours, minutes] = [Math.floor(seconds / 86_400), Math.floor((seconds % 86_400) / 3600), Math.floor((seconds % 3600) / 60)];
  return days > 0 ? `${days} d ${hours} h` : hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min ${seconds % 60} s`;
}

function instancesTable(instances: readonly InstanceRow[], self: string, now: number): Html {
  return html`<table data-testid="instances">
    <caption>Instances serving this database</caption>
    <thead><tr><th>Instance</th><th>Version</th><th>Up for</th><th class="num">Jobs running / slots</th><th class="num">Event loop delay p50 / p99 / max, ms</th><th>Last heartbeat</th></tr></thead>
    <tbody>${
      instances.length === 0
        ? noRows(6, 'No instance has reported yet.')
        : instances.map(
            (instance) => html`<tr>
              <td><code>${instance.id}</code>${instance.id === self ? ' (this one)' : ''}</td>
              <td>${instance.vitals?.version ?? '—'}</td>
              <td>${instance.vitals ? duration(now - instance.vitals.startedAt) : '—'}</td>
              <td class="num">${instance.vitals ? `${instance.vitals.jobsRunning} / ${instance.vitals.jobSlots}` : '—'}</td>
              <td class="num">${instance.vitals ? `${instance.vitals.eventLoopDelayMs.p50} / ${instance.vitals.eventLoopDelayMs.p99} / ${instance.vitals.eventLoopDelayMs.max}` : '—'}</td>
              <td>${time(instance.heartbeatAt)}</td>
            </tr>`,
          )
    }</tbody>
  </table>`;
}

function percentilePair(percentiles: Percentiles | null | undefined): string {
  return percentiles ? `${percentiles.p50} / ${percentiles.p95}` : '—';
}

/**
 * Every configured endpoint with its circuit, and every endpoint called in the last hour (one since
 * removed from the config has no circuit), with its figures from the request rows.
 */
function endpointsTable(reports: readonly EndpointReport[], figures: readonly EndpointFigures[]): Html {
  const byKey = new Map(figures.map((line) => [line.endpoint, line]));
  const circuits = new Map(reports.map((report) => [report.key, report]));
  const keys = [...new Set([...reports.map((report) => report.key), ...byKey.keys()])];
  return html`<table data-testid="endpoints">
    <caption>Upstream endpoints over the last hour, from the request log of every instance (its newest ${ENDPOINT_FIGURES_ROWS.toLocaleString('en-US')} requests at most); the circuit as the breakers hold it (shared with Redis); the last error this instance saw</caption>
    <thead><tr><th>Endpoint</th><th>Circuit</th><th class="num">Requests</th><th class="num">Error rate</th><th class="num">Latency p50 / p95, ms</th><th class="num">First byte p50 / p95, ms</th><th>Last error</th></tr></thead>
    <tbody>${
      keys.length === 0
        ? noRows(7, 'No upstream endpoint is configured.')
        : keys.map((key) => {
            const report = circuits.get(key);
            const line = byKey.get(key);
            const state = report?.view.state;
            const lastError = report?.stats.lastError;
            return html`<tr>
              <td><code>${key}</code></td>
              <td>${state === undefined ? '— (not configured)' : state === 'closed' ? 'closed' : html`<span class="bad">${state}</span>`}</td>
              <td class="num">${line?.attempts ?? 0}</td>
              <td class="num">${line ? `${Math.round((line.failures / line.attempts) * 1000) / 10} %` : '—'}</td>
              <td class="num">${percentilePair(line?.latencyMs)}</td>
              <td class="num">${percentilePair(line?.firstByteMs)}</td>
              <td>${lastError ? html`${lastError.code ?? ''} ${lastError.message} (${time(lastError.at)})` : '—'}</td>
            </tr>`;
          })
    }</tbody>
  </table>`;
}

/** A read under the dashboard's time limit: what it found, or word that it ran out of time. */
export type Bounded<T> = { readonly done: true; readonly value: T } | { readonly done: false };

async function bounded<T>(read: Promise<T>): Promise<Bounded<T>> {
  try {
    return { done: true, value: await read };
  } catch (error) {
    if (error instanceof UsageQueryTimeout) return { done: false };
    throw error;
  }
}

function ranOutOfTime(what: string): Html {
  return html`<p class="notice error" role="alert" data-testid="${what}-timed-out">The ${what} check ran out of time: it passed the dashboard's limit of ${DASHBOARD_STATEMENT_LIMIT_MS / 1000} s and was stopped, so that it loads neither the database nor the gateway. The rest of the page is current.</p>`;
}

/** The integrity panel; a ledger too large to sum within the time limit says so and leaves the rest of the page standing. */
export function integrityPanel(result: Bounded<readonly WalletCheck[]>): Html {
  if (!result.done) return ranOutOfTime('integrity');
  const checks = result.value;
  const faulty = checks.filter((check) => check.difference !== 0n || check.credits - check.charges !== check.balance);
  const verdict =
    faulty.length === 0
      ? html`<p class="notice ok" role="status" data-testid="integrity-verdict">All ${checks.length} wallets add up: credits − charges − open holds = available balance, to the pico-dollar.</p>`
      : html`<p class="notice error" role="alert" data-testid="integrity-verdict">${faulty.length} of ${checks.length} wallets do not add up.</p>`;
  return html`${verdict}
    <table data-testid="integrity">
      <caption>Wallets that do not add up (USD)</caption>
      <thead><tr><th>Owner</th><th class="num">Credits</th><th class="num">Charges</th><th class="num">Open holds</th><th class="num">Balance</th><th class="num">Held</th><th class="num">Difference</th></tr></thead>
      <tbody>${
        faulty.length === 0
          ? noRows(7, 'None.')
          : faulty.map(
              (check) => html`<tr>
                <td><a href="${ownerPath(check.owner)}">${check.owner.kind} ${check.owner.id}</a></td>
                <td class="num">${formatUsd(check.credits)}</td>
                <td class="num">${formatUsd(check.charges)}</td>
                <td class="num">${formatUsd(check.openHolds)}</td>
                <td class="num">${formatUsd(check.balance)}</td>
                <td class="num">${formatUsd(check.reserved)}</td>
                <td class="num bad">${formatUsd(check.difference)}${check.credits - check.charges !== check.balance ? ` (balance off by ${formatUsd(check.balance - (check.credits - check.charges))})` : ''}</td>
              </tr>`,
            )
      }</tbody>
    </table>`;
}

/** What the page reads from the database, all at once (the bench times the same reads). */
export async function healthReads(store: Store, now: number) {
  const [database, instances, figures, counts, queued, checks] = await Promise.all([
    probe(() => store.currentVersion()),
    store.listInstances(),
    bounded(store.endpointFigures(now - ENDPOINT_WINDOW_MS, now + 1)),
    store.operationsCounts(now - FAILED_DELIVERY_WINDOW_MS),
    store.countWaitingJobs(now),
    bounded(store.ledgerIntegrity()),
  ]);
  return { database, instances, figures, counts, queued, checks };
}

export function registerHealthPage(app: FastifyInstance, dashboard: Dashboard): void {
  const { store, health, limiter, now } = dashboard.deps;
  pacedGet(
    app,
    dashboard,
    '/dashboard/health',
    async (request, reply, viewer) => {
      const [counters, reports, { database, instances, figures, counts, queued, checks }] = await Promise.all([
        limiter.backend.kind === 'redis' ? probe(() => limiter.backend.ping()) : null,
        health.report(),
        healthReads(store, now()),
      ]);
      const body = html`<h2>Instances</h2>
        ${instancesTable(instances, store.instanceId, now())}
        <h2>Storage</h2>
        <dl class="facts" data-testid="storage">
          <dt>Database (${store.engine === 'postgres' ? 'PostgreSQL' : 'SQLite'})</dt><dd>${probeText(database)}</dd>
          <dt>Redis</dt><dd>${counters === null ? 'not used: limits and circuits are kept in each process' : probeText(counters)}</dd>
        </dl>
        <h2>Upstream endpoints</h2>
        ${figures.done ? endpointsTable(reports, figures.value) : ranOutOfTime('endpoints')}
        <h2>Jobs and webhooks</h2>
        <dl class="facts" data-testid="backlog">
          <dt>Queued</dt><dd>${counts.queuedJobs}${queued.size > 0 ? ` (${[...queued].map(([kind, waiting]) => `${kind}: ${waiting.queued} queued, ${waiting.parked} parked between steps`).join('; ')})` : ''}</dd>
          <dt>Running</dt><dd>${counts.runningJobs}</dd>
          <dt>Webhook deliveries given up (24 h)</dt><dd>${counts.failedWebhookDeliveries === 0 ? '0' : html`<span class="bad">${counts.failedWebhookDeliveries}</span>`}</dd>
          <dt>Webhook deliveries retrying</dt><dd>${counts.retryingWebhookDeliveries}</dd>
        </dl>
        <h2>Ledger integrity</h2>
        ${integrityPanel(checks)}`;
      return viewerPage(request, reply, viewer, 'Health', body);
    },
    true,
  );
}

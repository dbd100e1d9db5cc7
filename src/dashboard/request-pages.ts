/**
 * The request log (docs/dashboard.md, "The request log"): every request, filtered and paged by
 * keyset, and a request's page with its canonical request, attempts, usage, cost, hold and stored
 * output. A member sees their own account's or organization's requests; another owner's request is
 * a 404. Stored files are served here, behind the session, rather than through signed URLs.
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../core/errors.ts';
import { outputFileName, UNTRUSTED_FILE_POLICY } from '../outputs/outputs.ts';
import { formatUsd, UNIT_RATE, usdToPicos, type Picos } from '../core/money.ts';
import type { BlobInfo } from '../storage/blobs.ts';
import type { RequestFilter } from '../storage/dashboard-views.ts';
import type { OwnerRef, RequestLogRecord, RequestStatus } from '../storage/store.ts';
import { ownerPath, viewerGet, viewerPage, visibleOwner, type Dashboard, pacedGet } from './context.ts';
import type { Viewer } from './guard.ts';
import { html, type Html } from './html.ts';
import { json, nextPageLink, noRows, time } from './layout.ts';
import { costBreakdown, DIALECTS, outputView, waterfall } from './request-view.ts';

const PAGE = 50;
const STATUSES: readonly RequestStatus[] = ['completed', 'failed', 'cancelled', 'incomplete'];
const FILE_NAME = /^[A-Za-z0-9._-]{1,200}$/;

/** The owner a member is limited to; undefined for an operator (every owner). */
export function viewerOwner(viewer: Viewer): OwnerRef | undefined {
  return viewer.user.role.kind === 'operator' ? undefined : viewer.user.role.owner;
}

function parseTime(name: string, value: string | undefined): number | undefined {
  if (!value) return undefined;
  const millis = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(millis)) throw errors.invalidValue(name, `'${name}' must be a date and time such as 2026-11-26T14:00 (UTC).`);
  return millis;
}

function parseCost(name: string, value: string | undefined): Picos | undefined {
  if (!value) return undefined;
  try {
    return usdToPicos(value);
  } catch {
    throw errors.invalidValue(name, `'${name}' must be an amount in USD such as 0.25.`);
  }
}

function filterOf(query: Record<string, string | undefined>, viewer: Viewer): RequestFilter {
  const status = query.status;
  if (status && !STATUSES.includes(status as RequestStatus)) throw errors.invalidValue('status', `'status' must be one of ${STATUSES.join(', ')}.`);
  const account = query.account;
  return {
    owner: viewerOwner(viewer) ?? (account ? { kind: account.startsWith('org_') ? 'organization' : 'account', id: account } : undefined),
    from: parseTime('from', query.from),
    to: parseTime('to', query.to),
    keyId: query.key || undefined,
    model: query.model || undefined,
    status: (status || undefined) as RequestStatus | undefined,
    route: query.route || undefined,
    provider: query.provider || undefined,
    minCost: parseCost('min_cost', query.min_cost),
    maxCost: parseCost('max_cost', query.max_cost),
    requestId: query.id || undefined,
  };
}

function input(name: string, label: string, value: string | undefined, hint = ''): Html {
  return html`<div><label for="f-${name}">${label}${hint ? html` <span class="hint">${hint}</span>` : ''}</label><input type="text" id="f-${name}" name="${name}" value="${value ?? ''}"></div>`;
}

function filterForm(query: Record<string, string | undefined>, operator: boolean): Html {
  const select = (name: string, label: string, options: readonly string[]) =>
    html`<div><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}"><option value="">any</option>${options.map(
      (option) => html`<option value="${option}"${query[name] === option ? html` selected` : ''}>${option}</option>`,
    )}</select></div>`;
  return html`<form method="get" action="/dashboard/requests" class="filters" aria-label="Filter requests">
    ${input('from', 'From', query.from, '(UTC)')}
    ${input('to', 'Before', query.to, '(UTC)')}
    ${operator ? input('account', 'Account or organization', query.account) : ''}
    ${input('key', 'Key id', query.key)}
    ${input('model', 'Model', query.model)}
    ${select('status', 'Status', STATUSES)}
    ${select('route', 'API', Object.keys(DIALECTS))}
    ${input('provider', 'Provider endpoint', query.provider)}
    ${input('min_cost', 'Cost from, USD', query.min_cost)}
    ${input('max_cost', 'Cost to, USD', query.max_cost)}
    ${input('id', 'Request id', query.id)}
    <div><button type="submit">Filter</button> <a href="/dashboard/requests">Clear</a></div>
  </form>`;
}

export function registerRequestPages(app: FastifyInstance, dashboard: Dashboard): void {
  const { store, catalog, outputs } = dashboard.deps;

  /** A request the viewer may see, or a 404 as if it did not exist. */
  async function visibleRequest(viewer: Viewer, id: string): Promise<RequestLogRecord> {
    const record = await store.getRequest(id);
    if (!record) throw errors.notFound('Stored request', id);
    await visibleOwner(dashboard, viewer.user, record.owner).catch(() => {
      throw errors.notFound('Stored request', id);
    });
    return record;
  }

  /**
   * A request's stored files by name: those under its own folder (images) and those its row names
   * (a video job's file).
   */
  async function requestFiles(record: RequestLogRecord): Promise<Map<string, BlobInfo>> {
    const listed = await outputs.listOutputFiles(record.id);
    const named = await Promise.all(
      record.blobKeys
        .filter((key) => !listed.some((file) => file.key === key))
        .map(async (key) => (await outputs.blobs.list(key)).filter((file) => file.key === key)),
    );
    return new Map([...listed, ...named.flat()].map((file) => [outputFileName(file.key), file]));
  }

  pacedGet(app, dashboard, '/dashboard/requests', async (request, reply, viewer) => {
    const query = request.query;
    const operator = viewer.user.role.kind === 'operator';
    const page = await store.pageRequests(filterOf(query, viewer), { after: query.after ?? null, limit: PAGE });
    const body = html`${filterForm(query, operator)}
      <table data-testid="requests">
        <caption>Requests, newest first</caption>
        <thead><tr><th>Time</th><th>Request</th>${operator ? html`<th>Owner</th>` : ''}<th>API</th><th>Model</th><th>Endpoint</th><th>Status</th><th class="num">Tokens in / out</th><th class="num">Cost, USD</th><th class="num">ms</th></tr></thead>
        <tbody>
          ${
            page.items.length === 0
              ? noRows(operator ? 10 : 9, 'No request matches.')
              : page.items.map(
                  (line) => html`<tr>
                    <td>${time(line.createdAt)}</td>
                    <td><a href="/dashboard/requests/${line.id}">${line.id}</a></td>
                    ${operator ? html`<td><a href="${ownerPath(line.owner)}">${line.owner.id}</a></td>` : ''}
                    <td>${line.route}</td>
                    <td>${line.model ?? '—'}</td>
                    <td>${line.provider ?? '—'}</td>
                    <td>${line.status} (${line.httpStatus}${line.errorCode ? `, ${line.errorCode}` : ''})</td>
                    <td class="num">${line.inputTokens} / ${line.outputTokens}</td>
                    <td class="num">${formatUsd(line.cost)}</td>
                    <td class="num">${line.durationMs}</td>
                  </tr>`,
                )
          }
        </tbody>
      </table>
      ${nextPageLink('/dashboard/requests', query, page.next)}`;
    return viewerPage(request, reply, viewer, 'Requests', body);
  });

  viewerGet<{ id: string }>(app, dashboard, '/dashboard/requests/:id', async (request, reply, viewer) => {
    const record = await visibleRequest(viewer, request.params.id);
    const [hold, payer, files] = await Promise.all([
      store.holdOf({ requestId: record.id }),
      record.owner.kind === 'account' ? store.getAccount(record.owner.id) : store.getOrganization(record.owner.id),
      requestFiles(record),
    ]);
    const contentTypes = new Map([...files].map(([name, file]) => [name, file.contentType] as const));
    const endpoint = record.model && record.provider ? catalog.route(record.model, `${record.provider}:${record.upstreamModel}`) : undefined;
    const charged = hold?.charges.reduce((sum, entry) => sum + entry.amount, 0n) ?? 0n;
    const body = html`<dl class="facts">
        <dt>Request</dt><dd><code>${record.id}</code></dd>
        <dt>Time</dt><dd>${time(record.createdAt)}</dd>
        <dt>Owner</dt><dd><a href="${ownerPath(record.owner)}">${record.owner.kind} ${record.owner.id}</a>, key <code>${record.keyId}</code></dd>
        <dt>Dialect</dt><dd>${DIALECTS[record.route] ?? record.route} (<code>${record.route}</code>)${record.stream ? ', streamed' : ''}</dd>
        <dt>Model</dt><dd>${record.model ?? 'none selected'}${record.provider ? html`, served by <code>${record.provider}</code> as <code>${record.upstreamModel}</code>` : ''}</dd>
        <dt>Status</dt><dd data-testid="status">${record.status}, HTTP ${record.httpStatus}${record.errorCode ? html`, <code>${record.errorCode}</code>` : ''}</dd>
        <dt>Duration</dt><dd>${record.durationMs} ms${record.firstByteMs === null ? '' : `, first byte after ${record.firstByteMs} ms`}</dd>
      </dl>
      <h2>Canonical request</h2>
      ${
        record.canonicalRequest === null
          ? html`<p class="hint">Not kept: the client asked that nothing be stored (<code>store: false</code>), or the request was refused before it was read.</p>`
          : html`<p class="hint">As the gateway read it from the ${DIALECTS[record.route] ?? record.route} request, in its own terms; input files by their size.</p>${json(record.canonicalRequest, 'canonical-request')}`
      }
      <h2>Upstream attempts</h2>
      ${waterfall(record.attempts, record.durationMs)}
      <h2>Usage</h2>
      <table>
        <caption>Usage as metered</caption>
        <thead><tr><th>Input</th><th>Cache read</th><th>Cache write</th><th>Output</th><th>Reasoning (of output)</th><th>Search units</th></tr></thead>
        <tbody><tr><td>${record.inputTokens}</td><td>${record.cacheReadTokens}</td><td>${record.cacheWriteTokens}${record.cacheWrite1hTokens ? ` (${record.cacheWrite1hTokens} for 1 h)` : ''}</td><td>${record.outputTokens}</td><td>${record.reasoningTokens}</td><td>${record.searchUnits}</td></tr></tbody>
      </table>
      <h2>Cost</h2>
      ${costBreakdown(record, endpoint, payer?.rate ?? UNIT_RATE)}
      <h2>Hold and settlement</h2>
      ${
        hold
          ? html`<dl class="facts" data-testid="hold">
              <dt>Held</dt><dd>${formatUsd(hold.reservation.amount)} USD (<code>${hold.reservation.id}</code>)</dd>
              <dt>Status</dt><dd>${hold.reservation.status}</dd>
              <dt>Charged</dt><dd>${formatUsd(charged)} USD</dd>
              <dt>Given back</dt><dd>${hold.reservation.status === 'open' ? '— (still held)' : `${formatUsd(hold.reservation.amount - charged)} USD`}</dd>
            </dl>`
          : html`<p class="hint">No hold: the request was refused before credit was held, or its hold is not on file yet.</p>`
      }
      <h2>Output</h2>
      ${outputView(record, dashboard.deps.now(), (name) => `/dashboard/requests/${record.id}/files/${name}`, contentTypes)}`;
    return viewerPage(request, reply, viewer, `Request ${record.id}`, body);
  });

  viewerGet<{ id: string; name: string }>(app, dashboard, '/dashboard/requests/:id/files/:name', async (request, reply, viewer) => {
    const record = await visibleRequest(viewer, request.params.id);
    const name = request.params.name;
    const file = FILE_NAME.test(name) ? (await requestFiles(record)).get(name) : undefined;
    const blob = file ? await outputs.blobs.get(file.key) : null;
    if (!blob) throw errors.notFound('Output file', name);
    reply.header('cache-control', 'private, max-age=300');
    // The bytes are an upstream's: never sniffed into something else, never run as a page of the dashboard's origin.
    reply.header('x-content-type-options', 'nosniff');
    reply.header('content-security-policy', UNTRUSTED_FILE_POLICY);
    reply.header('content-length', String(blob.size));
    return reply.type(blob.contentType).send(blob.stream);
  });
}

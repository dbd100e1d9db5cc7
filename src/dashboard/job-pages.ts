/**
 * Background responses and video jobs (docs/dashboard.md, "Jobs"): lists by state, a job's page
 * with its timeline, attempts, checkpoint, hold and canonical request, and cancelling it with the
 * API's own code (jobs/jobs.ts: the same rules, the hold released in full), audited as
 * `job.cancel`. A member sees and cancels their own owner's jobs only.
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../core/errors.ts';
import { formatUsd } from '../core/money.ts';
import { isEnded } from '../jobs/jobs.ts';
import type { MeteredPayload } from '../jobs/metered-job.ts';
import { JOB_STATES, type JobState } from '../storage/dashboard-views.ts';
import type { BuiltInJobKind, JobRecord } from '../storage/store.ts';
import { ownerPath, viewerGet, viewerPage, viewerPost, visibleOwner, type Dashboard, pacedGet } from './context.ts';
import type { Viewer } from './guard.ts';
import { html, type Html } from './html.ts';
import { csrfField, json, nextPageLink, noRows, notice, time } from './layout.ts';
import { viewerOwner } from './request-pages.ts';

const PAGE = 50;
const KINDS: readonly BuiltInJobKind[] = ['response', 'video'];

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (!value) return undefined;
  if (!allowed.includes(value as T)) throw errors.invalidValue(name, `'${name}' must be one of ${allowed.join(', ')}.`);
  return value as T;
}

/** What is known of a job's course: its creation, its dispatch upstream, its end (each with when). */
function timeline(job: JobRecord): Html {
  const steps: [string, number][] = [['queued', job.createdAt]];
  if (job.dispatchedAt !== null) steps.push(['running: sent upstream', job.dispatchedAt]);
  else if (job.status === 'in_progress') steps.push(['running', job.updatedAt]);
  if (isEnded(job.status)) steps.push([job.status, job.updatedAt]);
  return html`<ol class="timeline" data-testid="timeline">${steps.map(([label, at]) => html`<li>${label} · ${time(at)}</li>`)}</ol>`;
}

export function registerJobPages(app: FastifyInstance, dashboard: Dashboard): void {
  const { store, jobs } = dashboard.deps;

  async function visibleJob(viewer: Viewer, id: string): Promise<JobRecord> {
    const job = await store.getJob(id);
    if (!job) throw errors.notFound('Job', id);
    await visibleOwner(dashboard, viewer.user, job.owner).catch(() => {
      throw errors.notFound('Job', id);
    });
    return job;
  }

  pacedGet(app, dashboard, '/dashboard/jobs', async (request, reply, viewer) => {
    const query = request.query;
    const kind = oneOf('kind', query.kind, KINDS);
    const state = oneOf('state', query.state, Object.keys(JOB_STATES) as JobState[]);
    const operator = viewer.user.role.kind === 'operator';
    const page = await store.pageJobs({ owner: viewerOwner(viewer), kind, state }, { after: query.after ?? null, limit: PAGE });
    const select = (name: string, label: string, options: readonly string[]) =>
      html`<div><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}"><option value="">any</option>${options.map(
        (option) => html`<option value="${option}"${query[name] === option ? html` selected` : ''}>${option}</option>`,
      )}</select></div>`;
    const body = html`<form method="get" action="/dashboard/jobs" class="filters" aria-label="Filter jobs">
        ${select('kind', 'Kind', KINDS)}
        ${select('state', 'State', Object.keys(JOB_STATES))}
        <div><button type="submit">Filter</button></div>
      </form>
      <table data-testid="jobs">
        <caption>Jobs, newest first</caption>
        <thead><tr><th>Created</th><th>Job</th><th>Kind</th>${operator ? html`<th>Owner</th>` : ''}<th>Status</th><th class="num">Attempts</th><th class="num">Cost, USD</th><th>Updated</th></tr></thead>
        <tbody>
          ${
            page.items.length === 0
              ? noRows(operator ? 8 : 7, 'No job matches.')
              : page.items.map(
                  (job) => html`<tr>
                    <td>${time(job.createdAt)}</td>
                    <td><a href="/dashboard/jobs/${job.id}">${job.id}</a></td>
                    <td>${job.kind}</td>
                    ${operator ? html`<td><a href="${ownerPath(job.owner)}">${job.owner.id}</a></td>` : ''}
                    <td>${job.status}</td>
                    <td class="num">${job.attempts}</td>
                    <td class="num">${job.cost === null ? '—' : formatUsd(job.cost)}</td>
                    <td>${time(job.updatedAt)}</td>
                  </tr>`,
                )
          }
        </tbody>
      </table>
      ${nextPageLink('/dashboard/jobs', query, page.next)}`;
    return viewerPage(request, reply, viewer, 'Jobs', body);
  });

  viewerGet<{ id: string }>(app, dashboard, '/dashboard/jobs/:id', async (request, reply, viewer) => {
    const job = await visibleJob(viewer, request.params.id);
    const hold = job.reservationId === null ? null : await store.holdOf({ reservationId: job.reservationId });
    const call = (job.payload as Partial<MeteredPayload<unknown>> | null)?.call;
    const charged = hold?.charges.reduce((sum, entry) => sum + entry.amount, 0n) ?? 0n;
    const done = request.query.cancelled;
    const body = html`${done === '1' ? notice('ok', 'The job was cancelled and its hold released.') : done === '0' ? notice('error', 'The job had already ended: nothing was cancelled.') : ''}
      <dl class="facts">
        <dt>Kind</dt><dd>${job.kind === 'video' ? 'video generation' : 'background response'}</dd>
        <dt>Status</dt><dd data-testid="job-status">${job.status}</dd>
        <dt>Owner</dt><dd><a href="${ownerPath(job.owner)}">${job.owner.kind} ${job.owner.id}</a>, key <code>${job.keyId}</code></dd>
        <dt>Worker</dt><dd>${job.leaseOwner ? html`<code>${job.leaseOwner}</code>, lease until ${time(job.leaseUntil)}` : 'none'}</dd>
        <dt>Attempts</dt><dd>${job.attempts} (claims by a worker)</dd>
        <dt>Expires</dt><dd>${time(job.expiresAt)}</dd>
        ${call ? html`<dt>Request</dt><dd><a href="/dashboard/requests/${call.requestId}">${call.requestId}</a> (its upstream attempts and output)</dd>` : ''}
      </dl>
      ${
        isEnded(job.status)
          ? ''
          : html`<form method="post" action="/dashboard/jobs/${job.id}/cancel" data-confirm="Cancel this job? Its hold is released and nothing is charged.">
              ${csrfField(viewer.session.csrfToken)}
              <button type="submit" class="danger">Cancel job</button>
            </form>`
      }
      <h2>Status history</h2>
      ${timeline(job)}
      <h2>Hold</h2>
      ${
        hold
          ? html`<dl class="facts" data-testid="hold">
              <dt>Held</dt><dd>${formatUsd(hold.reservation.amount)} USD (<code>${hold.reservation.id}</code>)</dd>
              <dt>Status</dt><dd data-testid="hold-status">${hold.reservation.status}</dd>
              <dt>Charged</dt><dd>${formatUsd(charged)} USD</dd>
              <dt>Given back</dt><dd>${hold.reservation.status === 'open' ? '— (still held)' : `${formatUsd(hold.reservation.amount - charged)} USD`}</dd>
            </dl>`
          : html`<p class="hint">No hold on file.</p>`
      }
      <h2>Checkpoint</h2>
      ${job.checkpoint === null ? html`<p class="hint">None: nothing goes on upstream without its worker.</p>` : json(job.checkpoint)}
      ${call ? html`<h2>Canonical request</h2><p>${call.route}, model <code>${call.modelId}</code>, routes ${call.routeKeys.join(', ')}</p>${json(call.request)}` : ''}
      <h2>Object</h2>
      <details><summary>The job's object as the API returns it</summary>${json(job.result)}</details>`;
    return viewerPage(request, reply, viewer, `Job ${job.id}`, body);
  });

  viewerPost<{ id: string }>(app, dashboard, '/dashboard/jobs/:id/cancel', async (request, reply, viewer) => {
    const job = await visibleJob(viewer, request.params.id);
    const outcome = await jobs.cancel(job.kind, job.id, job.owner);
    if (outcome === null) throw errors.notFound('Job', job.id);
    if (outcome.cancelled) {
      await dashboard.audit(request, viewer)(
        'job.cancel',
        { kind: job.kind === 'video' ? 'video_job' : 'response', id: job.id },
        { status: { before: job.status, after: 'cancelled' } },
      );
    }
    return reply.redirect(`/dashboard/jobs/${job.id}?cancelled=${outcome.cancelled ? 1 : 0}`, 303);
  });
}

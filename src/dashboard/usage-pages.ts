/**
 * Usage analytics (docs/dashboard.md, "Usage"): spend, requests and tokens per hour or per day from
 * the rollups, filtered and broken down by one dimension, and the CSV export of the same view. A
 * member sees their own account's or organization's usage only. The page's body and the export are
 * made where the rows are read (usage-formats.ts): this module answers with their text.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UsageQueryTimeout } from '../storage/usage.ts';
import { sendPage, type Dashboard, pacedGet } from './context.ts';
import type { Viewer } from './guard.ts';
import { html, Html } from './html.ts';
import { notice, page } from './layout.ts';
import { usageFormat, type UsageFormatName } from './usage-formats.ts';
import { filterForm } from './usage-render.ts';
import { usageView, type UsageView } from './usage-view.ts';

export const USAGE_SCRIPTS = ['/dashboard/assets/chart.umd.min.js', '/dashboard/assets/usage-chart.js'] as const;

export function registerUsagePages(app: FastifyInstance, dashboard: Dashboard): void {
  const store = dashboard.deps.store;

  function render(request: FastifyRequest, reply: FastifyReply, viewer: Viewer, body: Html, status = 200) {
    const frame = { title: 'Usage', user: viewer.user, csrf: viewer.session.csrfToken, path: request.url, scripts: USAGE_SCRIPTS };
    return sendPage(reply, page(frame, body), status);
  }

  /** The view's text in `format`, or undefined once the too-long read was answered with `advice` (503). */
  async function textOf(
    request: FastifyRequest,
    reply: FastifyReply,
    viewer: Viewer,
    view: UsageView,
    format: UsageFormatName,
    advice: string,
  ): Promise<string | undefined> {
    try {
      return await store.usageText(view.query, usageFormat(format, view));
    } catch (error) {
      if (!(error instanceof UsageQueryTimeout)) throw error;
      render(request, reply, viewer, html`${filterForm(view)}${notice('error', advice)}`, 503);
      return undefined;
    }
  }

  pacedGet(app, dashboard, '/dashboard/usage', async (request, reply, viewer) => {
    const view = usageView(request.query, viewer.user, dashboard.deps.now());
    const body = await textOf(
      request,
      reply,
      viewer,
      view,
      'usagePage',
      'This view took too long to read. Choose a shorter period, the view by day, or a filter.',
    );
    if (body === undefined) return reply;
    return render(request, reply, viewer, new Html(body));
  });

  pacedGet(app, dashboard, '/dashboard/usage.csv', async (request, reply, viewer) => {
    const view = usageView(request.query, viewer.user, dashboard.deps.now());
    const csv = await textOf(request, reply, viewer, view, 'usageExport', 'This export took too long to read. Choose a shorter period or a filter.');
    if (csv === undefined) return reply;
    const name = `usage-${view.query.grain}-${view.fromDay}-${view.toDay}.csv`;
    return reply
      .header('content-disposition', `attachment; filename="${name}"`)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .type('text/csv; charset=utf-8')
      .send(csv);
  });
}

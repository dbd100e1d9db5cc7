/**
 * `gateway endpoints`: the health of each provider endpoint, as a running server sees it. Breakers
 * live in a server's memory (or in Redis, shared by its instances), not in the database, so the
 * command asks a server's admin API (GET /admin/v1/endpoints) with GATEWAY_ADMIN_KEY.
 */
import { text, UsageError, type Command } from '../command.ts';

export const endpointsCommand: Command = {
  name: 'endpoints',
  summary: "Show each provider endpoint's breaker, failure rate, latencies and last error, from a running server",
  usage: '[--url http://HOST:PORT]',
  options: { url: { type: 'string' } },
  async run(command, context) {
    const adminKey = context.env.GATEWAY_ADMIN_KEY?.trim();
    if (!adminKey) throw new UsageError('set GATEWAY_ADMIN_KEY to the server’s admin key');
    const base = text(command, 'url') ?? `http://127.0.0.1:${context.env.PORT?.trim() || '8080'}`;
    let response: Response;
    try {
      response = await fetch(new URL('/admin/v1/endpoints', base), { headers: { authorization: `Bearer ${adminKey}` } });
    } catch (error) {
      throw new Error(`no server answered at ${base} (${(error as Error).cause ?? (error as Error).message}); give its address with --url`);
    }
    const body = (await response.json()) as { data?: EndpointRow[]; error?: { message: string } };
    if (!response.ok || body.data === undefined) throw new Error(`the server answered ${response.status}: ${body.error?.message ?? 'no endpoint list'}`);
    if (context.output.json) return void context.output.record(body as Record<string, unknown>);
    context.output.list(body.data.map(row), ['endpoint', 'state', 'failure_rate', 'requests', 'ttfb_p50_ms', 'latency_p50_ms', 'last_error']);
    return undefined;
  },
};

interface EndpointRow {
  readonly id: string;
  readonly state: string;
  readonly failure_rate: number;
  readonly window: { readonly requests: number };
  readonly ttfb_ms: { readonly p50: number } | null;
  readonly latency_ms: { readonly p50: number } | null;
  readonly last_error: { readonly code: string | null; readonly message: string } | null;
}

function row(endpoint: EndpointRow): Record<string, unknown> {
  return {
    endpoint: endpoint.id,
    state: endpoint.state,
    failure_rate: endpoint.failure_rate,
    requests: endpoint.window.requests,
    ttfb_p50_ms: endpoint.ttfb_ms?.p50 ?? '-',
    latency_p50_ms: endpoint.latency_ms?.p50 ?? '-',
    last_error: endpoint.last_error?.code ?? '-',
  };
}

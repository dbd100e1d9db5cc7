/**
 * One structured line per request at `info` (docs/operations.md, "Logs"): method, route pattern,
 * status, duration and request id, and for a metered call its model, endpoint, tokens and cost,
 * from the request log row the pipeline wrote for it. Never a key, a prompt or an answer. Off below
 * `LOG_LEVEL=info`.
 */
import type { FastifyInstance } from 'fastify';
import { formatUsd } from '../core/money.ts';
import type { RequestLogRecord } from '../storage/store.ts';

export class AccessLog {
  /** Requests being answered, with the row of their metered call once it is recorded. */
  readonly #inFlight = new Map<string, RequestLogRecord | null>();

  /** The pipeline's request log row of a request (a background job's, with no request in flight, is ignored). */
  readonly note = (record: RequestLogRecord): void => {
    if (this.#inFlight.has(record.id)) this.#inFlight.set(record.id, record);
  };

  install(app: FastifyInstance): void {
    // A logger above `info` (warn, error, fatal, silent) writes no access line: no hook runs for it.
    if (levelValue(app.log.level) > LEVELS.info) return;
    app.addHook('onRequest', (request, _reply, done) => {
      this.#inFlight.set(request.id, null);
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      const row = this.#inFlight.get(request.id);
      this.#inFlight.delete(request.id);
      request.log.info(
        {
          method: request.method,
          route: request.is404 ? null : (request.routeOptions.url ?? null),
          status: reply.statusCode,
          durationMs: Math.round(reply.elapsedTime * 100) / 100,
          ...(row && {
            model: row.model,
            endpoint: row.provider === null ? null : `${row.provider}:${row.upstreamModel}`,
            inputTokens: row.inputTokens + row.cacheReadTokens + row.cacheWriteTokens,
            outputTokens: row.outputTokens,
            costUsd: formatUsd(row.cost),
          }),
        },
        'request',
      );
      done();
    });
  }
}

/** pino's numeric levels; `silent` is above all of them. */
const LEVELS: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

function levelValue(level: string): number {
  return LEVELS[level] ?? Number.POSITIVE_INFINITY;
}

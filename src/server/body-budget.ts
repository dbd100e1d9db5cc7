/**
 * The global budget of request-body bytes in flight (server-limits.ts). A body takes its share when
 * its request reaches parsing: the declared Content-Length at once (at most the body limit), or, for
 * a chunked body, each chunk as it arrives. It gives it back once the route has its body (before the
 * handler) or when the exchange ends, whichever comes first. A body that does not fit is refused
 * with a 503 `server_busy`, `Retry-After` and `Connection: close`, before a byte of it is read: any
 * number of slow clients hold at most the budget.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import { errors } from '../core/errors.ts';
import { BUSY_RETRY_AFTER_SECONDS } from './server-limits.ts';

const busy = () => errors.serverBusy('too many request bodies are being received', BUSY_RETRY_AFTER_SECONDS);

export function installBodyBudget(app: FastifyInstance, budgetBytes: number, registry: Registry): void {
  let inFlight = 0;
  const releases = new WeakMap<FastifyRequest, () => void>();
  new Gauge({
    name: 'gateway_request_body_bytes_in_flight',
    help: 'Request-body bytes declared or received and not yet parsed, all requests together (the body budget of docs/security.md).',
    registers: [registry],
    collect() {
      this.set(inFlight);
    },
  });

  app.addHook('preParsing', (request, reply, payload, done) => {
    const declared = Number(request.headers['content-length']);
    const chunked = request.headers['transfer-encoding'] !== undefined;
    if (!(declared > 0) && !chunked) return done(null, payload);
    // A chunked body may grow to the body limit, so it takes that much; a declared length over the
    // body limit takes the limit (the body limit's 413 answers it, not the budget's 503).
    const bodyLimit = app.initialConfig.bodyLimit ?? Number.MAX_SAFE_INTEGER;
    const share = chunked ? bodyLimit : Math.min(declared, bodyLimit);
    if (inFlight + share > budgetBytes) {
      reply.header('connection', 'close');
      return done(busy());
    }
    inFlight += share;
    let held = share;
    const release = () => {
      inFlight -= held;
      held = 0;
    };
    releases.set(request, release);
    reply.raw.once('close', release);
    done(null, payload);
  });

  // Global, so after every route's own preValidation (a multipart edit reads its parts there).
  app.addHook('preHandler', (request, _reply, done) => {
    releases.get(request)?.();
    done();
  });
}

/**
 * Turns every failure into the error envelope with the status → type mapping of docs/errors.md:
 * our own GatewayErrors, Fastify's validation errors, malformed JSON, wrong content types, bodies
 * over the limit, unknown routes and methods, malformed URLs and even malformed HTTP. Nothing
 * internal (stack, SQL, upstream secrets) leaks; a 500 is logged with its request id.
 * The choices are listed there too.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors, type GatewayError } from '../core/errors.ts';
import { clientLeftBeforeAnswer } from '../http/client-connection.ts';
import { errorBodyFor } from '../http/error-body.ts';
import { toGatewayError } from '../http/error-mapping.ts';
import { type Drain, HEALTH_PATH } from '../http/drain.ts';
import { MethodIndex } from './method-index.ts';
import { baseUrlHint } from './path-hint.ts';
import { answerAndClose } from './raw-response.ts';
import { ensureRequestId } from './request-id.ts';

export function sendError(reply: FastifyReply, error: GatewayError): FastifyReply {
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  // Official SDKs retry every 5xx unless told not to; a failure we know is final says so.
  if (error.status >= 500 && !error.clientMayRetry) reply.header('x-should-retry', 'false');
  return reply.code(error.status).type('application/json').send(errorBodyFor(reply, error));
}

export function installErrorHandling(app: FastifyInstance, drain: Drain): void {
  app.setErrorHandler((error, request, reply) => {
    const gatewayError = toGatewayError(error, request);
    if (clientLeftBeforeAnswer(reply.raw)) {
      // The client closed the connection before its answer (the upstream call was cancelled with
      // it): nobody will read this error, and it is no fault of the server. Logged without the
      // cause's stack, which would otherwise be an error line per impatient client.
      request.log.info({ code: gatewayError.code }, 'client closed the connection before the answer');
    } else if (gatewayError.status >= 500) {
      // The request's logger already carries its id (`requestId`), which the client saw in its header.
      request.log.error({ err: gatewayError.cause ?? error }, 'request failed');
    }
    return sendError(reply, gatewayError);
  });

  // While the server drains for shutdown, a request on a kept-alive connection is told to retry
  // elsewhere, in the envelope (Fastify's own 503 for this case is not); health answers `draining`.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    if ((!closing && !drain.draining) || request.url === HEALTH_PATH) return done();
    reply.header('connection', 'close');
    sendError(reply, errors.shuttingDown());
  });

  const methods = new MethodIndex();
  app.addHook('onRoute', (route) => methods.add(route.url, route.method));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = methods.allowedFor(path);
    if (allowed.length === 0) {
      const hint = baseUrlHint(path, (candidate) => methods.allowedFor(candidate).length > 0);
      return sendError(reply, errors.unknownPath(request.method, path, hint));
    }
    reply.header('allow', allowed.join(', '));
    return sendError(reply, errors.methodNotAllowed(request.method, path));
  });
}

interface ClientErrorAnswer {
  /** The status line's reason phrase for the error's status. */
  readonly reason: string;
  readonly error: () => GatewayError;
}

const NOT_HTTP: ClientErrorAnswer = { reason: 'Bad Request', error: errors.notHttp };

/** Node's parser error codes that deserve a more precise answer than 400. */
const CLIENT_ERRORS: Readonly<Record<string, ClientErrorAnswer>> = {
  HPE_HEADER_OVERFLOW: { reason: 'Request Header Fields Too Large', error: errors.headersTooLarge },
  ERR_HTTP_REQUEST_TIMEOUT: { reason: 'Request Timeout', error: errors.requestTimedOut },
};

/** Fastify options for failures that happen before routing (the error handler never sees them). */
export const frameworkErrorOptions = {
  /** A URL that cannot be decoded: no route ran, so the request id is added here. */
  frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    ensureRequestId(request, reply);
    return sendError(reply, toGatewayError(error, request));
  },
  /** Malformed HTTP: answered on the raw socket, still with the envelope and a request id. */
  clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket) {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const answer = CLIENT_ERRORS[error.code ?? ''] ?? NOT_HTTP;
    answerAndClose(socket, answer.error(), answer.reason);
  },
};

/**
 * The metered-call input of a request, the same for every dialect's route: the decoded canonical
 * request and its parameter names, who calls, the request id, the route's name, a signal that
 * aborts the upstream call when the client goes away, and what its admission found of its key's
 * tokens per minute. Making it hands the request's log row to the core.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallInput } from '../pipeline/types.ts';
import type { ParamNamer } from '../policy/violation.ts';
import { clientDisconnectSignal } from './event-stream.ts';
import { admittedTokenLevels } from './limits.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Set once the request's call input is handed to the metered-call core: from then on the core
     * writes the request's log row (every failure included), and the route's rejection recorder
     * (./request-recording.ts) writes none. A decorated property (server/app.ts).
     */
    handedToCore: boolean;
  }
}

export function callInput<Request>(
  request: FastifyRequest,
  reply: FastifyReply,
  route: string,
  decoded: { readonly request: Request; readonly names: ParamNamer },
): CallInput<Request> {
  request.handedToCore = true;
  return {
    request: decoded.request,
    names: decoded.names,
    auth: request.auth,
    requestId: request.gatewayRequestId,
    route,
    signal: clientDisconnectSignal(reply),
    tokenLevels: admittedTokenLevels(request),
    trace: request.trace,
  };
}

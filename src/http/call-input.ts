/**
 * The metered-call input of a request, the same for every dialect's route: the decoded canonical
 * request and its parameter names, who calls, the request id, the route's name, a signal that
 * aborts the upstream call when the client goes away, and what its admission found of its key's
 * tokens per minute.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallInput } from '../pipeline/types.ts';
import type { ParamNamer } from '../policy/violation.ts';
import { clientDisconnectSignal } from './event-stream.ts';
import { admittedTokenLevels } from './limits.ts';

export function callInput<Request>(
  request: FastifyRequest,
  reply: FastifyReply,
  route: string,
  decoded: { readonly request: Request; readonly names: ParamNamer },
): CallInput<Request> {
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

/**
 * An error answered on the raw connection, before (or without) any HTTP parsing: the envelope with
 * its own request id, `Retry-After` when the error has one, and `Connection: close`; then the
 * socket is destroyed, not merely ended. The HTTP server allows half-open connections, so an ended
 * socket stayed open (with its descriptor) until the client closed its side, which a hostile
 * client never does.
 */
import type { Socket } from 'node:net';
import type { GatewayError } from '../core/errors.ts';
import { newRequestId } from './request-id.ts';

/** A client that does not take its answer within this long is cut off anyway. */
const ANSWER_LINGER_MS = 1_000;

export function answerAndClose(socket: Socket, error: GatewayError, reason: string): void {
  const body = JSON.stringify(error.toEnvelope());
  const retryAfter = error.retryAfterSeconds === undefined ? '' : `Retry-After: ${error.retryAfterSeconds}\r\n`;
  socket.on('error', () => socket.destroy());
  socket.setTimeout(ANSWER_LINGER_MS, () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${error.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `x-gateway-request-id: ${newRequestId()}\r\n${retryAfter}Connection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

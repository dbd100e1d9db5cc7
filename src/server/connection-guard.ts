/**
 * The cap on open connections (server-limits.ts). A connection past the cap, in all or from its
 * address, never reaches the HTTP parser: it is answered at once with a 503 `server_busy` in the
 * envelope, with `Retry-After`, and closed, so an idle socket costs no descriptor beyond the cap.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { Gauge, type Registry } from 'prom-client';
import { errors } from '../core/errors.ts';
import { answerAndClose } from './raw-response.ts';
import { BUSY_RETRY_AFTER_SECONDS, type ServerLimits } from './server-limits.ts';

export function installConnectionGuard(server: Server, limits: ServerLimits, registry: Registry): void {
  const perAddress = new Map<string, number>();
  let open = 0;
  new Gauge({
    name: 'gateway_open_connections',
    help: 'Client connections open now (the connection cap of docs/security.md counts them).',
    registers: [registry],
    collect() {
      this.set(open);
    },
  });
  // The HTTP server's own listener (and any other) runs only for admitted connections.
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const fromAddress = perAddress.get(address) ?? 0;
    if (open >= limits.maxConnections || fromAddress >= limits.maxConnectionsPerAddress) {
      refuse(socket, open >= limits.maxConnections ? 'too many open connections' : 'too many open connections from this address');
      return;
    }
    open += 1;
    perAddress.set(address, fromAddress + 1);
    socket.once('close', () => {
      open -= 1;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    for (const listener of listeners) listener.call(server, socket);
  });
}

function refuse(socket: Socket, why: string): void {
  // What the client already sent is read and dropped, so that closing does not reset the connection
  // (a reset can discard the answer before the client reads it).
  socket.resume();
  answerAndClose(socket, errors.serverBusy(why, BUSY_RETRY_AFTER_SECONDS), 'Service Unavailable');
}

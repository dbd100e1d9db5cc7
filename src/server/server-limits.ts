/**
 * The server's own bounds, whatever the clients do (docs/security.md): how many connections may be
 * open at once (in all, and from one address), and how many request-body bytes may be in flight
 * (declared or received, not yet parsed) at once. Past either, a client gets a 503 `server_busy`
 * with `Retry-After` and its connection is closed; the process's descriptors and memory stay
 * bounded under any number of idle or slow clients.
 */
export interface ServerLimits {
  /** Open connections in all (GATEWAY_MAX_CONNECTIONS). */
  readonly maxConnections: number;
  /** Open connections from one remote address (GATEWAY_MAX_CONNECTIONS_PER_ADDRESS); raise it behind a proxy. */
  readonly maxConnectionsPerAddress: number;
  /** Request-body bytes being received at once, all requests together (GATEWAY_BODY_BUDGET_BYTES). */
  readonly bodyBudgetBytes: number;
}

/**
 * Far below the descriptors a process gets (Node raises its soft limit to the hard one, typically a
 * million), far above what one instance serves; 128 MiB of bodies is 25 requests at the 5 MiB limit,
 * or tens of thousands of ordinary ones.
 */
export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  maxConnections: 10_000,
  maxConnectionsPerAddress: 1_000,
  bodyBudgetBytes: 128 * 1024 * 1024,
};

/** The seconds a refused client is told to wait: slots free as soon as other requests end. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

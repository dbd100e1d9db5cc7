/**
 * One keep-alive connection pool per upstream origin, shared by every request to it (see
 * docs/protocols.md). The connect timeout is a property of the pool, so origins used with
 * different connect timeouts get one pool each.
 */
import { Pool } from 'undici';

const pools = new Map<string, Pool>();

/** How long an idle upstream connection is kept for reuse. */
const KEEP_ALIVE_MS = 30_000;

export function poolFor(origin: string, connectTimeoutMs: number): Pool {
  const key = `${origin} ${connectTimeoutMs}`;
  let pool = pools.get(key);
  if (pool === undefined || pool.closed || pool.destroyed) {
    pool = new Pool(origin, {
      keepAliveTimeout: KEEP_ALIVE_MS,
      connect: { timeout: connectTimeoutMs },
    });
    pools.set(key, pool);
  }
  return pool;
}

/** Closes every pool (graceful shutdown): in-flight requests finish, idle sockets close. */
export async function closeUpstreamPools(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.close()));
}

/**
 * The Redis connection of a shared-state backend (the limits' counters, the endpoints' breakers):
 * a command never waits for a reconnection nor long for an answer — it fails, and the caller's
 * failure mode decides — and failures surface on the commands rather than as printed events.
 */
import { Redis } from 'ioredis';

/** How long a Redis command may take before it counts as failed. */
const COMMAND_TIMEOUT_MS = 500;

/** Connects to `url` with the script `name` defined as a command (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/). */
export function connectRedis<Commands>(url: string, name: string, lua: string): Redis & Commands {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    lazyConnect: false,
  });
  // Without a listener ioredis would also print every failure.
  redis.on('error', () => {});
  redis.defineCommand(name, { lua });
  return redis as Redis & Commands;
}

/**
 * Resolves once `redis` is connected, or at its first failure to connect: a server that starts
 * serving before its connection is up would fail its first checks (the connection never queues),
 * and one whose Redis is away starts anyway, its failure mode deciding.
 */
export function connected(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const settle = () => {
      redis.off('ready', settle);
      redis.off('error', settle);
      redis.off('end', settle);
      resolve();
    };
    redis.on('ready', settle);
    redis.on('error', settle);
    redis.on('end', settle);
  });
}

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
  // No commandTimeout of ioredis's own: `answeredInTime` bounds each command instead.
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    lazyConnect: false,
  });
  // Without a listener ioredis would also print every failure.
  redis.on('error', () => {});
  redis.defineCommand(name, { lua });
  return redis as Redis & Commands;
}

/**
 * `command`, failed if Redis has not answered it within COMMAND_TIMEOUT_MS. When the event loop was
 * held up (a long collection, a starved CPU), the timer that decides this runs before the loop reads
 * the replies that arrived meanwhile; so an elapsed timer fails the command only after the loop's
 * next read of its sockets, in which a reply already received settles it first. With ioredis's own
 * `commandTimeout`, such answered commands failed: a busy instance took Redis for down, and limits
 * that fail `open` admitted requests over the limit (23 of a burst of 60 against a limit of 10).
 */
export function answeredInTime<T>(command: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // The first of the two to settle the promise wins: an answer read in the poll phase comes
    // before the check phase's rejection.
    const timer = setTimeout(() => setImmediate(() => reject(new Error(`Redis did not answer within ${COMMAND_TIMEOUT_MS} ms`))), COMMAND_TIMEOUT_MS);
    command.then(resolve, reject).finally(() => clearTimeout(timer));
  });
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

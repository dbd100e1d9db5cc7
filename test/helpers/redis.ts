/**
 * Redis for tests: the test server (override with TEST_REDIS_URL), a random key prefix per test
 * file so that files running in parallel never share counters, and the removal of a prefix's keys.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function testRedisPrefix(): string {
  return `gateway-test:${randomBytes(6).toString('hex')}:`;
}

/** Deletes every key under `prefix`. */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * Where limit tests run: each store with its counters in the process, and PostgreSQL with them in
 * Redis (the deployment of many instances).
 */
export const LIMIT_SETUPS = [
  ['sqlite', 'memory'],
  ['postgres', 'memory'],
  ['postgres', 'redis'],
] as const;

/**
 * Waiting for a job to end as a client does: polling its object until its status is no longer a
 * running one (bounded in time, failing the test with the last status seen).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/** A background response's statuses while it waits or runs. */
export const RESPONSE_RUNNING = ['queued', 'in_progress'] as const;
/** A video job's status while it waits or runs. */
export const VIDEO_RUNNING = ['processing'] as const;

export async function untilEnded<T extends { readonly status?: unknown }>(
  read: () => Promise<T>,
  running: readonly string[],
  what: string,
  options: {
    readonly timeoutMs?: number;
    readonly intervalMs?: number;
    /** What the failure says beside the last status: the server's side of a job that never ended. */
    readonly explain?: () => Promise<string>;
  } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  for (;;) {
    const object = await read();
    if (!running.includes(object.status as string)) return object;
    if (Date.now() > deadline) {
      const explanation = options.explain === undefined ? '' : `\n${await options.explain()}`;
      assert.fail(`${what} is still ${String(object.status)}${explanation}`);
    }
    await sleep(options.intervalMs ?? 20);
  }
}

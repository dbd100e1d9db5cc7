/**
 * Test-only crash points of a metered call's lifecycle (./metered-call.ts). With the environment
 * variable `GATEWAY_CRASH_AT` naming a step, the process kills itself with SIGKILL right after
 * that step of the first call that reaches it, as a power cut would: no `finally`, no flush, no
 * shutdown. The crash tests (test/platform/lifecycle-crash.test.ts) start real servers with it to
 * prove that every step boundary leaves the ledger, the request log and the jobs consistent.
 * Before it dies, the process commits what the embedded store decided but writes behind (its group
 * commit, storage/sqlite/database.ts): the crash comes after the step, not within a write's few
 * milliseconds, which the store's own tests cover. Unset (always, outside those tests), a crash
 * point is one comparison with `undefined`.
 */

/** The boundaries a crash can be asked at, in the lifecycle's order. */
export const CALL_STEPS = ['attempted', 'metered', 'admitted', 'settled', 'released', 'amended', 'recorded'] as const;
export type CallStep = (typeof CALL_STEPS)[number];

const armed = parseArmed(process.env.GATEWAY_CRASH_AT);

function parseArmed(value: string | undefined): CallStep | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(CALL_STEPS as readonly string[]).includes(value)) throw new Error(`GATEWAY_CRASH_AT must be one of ${CALL_STEPS.join(', ')}`);
  return value as CallStep;
}

/** Whether a crash is armed at `step` (the recorded step flushes its row first, so that it is on disk). */
export function crashArmedAt(step: CallStep): boolean {
  return armed === step;
}

const commits: (() => void)[] = [];

/** Registers what commits a store's pending writes, run before an armed crash point kills the process. */
export function commitBeforeCrash(commit: () => void): void {
  if (armed !== undefined) commits.push(commit);
}

/** Kills the process when the crash is armed at `step`. */
export function crashPoint(step: CallStep): void {
  if (armed !== step) return;
  for (const commit of commits) {
    try {
      commit();
    } catch {
      // A closed store has nothing pending.
    }
  }
  process.kill(process.pid, 'SIGKILL');
}

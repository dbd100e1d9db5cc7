/**
 * The instance of a SQLite store: one server per file (server-lock.ts), so the only instance to
 * list is this process, its vitals read when asked.
 */
import type { InstanceStore, InstanceVitals } from '../store.ts';

export function sqliteInstance(instanceId: string, now: () => number): InstanceStore {
  let read: (() => InstanceVitals) | null = null;
  return {
    reportVitals(source) {
      read = source;
    },
    async listInstances() {
      return read === null ? [] : [{ id: instanceId, heartbeatAt: now(), vitals: read() }];
    },
  };
}

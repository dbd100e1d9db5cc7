/**
 * For formats whose finish is one raw value (docs/protocols.md), a table of the values each
 * canonical reason stands for. A value the table does not name, including one newer than this
 * code, means the model stopped without an error: the answer stands as a `stop`. The raw value is
 * kept beside the reason either way.
 */
import type { Finish, FinishReason } from '../canonical/index.ts';

export type FinishTable = ReadonlyMap<string, FinishReason>;

export function finishTable(rawValues: Partial<Record<FinishReason, readonly string[]>>): FinishTable {
  return new Map(Object.entries(rawValues).flatMap(([reason, raws]) => raws.map((raw) => [raw, reason as FinishReason] as const)));
}

export function finishFromTable(table: FinishTable, raw: string | null | undefined): Finish {
  return { reason: (raw === null || raw === undefined ? undefined : table.get(raw)) ?? 'stop', raw: raw ?? null };
}

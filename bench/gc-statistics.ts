/**
 * V8's record of garbage collections (`v8.GCProfiler`'s `stop()`), summed: how many young
 * collections ran, what they left alive in the young generation and promoted to the old one, and
 * the pauses of each kind (bench/gc-survival.ts).
 */

interface HeapSpace {
  readonly spaceName: string;
  readonly spaceUsedSize: number;
}

/** One collection of the profiler's record (the fields read here). */
export interface GcStatistic {
  readonly gcType: string;
  /** µs. */
  readonly cost: number;
  readonly beforeGC: { readonly heapSpaceStatistics: readonly HeapSpace[] };
  readonly afterGC: { readonly heapSpaceStatistics: readonly HeapSpace[] };
}

export interface Collections {
  readonly scavenges: number;
  /** Bytes left alive in the young generation by its collections (what they promoted is apart). */
  readonly survived: number;
  /** Bytes the young collections moved to the old generation. */
  readonly promoted: number;
  /** Main-thread pauses, µs: the young collections', and the full and incremental ones'. */
  readonly youngPause: number;
  readonly fullPause: number;
}

const YOUNG = new Set(['Scavenge', 'MinorMarkSweep']);
const FULL = new Set(['MarkSweepCompact', 'IncrementalMarking']);

const used = (spaces: readonly HeapSpace[], ...names: readonly string[]) =>
  spaces.reduce((total, space) => (names.includes(space.spaceName) ? total + space.spaceUsedSize : total), 0);

export function sumCollections(statistics: readonly GcStatistic[]): Collections {
  let [scavenges, survived, promoted, youngPause, fullPause] = [0, 0, 0, 0, 0];
  for (const { gcType, cost, beforeGC, afterGC } of statistics) {
    if (YOUNG.has(gcType)) {
      scavenges += 1;
      survived += used(afterGC.heapSpaceStatistics, 'new_space', 'new_large_object_space');
      const old = (side: typeof afterGC) => used(side.heapSpaceStatistics, 'old_space', 'large_object_space');
      promoted += Math.max(0, old(afterGC) - old(beforeGC));
      youngPause += cost;
    } else if (FULL.has(gcType)) fullPause += cost;
  }
  return { scavenges, survived, promoted, youngPause, fullPause };
}

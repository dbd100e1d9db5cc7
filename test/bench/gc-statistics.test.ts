import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type GcStatistic, sumCollections } from '../../bench/gc-statistics.ts';

const spaces = (sizes: Record<string, number>) => ({
  heapSpaceStatistics: Object.entries(sizes).map(([spaceName, spaceUsedSize]) => ({ spaceName, spaceUsedSize })),
});

test('young collections count what they left young and what they promoted; full ones only their pause', () => {
  const statistics: GcStatistic[] = [
    {
      gcType: 'Scavenge',
      cost: 100,
      beforeGC: spaces({ new_space: 8_000, old_space: 50_000, large_object_space: 1_000 }),
      afterGC: spaces({ new_space: 700, new_large_object_space: 300, old_space: 50_400, large_object_space: 1_100 }),
    },
    { gcType: 'MarkSweepCompact', cost: 900, beforeGC: spaces({ old_space: 60_000 }), afterGC: spaces({ old_space: 20_000 }) },
    { gcType: 'IncrementalMarking', cost: 50, beforeGC: spaces({}), afterGC: spaces({}) },
    // A young collection during which the old generation shrank (swept) promoted nothing measurable.
    { gcType: 'Scavenge', cost: 20, beforeGC: spaces({ new_space: 5_000, old_space: 30_000 }), afterGC: spaces({ new_space: 500, old_space: 29_000 }) },
    { gcType: 'ProcessWeakCallbacks', cost: 7, beforeGC: spaces({}), afterGC: spaces({}) },
  ];
  assert.deepEqual(sumCollections(statistics), { scavenges: 2, survived: 1_500, promoted: 500, youngPause: 120, fullPause: 950 });
});

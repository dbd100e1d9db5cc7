/**
 * Compares two V8 heap snapshots taken some requests apart (start the gateway with
 * `node --heapsnapshot-signal=SIGUSR2 …`, send it SIGUSR2, run a workload, send it SIGUSR2 again):
 * the kinds of object whose number and size grew between them. A kind that grows by about the
 * number of requests served in between is a leak; this is how the stream leak of docs/performance.md
 * showed (5,000 more `PipelineStream`s after 5,000 streams). Usage:
 * `node bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [--top=30]`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The parts of the snapshot format this reads (the rest: edges, locations, samples, is skipped). */
export interface HeapSnapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: readonly string[]; readonly node_types: readonly [readonly string[], ...unknown[]] } };
  readonly nodes: readonly number[];
  readonly strings: readonly string[];
}

export interface Tally {
  readonly count: number;
  readonly bytes: number;
}

/** Strings are counted by their type alone: their text would make every one a kind of its own. */
const UNNAMED_TYPES = new Set(['string', 'concatenated string', 'sliced string', 'number']);

/** Objects by kind: `type:constructor name` (`object:PipelineStream`, `closure:settle`, `array:`). */
export function tallyByKind(heap: HeapSnapshot): Map<string, Tally> {
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const typeField = fields.indexOf('type');
  const nameField = fields.indexOf('name');
  const sizeField = fields.indexOf('self_size');
  const tallies = new Map<string, Tally>();
  for (let offset = 0; offset < heap.nodes.length; offset += fields.length) {
    const type = types[heap.nodes[offset + typeField]];
    const name = UNNAMED_TYPES.has(type) ? '' : heap.strings[heap.nodes[offset + nameField]].slice(0, 60);
    const kind = `${type}:${name}`;
    const tally = tallies.get(kind) ?? { count: 0, bytes: 0 };
    tallies.set(kind, { count: tally.count + 1, bytes: tally.bytes + heap.nodes[offset + sizeField] });
  }
  return tallies;
}

/** The kinds that grew most in bytes from `before` to `after`, with how many more there are. */
export function growth(before: Map<string, Tally>, after: Map<string, Tally>, top: number): { kind: string; count: number; bytes: number }[] {
  return [...after]
    .map(([kind, tally]) => {
      const earlier = before.get(kind) ?? { count: 0, bytes: 0 };
      return { kind, count: tally.count - earlier.count, bytes: tally.bytes - earlier.bytes };
    })
    .filter((row) => row.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '30' } }, allowPositionals: true });
  if (positionals.length !== 2) throw new Error('usage: node bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [--top=30]');
  const [before, after] = positionals.map((file) => tallyByKind(JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot));
  console.log('      bytes     count  kind (type:constructor)');
  for (const row of growth(before, after, Number(values.top))) {
    console.log(`${String(row.bytes).padStart(11)} ${String(row.count).padStart(9)}  ${row.kind}`);
  }
}

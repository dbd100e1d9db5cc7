import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { writeHeapSnapshot } from 'node:v8';
import { growth, tallyByKind, type HeapSnapshot } from '../../bench/heap-diff.ts';

const dir = mkdtempSync(join(tmpdir(), 'heap-diff-'));
after(() => rmSync(dir, { recursive: true, force: true }));

class RetainedOnPurpose {
  readonly payload = new Array<number>(16).fill(1);
}

const snapshot = (name: string): HeapSnapshot => JSON.parse(readFileSync(writeHeapSnapshot(join(dir, name)), 'utf8')) as HeapSnapshot;

describe('heap snapshot comparison', () => {
  test('objects kept between two real snapshots show as the growth of their kind, counted exactly', () => {
    const kept: RetainedOnPurpose[] = [];
    const before = tallyByKind(snapshot('before.heapsnapshot'));
    for (let index = 0; index < 500; index += 1) kept.push(new RetainedOnPurpose());
    const rows = growth(before, tallyByKind(snapshot('after.heapsnapshot')), 50);
    const retained = rows.find((row) => row.kind === 'object:RetainedOnPurpose');
    assert.ok(retained, `RetainedOnPurpose among ${rows.map((row) => row.kind).join(', ')}`);
    assert.equal(retained.count, 500);
    assert.ok(retained.bytes > 0);
    assert.equal(kept.length, 500);
  });
});

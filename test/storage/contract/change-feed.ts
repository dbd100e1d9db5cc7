import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContractContext } from './context.ts';

export function changeFeedContract({ store, peer }: ContractContext): void {
  describe('change feed', () => {
    test('every bump is seen by every instance, and concurrent bumps all count', async () => {
      const start = await store().currentVersion();
      assert.equal(await store().bumpVersion(), start + 1);
      assert.equal(await peer().currentVersion(), start + 1);
      const bumps = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? store() : peer()).bumpVersion()));
      assert.deepEqual(new Set(bumps).size, 20, 'each bump returns its own version');
      assert.equal(await store().currentVersion(), start + 21);
    });
  });
}

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContractContext } from './context.ts';
import { newAccount } from './context.ts';

export function reopenContract({ store, open }: ContractContext): void {
  describe('reopening', () => {
    test('a reopened store migrates nothing and sees the same data', async () => {
      const owner = await newAccount(store(), 'Persistent');
      await store().addCredit(owner, 123n);
      const version = await store().bumpVersion();
      const [first, second] = await Promise.all([open(), open()]);
      try {
        assert.equal((await first.getAccount(owner.id))?.name, 'Persistent');
        assert.equal((await second.getBalance(owner)).balance, 123n);
        assert.equal(await first.currentVersion(), version);
      } finally {
        await first.close();
        await second.close();
      }
    });
  });
}

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContractContext } from './context.ts';

export function firstAccountContract({ fresh }: ContractContext): void {
  describe('first account', () => {
    test('instances racing on an empty database create exactly one first account', async () => {
      const open = fresh();
      const stores = await Promise.all([open(), open(), open()]);
      try {
        const created = await Promise.all(stores.flatMap((store) => [1, 2, 3].map(() => store.createFirstAccount({ name: 'demo' }))));
        const accounts = created.filter((account) => account !== null);
        assert.equal(accounts.length, 1);
        assert.equal(await stores[1].isDirectoryEmpty(), false);
        assert.deepEqual(
          (await stores[0].listAccounts()).map((account) => account.id),
          [accounts[0]!.id],
        );
        assert.equal((await stores[1].getBalance({ kind: 'account', id: accounts[0]!.id })).balance, 0n, 'it has its wallet');
        assert.equal(await stores[2].createFirstAccount({ name: 'demo' }), null, 'never again');
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
    });

    test('an organization alone makes the directory not empty', async () => {
      const store = await fresh()();
      try {
        assert.equal(await store.isDirectoryEmpty(), true);
        await store.createOrganization({ name: 'first' });
        assert.equal(await store.createFirstAccount({ name: 'demo' }), null);
        assert.deepEqual(await store.listAccounts(), []);
        assert.equal(await store.isDirectoryEmpty(), false);
      } finally {
        await store.close();
      }
    });
  });
}

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContractContext } from './context.ts';

export function servedModelsContract({ fresh }: ContractContext): void {
  describe('served model names', () => {
    test('empty until a server records its catalog; every instance sees the last record, which replaces the one before', async () => {
      const open = fresh();
      const server = await open();
      const cli = await open();
      try {
        assert.deepEqual(await cli.servedModels(), new Map());
        await server.recordServedModels(
          new Map([
            ['gateway/atlas-4-5', 'gateway/atlas-4-5'],
            ['atlas-4.5', 'gateway/atlas-4-5'],
            ['gateway/old', 'gateway/old'],
          ]),
        );
        assert.deepEqual(
          await cli.servedModels(),
          new Map([
            ['gateway/atlas-4-5', 'gateway/atlas-4-5'],
            ['atlas-4.5', 'gateway/atlas-4-5'],
            ['gateway/old', 'gateway/old'],
          ]),
        );
        // A restart with another config: the old names are gone.
        await cli.recordServedModels(new Map([['gateway/new', 'gateway/new']]));
        assert.deepEqual(await server.servedModels(), new Map([['gateway/new', 'gateway/new']]));
      } finally {
        await server.close();
        await cli.close();
      }
    });
  });
}

/**
 * The Store contract, written once and run against every engine (sqlite.test.ts, postgres.test.ts).
 * `open` must return a new handle on the same database each time it is called: the suite keeps two
 * handles open, like two gateway instances, and opens more to check that reopening migrates nothing.
 * `fresh` returns an opener of a new, empty database, for behaviours that need one.
 */
import { after, before, describe } from 'node:test';
import type { Store } from '../../src/storage/store.ts';
import { changeFeedContract } from './contract/change-feed.ts';
import type { ContractContext } from './contract/context.ts';
import { directoryContract } from './contract/directory.ts';
import { firstAccountContract } from './contract/first-account.ts';
import { idempotencyContract } from './contract/idempotency.ts';
import { jobsContract } from './contract/jobs.ts';
import { ledgerConcurrencyContract } from './contract/ledger-concurrency.ts';
import { ledgerContract } from './contract/ledger.ts';
import { peopleContract } from './contract/people.ts';
import { reopenContract } from './contract/reopen.ts';
import { requestLogContract } from './contract/request-log.ts';
import { servedModelsContract } from './contract/served-models.ts';
import { spendCapsContract } from './contract/spend-caps.ts';
import { usageContract } from './contract/usage.ts';
import { webhooksContract } from './contract/webhooks.ts';

export function storeContract(name: string, open: () => Promise<Store>, fresh: () => () => Promise<Store>): void {
  describe(`${name} store contract`, () => {
    let store: Store | undefined;
    let peer: Store | undefined;
    before(async () => {
      store = await open();
      peer = await open();
    });
    after(async () => {
      await store?.close();
      await peer?.close();
    });
    const context: ContractContext = {
      store: () => required(store),
      peer: () => required(peer),
      open,
      fresh,
    };
    directoryContract(context);
    firstAccountContract(context);
    ledgerContract(context);
    ledgerConcurrencyContract(context);
    spendCapsContract(context);
    requestLogContract(context);
    usageContract(context);
    idempotencyContract(context);
    jobsContract(context);
    webhooksContract(context);
    changeFeedContract(context);
    servedModelsContract(context);
    peopleContract(context);
    reopenContract(context);
  });
}

function required(store: Store | undefined): Store {
  if (!store) throw new Error('the store did not open');
  return store;
}

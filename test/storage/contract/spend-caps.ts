import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CappedReservation, OwnerRef, SpendCap, Store } from '../../../src/storage/store.ts';
import { MINUTE, newAccount, type ContractContext } from './context.ts';

const total = (max: bigint, holder: SpendCap['holder'] = 'key'): SpendCap => ({ limit: 'spend_total', holder, since: 0, max });

function reservationOf(outcome: CappedReservation): string {
  assert.ok('reservation' in outcome, `a reservation, not ${JSON.stringify(outcome, (_, value) => (typeof value === 'bigint' ? String(value) : value))}`);
  return outcome.reservation.id;
}

async function funded(store: Store, credit = 1_000_000n): Promise<OwnerRef> {
  const owner = await newAccount(store);
  await store.addCredit(owner, credit);
  return owner;
}

export function spendCapsContract({ store, peer }: ContractContext): void {
  describe('spend caps of holds', () => {
    const hold = (owner: OwnerRef, amount: bigint, keyId: string, caps: readonly SpendCap[], on = store()) =>
      on.reserveCapped({ owner, amount, requestId: null, expiresAt: Date.now() + MINUTE, keyId, caps });

    test("a key's open holds and charges count against its cap, to the last pico-USD; other keys do not", async () => {
      const owner = await funded(store());
      const caps = [total(100n)];
      const first = reservationOf(await hold(owner, 40n, 'key_a', caps));
      reservationOf(await hold(owner, 40n, 'key_a', caps));
      const refused = await hold(owner, 21n, 'key_a', caps);
      assert.deepEqual(refused, { refused: 'cap', cap: caps[0], spent: 80n });
      // Another key of the same owner has spent nothing.
      reservationOf(await hold(owner, 100n, 'key_b', caps));
      // The first settles for 10: 10 charged + 40 held leave exactly 50.
      assert.equal((await store().settle(first, 10n))?.charged, 10n);
      reservationOf(await hold(owner, 50n, 'key_a', caps, peer()));
      assert.deepEqual(await hold(owner, 1n, 'key_a', caps), { refused: 'cap', cap: caps[0], spent: 100n });
      const charges = (await store().listEntries(owner)).filter((entry) => entry.kind === 'charge');
      assert.deepEqual(
        charges.map((entry) => [entry.keyId, entry.amount]),
        [['key_a', 10n]],
      );
      assert.equal((await store().getReservation(first))?.keyId, 'key_a');
    });

    test('charges before a cap’s time do not count; holds always do', async () => {
      const owner = await funded(store());
      const spent = reservationOf(await hold(owner, 60n, 'key_p', []));
      await store().settle(spent, 60n);
      assert.equal(((await hold(owner, 50n, 'key_p', [total(100n)])) as { refused?: string }).refused, 'cap');
      const nextPeriod: SpendCap = { limit: 'spend_per_day', holder: 'key', since: Date.now() + MINUTE, max: 100n };
      reservationOf(await hold(owner, 60n, 'key_p', [nextPeriod]));
      assert.equal(((await hold(owner, 41n, 'key_p', [nextPeriod])) as { refused?: string }).refused, 'cap', 'the open hold counts');
      reservationOf(await hold(owner, 40n, 'key_p', [nextPeriod, total(1000n)]));
    });

    test("an organization's cap counts every key of the owner", async () => {
      const owner = await funded(store());
      const caps = [total(100n, 'organization')];
      const first = reservationOf(await hold(owner, 30n, 'key_x', caps));
      await store().settle(first, 30n);
      reservationOf(await hold(owner, 30n, 'key_y', caps));
      const refused = await hold(owner, 41n, 'key_z', caps, peer());
      assert.deepEqual(refused, { refused: 'cap', cap: caps[0], spent: 60n });
      reservationOf(await hold(owner, 40n, 'key_z', caps, peer()));
    });

    test('a hold the balance does not cover is refused for credit', async () => {
      const owner = await funded(store(), 10n);
      assert.deepEqual(await hold(owner, 11n, 'key_c', [total(100n)]), { refused: 'credit' });
    });

    test('200 concurrent capped holds on two instances never pass the cap together', async () => {
      const owner = await funded(store(), 10_000_000_000n);
      const amount = 7_000_000n;
      const caps = [total(37n * amount + 3_333_333n)];
      const outcomes = await Promise.all(Array.from({ length: 200 }, (_, index) => hold(owner, amount, 'key_race', caps, index % 2 === 0 ? store() : peer())));
      assert.equal(outcomes.filter((outcome) => 'reservation' in outcome).length, 37);
      assert.equal(outcomes.filter((outcome) => 'refused' in outcome && outcome.refused === 'cap').length, 163);
    });
  });
}
